//! `tfc mcp [--root DIR]`: the MCP server on stdio (SPEC §13). stdout carries only protocol
//! messages; logs go to stderr. EOF on stdin ends the server with exit 0; runs it started go on.

use std::path::{Path, PathBuf};

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

/// The files `tfc init --host H…` writes (and the notes it prints): `found` (a bare `--host`)
/// stands for every host CLI on `PATH`, and so does no `--host` at all, except that finding
/// none is then no error. Each host's entry runs this binary (`<abs path of tfc> mcp`).
pub(super) fn host_plan(
    names: &[String],
    root: &Path,
) -> Result<(Vec<super::init::Change>, Vec<String>), String> {
    use tfc::mcp::hosts::{Host, found_on_path, register};
    let mut hosts = Vec::new();
    if names.is_empty() {
        // Plain `tfc init` (SPEC §13.4): every host CLI found on PATH; none found is fine.
        hosts = found_on_path(&std::env::var_os("PATH").unwrap_or_default());
    }
    for n in names {
        let add: Vec<Host> = if n == "found" {
            let found = found_on_path(&std::env::var_os("PATH").unwrap_or_default());
            if found.is_empty() {
                return Err(
                    "--host: no host CLI (claude, codex, gemini, opencode, pi) is on PATH; \
                     name one: --host claude"
                        .into(),
                );
            }
            found
        } else {
            vec![Host::parse(n).ok_or_else(|| {
                format!("--host {n}: not a host; use claude, codex, gemini, opencode or pi")
            })?]
        };
        for h in add {
            if !hosts.contains(&h) {
                hosts.push(h);
            }
        }
    }
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot find the path of the tfc binary: {e}"))?;
    let codex_home = std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")));
    let (mut changes, mut notes) = (Vec::new(), Vec::new());
    for h in hosts {
        let r = register(h, root, &exe, codex_home.as_deref())
            .map_err(|e| format!("--host {}: {e}", h.as_str()))?;
        changes.extend(r.files.into_iter().map(|f| super::init::Change {
            path: f.path,
            content: f.content,
            exists: f.exists,
        }));
        notes.extend(r.note);
    }
    Ok((changes, notes))
}
