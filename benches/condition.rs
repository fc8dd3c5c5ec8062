//! Benchmarks: condition. Run with `cargo bench --bench condition`.

fn main() {
    divan::main();
}
