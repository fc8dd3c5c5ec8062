//! Argument values against their declarations (SPEC §2.2): defaults (E0501) and invocation
//! values (E0502) are checked by the same rules.

use super::enums::ArgType;
use super::ir::{ArgSpec, Flow};
use crate::value::{Value, format_number, js_number_value};

/// Why a value does not fit its spec, phrased to follow `Argument 'n' <default|invocation> must`.
pub fn check_value(spec: &ArgSpec, value: &Value) -> Result<(), String> {
    let Some(ty) = spec.ty else {
        return Ok(());
    };
    match (ty, value) {
        (ArgType::String, Value::String(_)) => Ok(()),
        (ArgType::String, v) => Err(format!("be a string, got {}", v.type_name())),
        (ArgType::RelativePath, Value::String(s)) => check_relative_path(s),
        (ArgType::RelativePath, v) => {
            Err(format!("be a relative path string, got {}", v.type_name()))
        }
        (ArgType::Number, Value::Number(n)) => check_number(spec, *n),
        (ArgType::Number, v) => Err(format!("be a number, got {}", v.type_name())),
        (ArgType::Boolean, Value::Bool(_)) => Ok(()),
        (ArgType::Boolean, v) => Err(format!("be a boolean, got {}", v.type_name())),
        (ArgType::Enum, v) => {
            if spec.values.contains(v) {
                Ok(())
            } else {
                Err(format!("be one of {}", enum_list(spec)))
            }
        }
    }
}

/// Convert a `K=V` invocation string to the declared type (SPEC §1): numbers by JS `Number()`
/// (finite), booleans `true`/`false`, enums by the member whose text is V; else a string.
pub fn convert_text(spec: Option<&ArgSpec>, text: &str) -> Result<Value, String> {
    match spec.and_then(|s| s.ty) {
        Some(ArgType::Number) => {
            let n = js_number_value(text);
            if n.is_finite() {
                Ok(Value::Number(n))
            } else {
                Err(format!("be a finite number, got '{text}'"))
            }
        }
        Some(ArgType::Boolean) => match text {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(format!("be true or false, got '{text}'")),
        },
        Some(ArgType::Enum) => {
            let spec = spec.expect("typed enum has a spec");
            spec.values
                .iter()
                .find(|v| member_text(v) == text)
                .cloned()
                .ok_or_else(|| format!("be one of {}, got '{text}'", enum_list(spec)))
        }
        _ => Ok(Value::String(text.to_owned())),
    }
}

/// A value given to a declared argument, converted to its type and checked (SPEC §1, §7.5
/// "Sub-flow arguments"): the one rule of `K=V` pairs, sub-flow `with` values (checked and
/// run) alike. A string into a `number`, `boolean` or `enum` argument converts by its text as
/// a `K=V` value does (`"5"` ⇒ 5); a non-string into a `string` or `relative-path` argument is
/// JS-formatted as template text is (`5` ⇒ `"5"`); every other value keeps its JSON type.
/// The result passes [`check_value`] (ranges, enum members, relative paths); the error
/// follows `Argument 'n' invocation must`.
pub fn convert_value(spec: Option<&ArgSpec>, value: Value) -> Result<Value, String> {
    let Some(spec) = spec.filter(|s| s.ty.is_some()) else {
        return Ok(value);
    };
    let value = match (spec.ty, value.as_str()) {
        (Some(ArgType::Number | ArgType::Boolean | ArgType::Enum), Some(text)) => {
            convert_text(Some(spec), text)?
        }
        (Some(ArgType::String | ArgType::RelativePath), None) => {
            let mut text = String::new();
            crate::eval::write_text(&value, &mut text);
            Value::String(text)
        }
        _ => value,
    };
    check_value(spec, &value)?;
    Ok(value)
}

/// Why the given arguments cannot start `flow` (SPEC §2.2 resolveArgs), one line per problem:
/// a value that does not convert (E0502), a missing required argument (E0503), an argument
/// the flow neither declares nor reads when it declares `args` (E0504).
#[derive(Clone, Debug, PartialEq)]
pub struct ArgProblem {
    /// E0502, E0503 or E0504.
    pub code: crate::diag::Code,
    /// The argument.
    pub name: String,
    /// `Argument 'n' invocation must …` / `Missing required argument 'n'` / `unknown argument 'n'…`.
    pub message: String,
}

