//! `tfc schema` (SPEC §1): the schema matches the reader's field tables exactly, every flow the
//! checker accepts validates against it, and unknown fields do not.
//!
//! The validator here is a minimal one for exactly the keywords the schema uses; it panics on
//! any other keyword, so the schema cannot grow past what is tested.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{root, tfc};
use tfc::check::{CheckOptions, check_source};
use tfc::flow::schema::{def_name, kinds, schema};
use tfc::flow::{LowerOptions, fields_of};
use tfc::value::{Map, Value};

/// Why `value` does not match `schema`, or `None` when it does.
fn validate(root: &Value, schema: &Value, value: &Value, at: &str) -> Option<String> {
    let s = match schema {
        Value::Bool(true) => return None,
        Value::Bool(false) => return Some(format!("{at}: no value allowed")),
        Value::Object(s) => s,
        other => panic!("not a schema: {other:?}"),
    };
    for (key, kw) in s {
        let problem = match key.as_str() {
            "$schema" | "$id" | "$defs" | "title" | "description" => None,
            "$ref" => {
                let name = kw
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/$defs/"))
                    .expect("local $defs reference");
                let target = &root.as_object().unwrap()["$defs"].as_object().unwrap()[name];
                validate(root, target, value, at)
            }
            "type" => {
                let ok = match kw.as_str().expect("one type name") {
                    "object" => matches!(value, Value::Object(_)),
                    "array" => matches!(value, Value::Array(_)),
                    "string" => matches!(value, Value::String(_)),
                    "number" => matches!(value, Value::Number(_)),
                    "integer" => matches!(value, Value::Number(n) if n.fract() == 0.0),
                    "boolean" => matches!(value, Value::Bool(_)),
                    "null" => matches!(value, Value::Null),
                    other => panic!("unknown type {other}"),
                };
                (!ok).then(|| format!("{at}: expected {kw:?}, got {}", value.type_name()))
            }
            "enum" => (!kw.as_array().unwrap().contains(value))
                .then(|| format!("{at}: {} is not one of {}", value.to_json(), kw.to_json())),
            "properties" => value.as_object().and_then(|o| {
                kw.as_object().unwrap().iter().find_map(|(k, sub)| {
                    o.get(k)
                        .and_then(|v| validate(root, sub, v, &format!("{at}.{k}")))
                })
            }),
            "additionalProperties" => value.as_object().and_then(|o| {
                let known = s.get("properties").and_then(Value::as_object);
                o.iter()
                    .filter(|(k, _)| !known.is_some_and(|p| p.contains_key(*k)))
                    .find_map(|(k, v)| validate(root, kw, v, &format!("{at}.{k}")))
            }),
            "required" => value.as_object().and_then(|o| {
                kw.as_array()
                    .unwrap()
                    .iter()
                    .find(|k| !o.contains_key(k.as_str().unwrap()))
                    .map(|k| format!("{at}: missing required {}", k.to_json()))
            }),
            "items" => value.as_array().and_then(|a| {
                a.iter()
                    .enumerate()
                    .find_map(|(i, v)| validate(root, kw, v, &format!("{at}[{i}]")))
            }),
            "minItems" => value.as_array().and_then(|a| {
                let min = kw.as_f64_for_test();
                ((a.len() as f64) < min).then(|| format!("{at}: fewer than {min} items"))
            }),
            "oneOf" | "anyOf" => {
                let subs = kw.as_array().unwrap();
                let problems: Vec<Option<String>> = subs
                    .iter()
                    .map(|sub| validate(root, sub, value, at))
                    .collect();
                let passed = problems.iter().filter(|p| p.is_none()).count();
                let ok = if key == "oneOf" {
                    passed == 1
                } else {
                    passed >= 1
                };
                (!ok).then(|| {
                    let why: Vec<String> = problems.into_iter().flatten().collect();
                    format!("{at}: {passed} of {key} matched [{}]", why.join(" | "))
                })
            }
            other => panic!("the test validator does not know the keyword {other}"),
        };
        if problem.is_some() {
            return problem;
        }
    }
    None
}

trait NumberForTest {
    fn as_f64_for_test(&self) -> f64;
}

impl NumberForTest for Value {
    fn as_f64_for_test(&self) -> f64 {
        match self {
            Value::Number(n) => *n,
            other => panic!("not a number: {other:?}"),
        }
    }
}

fn check_against_schema(text: &str) -> Option<String> {
    let parsed = tfc::json::parse(text);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let s = schema();
    validate(&s, &s, &parsed.root.expect("a value").to_value(), "$")
}

/// The flow checks without errors, and validates.
fn assert_valid(text: &str) {
    let checked = check_source(text, &LowerOptions::default(), &CheckOptions::default());
    let errors: Vec<_> = checked
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .collect();
    assert!(errors.is_empty(), "the test flow has errors: {errors:#?}");
    if let Some(why) = check_against_schema(text) {
        panic!("a valid flow fails the schema: {why}\n{text}");
    }
}

