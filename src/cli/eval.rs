//! `tfc eval`: explain a template, condition or safeParse against an eval context (SPEC §11.2).

use clap::{Args, Subcommand, ValueEnum};

use super::input::load_context;
use super::input::read_text;
use super::{Exit, usage_error};
use tfc::compile::Template;
use tfc::eval::coerce::coerce_array;
use tfc::eval::safe_parse::safe_parse;
use tfc::eval::{Bindings, Outcome, eval_gate_entry, eval_until, eval_when};
use tfc::value::{Map, Value};

#[derive(Args, Debug)]
pub struct EvalArgs {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand, Debug)]
enum Mode {
    /// Render a template in text mode (SPEC §4.4).
    Template(Expr),
    /// Interpolate a value (SPEC §4.5): one whole placeholder keeps its raw value.
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
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Args, Debug)]
struct Plain {
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

pub fn run(args: EvalArgs) -> Exit {
    match args.mode {
        Mode::Template(e) => with_input(&e, |text, scope| template(text, scope, e.format)),
        Mode::Value(e) => with_input(&e, |text, scope| value(text, scope, e.format)),
        Mode::When(e) => with_input(&e, |text, scope| {
            condition(eval_when(text, scope), "value", e.format)
        }),
        Mode::Until(e) => with_input(&e, |text, scope| {
            condition(eval_until(text, scope), "value", e.format)
        }),
        Mode::Gate(e) => with_input(&e, |text, scope| {
            condition(eval_gate_entry(text, scope), "passed", e.format)
        }),
        Mode::Json(p) => json(p.format, false),
        Mode::Array(p) => json(p.format, true),
    }
}

/// Read TEXT and the context, then run `f`.
fn with_input(e: &Expr, f: impl FnOnce(&str, &Bindings) -> Exit) -> Exit {
    if e.text == "-" && e.ctx.as_deref() == Some("-") {
        return usage_error("TEXT and --ctx cannot both be read from stdin ('-')");
    }
    let text = if e.text == "-" {
        match read_text("-", "TEXT") {
            Ok(t) => t,
            Err(m) => return usage_error(m),
        }
    } else {
        e.text.clone()
    };
    let scope = match e.ctx.as_deref().map(load_context).transpose() {
        Ok(scope) => scope.unwrap_or_else(empty_scope),
        Err(m) => return usage_error(m),
    };
    f(&text, &scope)
}

fn empty_scope() -> Bindings {
    Bindings {
        args: Some(Value::Object(Map::default())),
        ..Bindings::default()
    }
}

fn template(text: &str, scope: &Bindings, format: Format) -> Exit {
    let template = Template::parse(text);
    let rendered = template.render(scope);
    match format {
        Format::Text => out!("{}", rendered.text),
        Format::Json => {
            let mut out = Map::default();
            out.insert("output".into(), Value::String(rendered.text.clone()));
            out.insert(
                "missing".into(),
                strings(&template.path_texts(&rendered.missing)),
            );
            out.insert(
                "reads".into(),
                strings(&template.path_texts(&rendered.reads)),
            );
            outln!("{}", Value::Object(out).to_json());
        }
    }
    Exit::Ok
}

fn value(text: &str, scope: &Bindings, format: Format) -> Exit {
    let template = Template::parse(text);
    let (value, rendered) = template.render_value(scope);
    match format {
        Format::Text => outln!("{}", value.to_json()),
        Format::Json => {
            let mut out = Map::default();
            out.insert("value".into(), value);
            out.insert(
                "reads".into(),
                strings(&template.path_texts(&rendered.reads)),
            );
            outln!("{}", Value::Object(out).to_json());
        }
    }
    Exit::Ok
}

/// Print a condition outcome: `true`/`false` (a parse error also on stderr), or the JSON object
/// `{<key>, error, reads}`.
fn condition(outcome: Outcome, key: &str, format: Format) -> Exit {
    match format {
        Format::Text => {
            if let Some(e) = &outcome.error {
                sayln!(
                    "error: {} (at bytes {}..{})",
                    e.message,
                    e.span.start,
                    e.span.end
                );
            }
            outln!("{}", outcome.value);
        }
        Format::Json => {
            let error = match &outcome.error {
                Some(e) => {
                    let mut m = Map::default();
                    m.insert("message".into(), Value::from(e.message.as_str()));
                    m.insert("start".into(), Value::Number(e.span.start as f64));
                    m.insert("end".into(), Value::Number(e.span.end as f64));
                    Value::Object(m)
                }
                None => Value::Null,
            };
            let mut out = Map::default();
            out.insert(key.into(), Value::Bool(outcome.value));
            out.insert("error".into(), error);
            out.insert("reads".into(), strings(&outcome.reads));
            outln!("{}", Value::Object(out).to_json());
        }
    }
    Exit::Ok
}

fn json(format: Format, array: bool) -> Exit {
    let input = match read_text("-", "input") {
        Ok(t) => t,
        Err(m) => return usage_error(m),
    };
    let parsed = safe_parse(&input);
    let value = if array {
        parsed
            .value
            .as_ref()
            .and_then(coerce_array)
            .map(|a| Value::Array(a.clone()))
    } else {
        parsed.value.clone()
    };
    let found = value.is_some();
    match format {
        Format::Text => {
            if let Some(w) = parsed.warning {
                sayln!("warning: {w}");
            }
            if let Some(v) = &value {
                outln!("{}", v.to_json());
            }
        }
        Format::Json => {
            let mut out = Map::default();
            out.insert("found".into(), Value::Bool(found));
            out.insert("value".into(), value.unwrap_or(Value::Null));
            if !array {
                out.insert(
                    "diagnostic".into(),
                    parsed.warning.map(Value::from).unwrap_or(Value::Null),
                );
            }
            outln!("{}", Value::Object(out).to_json());
        }
    }
    if found { Exit::Ok } else { Exit::Failure }
}

fn strings(list: &[String]) -> Value {
    Value::Array(list.iter().map(|s| Value::from(s.as_str())).collect())
}
