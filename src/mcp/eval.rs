//! `tfc_eval`: a template, condition or safeParse evaluated against an eval context, with
//! the result objects of `tfc eval <mode> --format json` (SPEC §11.2).

use serde_json::Value;

use super::call::{Args, ToolError, ToolOutput};
use super::flows::to_wire;
use crate::eval::modes::{Mode, empty_scope, evaluate};

/// `tfc_eval`.
pub fn tool_eval(mut args: Args) -> Result<ToolOutput, ToolError> {
    let mode = args.str("mode")?;
    let text = args.str("text")?;
    let ctx = args.opt_object("ctx")?;
    args.finish(&["mode", "text", "ctx"])?;
    let Some(mode) = Mode::parse(&mode) else {
        let names: Vec<&str> = Mode::ALL.iter().map(|m| m.as_str()).collect();
        return Err(ToolError::arg(
            "mode",
            format!("'{mode}' is not one of {}", names.join(", ")),
        ));
    };
    let scope = match ctx {
        Some(ctx) => crate::eval::context::bindings_from_context(&crate::value::Value::from(
            &Value::Object(ctx),
        ))
        .map_err(|e| ToolError::arg("ctx", e))?,
        None => empty_scope(),
    };
    let r = evaluate(mode, &text, &scope);
    let structured = to_wire(&r.json);
    let text = match mode {
        Mode::Template => r.text,
        _ => structured.to_string(),
    };
    Ok(ToolOutput::new(structured, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
