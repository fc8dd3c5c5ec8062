//! Benchmarks: template. Run with `cargo bench --bench template`.

fn main() {
    divan::main();
}
