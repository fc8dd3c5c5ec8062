//! The eval context of `tfc eval` (SPEC §11.2): a JSON description of what a phase can see,
//! turned into [`Bindings`].
//!
//! ```json
//! {"args": {}, "steps": {"ID": {"status": "done", "output": "…", "json": null}},
//!  "previousOutput": "…", "locals": {"item": "…"}, "reflexion": "…"}
//! ```

use super::scope::{Bindings, StepState, StepStatus};
use crate::value::{Map, Value};

const TOP_KEYS: &[&str] = &["args", "steps", "previousOutput", "locals", "reflexion"];
const STEP_KEYS: &[&str] = &["status", "output", "json"];
/// The step statuses of a run record (SPEC §4.3), and what templates see of each.
const STATUSES: &[(&str, StepStatus)] = &[
    ("pending", StepStatus::Hidden),
    ("running", StepStatus::Hidden),
    ("done", StepStatus::Done),
    ("failed", StepStatus::Failed),
    ("skipped", StepStatus::Hidden),
];

/// A problem with an eval context, with the JSON path it was found at.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextError(pub String);

impl std::fmt::Display for ContextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Build bindings from an eval context value (already parsed as JSON).
pub fn bindings_from_context(ctx: &Value) -> Result<Bindings, ContextError> {
    let top = ctx.as_object().ok_or_else(|| {
        ContextError(format!(
            "the context must be a JSON object, found {}",
            ctx.type_name()
        ))
    })?;
    check_keys(top, TOP_KEYS, "the context")?;
    let mut b = Bindings::default();
    if let Some(args) = top.get("args") {
        expect_object(args, "args")?;
        b.args = Some(args.clone());
    } else {
        b.args = Some(Value::Object(Map::default()));
    }
    if let Some(steps) = top.get("steps") {
        for (id, step) in expect_object(steps, "steps")? {
            b.steps.insert(id.clone(), step_state(id, step)?);
        }
    }
    b.previous = top.get("previousOutput").cloned();
    if let Some(locals) = top.get("locals") {
        b.locals = expect_object(locals, "locals")?.clone();
    }
    b.reflexion = top.get("reflexion").cloned();
    Ok(b)
}

fn step_state(id: &str, step: &Value) -> Result<StepState, ContextError> {
    let at = member_path("steps", id);
    let fields = expect_object(step, &at)?;
    check_keys(fields, STEP_KEYS, &at)?;
    let status = match fields.get("status") {
        None => StepStatus::Done,
        Some(Value::String(s)) => match STATUSES.iter().find(|(name, _)| name == s) {
            Some(&(_, status)) => status,
            None => {
                let hint = crate::diag::did_you_mean(s, STATUSES.iter().map(|(n, _)| *n))
                    .map(|n| format!(" (did you mean '{n}'?)"))
                    .unwrap_or_default();
                return Err(ContextError(format!(
                    "{at}.status: unknown status {}{hint}; accepted: {}",
                    Value::from(s.as_str()).to_json(),
                    accepted_statuses()
                )));
            }
        },
        Some(v) => {
            return Err(ContextError(format!(
                "{at}.status: expected a string, found {}; accepted: {}",
                v.type_name(),
                accepted_statuses()
            )));
        }
    };
    let output = match fields.get("output") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => {
            return Err(ContextError(format!(
                "{at}.output: expected a string, found {} (put structured data in \"json\")",
                v.type_name()
            )));
        }
    };
    Ok(StepState::new(status, output, fields.get("json").cloned()))
}

fn accepted_statuses() -> String {
    let names: Vec<&str> = STATUSES.iter().map(|(name, _)| *name).collect();
    names.join(", ")
}

/// The JSON path of `parent`'s member `key`: `steps.a`, or `steps["a b"]` when the key is not
/// a plain name.
fn member_path(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if plain {
        format!("{parent}.{key}")
    } else {
        format!("{parent}[{}]", Value::from(key).to_json())
    }
}

fn expect_object<'v>(v: &'v Value, at: &str) -> Result<&'v Map, ContextError> {
    v.as_object()
        .ok_or_else(|| ContextError(format!("{at}: expected an object, found {}", v.type_name())))
}

fn check_keys(map: &Map, known: &[&str], at: &str) -> Result<(), ContextError> {
    for key in map.keys() {
        if !known.contains(&key.as_str()) {
            let hint = crate::diag::did_you_mean(key, known.iter().copied())
                .map(|k| format!(" (did you mean '{k}'?)"))
                .unwrap_or_default();
            return Err(ContextError(format!(
                "{at}: unknown key '{key}'{hint}; expected one of {}",
                known.join(", ")
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::scope::resolve;
    use crate::syntax::RefPath;

    fn ctx(json: &str) -> Result<Bindings, ContextError> {
        let v: serde_json::Value = serde_json::from_str(json).expect("test JSON");
        bindings_from_context(&Value::from(&v))
    }

    #[test]
    fn builds_bindings() {
        let b = ctx(
            r#"{"args": {"a": 1}, "steps": {"s": {"output": "x"}, "f": {"status": "failed"}},
                        "previousOutput": "p", "locals": {"item": {"k": 2}}}"#,
        )
        .expect("valid");
        let get = |p: &str| resolve(&b, &RefPath::parse(p)).map(|v| v.into_owned());
        assert_eq!(get("args.a"), Some(Value::Number(1.0)));
        assert_eq!(get("steps.s.output"), Some(Value::from("x")));
        assert_eq!(
            get("steps.f.output"),
            Some(Value::from("[previous phase failed]"))
        );
        assert_eq!(get("previous.output"), Some(Value::from("p")));
        assert_eq!(get("item.k"), Some(Value::Number(2.0)));
    }

    #[test]
    fn every_documented_status_is_accepted() {
        let b = ctx(
            r#"{"steps": {"p": {"status": "pending", "output": "x"}, "r": {"status": "running", "output": "x"},
                          "d": {"status": "done", "output": "x"}, "f": {"status": "failed"},
                          "s": {"status": "skipped", "output": "x"}}}"#,
        )
        .expect("valid");
        let get = |p: &str| resolve(&b, &RefPath::parse(p)).map(|v| v.into_owned());
        for hidden in ["p", "r", "s"] {
            assert_eq!(get(&format!("steps.{hidden}.output")), None, "{hidden}");
        }
        assert_eq!(get("steps.d.output"), Some(Value::from("x")));
        assert_eq!(
            get("steps.f.output"),
            Some(Value::from("[previous phase failed]"))
        );
    }

    #[test]
    fn rejects_bad_shapes_with_paths() {
        let err = |j: &str| ctx(j).expect_err("invalid").0;
        assert!(err("[]").contains("must be a JSON object"));
        assert!(err(r#"{"step": {}}"#).contains("did you mean 'steps'"));
        assert_eq!(
            err(r#"{"steps": {"a": {"status": "ok"}}}"#),
            "steps.a.status: unknown status \"ok\"; accepted: pending, running, done, failed, skipped"
        );
        assert_eq!(
            err(r#"{"steps": {"a.b": {"status": "Done"}}}"#),
            "steps[\"a.b\"].status: unknown status \"Done\" (did you mean 'done'?); accepted: pending, running, done, failed, skipped"
        );
        assert_eq!(
            err(r#"{"steps": {"a": {"status": null}}}"#),
            "steps.a.status: expected a string, found null; accepted: pending, running, done, failed, skipped"
        );
        assert!(err(r#"{"steps": {"a": {"output": 1}}}"#).contains("steps.a.output"));
        assert!(err(r#"{"args": 3}"#).contains("args: expected an object"));
    }
}
