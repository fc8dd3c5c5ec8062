//! Benchmarks: safe_parse. Run with `cargo bench --bench safe_parse`.

fn main() {
    divan::main();
}
