//! `tfc lsp [--strict|--no-strict] [--allow CODE]…`: the language server on stdio (LSP 3.17),
//! for editors. stdout carries only protocol messages; logs go to stderr. `shutdown` then
//! `exit` ends it with status 0; `exit` alone or the end of input with status 1.

use clap::Args;

use super::{Exit, usage_error};
use tfc::lsp::{Ended, Settings, serve_stdio};

#[derive(Args, Debug)]
pub struct LspArgs {
    /// Report interpolation warnings as errors in every document (overrides each flow's
    /// strictInterpolation), as `tfc check --strict` does.
    #[arg(long, overrides_with = "no_strict")]
    strict: bool,
    /// Do not report interpolation warnings as errors, as `tfc check --no-strict` does.
    #[arg(long = "no-strict")]
    no_strict: bool,
    /// Do not report this warning: a code (W0102) or a name (gate-sole-path); repeatable.
    #[arg(long, value_name = "CODE")]
    allow: Vec<String>,
}

/// `tfc lsp`.
pub fn run(a: LspArgs) -> Exit {
    let allow = match super::check::allowed(&a.allow) {
        Ok(codes) => codes,
        Err(m) => return usage_error(m),
    };
    let strict = if a.strict {
        Some(true)
    } else if a.no_strict {
        Some(false)
    } else {
        None
    };
    match serve_stdio(Settings { strict, allow }) {
        Ended::Exit => Exit::Ok,
        Ended::Abrupt => Exit::Failure,
    }
}
