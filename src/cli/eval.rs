//! `tfc eval`: explain a template, condition or safeParse against an eval context (SPEC §11.2).

use clap::{Args, Subcommand, ValueEnum};

use super::input::load_context;
use super::input::read_text;
use super::{Exit, usage_error};
use tfc::eval::Bindings;
use tfc::eval::modes::{self, Evaluated, empty_scope, evaluate};

#[derive(Args, Debug)]
pub struct EvalArgs {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand, Debug)]
enum Mode {
    /// Render a template as text (a placeholder that resolves to nothing stays as written).
    Template(Expr),
    /// Interpolate a value: a text that is one whole placeholder keeps its raw JSON value.
    Value(Expr),
    /// Evaluate a `when` condition: fail-open (a parse error is true).
    When(Expr),
    /// Evaluate an `until` condition: fail-safe (a parse error stops the loop: true).
    Until(Expr),
    /// Evaluate one gate `eval` entry (`contains` allowed; a parse error fails).
    Gate(Expr),
    /// safeParse standard input.
    Json(Plain),
    /// coerceArray(safeParse(standard input)).
    Array(Plain),
}

#[derive(Args, Debug)]
struct Expr {
    /// The template or expression; `-` reads it from stdin.
    text: String,
    /// Eval context file (`-` for stdin); default `{}`.
    #[arg(long, value_name = "FILE|-")]
    ctx: Option<String>,
    /// `text`: the result alone; `json`: the result with what was missing, read and wrong.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Args, Debug)]
struct Plain {
    /// `text`: the result alone; `json`: the result with what was missing, read and wrong.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

pub fn run(args: EvalArgs) -> Exit {
    let (mode, expr, format) = match &args.mode {
        Mode::Template(e) => (modes::Mode::Template, Some(e), e.format),
        Mode::Value(e) => (modes::Mode::Value, Some(e), e.format),
        Mode::When(e) => (modes::Mode::When, Some(e), e.format),
        Mode::Until(e) => (modes::Mode::Until, Some(e), e.format),
        Mode::Gate(e) => (modes::Mode::Gate, Some(e), e.format),
        Mode::Json(p) => (modes::Mode::Json, None, p.format),
        Mode::Array(p) => (modes::Mode::Array, None, p.format),
    };
    let evaluated = match expr {
        Some(e) => with_input(e, |text, scope| evaluate(mode, text, scope)),
        // json/array parse standard input.
        None => read_text("-", "input").map(|input| evaluate(mode, &input, &empty_scope())),
    };
    match evaluated {
        Ok(r) => print(r, format),
        Err(m) => usage_error(m),
    }
}

/// Read TEXT and the context, then evaluate.
fn with_input(e: &Expr, f: impl FnOnce(&str, &Bindings) -> Evaluated) -> Result<Evaluated, String> {
    if e.text == "-" && e.ctx.as_deref() == Some("-") {
        return Err("TEXT and --ctx cannot both be read from stdin ('-')".into());
    }
    let text = if e.text == "-" {
        read_text("-", "TEXT")?
    } else {
        e.text.clone()
    };
    let scope = e.ctx.as_deref().map(load_context).transpose()?;
    Ok(f(&text, &scope.unwrap_or_else(empty_scope)))
}

/// Text mode: the note on stderr, then the output; JSON: the result object. Exit 1 only when
/// json/array found nothing.
fn print(r: Evaluated, format: Format) -> Exit {
    match format {
        Format::Text => {
            if let Some(note) = &r.note {
                sayln!("{note}");
            }
            out!("{}", r.text);
        }
        Format::Json => outln!("{}", r.json.to_json()),
    }
    if r.found { Exit::Ok } else { Exit::Failure }
}
