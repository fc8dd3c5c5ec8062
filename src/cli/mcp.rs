//! `tfc mcp [--root DIR]`: the MCP server on stdio (SPEC §13). stdout carries only protocol
//! messages; logs go to stderr. EOF on stdin ends the server with exit 0; runs it started go on.

use std::path::PathBuf;

use clap::Args;

use super::{Exit, usage_error};

#[derive(Args, Debug)]
pub struct McpArgs {
    /// The project root: flow paths resolve against it and must stay inside it (default: the
    /// project root of the current directory).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

/// `tfc mcp`.
pub fn run(a: McpArgs) -> Exit {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let root = match a.root {
        Some(r) => match cwd.join(&r).canonicalize() {
            Ok(p) if p.is_dir() => p,
            Ok(p) => return usage_error(format!("--root {}: not a directory", p.display())),
            Err(e) => return usage_error(format!("--root {}: {e}", r.display())),
        },
        None => tfc::project::project_root(&cwd),
    };
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            return usage_error(format!(
                "cannot find the tfc binary to start runs with: {e}"
            ));
        }
    };
    sayln!("tfc mcp: serving {} on stdio", root.display());
    tfc::mcp::serve(
        tfc::mcp::Config { root, exe },
        std::io::stdin().lock(),
        std::io::stdout(),
    );
    Exit::Ok
}
