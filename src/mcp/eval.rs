//! `tfc_eval`: a template, condition or safeParse evaluated against an eval context, with
//! the result objects of `tfc eval <mode> --format json` (SPEC §11.2).

use serde_json::{Value, json};

use super::call::{Args, ToolError, ToolOutput};
use super::flows::to_wire;
use crate::compile::Template;
use crate::eval::coerce::coerce_array;
use crate::eval::safe_parse::safe_parse;
use crate::eval::{Bindings, Outcome, eval_gate_entry, eval_until, eval_when};

/// The modes, as `tfc eval` names them.
pub const MODES: [&str; 7] = [
    "template", "value", "when", "until", "gate", "json", "array",
];

/// `tfc_eval`.
pub fn tool_eval(mut args: Args) -> Result<ToolOutput, ToolError> {
    let mode = args.str("mode")?;
    let text = args.str("text")?;
    let ctx = args.opt_object("ctx")?;
    args.finish(&["mode", "text", "ctx"])?;
    if !MODES.contains(&mode.as_str()) {
        return Err(ToolError::arg(
            "mode",
            format!("'{mode}' is not one of {}", MODES.join(", ")),
        ));
    }
    let scope = match ctx {
        Some(ctx) => crate::eval::context::bindings_from_context(&crate::value::Value::from(
            &Value::Object(ctx),
        ))
        .map_err(|e| ToolError::arg("ctx", e))?,
        None => Bindings {
            args: Some(crate::value::Value::Object(crate::value::Map::default())),
            ..Bindings::default()
        },
    };
    let structured = match mode.as_str() {
        "template" => {
            let t = Template::parse(&text);
            let r = t.render(&scope);
            json!({"output": r.text, "missing": t.path_texts(&r.missing), "reads": t.path_texts(&r.reads)})
        }
        "value" => {
            let t = Template::parse(&text);
            let (value, r) = t.render_value(&scope);
            json!({"value": to_wire(&value), "reads": t.path_texts(&r.reads)})
        }
        "when" => condition(eval_when(&text, &scope), "value"),
        "until" => condition(eval_until(&text, &scope), "value"),
        "gate" => condition(eval_gate_entry(&text, &scope), "passed"),
        _ => {
            let parsed = safe_parse(&text);
            if mode == "array" {
                let value = parsed.value.as_ref().and_then(coerce_array);
                json!({"found": value.is_some(),
                       "value": value.map_or(Value::Null, |a| to_wire(&crate::value::Value::Array(a.clone())))})
            } else {
                json!({"found": parsed.value.is_some(),
                       "value": parsed.value.as_ref().map_or(Value::Null, to_wire),
                       "diagnostic": parsed.warning})
            }
        }
    };
    let text = match mode.as_str() {
        "template" => structured["output"].as_str().unwrap_or_default().to_owned(),
        _ => structured.to_string(),
    };
    Ok(ToolOutput::new(structured, text))
}

fn condition(outcome: Outcome, key: &str) -> Value {
    let error = outcome.error.as_ref().map_or(
        Value::Null,
        |e| json!({"message": e.message, "start": e.span.start, "end": e.span.end}),
    );
    let mut o = serde_json::Map::new();
    o.insert(key.into(), Value::Bool(outcome.value));
    o.insert("error".into(), error);
    o.insert("reads".into(), json!(outcome.reads));
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(v: Value) -> Result<Value, String> {
        tool_eval(Args::new(Some(&v)).unwrap())
            .map(|o| o.structured)
            .map_err(|e| e.message)
    }

    #[test]
    fn modes_match_tfc_eval_json() {
        let ctx = json!({"steps": {"t": {"output": "{\"severity\":\"high\"}"}}});
        assert_eq!(
            eval(json!({"mode": "when", "text": "{steps.t.json.severity} == high", "ctx": ctx}))
                .unwrap(),
            json!({"value": true, "error": null, "reads": ["steps.t.json.severity"]})
        );
        assert_eq!(
            eval(json!({"mode": "template", "text": "a {args.x} b"})).unwrap()["missing"],
            json!(["args.x"])
        );
        assert_eq!(
            eval(json!({"mode": "array", "text": "noise [1,2] noise"})).unwrap(),
            json!({"found": true, "value": [1, 2]})
        );
        let e = eval(json!({"mode": "nope", "text": "x"})).unwrap_err();
        assert!(e.starts_with("argument 'mode'"), "{e}");
        let e = eval(json!({"mode": "when", "text": "x", "ctx": {"steps": 3}})).unwrap_err();
        assert!(e.starts_with("argument 'ctx'"), "{e}");
    }
}
