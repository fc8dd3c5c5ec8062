//! The `tfc` binary: parse argv, call the library, print, exit with the command's code.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
