//! Command-line interface: one module per command. Each command returns its exit code; output
//! goes to stdout (results only) and stderr (diagnostics, progress).

/// `print!`/`println!` for results: a closed stdout ends the output quietly (see [`print_out`]).
macro_rules! out {
    ($($t:tt)*) => { $crate::cli::print_out(format_args!($($t)*)) };
}
macro_rules! outln {
    () => { $crate::cli::print_out("\n") };
    ($($t:tt)*) => { $crate::cli::println_out(format_args!($($t)*)) };
}
/// `eprint!`/`eprintln!` that never panic (see [`say`]).
macro_rules! say {
    ($($t:tt)*) => { $crate::cli::say(format_args!($($t)*)) };
}
macro_rules! sayln {
    () => { $crate::cli::say("\n") };
    ($($t:tt)*) => { $crate::cli::say(format_args!("{}\n", format_args!($($t)*))) };
}

mod check;
mod completions;
mod doctor;
mod eval;
mod fork;
mod graph;
#[cfg(test)]
mod help_tests;
mod init;
mod input;
mod list;
mod lsp;
mod man;
mod mcp;
mod plan;
mod progress;
mod report;
mod resume;
mod run;
mod runs;
mod schema;
mod show;
mod telemetry;
mod test;
mod worker;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// tfc — check and run taskflow flows: declarative, verifiable graphs of agent phases.
#[derive(Parser, Debug)]
// `--version` prints the version and the commit it was built from (`build.rs`).
#[command(name = "tfc", version = env!("TFC_VERSION"), propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check flows statically: the whole graph, every placeholder and condition.
    Check(check::CheckArgs),
    /// Check, then run a flow: only the final output on stdout.
    Run(Box<run::RunArgs>),
    /// Count the agent calls, tokens and cost a run can take, per phase, before it runs.
    Plan(plan::PlanArgs),
    /// Fork a failed, paused or interrupted run and continue it, reusing its finished phases.
    Resume(Box<resume::ResumeArgs>),
    /// Start a new run from any ended run: re-run some phases (--from), replace outputs
    /// (--set) or arguments, and copy everything else without paying for it again.
    Fork(Box<fork::ForkArgs>),
    /// Evaluate a template, condition or safeParse against an eval context.
    Eval(eval::EvalArgs),
    /// Test flows without spending a token: run *.test.json files, every agent call answered.
    Test(test::TestArgs),
    /// Print the graph of a flow (Mermaid, SVG or Graphviz), its problems marked.
    Graph(graph::GraphArgs),
    /// Write the self-contained HTML report of a run.
    Report(report::ReportArgs),
    /// Print the JSON Schema (draft 2020-12) of flow files, for editor completion.
    Schema(schema::SchemaArgs),
    /// List this project's runs, newest first.
    Runs(runs::RunsArgs),
    /// Show a run (or one phase of it): status, usage, phases; prompts and outputs.
    Show(show::ShowArgs),
    /// List saved flows (project and user) with their arguments.
    List(list::ListArgs),
    /// Set up .tfc/ here: config.toml for the backends found, a default agent, a .gitignore.
    Init(init::InitArgs),
    /// Show what tfc sees: backend CLIs, configuration, project root, run store.
    Doctor(doctor::DoctorArgs),
    /// Serve the Model Context Protocol on stdio, for coding-agent hosts.
    Mcp(mcp::McpArgs),
    /// Serve the Language Server Protocol on stdio, for editors: diagnostics as you type,
    /// hover, go to definition, rename, completion, quick fixes.
    Lsp(lsp::LspArgs),
    /// Serve runs on Temporal: workflow TfcRun and its activities, with this machine's agents.
    Worker(Box<worker::WorkerArgs>),
    /// Cancel a run on Temporal (it ends paused, interrupted).
    Cancel(Box<worker::CancelArgs>),
    /// Decide an approval a run on Temporal waits for.
    Approve(Box<worker::ApproveArgs>),
    /// Print the shell completion script for bash, zsh, fish, PowerShell or elvish.
    Completions(completions::CompletionsArgs),
    /// Print tfc's man page (or one command's), or write every page with --out.
    Man(man::ManArgs),
}

/// Exit codes shared by every command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Ok = 0,
    /// `check`: errors found; `eval json|array`: nothing found; `run`: the run failed.
    Failure = 1,
    /// Usage errors and unreadable or invalid input.
    Usage = 2,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let exit = match cli.command {
        Command::Run(args) => return run::run(*args),
        Command::Resume(args) => return resume::run(*args),
        Command::Fork(args) => return fork::run(*args),
        Command::Worker(args) => return worker::worker(*args),
        Command::Cancel(args) => return worker::cancel(*args),
        Command::Approve(args) => return worker::approve(*args),
        Command::Check(args) => check::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Test(args) => test::run(args),
        Command::Graph(args) => graph::run(args),
        Command::Report(args) => report::run(args),
        Command::Schema(args) => schema::run(args),
        Command::Runs(args) => runs::run(args),
        Command::Show(args) => show::run(args),
        Command::List(args) => list::run(args),
        Command::Init(args) => init::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Lsp(args) => lsp::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
    };
    exit.into()
}

/// Report a usage or input problem on stderr and return exit code 2.
pub fn usage_error(message: impl std::fmt::Display) -> Exit {
    say(format_args!("error: {message}\n"));
    Exit::Usage
}

/// Write a command's result to stdout. A reader that went away early (`tfc run … | head -c1`)
/// is not worth a panic: the rest is dropped and the command ends with its own exit code.
pub fn print_out(text: impl std::fmt::Display) {
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "{text}").and_then(|()| out.flush());
}

/// Flush stdout and close it: `/dev/null` takes its descriptor's place, so a reader of the
/// pipe sees its end now, while the process may go on (waiting for a trace collector, SPEC
/// §16); anything written to stdout after this goes nowhere. Never fails: a stdout that
/// cannot be replaced stays as it is.
pub fn close_stdout() {
    let _ = std::io::stdout().lock().flush();
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = nix::unistd::dup2_stdout(&null);
    }
}

/// [`print_out`] plus a newline.
pub fn println_out(text: impl std::fmt::Display) {
    print_out(format_args!("{text}\n"));
}

/// Write to stderr, never panicking: after SIGHUP the terminal may be gone (EIO), and a run
/// still has to cancel its agents and save its record.
pub fn say(text: impl std::fmt::Display) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{text}").and_then(|()| err.flush());
}

/// `--color`: whether diagnostics and views are drawn in colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    #[default]
    Auto,
    Always,
    Never,
}

impl Color {
    /// auto = stderr is a terminal and `NO_COLOR` is unset.
    pub fn enabled(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::io::IsTerminal::is_terminal(&std::io::stderr())
                    && std::env::var_os("NO_COLOR").is_none()
            }
        }
    }
}