/// The flow has an error, and fails the schema.
fn assert_invalid(text: &str) -> String {
    let checked = check_source(text, &LowerOptions::default(), &CheckOptions::default());
    assert!(checked.has_errors(), "expected a check error:\n{text}");
    check_against_schema(text).unwrap_or_else(|| panic!("the schema accepts:\n{text}"))
}

fn defs(s: &Value) -> &Map {
    s.as_object().unwrap()["$defs"].as_object().unwrap()
}

#[test]
fn schema_fields_are_exactly_the_reader_tables() {
    let s = schema();
    let defs = defs(&s);
    let mut expected_defs: BTreeSet<&str> = BTreeSet::from(["phases"]);
    for kind in kinds() {
        let name = def_name(kind);
        expected_defs.insert(name);
        let def = defs[name].as_object().unwrap();
        assert_eq!(def["additionalProperties"], Value::Bool(false), "{name}");
        let in_schema: BTreeSet<&str> = def["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let in_table: BTreeSet<&str> = fields_of(kind).iter().map(|f| f.name).collect();
        assert_eq!(in_schema, in_table, "{name}");
        for f in fields_of(kind) {
            let prop = def["properties"].as_object().unwrap()[f.name]
                .as_object()
                .unwrap();
            assert_eq!(prop["description"], Value::from(f.doc), "{name}.{}", f.name);
            if let tfc::flow::FieldType::OneOf(values) = f.ty {
                let listed: Vec<Value> = values.iter().map(|v| Value::from(*v)).collect();
                assert_eq!(prop["enum"], Value::Array(listed), "{name}.{}", f.name);
            }
        }
    }
    let found: BTreeSet<&str> = defs.keys().map(String::as_str).collect();
    assert_eq!(found, expected_defs);
    let top = s.as_object().unwrap();
    assert_eq!(
        top["$schema"],
        Value::from("https://json-schema.org/draft/2020-12/schema")
    );
    assert!(top["$id"].as_str().is_some_and(|id| !id.is_empty()));
}

#[test]
fn cli_prints_the_schema() {
    let out = tfc(&["schema"]);
    assert_eq!(out.code, 0, "{out:?}");
    let printed = tfc::json::parse(&out.stdout);
    assert!(printed.diagnostics.is_empty());
    assert_eq!(printed.root.unwrap().to_value(), schema());
}

#[test]
fn inline_flows_validate() {
    // Every phase kind, nested objects, both def shapes, string/array `run` and `tools`.
    assert_valid(
        r#"{
          "$schema": "./tfc.schema.json",
          "name": "everything",
          "description": "all kinds",
          "version": 2,
          "concurrency": 4,
          "agentScope": "project",
          "strictInterpolation": false,
          "incremental": true,
          "idleTimeout": 600000,
          "args": {
            "topic": {"type": "string", "default": "x", "description": "what"},
            "n": {"type": "number", "minimum": 1, "maximum": 5, "default": 2},
            "mode": {"type": "enum", "values": ["a", 1], "default": "a"},
            "dir": {"type": "relative-path", "default": "src"},
            "old": {"default": "y"}
          },
          "phases": [
            {"id": "scan", "task": "List files about {args.topic}", "output": "json",
             "expect": {"type": "array", "items": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
             "retry": {"max": 2, "backoffMs": 100, "factor": 2}, "timeout": 60000,
             "model": "m", "thinking": "high", "tools": ["read", "grep"], "cwd": "temp",
             "cache": {"scope": "cross-run", "fingerprint": ["git:HEAD"], "ttl": "6h"},
             "context": ["README.md"], "contextLimit": 100, "idempotent": true},
            {"id": "each", "type": "map", "dependsOn": ["scan"], "over": "{steps.scan.json}",
             "as": "file", "task": "Audit {file.path}", "concurrency": 2, "tools": ["read"],
             "output": "json",
             "expect": {"$comment": "pasted", "title": "audit", "description": "one audit",
                        "examples": [{"risk": "low"}], "type": "object", "additionalProperties": false,
                        "properties": {"risk": {"enum": ["low", "high"]},
                                       "lines": {"type": "array", "minItems": 0, "maxItems": 9}}}},
            {"id": "fan", "type": "parallel", "dependsOn": ["scan"],
             "branches": [{"task": "a", "agent": "x", "cwd": "sub"}, {"task": "b"}]},
            {"id": "merge", "type": "reduce", "from": ["each", "fan"], "task": "Merge {previous.output}",
             "reduceStrategy": "tree", "batchSize": 3},
            {"id": "check", "type": "gate", "dependsOn": ["merge"], "task": "Is it good? {steps.merge.output}",
             "onBlock": "retry", "eval": ["{steps.merge.output} contains ok"]},
            {"id": "scored", "type": "gate", "dependsOn": ["check"],
             "score": {"target": "{steps.merge.output}", "combine": "weighted", "weights": [1, 2, 1],
                       "threshold": 0.7,
                       "scorers": [{"type": "contains", "value": "ok"},
                                   {"type": "length-range", "min": 1, "max": 100, "name": "len"}],
                       "judge": {"agent": "judge", "task": "Rate it"}}},
            {"id": "ok", "type": "approval", "dependsOn": ["scored"], "timeout": "4h", "onTimeout": "approve"},
            {"id": "sub", "type": "flow", "dependsOn": ["ok"], "def": {"phases": [{"id": "x", "task": "y"}]},
             "with": {"topic": "{args.topic}", "n": 3}},
            {"id": "sub2", "type": "flow", "dependsOn": ["sub"], "def": "{steps.sub.output}"},
            {"id": "polish", "type": "loop", "dependsOn": ["sub2"], "task": "Improve {loop.lastOutput}",
             "until": "{steps.polish.output} contains 'done'", "maxIterations": 3, "convergence": false},
            {"id": "best", "type": "tournament", "dependsOn": ["polish"], "task": "Write it",
             "variants": 4, "mode": "aggregate", "judge": "Pick the clearest", "judgeAgent": "judge"},
            {"id": "test", "type": "script", "dependsOn": ["best"], "run": ["cargo", "test", "{args.topic}"],
             "input": "{steps.best.output}", "timeout": 120000},
            {"id": "lint", "type": "script", "dependsOn": ["test"], "run": "cargo clippy"},
            {"id": "fast", "type": "race", "dependsOn": ["lint"], "cancelLosers": false,
             "branches": [{"task": "a"}, {"task": "b"}]},
            {"id": "grow", "type": "expand", "dependsOn": ["fast"], "expandMode": "graft", "maxNodes": 10,
             "def": [{"id": "g", "task": "h"}]},
            {"id": "end", "dependsOn": ["grow"], "join": "any", "when": "{steps.grow.output} != ''",
             "task": "Report", "final": true, "optional": false, "shareContext": false}
          ]
        }"#,
    );
    // A bare array of phases, and the shorthand forms.
    assert_valid(r#"[{"id": "a", "task": "x"}, {"id": "b", "dependsOn": ["a"], "task": "y"}]"#);
    assert_valid(
        r#"{"chain": ["one", {"task": "two", "agent": "rev", "contextLimit": 10}], "cwd": "."}"#,
    );
    assert_valid(r#"{"tasks": ["a", "b"], "context": ["x.md"]}"#);
    assert_valid(r#"{"task": "just this", "agent": "helper", "budget": {"maxUSD": 1}}"#);
}

#[test]
fn hooks_validate_and_their_mistakes_do_not() {
    assert_valid(
        r#"{"hooks": {"onComplete": ["notify-send", "tfc", "{run.id} {run.status}"],
                     "onFail": ["curl", "--data-binary", "@-", "https://example.com/hook"],
                     "onPause": ["true"], "onBlock": ["true"], "timeout": 5000},
            "phases": [{"id": "a", "task": "x"}]}"#,
    );
    let why =
        assert_invalid(r#"{"hooks": {"onDone": ["x"]}, "phases": [{"id": "a", "task": "x"}]}"#);
    assert!(why.contains("onDone"), "{why}");
    assert_invalid(r#"{"hooks": {"onFail": []}, "phases": [{"id": "a", "task": "x"}]}"#);
    assert_invalid(
        r#"{"hooks": {"onFail": "notify-send x"}, "phases": [{"id": "a", "task": "x"}]}"#,
    );
}

#[test]
fn unknown_fields_fail_the_schema() {
    let why = assert_invalid(r#"[{"id": "a", "task": "x", "dependson": ["b"]}]"#);
    assert!(why.contains("dependson"), "{why}");
    let why = assert_invalid(
        r#"{"phases": [{"id": "a", "task": "x", "retry": {"max": 1, "tries": 2}}]}"#,
    );
    assert!(why.contains("tries"), "{why}");
    let why = assert_invalid(r#"{"phase": [{"id": "a", "task": "x"}], "task": "y"}"#);
    assert!(why.contains("phase"), "{why}");
    let why = assert_invalid(
        r#"[{"id": "a", "type": "flow", "def": {"phases": [{"id": "x", "task": "y", "tsk": "z"}]}}]"#,
    );
    assert!(why.contains("tsk"), "{why}");
    // Wrong values, not just wrong names.
    assert_invalid(r#"[{"id": "a", "task": "x", "join": "some"}]"#);
    assert_invalid(r#"[{"task": "x"}]"#);
    assert_invalid(r#"{"phases": []}"#);
}

/// Flow files under `examples/`: `.json`/`.jsonc` documents that lower to a flow.
fn example_flows(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            example_flows(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "json" || e == "jsonc")
        {
            out.push(path);
        }
    }
}

#[test]
fn example_flows_validate() {
    let mut files = Vec::new();
    example_flows(&root().join("examples"), &mut files);
    let s = schema();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read example");
        let checked = check_source(&text, &LowerOptions::default(), &CheckOptions::default());
        // Eval contexts and deliberately broken examples are not flows the schema promises.
        if checked.flow.is_none() || checked.has_errors() {
            continue;
        }
        let value = tfc::json::parse(&text).root.expect("a value").to_value();
        if let Some(why) = validate(&s, &s, &value, "$") {
            panic!("{} fails the schema: {why}", path.display());
        }
    }
}
