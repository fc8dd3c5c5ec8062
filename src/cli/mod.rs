//! Command-line interface: one module per command. Each command returns its exit code; output
//! goes to stdout (results only) and stderr (diagnostics, progress).

mod check;
mod eval;
mod graph;
mod input;
mod progress;
mod run;
mod schema;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// tfc — check and run taskflow flows: declarative, verifiable graphs of agent phases.
#[derive(Parser, Debug)]
#[command(name = "tfc", version, about, propagate_version = true)]
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
    /// Evaluate a template, condition or safeParse against an eval context.
    Eval(eval::EvalArgs),
    /// Print the Mermaid flowchart of a flow, its problems marked.
    Graph(graph::GraphArgs),
    /// Print the JSON Schema (draft 2020-12) of flow files, for editor completion.
    Schema(schema::SchemaArgs),
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
        Command::Check(args) => check::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Graph(args) => graph::run(args),
        Command::Schema(args) => schema::run(args),
    };
    exit.into()
}

/// Report a usage or input problem on stderr and return exit code 2.
pub fn usage_error(message: impl std::fmt::Display) -> Exit {
    eprintln!("error: {message}");
    Exit::Usage
}
