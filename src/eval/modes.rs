//! The seven modes of `tfc eval` (SPEC §11.2) as one function: the `--format json` object, what
//! text mode prints, and the note it writes to stderr. `tfc eval` and the MCP tool `tfc_eval`
//! both answer through [`evaluate`], so the two cannot drift apart.

use super::coerce::coerce_array;
use super::condition::{Outcome, eval_gate_entry, eval_until, eval_when};
use super::safe_parse::safe_parse;
use super::scope::Bindings;
use crate::compile::Template;
use crate::value::{Map, Value};

/// What `tfc eval` evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Render a template in text mode (§4.4).
    Template,
    /// Interpolate a value (§4.5).
    Value,
    /// A `when` condition: fail-open.
    When,
    /// An `until` condition: fail-safe.
    Until,
    /// One gate `eval` entry.
    Gate,
    /// safeParse of the text.
    Json,
    /// coerceArray(safeParse(text)).
    Array,
}

impl Mode {
    /// Every mode, in the order SPEC lists them.
    pub const ALL: [Mode; 7] = [
        Mode::Template,
        Mode::Value,
        Mode::When,
        Mode::Until,
        Mode::Gate,
        Mode::Json,
        Mode::Array,
    ];

    /// The mode's name, as `tfc eval` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Template => "template",
            Mode::Value => "value",
            Mode::When => "when",
            Mode::Until => "until",
            Mode::Gate => "gate",
            Mode::Json => "json",
            Mode::Array => "array",
        }
    }

    /// The mode called `name`.
    pub fn parse(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

/// One evaluation's results in every form `tfc eval` prints.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluated {
    /// The `--format json` object.
    pub json: Value,
    /// What text mode writes to stdout, exactly (the rendered template; otherwise one line).
    pub text: String,
    /// What text mode writes to stderr first, one line: a condition's parse error or
    /// safeParse's warning.
    pub note: Option<String>,
    /// `false` when `json`/`array` found nothing (exit 1); `true` otherwise.
    pub found: bool,
}

/// The eval context used when none is given: `{}` with empty `args`.
pub fn empty_scope() -> Bindings {
    Bindings {
        args: Some(Value::Object(Map::default())),
        ..Bindings::default()
    }
}

/// Evaluate `text` (for `json`/`array`: the input to parse) in `mode` against `scope`.
pub fn evaluate(mode: Mode, text: &str, scope: &Bindings) -> Evaluated {
    match mode {
        Mode::Template => {
            let template = Template::parse(text);
            let rendered = template.render(scope);
            let mut json = Map::default();
            json.insert("output".into(), Value::from(rendered.text.as_str()));
            let missing = template.path_texts(&rendered.missing);
            json.insert("missing".into(), strings(&missing));
            json.insert(
                "reads".into(),
                strings(&template.path_texts(&rendered.reads)),
            );
            found(Value::Object(json), rendered.text, None)
        }
        Mode::Value => {
            let template = Template::parse(text);
            let (value, rendered) = template.render_value(scope);
            let line = format!("{}\n", value.to_json());
            let mut json = Map::default();
            json.insert("value".into(), value);
            json.insert(
                "reads".into(),
                strings(&template.path_texts(&rendered.reads)),
            );
            found(Value::Object(json), line, None)
        }
        Mode::When => condition(eval_when(text, scope), "value"),
        Mode::Until => condition(eval_until(text, scope), "value"),
        Mode::Gate => condition(eval_gate_entry(text, scope), "passed"),
        Mode::Json | Mode::Array => {
            let parsed = safe_parse(text);
            let value = if mode == Mode::Array {
                parsed
                    .value
                    .as_ref()
                    .and_then(coerce_array)
                    .map(|a| Value::Array(a.clone()))
            } else {
                parsed.value.clone()
            };
            let line = value
                .as_ref()
                .map_or_else(String::new, |v| format!("{}\n", v.to_json()));
            let mut json = Map::default();
            json.insert("found".into(), Value::Bool(value.is_some()));
            let is_found = value.is_some();
            json.insert("value".into(), value.unwrap_or(Value::Null));
            if mode == Mode::Json {
                let diagnostic = parsed.warning.map_or(Value::Null, Value::from);
                json.insert("diagnostic".into(), diagnostic);
            }
            Evaluated {
                json: Value::Object(json),
                text: line,
                note: parsed.warning.map(|w| format!("warning: {w}")),
                found: is_found,
            }
        }
    }
}

fn found(json: Value, text: String, note: Option<String>) -> Evaluated {
    Evaluated {
        json,
        text,
        note,
        found: true,
    }
}

/// `true`/`false` (a parse error is the note), or `{<key>, error, reads}`.
fn condition(outcome: Outcome, key: &str) -> Evaluated {
    let (error, note) = match &outcome.error {
        Some(e) => {
            let mut m = Map::default();
            m.insert("message".into(), Value::from(e.message.as_str()));
            m.insert("start".into(), Value::Number(e.span.start as f64));
            m.insert("end".into(), Value::Number(e.span.end as f64));
            let note = format!(
                "error: {} (at bytes {}..{})",
                e.message, e.span.start, e.span.end
            );
            (Value::Object(m), Some(note))
        }
        None => (Value::Null, None),
    };
    let mut json = Map::default();
    json.insert(key.into(), Value::Bool(outcome.value));
    json.insert("error".into(), error);
    json.insert("reads".into(), strings(&outcome.reads));
    found(Value::Object(json), format!("{}\n", outcome.value), note)
}

fn strings(list: &[String]) -> Value {
    Value::Array(list.iter().map(|s| Value::from(s.as_str())).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_their_names() {
        for m in Mode::ALL {
            assert_eq!(Mode::parse(m.as_str()), Some(m));
        }
        assert_eq!(Mode::parse("nope"), None);
    }

    #[test]
    fn a_condition_parse_error_is_a_note_and_the_fallback_value() {
        let r = evaluate(Mode::When, "{args.a} ==", &empty_scope());
        assert_eq!(r.text, "true\n");
        assert!(r.note.as_deref().is_some_and(|n| n.starts_with("error: ")));
        assert_eq!(r.json.as_object().unwrap()["value"], Value::Bool(true));
        let r = evaluate(Mode::Until, "{args.a} ==", &empty_scope());
        assert_eq!(r.text, "true\n");
        let r = evaluate(Mode::Gate, "{args.a} ==", &empty_scope());
        assert_eq!(r.text, "false\n");
    }

    #[test]
    fn json_and_array_report_what_they_found() {
        let r = evaluate(Mode::Array, "noise [1,2] noise", &empty_scope());
        assert!(r.found);
        assert_eq!(r.text, "[1,2]\n");
        assert_eq!(r.json.to_json(), r#"{"found":true,"value":[1,2]}"#);
        let r = evaluate(Mode::Json, "no json here", &empty_scope());
        assert!(!r.found);
        assert_eq!(r.text, "");
        let o = r.json.as_object().unwrap();
        assert_eq!(o["found"], Value::Bool(false));
        assert!(o.contains_key("diagnostic"));
    }

    #[test]
    fn a_template_prints_exactly_its_rendering() {
        let r = evaluate(Mode::Template, "a {args.x} b", &empty_scope());
        assert_eq!(r.text, "a {args.x} b");
        assert_eq!(
            r.json.to_json(),
            r#"{"output":"a {args.x} b","missing":["args.x"],"reads":[]}"#
        );
    }
}
