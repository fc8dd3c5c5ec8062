//! The JSON Schema (draft 2020-12) of flow files, for editor completion (`tfc schema`, SPEC §1).
//!
//! Generated from the closed field tables of `fields.rs` — the same tables lowering checks
//! against — so the schema cannot drift from the reader: one `$defs` entry per object kind
//! reachable from the flow document, each closed with `additionalProperties: false`, each
//! property described by its table doc. A document is a flow object or (SPEC §2.3) a bare array
//! of phases.

use super::fields::{FieldType, ObjectKind};
use super::kinds::table::fields_of;
use crate::value::{Map, Value};

/// The schema's `$id`.
pub const SCHEMA_ID: &str = "urn:tfc:schema:flow:1";

/// Fields a reader rejects the object without (E0109, E0401, E0409).
const REQUIRED: &[(ObjectKind, &[&str])] = &[
    (ObjectKind::Phase, &["id"]),
    (ObjectKind::Retry, &["max"]),
    (ObjectKind::Scorer, &["type"]),
    (ObjectKind::Judge, &["task"]),
];

/// The `$defs` name of an object kind.
pub fn def_name(kind: ObjectKind) -> &'static str {
    match kind {
        ObjectKind::Flow => "flow",
        ObjectKind::Phase => "phase",
        ObjectKind::Branch => "branch",
        ObjectKind::Step => "step",
        ObjectKind::ArgSpec => "argSpec",
        ObjectKind::Budget => "budget",
        ObjectKind::Retry => "retry",
        ObjectKind::Cache => "cache",
        ObjectKind::Score => "score",
        ObjectKind::Scorer => "scorer",
        ObjectKind::Judge => "judge",
        ObjectKind::Expect => "expect",
        ObjectKind::Lint => "lint",
        ObjectKind::Hooks => "hooks",
    }
}

/// The object kinds a flow document can hold, the flow first, in discovery order.
pub fn kinds() -> Vec<ObjectKind> {
    let mut out = vec![ObjectKind::Flow];
    let mut next = 0;
    while next < out.len() {
        for field in fields_of(out[next]) {
            let inner = match field.ty {
                FieldType::Object(k) | FieldType::ArrayOf(k) | FieldType::MapOf(k) => Some(k),
                FieldType::Phases => Some(ObjectKind::Phase),
                FieldType::Steps => Some(ObjectKind::Step),
                _ => None,
            };
            if let Some(k) = inner
                && !out.contains(&k)
            {
                out.push(k);
            }
        }
        next += 1;
    }
    out
}

/// The whole schema.
pub fn schema() -> Value {
    let mut defs = Map::default();
    for kind in kinds() {
        defs.insert(def_name(kind).into(), object_schema(kind));
    }
    defs.insert(
        "phases".into(),
        obj([
            ("description", "the phases of the DAG (at least one)".into()),
            ("type", "array".into()),
            ("items", reference(ObjectKind::Phase)),
            ("minItems", Value::Number(1.0)),
        ]),
    );
    obj([
        (
            "$schema",
            "https://json-schema.org/draft/2020-12/schema".into(),
        ),
        ("$id", SCHEMA_ID.into()),
        ("title", "tfc flow".into()),
        (
            "description",
            "A taskflow flow file (JSON or JSONC): a DAG of agent phases, or a shorthand form"
                .into(),
        ),
        (
            "oneOf",
            Value::Array(vec![reference(ObjectKind::Flow), def_ref("phases")]),
        ),
        ("$defs", Value::Object(defs)),
    ])
}

/// A closed object: its table's fields as properties.
fn object_schema(kind: ObjectKind) -> Value {
    let mut properties = Map::default();
    for field in fields_of(kind) {
        let mut s = field_schema(field.ty).into_object().unwrap_or_default();
        s.insert("description".into(), field.doc.into());
        properties.insert(field.name.into(), Value::Object(s));
    }
    let mut out = Map::default();
    out.insert("description".into(), kind.describe().into());
    out.insert("type".into(), "object".into());
    out.insert("properties".into(), Value::Object(properties));
    out.insert("additionalProperties".into(), Value::Bool(false));
    if let Some((_, names)) = REQUIRED.iter().find(|(k, _)| *k == kind) {
        out.insert("required".into(), strings(names));
    }
    if kind == ObjectKind::Flow {
        // The phases, or one of the shorthand forms (SPEC §2.3).
        let forms = ["phases", "chain", "tasks", "task"]
            .iter()
            .map(|f| obj([("required", strings(&[f]))]))
            .collect();
        out.insert("anyOf".into(), Value::Array(forms));
    }
    Value::Object(out)
}