/// resolveArgs (SPEC §2.2): the given values converted by [`convert_value`], then the
/// defaults of declared arguments not given. `reads` says whether the flow reads an undeclared
/// name through `{args.X…}` (such a name passes through; others are E0504 in a flow that
/// declares `args`).
pub fn resolve_args(
    flow: &Flow,
    given: crate::value::Map,
    reads: impl Fn(&str) -> bool,
) -> Result<crate::value::Map, Vec<ArgProblem>> {
    use crate::diag::Code;
    let mut out = crate::value::Map::default();
    let mut problems = Vec::new();
    for (name, value) in given {
        let spec = flow.args.get(&name);
        if spec.is_none() && flow.args_key.is_some() && !reads(&name) {
            problems.push(ArgProblem {
                code: Code::UnknownArg,
                message: unknown_arg_message(flow, &name),
                name,
            });
            continue;
        }
        match convert_value(spec, value) {
            Ok(v) => {
                out.insert(name, v);
            }
            Err(why) => problems.push(ArgProblem {
                code: Code::InvalidArgValue,
                message: format!("Argument '{name}' invocation must {why}"),
                name,
            }),
        }
    }
    for (name, spec) in &flow.args {
        if out.contains_key(name) || problems.iter().any(|p| p.name == *name) {
            continue;
        }
        match &spec.default {
            Some(d) => {
                out.insert(name.clone(), d.value.clone());
            }
            None if spec.ty.is_some() && spec.required => problems.push(ArgProblem {
                code: Code::MissingArg,
                message: format!("Missing required argument '{name}'"),
                name: name.clone(),
            }),
            None => {}
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// `unknown argument 'n' (did you mean 'm'?); declared: a, b` (E0504).
pub fn unknown_arg_message(flow: &Flow, name: &str) -> String {
    let declared: Vec<&str> = flow.args.keys().map(String::as_str).collect();
    let list = if declared.is_empty() {
        "the flow declares no arguments".to_owned()
    } else {
        format!("declared: {}", declared.join(", "))
    };
    match crate::diag::did_you_mean(name, declared.iter().copied()) {
        Some(n) => format!("unknown argument '{name}' (did you mean '{n}'?); {list}"),
        None => format!("unknown argument '{name}'; {list}"),
    }
}

fn member_text(v: &Value) -> String {
    match v {
        Value::Number(n) => format_number(*n),
        Value::String(s) => s.clone(),
        other => other.to_json(),
    }
}

/// An enum's members as JSON: `"fast", "slow"`.
pub(crate) fn enum_list(spec: &ArgSpec) -> String {
    spec.values
        .iter()
        .map(|v| v.to_json())
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_number(spec: &ArgSpec, n: f64) -> Result<(), String> {
    if !n.is_finite() {
        return Err("be a finite number".into());
    }
    if let Some(min) = spec.minimum.filter(|m| n < *m) {
        return Err(format!(
            "be >= {} (got {})",
            format_number(min),
            format_number(n)
        ));
    }
    if let Some(max) = spec.maximum.filter(|m| n > *m) {
        return Err(format!(
            "be <= {} (got {})",
            format_number(max),
            format_number(n)
        ));
    }
    Ok(())
}

/// A portable relative path: non-empty, relative, `/`-separated, no empty, `.` or `..`
/// segments, no segment ending in a dot or space, no reserved device names or `<>:"|?*`.
pub fn check_relative_path(p: &str) -> Result<(), String> {
    if p.is_empty() {
        return Err("be a non-empty relative path".into());
    }
    if p.contains('\\') {
        return Err(format!("use '/' separators, not '\\' (got '{p}')"));
    }
    if p.starts_with('/') || p.as_bytes().get(1) == Some(&b':') {
        return Err(format!("be a relative path, not absolute (got '{p}')"));
    }
    for seg in p.split('/') {
        if seg.is_empty() || seg == "." || seg == ".." {
            return Err(format!(
                "not contain empty, '.' or '..' segments (got '{p}')"
            ));
        }
        if seg.ends_with('.') || seg.ends_with(' ') {
            return Err(format!(
                "not have a segment ending in a dot or space (got '{p}')"
            ));
        }
        if seg
            .chars()
            .any(|c| "<>:\"|?*".contains(c) || c.is_control())
        {
            return Err(format!(
                "not contain <>:\"|?* or control characters (got '{p}')"
            ));
        }
        let stem = seg.split('.').next().unwrap_or(seg).to_ascii_uppercase();
        let reserved = matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL")
            || ((stem.starts_with("COM") || stem.starts_with("LPT"))
                && stem.len() == 4
                && stem.as_bytes()[3].is_ascii_digit());
        if reserved {
            return Err(format!("not use the reserved device name '{seg}'"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;

/// Arguments as given on a command line: `--args JSON`, `K=V` pairs (which override it), and
/// at most one bare positional value (bound to the first declared argument).
#[derive(Clone, Debug, Default)]
pub struct Invocation {
    /// The `--args` object.
    pub json: crate::value::Map,
    /// `K=V` pairs (and `--arg K=V`), in the order given.
    pub pairs: Vec<(String, String)>,
    /// The one bare value, bound to the first declared argument.
    pub positional: Option<String>,
}

/// The provided arguments, typed by their declarations (SPEC §1): E0502 for a value that does
/// not convert. Defaults are not filled in here (see [`effective_args`]).
pub fn resolve_invocation(
    flow: &Flow,
    inv: &Invocation,
) -> (crate::value::Map, Vec<crate::diag::Diagnostic>) {
    resolve_owned(flow, inv.clone())
}

/// [`resolve_invocation`] consuming the invocation (no copy of its JSON arguments).
pub fn resolve_owned(
    flow: &Flow,
    inv: Invocation,
) -> (crate::value::Map, Vec<crate::diag::Diagnostic>) {
    use crate::diag::{Code, Diagnostic};
    let mut given = inv.json;
    let mut diags = Vec::new();
    let mut pairs: Vec<(String, String)> = Vec::new();
    if let Some(v) = &inv.positional {
        match flow.args.keys().next() {
            Some(first) => pairs.push((first.clone(), v.clone())),
            None => diags.push(
                Diagnostic::new(Code::InvalidArgValue, format!("a positional argument ('{v}') needs a declared argument to bind to, and the flow declares none"))
                    .help("pass it as NAME=VALUE, or declare the argument under \"args\""),
            ),
        }
    }
    pairs.extend(inv.pairs.iter().cloned());
    for (k, v) in pairs {
        let spec = flow.args.get(&k);
        match convert_value(spec, Value::String(v)) {
            Ok(value) => {
                given.insert(k, value);
            }
            Err(why) => {
                let mut d = Diagnostic::new(
                    Code::InvalidArgValue,
                    format!("Argument '{k}' invocation must {why}"),
                );
                if let Some(spec) = spec {
                    d = d
                        .at(spec.name_span)
                        .with_label("declared here")
                        .help(value_help(spec, Notation::Pair));
                }
                diags.push(d);
            }
        }
    }
    (given, diags)
}

/// How a help line writes an argument given a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notation {
    /// An invocation's pair: `n=10`.
    Pair,
    /// A member of a sub-flow phase's `with` object: `"n": 10` (a number may also be given
    /// as a string of one).
    With,
}

impl Notation {
    /// Argument `name` given `value` (already in this notation).
    fn given(self, name: &str, value: &str) -> String {
        match self {
            Notation::Pair => format!("{name}={value}"),
            Notation::With => format!("\"{name}\": {value}"),
        }
    }
}

/// How to pass a value that fits `spec`, written in `notation`, for E0502 help lines.
pub fn value_help(spec: &ArgSpec, notation: Notation) -> String {
    let given = |value: &str| notation.given(&spec.name, value);
    match spec.ty {
        Some(ArgType::Number) => {
            let range = match (spec.minimum, spec.maximum) {
                (Some(lo), Some(hi)) => {
                    format!(" from {} to {}", format_number(lo), format_number(hi))
                }
                (Some(lo), None) => format!(" >= {}", format_number(lo)),
                (None, Some(hi)) => format!(" <= {}", format_number(hi)),
                (None, None) => String::new(),
            };
            let or_string = match notation {
                Notation::Pair => "",
                Notation::With => " (or a string of one)",
            };
            format!("pass a number{range}{or_string}, e.g. {}", given("10"))
        }
        Some(ArgType::Boolean) => format!("pass {} or {}", given("true"), given("false")),
        Some(ArgType::Enum) => match notation {
            Notation::Pair => format!(
                "pass one of: {}",
                spec.values
                    .iter()
                    .map(|v| given(&member_text(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Notation::With => format!("pass one of {}", enum_list(spec)),
        },
        Some(ArgType::RelativePath) => {
            let path = match notation {
                Notation::Pair => "src/lib",
                Notation::With => "\"src/lib\"",
            };
            format!(
                "pass a relative path with '/' separators, e.g. {}",
                given(path)
            )
        }
        Some(ArgType::String) | None => format!("pass a string, e.g. {}", given("\"…\"")),
    }
}

/// Provided arguments plus the defaults of declared ones that were not provided.
pub fn effective_args(flow: &Flow, given: crate::value::Map) -> crate::value::Map {
    let mut out = given;
    for (name, spec) in &flow.args {
        if !out.contains_key(name)
            && let Some(d) = &spec.default
        {
            out.insert(name.clone(), d.value.clone());
        }
    }
    out
}

/// Split `K=V` at the first `=`; a `"quoted"` V loses its quotes.
pub fn split_pair(text: &str) -> Option<(String, String)> {
    let (k, v) = text.split_once('=')?;
    let v = v
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(v);
    Some((k.to_owned(), v.to_owned()))
}
