//! `tfc man [COMMAND…] [--out DIR]`: man pages (roff) generated from the clap definition
//! (SPEC §19). One page on stdout — `tfc(1)`, or `tfc-check(1)` for `tfc man check` — or,
//! with `--out`, every page (`tfc.1`, `tfc-check.1`, `tfc-eval-when.1`, …) written into DIR.
//! The release archives carry the pages written this way (`packaging/man/`).
//!
//! The pages name the package version without the commit, so they change only with the
//! commands they describe.

use std::path::PathBuf;

use clap::{Args, CommandFactory};

use super::{Cli, Exit};

#[derive(Args, Debug)]
pub struct ManArgs {
    /// The command whose page to print, as words (`tfc man eval when`); none: tfc(1).
    pub command: Vec<String>,
    /// Write every page into this folder (created if missing) instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub out: Option<PathBuf>,
}

/// `tfc man`.
pub fn run(args: ManArgs) -> Exit {
    let root = command();
    if let Some(dir) = args.out {
        return match write_all(root, &dir) {
            Ok(n) => {
                sayln!("wrote {n} man pages to {}", dir.display());
                Exit::Ok
            }
            Err(e) => super::usage_error(format_args!(
                "cannot write the man pages to {}: {e}",
                dir.display()
            )),
        };
    }
    let mut cmd = root;
    let mut path = String::from("tfc");
    for word in &args.command {
        let names: Vec<String> = visible(&cmd).map(|c| c.get_name().to_owned()).collect();
        let Some(sub) = visible(&cmd).find(|c| c.get_name() == word).cloned() else {
            let what = if names.is_empty() {
                format!("`{path}` has no subcommands, so `{word}` names no page")
            } else {
                format!(
                    "`{path}` has no command `{word}`; its commands: {}",
                    names.join(", ")
                )
            };
            return super::usage_error(what);
        };
        path = format!("{path} {word}");
        cmd = sub;
    }
    let mut buf = Vec::new();
    match page(cmd).render(&mut buf) {
        Ok(()) => {
            super::print_out(String::from_utf8_lossy(&buf));
            Exit::Ok
        }
        Err(e) => super::usage_error(format_args!("cannot render the man page: {e}")),
    }
}

/// The `tfc` command as the pages describe it: built (so subcommands carry their full names,
/// `tfc-eval-when`), the package version without the commit, no `help` subcommand.
pub fn command() -> clap::Command {
    let mut cmd = Cli::command()
        .version(env!("CARGO_PKG_VERSION"))
        .disable_help_subcommand(true);
    // The NAME line already says `tfc \- …`: not `tfc \- tfc — check and run …`.
    let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
    if let Some(rest) = about.strip_prefix("tfc — ") {
        let mut chars = rest.chars();
        let first = chars.next().map(|c| c.to_uppercase().to_string());
        cmd = cmd.about(format!("{}{}", first.unwrap_or_default(), chars.as_str()));
    }
    cmd.build();
    cmd
}

/// The page of `cmd`, its footer naming the package (`tfc 0.1.0`) on every page.
fn page(cmd: clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(cmd).source(concat!("tfc ", env!("CARGO_PKG_VERSION")))
}

/// Visible subcommands of `cmd`.
fn visible(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands().filter(|s| !s.is_hide_set())
}

/// Write the page of `cmd` and of each visible subcommand, recursively, into `dir`.
/// Returns how many pages were written.
pub fn write_all(cmd: clap::Command, dir: &std::path::Path) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    fn walk(cmd: clap::Command, dir: &std::path::Path, n: &mut usize) -> std::io::Result<()> {
        for sub in visible(&cmd).cloned().collect::<Vec<_>>() {
            walk(sub, dir, n)?;
        }
        page(cmd).generate_to(dir)?;
        *n += 1;
        Ok(())
    }
    let mut n = 0;
    walk(cmd, dir, &mut n)?;
    Ok(n)
}