/// The schema of one field type.
fn field_schema(ty: FieldType) -> Value {
    let string = || obj([("type", "string".into())]);
    let string_array = || obj([("type", "array".into()), ("items", string())]);
    match ty {
        FieldType::String => string(),
        FieldType::Bool => obj([("type", "boolean".into())]),
        FieldType::Number => obj([("type", "number".into())]),
        FieldType::Integer => obj([("type", "integer".into())]),
        FieldType::Duration => obj([(
            "oneOf",
            Value::Array(vec![obj([("type", "number".into())]), string()]),
        )]),
        FieldType::StringArray => string_array(),
        FieldType::Argv => obj([
            ("type", "array".into()),
            ("items", string()),
            ("minItems", Value::Number(1.0)),
        ]),
        FieldType::OneOf(values) => obj([("type", "string".into()), ("enum", strings(values))]),
        FieldType::OneOrList(values) => {
            let one = || obj([("type", "string".into()), ("enum", strings(values))]);
            let list = obj([
                ("type", "array".into()),
                ("items", one()),
                ("minItems", Value::Number(1.0)),
                ("uniqueItems", Value::Bool(true)),
            ]);
            obj([("oneOf", Value::Array(vec![one(), list]))])
        }
        FieldType::Object(k) => reference(k),
        FieldType::ArrayOf(k) => obj([("type", "array".into()), ("items", reference(k))]),
        FieldType::MapOf(k) => obj([
            ("type", "object".into()),
            ("additionalProperties", reference(k)),
        ]),
        FieldType::Any => Value::Object(Map::default()),
        FieldType::StringOrStrings => {
            obj([("oneOf", Value::Array(vec![string(), string_array()]))])
        }
        // Object defs are flows: a flow object or a phases array (SPEC §3.8).
        FieldType::StringOrObject => obj([(
            "oneOf",
            Value::Array(vec![
                string(),
                reference(ObjectKind::Flow),
                def_ref("phases"),
            ]),
        )]),
        FieldType::AnyObject => obj([("type", "object".into())]),
        FieldType::Phases => def_ref("phases"),
        FieldType::Steps => obj([
            ("type", "array".into()),
            (
                "items",
                obj([(
                    "oneOf",
                    Value::Array(vec![string(), reference(ObjectKind::Step)]),
                )]),
            ),
        ]),
    }
}

fn reference(kind: ObjectKind) -> Value {
    def_ref(def_name(kind))
}

fn def_ref(name: &str) -> Value {
    obj([("$ref", format!("#/$defs/{name}").into())])
}

fn strings(items: &[&str]) -> Value {
    Value::Array(items.iter().map(|s| Value::from(*s)).collect())
}

fn obj<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_object_kind_is_reachable() {
        let all = [
            ObjectKind::Flow,
            ObjectKind::Phase,
            ObjectKind::Branch,
            ObjectKind::Step,
            ObjectKind::ArgSpec,
            ObjectKind::Budget,
            ObjectKind::Retry,
            ObjectKind::Cache,
            ObjectKind::Score,
            ObjectKind::Scorer,
            ObjectKind::Judge,
            ObjectKind::Expect,
            ObjectKind::Lint,
            ObjectKind::Hooks,
        ];
        let found = kinds();
        for k in all {
            assert!(found.contains(&k), "{k:?} is not reachable from the flow");
        }
        assert_eq!(found.len(), all.len());
    }

    #[test]
    fn required_fields_are_table_fields() {
        for (kind, names) in REQUIRED {
            for name in *names {
                assert!(
                    fields_of(*kind).iter().any(|f| f.name == *name),
                    "{kind:?}.{name}"
                );
            }
        }
    }

    #[test]
    fn enums_come_from_the_tables() {
        let s = schema();
        let phase = &s.as_object().unwrap()["$defs"].as_object().unwrap()["phase"];
        let join = &phase.as_object().unwrap()["properties"]
            .as_object()
            .unwrap()["join"];
        assert_eq!(
            join.to_json(),
            r#"{"type":"string","enum":["all","any"],"description":"wait for all dependencies or the first satisfied one"}"#
        );
    }

    #[test]
    fn the_call_cap_is_an_integer_budget_field() {
        let s = schema();
        let budget = &s.as_object().unwrap()["$defs"].as_object().unwrap()["budget"];
        let calls = &budget.as_object().unwrap()["properties"]
            .as_object()
            .unwrap()["maxCalls"];
        assert_eq!(
            calls.to_json(),
            r#"{"type":"integer","description":"agent call cap (integer >= 1)"}"#
        );
    }
}
