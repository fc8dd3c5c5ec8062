//! Language-core benchmarks (templates, conditions, safeParse). Run: `cargo bench --bench language`.

fn main() {
    divan::main();
}
