//! The `tfc` binary: parse argv, call the library, print, exit with the command's code.

mod cli;

/// mimalloc (built without transparent huge pages, which only raised the peak memory):
/// faster than the system allocator on tfc's many small allocations; the benches use it too.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
