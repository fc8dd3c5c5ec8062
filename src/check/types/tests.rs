use std::sync::Arc;

use proptest::prelude::*;

use super::infer::element_of;
use super::lattice::{Obj, Prop, Step, Stuck, Ty};
use super::{placeholder_types, schema, type_at};
use crate::check::testing::{check, contract, find};
use crate::diag::Diagnostic;

/// The diagnostics of the type rules only (other lints, e.g. W0109 on a guarded final
/// phase, are not what these tests are about).
fn typed(diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    const TYPE_CODES: [&str; 6] = ["E0209", "E0211", "E0212", "W0106", "W0107", "W0108"];
    diags
        .into_iter()
        .filter(|d| TYPE_CODES.contains(&d.code.as_str()))
        .collect()
}

/// The codes of the type rules reported for `text`.
fn codes(text: &str) -> Vec<&'static str> {
    typed(check(text)).iter().map(|d| d.code.as_str()).collect()
}
use crate::flow::{LowerOptions, lower_source};
use crate::value::{Value, parse_json};

fn ty(json: &str) -> Ty {
    schema::contract(&contract(json))
}

fn lits(values: &[&str]) -> Ty {
    let vs: Vec<Value> = values.iter().map(|v| Value::from(*v)).collect();
    Ty::lits(&vs)
}

#[test]
fn union_flattens_dedupes_and_absorbs() {
    assert_eq!(Ty::union([Ty::String, Ty::Any]), Ty::Any);
    assert_eq!(Ty::union([Ty::String, Ty::String]), Ty::String);
    assert_eq!(Ty::union([Ty::Integer, Ty::Number]), Ty::Number);
    assert_eq!(Ty::union([]), Ty::Missing);
    let nested = Ty::union([Ty::union([Ty::String, Ty::Missing]), Ty::Null]);
    assert_eq!(nested.members().len(), 3);
    assert_eq!(nested.to_string(), "string | missing | null");
    assert_eq!(
        Ty::String.or_missing().or_missing().to_string(),
        "string | missing"
    );
    assert_eq!(Ty::Any.or_missing(), Ty::Any);
}

#[test]
fn spelling_follows_the_spec() {
    assert_eq!(
        lits(&["low", "medium", "high"]).to_string(),
        "enum low|medium|high"
    );
    let files = ty(
        r#"{"type":"array","items":{"properties":{"path":{"type":"string"},"lines":{"type":"integer"}}}}"#,
    );
    assert_eq!(files.to_string(), "array<object{path, lines}>");
    assert_eq!(
        Ty::lits(&[Value::Number(1.0), Value::Number(2.5)]).to_string(),
        "enum 1|2.5"
    );
    // Repeated literals once; an enum of objects is not a literal set.
    assert_eq!(lits(&["a", "a", "b"]).to_string(), "enum a|b");
    assert_eq!(Ty::lits(&[parse_json(r#"{"a":1}"#).unwrap()]), Ty::Any);
}

#[test]
fn contracts_become_types_as_the_contract_checker_reads_them() {
    // enum without type; enum narrowed by type.
    assert_eq!(ty(r#"{"enum":["low","high"]}"#), lits(&["low", "high"]));
    assert_eq!(ty(r#"{"type":"string","enum":["low",1]}"#), lits(&["low"]));
    // properties/required imply object, items implies array; nothing constrains ⇒ any.
    assert!(matches!(ty(r#"{"required":["a"]}"#), Ty::Object(_)));
    assert!(matches!(ty(r#"{"items":{"type":"string"}}"#), Ty::Array(_)));
    assert_eq!(ty("{}"), Ty::Any);
    assert_eq!(ty(r#"{"type":"integer"}"#), Ty::Integer);
    // A property not in `required` may be missing.
    let t = ty(r#"{"required":["a"],"properties":{"a":{"type":"string"},"b":{"type":"number"}}}"#);
    let Ty::Object(o) = &t else { panic!("{t}") };
    assert_eq!(o.props["a"].ty, Ty::String);
    assert_eq!(o.props["b"].ty.to_string(), "number | missing");
    // An enum no literal of which passes `type`: the phase always fails, nothing to say.
    assert_eq!(ty(r#"{"type":"number","enum":["a"]}"#), Ty::Any);
}

#[test]
fn dig_follows_the_runtime_dig() {
    let arr = Ty::array(Ty::String, None);
    assert_eq!(
        arr.dig("0", Some(0)),
        Step::To(Ty::String.or_missing(), None)
    );
    assert_eq!(arr.dig("length", None), Step::To(Ty::Number, None));
    assert!(matches!(
        arr.dig("first", None),
        Step::Stuck(Stuck::ArrayKey(_))
    ));
    for scalar in [Ty::String, Ty::Number, Ty::Boolean, Ty::Null, lits(&["a"])] {
        assert!(
            matches!(scalar.dig("length", None), Step::Stuck(Stuck::Scalar(_))),
            "{scalar}"
        );
    }
    assert_eq!(Ty::Any.dig("x", None), Step::To(Ty::Any, None));
    assert_eq!(Ty::Missing.dig("x", None), Step::To(Ty::Missing, None));
    let mut obj = Obj::default();
    obj.props.insert(
        "a".into(),
        Prop {
            ty: Ty::Number,
            decl: None,
        },
    );
    let obj = Ty::Object(Arc::new(obj));
    assert_eq!(obj.dig("a", None), Step::To(Ty::Number, None));
    assert_eq!(obj.dig("b", None), Step::Undeclared);
    assert_eq!(
        Ty::Object(Arc::default()).dig("b", None),
        Step::To(Ty::Any, None)
    );
    // A union is stuck only when every member that can hold a value is.
    let u = Ty::union([Ty::String, Ty::Missing]);
    assert!(matches!(u.dig("x", None), Step::Stuck(_)));
    let u = Ty::union([Ty::String, obj]);
    assert_eq!(
        u.dig("a", None),
        Step::To(Ty::union([Ty::Missing, Ty::Number]), None)
    );
}

#[test]
fn coerce_array_element_types() {
    let t = ty(
        r#"{"properties":{"results":{"type":"array","items":{"type":"string"}}},"required":["results"]}"#,
    );
    assert_eq!(element_of(&t).map(|e| e.ty), Some(Ty::String));
    // An optional wrapper lets the next one count too.
    let t = ty(
        r#"{"properties":{"items":{"type":"array","items":{"type":"number"}},"data":{"type":"array","items":{"type":"string"}}}}"#,
    );
    assert_eq!(
        element_of(&t).map(|e| e.ty.to_string()).as_deref(),
        Some("number | string")
    );
    assert_eq!(
        element_of(&ty(r#"{"properties":{"bugs":{"type":"array"}}}"#)),
        None
    );
    assert_eq!(element_of(&Ty::Number), None);
    assert_eq!(element_of(&Ty::String).map(|e| e.ty), Some(Ty::Any));
    // A string literal holding a JSON array could be one.
    assert_eq!(element_of(&lits(&["[1]"])).map(|e| e.ty), Some(Ty::Any));
    assert_eq!(element_of(&lits(&["low"])), None);
}

#[test]
fn contract_labels_point_at_keys_and_suggest_properties() {
    let text = r#"[
            {"id": "t", "output": "json", "task": "x",
             "expect": {"properties": {"severity": {"type": "string"}, "files": {"type": "array"}}}},
            {"id": "u", "dependsOn": ["t"], "task": "{steps.t.json.severty} {steps.t.json.files.length}"}
        ]"#;
    let diags = check(text);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let d = find(&diags, "W0106");
    assert_eq!(&text[d.labels[0].span.range()], r#""expect""#);
    assert_eq!(
        d.help.as_deref(),
        Some(
            "did you mean {steps.t.json.severity}? If 'severty' is meant, add \"severty\" under \"properties\" of the contract of 't'"
        )
    );
}

#[test]
fn e0209_points_at_the_segment_and_the_declaration() {
    let text = r#"[
            {"id": "t", "output": "json", "task": "x",
             "expect": {"properties": {"severity": {"enum": ["low", "high"]}}}},
            {"id": "u", "dependsOn": ["t"], "task": "See {steps.t.json.severity.level}."}
        ]"#;
    let d = find(&check(text), "E0209");
    assert_eq!(&text[d.span.unwrap().range()], "level");
    assert_eq!(&text[d.labels[0].span.range()], r#""severity""#);
    assert_eq!(
        d.labels[0].message,
        "'severity' is declared here as one of low|high"
    );
    assert_eq!(
        d.help.as_deref(),
        Some("drop '.level': {steps.t.json.severity}")
    );
}

#[test]
fn comparisons_only_when_the_literal_is_outside() {
    let flow = |when: &str| {
        format!(
            r#"[{{"id": "t", "output": "json", "task": "x",
                 "expect": {{"required": ["s", "n", "b"], "properties": {{"s": {{"enum": ["low", "high", "10"]}}, "n": {{"type": "number"}}, "b": {{"type": "boolean"}}}}}}}},
                {{"id": "u", "dependsOn": ["t"], "when": {when:?}, "task": "x"}}]"#
        )
    };
    // Members, numerically equal forms, "" (undefined) and null are all possible.
    for ok in [
        "{steps.t.json.s} == high",
        "{steps.t.json.s} == \"low\"",
        "{steps.t.json.s} == 10.0",
        "{steps.t.json.s} == ''",
        "{steps.t.json.s} != null",
        "high == {steps.t.json.s}",
        "{steps.t.json.b} == true",
        "{steps.t.json.b} == 'false'",
        "{steps.t.json.n} > 3",
        "{steps.t.json.n} > '3'",
        "{steps.t.json.s} > 3",
        "{steps.t.json.s} == {steps.t.json.b}",
    ] {
        assert_eq!(codes(&flow(ok)), Vec::<&str>::new(), "{ok}");
    }
    assert_eq!(codes(&flow("{steps.t.json.s} == critical")), ["E0212"]);
    assert_eq!(codes(&flow("critical != ({steps.t.json.s})")), ["E0212"]);
    assert_eq!(codes(&flow("{steps.t.json.b} == yes")), ["E0212"]);
    assert_eq!(codes(&flow("{steps.t.json.n} > high")), ["W0108"]);
    assert_eq!(
        codes(&flow("3 < {steps.t.json.n} && {steps.t.json.n} <= null")),
        ["W0108"]
    );
    let d = find(&check(&flow("{steps.t.json.s} == hihg")), "E0212");
    assert_eq!(d.help.as_deref(), Some("did you mean high?"));
    assert!(d.message.contains("`==` is always false"), "{}", d.message);
}

#[test]
fn sub_flow_finals_that_may_be_skipped_are_any() {
    let flow = |when: &str| {
        format!(
            r#"[{{"id": "sub", "type": "flow", "def": [
                    {{"id": "a", "task": "x"}},
                    {{"id": "j", "dependsOn": ["a"], {when} "output": "json", "task": "judge", "expect": {{"required": ["v"], "properties": {{"v": {{"enum": ["pass"]}}}}}}}}]}},
                {{"id": "u", "dependsOn": ["sub"], "task": "{{steps.sub.json.v.reason}}"}}]"#
        )
    };
    assert_eq!(codes(&flow("")), ["E0209"]);
    // The final phase may be skipped: the child's output falls back to another phase's.
    assert_eq!(
        codes(&flow(r#""when": "{steps.a.output} == go","#)),
        Vec::<&str>::new()
    );
    assert_eq!(codes(&flow(r#""optional": true,"#)), Vec::<&str>::new());
}

#[test]
fn type_at_finds_the_innermost_placeholder() {
    let text = r#"[{"id": "t", "output": "json", "task": "x", "expect": {"items": {"type": "string"}}},
                   {"id": "u", "dependsOn": ["t"], "task": "a {steps.t.json.0} b"}]"#;
    let flow = lower_source(text, &LowerOptions::default())
        .flow
        .expect("flow");
    let types = placeholder_types(&flow, None);
    let at = text.find("{steps.t.json.0}").unwrap();
    let t = type_at(&types, at + 3).expect("a placeholder there");
    assert_eq!(t.path, "steps.t.json.0");
    assert_eq!(t.ty.to_string(), "string | missing");
    assert_eq!(&text[t.decl.unwrap().range()], r#""items""#);
    assert_eq!(&text[t.root_decl.unwrap().range()], r#""t""#);
    assert!(type_at(&types, at - 1).is_none());
}

// ---- properties ----

/// A random contract as JSON text, at most `depth` levels deep.
fn arb_contract() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    let leaf = prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"type": "number"})),
        Just(json!({"type": "integer"})),
        Just(json!({"type": "boolean"})),
        Just(json!({"type": "null"})),
        Just(json!({})),
        Just(json!({"enum": ["low", "high", 3, true, null]})),
        Just(json!({"type": "string", "enum": ["a", "b"]})),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"type": ["integer", "boolean"], "enum": [1, true, "x"]})),
    ];
    leaf.prop_recursive(4, 24, 5, |inner| {
        let names = prop::sample::subsequence(vec!["a", "b", "items", "x-y", "0"], 0..4);
        prop_oneof![
            (
                names,
                prop::collection::vec(inner.clone(), 4),
                any::<u8>(),
                any::<bool>(),
                0u8..3,
            )
                .prop_map(|(names, subs, req, typed, extra)| {
                    let mut props = serde_json::Map::new();
                    let mut required = Vec::new();
                    for (i, (n, s)) in names.iter().zip(subs).enumerate() {
                        props.insert((*n).to_owned(), s);
                        if req & (1 << i) != 0 {
                            required.push(serde_json::Value::from(*n));
                        }
                    }
                    let mut c = serde_json::json!({"properties": props, "required": required});
                    if typed {
                        c["type"] = "object".into();
                    }
                    // Open by default, closed, or explicitly open.
                    if extra > 0 {
                        c["additionalProperties"] = (extra == 2).into();
                    }
                    c
                }),
            (inner, any::<bool>(), 0u8..4, 0u8..4).prop_map(|(items, typed, min, more)| {
                let mut c = serde_json::json!({ "items": items });
                if typed {
                    c["type"] = "array".into();
                }
                // Item counts: none, a lower bound, or both (never contradictory).
                if min < 3 {
                    c["minItems"] = min.into();
                    if more < 3 {
                        c["maxItems"] = (min + more).into();
                    }
                }
                c
            }),
        ]
    })
}

/// A path through `c` that some value satisfying it can resolve: declared properties,
/// indices and `length` of arrays, stopping anywhere (and anywhere inside `any`).
fn valid_path(c: &serde_json::Value, choices: &[u8]) -> Vec<String> {
    let mut path = Vec::new();
    let mut cur = c;
    for &k in choices {
        if k % 5 == 0 {
            break;
        }
        if let Some(props) = cur.get("properties").and_then(|p| p.as_object())
            && !props.is_empty()
        {
            let (name, sub) = props.iter().nth(k as usize % props.len()).unwrap();
            path.push(name.clone());
            cur = sub;
        } else if let Some(items) = cur.get("items") {
            if k % 7 == 0 {
                path.push("length".into());
                break;
            }
            path.push((k % 3).to_string());
            cur = items;
        } else if cur.as_object().is_some_and(|o| o.is_empty()) {
            // `any`: every further segment may resolve.
            path.push(format!("k{k}"));
        } else {
            break;
        }
    }
    path
}

/// Does `v` have type `t`? (`missing` is not a value.)
fn fits(t: &Ty, v: &Value) -> bool {
    match t {
        Ty::Any => true,
        Ty::Missing => false,
        Ty::Null => matches!(v, Value::Null),
        Ty::Boolean => matches!(v, Value::Bool(_)),
        Ty::Number => matches!(v, Value::Number(_)),
        Ty::Integer => matches!(v, Value::Number(n) if n.fract() == 0.0),
        Ty::String => matches!(v, Value::String(_)),
        Ty::Lits(vs) => vs.contains(v),
        Ty::Array(e) => matches!(v, Value::Array(items) if items.iter().all(|i| fits(&e.ty, i))),
        Ty::Object(o) => match v {
            Value::Object(m) => {
                o.props.iter().all(|(k, p)| match m.get(&**k) {
                    Some(x) => fits(&p.ty, x),
                    None => p.ty.is_any() || p.ty.members().contains(&Ty::Missing),
                }) && (!o.closed || m.keys().all(|k| o.props.contains_key(k.as_str())))
            }
            _ => false,
        },
        Ty::Union(ms) => ms.iter().any(|m| fits(m, v)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A path that some satisfying value resolves is never reported, in a template or a
    /// condition (comparisons with allowed values: `comparisons_only_when_the_literal_is_outside`).
    #[test]
    fn valid_paths_are_never_reported(c in arb_contract(), choices in prop::collection::vec(any::<u8>(), 0..6)) {
        let path = valid_path(&c, &choices);
        let mut full = String::from("steps.t.json");
        for seg in &path {
            full.push('.');
            full.push_str(seg);
        }
        let flow = serde_json::json!([
            {"id": "t", "output": "json", "task": "x", "expect": c},
            {"id": "u", "dependsOn": ["t"], "task": format!("Read {{{full}}}."),
             "when": format!("{{{full}}} || {{{full}}} == '' || {{{full}}} != null")}
        ]);
        let diags = typed(check(&flow.to_string()));
        prop_assert!(diags.is_empty(), "{flow}\n{diags:#?}");
    }

    /// Every value the contract checker accepts has the inferred type (the checker is the
    /// oracle of what `steps.X.json` can hold).
    #[test]
    fn accepted_values_have_the_inferred_type(c in arb_contract(), v in crate::value::strategies::arb_value()) {
        let contract = contract(&c.to_string());
        let t = schema::contract(&contract);
        if crate::run::contract::check_output(&contract, &v.to_json()).is_ok() {
            let parsed = crate::eval::safe_parse::safe_parse(&v.to_json()).value.expect("JSON");
            prop_assert!(fits(&t, &parsed), "{c} accepts {} but the type is {t}", v.to_json());
        }
    }

    /// The same, for values built to satisfy the contract (random values rarely do).
    #[test]
    fn stubs_have_the_inferred_type(c in arb_contract()) {
        let contract = contract(&c.to_string());
        let v = crate::run::contract::stub(Some(&contract));
        prop_assert!(crate::run::contract::check_output(&contract, &v.to_json()).is_ok());
        prop_assert!(fits(&schema::contract(&contract), &v), "{c}: {}", v.to_json());
    }
}

#[test]
fn inline_def_arguments_have_their_declared_types() {
    // `with` values reach an inline def through resolveArgs: its ArgSpecs type `{args.X}`.
    let text = r#"[{"id": "sub", "type": "flow", "with": {"mode": "slow"}, "def": {
        "args": {"mode": {"type": "enum", "values": ["fast", "slow"], "default": "fast"}},
        "phases": [{"id": "a", "when": "{args.mode} == quick", "task": "{args.mode.x}"}]}}]"#;
    assert_eq!(codes(text), ["E0212", "E0209"]);
    let d = find(&check(text), "E0212");
    assert!(d.message.contains("fast"), "{d:?}");
}

#[test]
fn type_lists_are_unions() {
    assert_eq!(
        ty(r#"{"type":["string","null"]}"#).to_string(),
        "string | null"
    );
    assert_eq!(ty(r#"{"type":["integer","number"]}"#), Ty::Number);
    // An enum keeps the literals that pass any of the listed types.
    assert_eq!(
        ty(r#"{"type":["string","number"],"enum":["a",1,true]}"#).to_string(),
        "enum a|1"
    );
    let text = r#"[{"id": "t", "output": "json", "task": "x", "expect": {"properties": {"r": {"type": ["string", "number"]}}}},
                   {"id": "u", "dependsOn": ["t"], "task": "{steps.t.json.r.x}"}]"#;
    let d = find(&check(text), "E0209");
    assert!(
        d.message
            .contains("'r' is of type string | number, which has no 'x'"),
        "{}",
        d.message
    );
}

/// W0106 says what an unresolved placeholder really does: verbatim in a prompt (SPEC §4.4),
/// undefined in a condition (§6) — never "empty" text.
#[test]
fn contract_misses_say_what_happens_at_run_time() {
    let text = r#"[
            {"id": "t", "output": "json", "task": "x",
             "expect": {"properties": {"severity": {"type": "string"}}}},
            {"id": "u", "dependsOn": ["t"], "when": "{steps.t.json.level} == high",
             "task": "Fix {steps.t.json.reason}", "context": ["{steps.t.json.notes}"]}
        ]"#;
    let diags = check(text);
    let messages: Vec<&str> = diags
        .iter()
        .filter(|d| d.code.as_str() == "W0106")
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "u: {steps.t.json.level} reads property 'level', which the contract does not declare (it has: severity): it resolves only if the agent happens to emit 'level', else it is undefined when the condition is evaluated (empty text, falsy)",
            "u: {steps.t.json.reason} reads property 'reason', which the contract does not declare (it has: severity): it resolves only if the agent happens to emit 'reason', else the placeholder stays verbatim in the prompt at run time",
            "u: {steps.t.json.notes} reads property 'notes', which the contract does not declare (it has: severity): it resolves only if the agent happens to emit 'notes', else the placeholder stays verbatim in the prompt at run time",
        ]
    );
    assert!(messages.iter().all(|m| !m.contains("empty at run")));
}

/// W0106 at every depth: through an array's elements and an optional property, each to the
/// object type reached there (SPEC §7.2).
#[test]
fn undeclared_keys_warn_at_every_depth() {
    let text = r#"[
            {"id": "t", "output": "json", "task": "x",
             "expect": {"properties": {"files": {"type": "array", "items": {"properties": {"path": {"type": "string"}}}},
                                       "meta": {"properties": {"a": {"type": "object", "properties": {"b": {}}}}}}}},
            {"id": "u", "dependsOn": ["t"],
             "task": "{steps.t.json.files.0.size} {steps.t.json.meta.c} {steps.t.json.meta.a.z} {steps.t.json.files.0.path} {steps.t.json.meta.a.b.anything}"}
        ]"#;
    let diags = typed(check(text));
    let w: Vec<(&str, &str)> = diags
        .iter()
        .filter(|d| d.code.as_str() == "W0106")
        .map(|d| {
            (
                &text[d.span.unwrap().range()],
                &text[d.labels[0].span.range()],
            )
        })
        .collect();
    assert_eq!(
        w,
        [
            ("{steps.t.json.files.0.size}", r#""items""#),
            ("{steps.t.json.meta.c}", r#""meta""#),
            ("{steps.t.json.meta.a.z}", r#""a""#),
        ],
        "{diags:#?}"
    );
    assert!(
        find(&diags, "W0106").message.contains(
            "reads property 'size', which the contract of 'files.0' does not declare (it has: path): it resolves only if the agent happens to emit 'size'"
        ),
        "{diags:#?}"
    );
    assert_eq!(diags.len(), 3, "{diags:#?}");
}

/// A key named only in `required` is declared (its type is unknown); a type list with an
/// object member is read through that member.
#[test]
fn required_keys_are_declared() {
    let text = r#"[
            {"id": "t", "output": "json", "task": "x",
             "expect": {"type": "object", "required": ["verdict", "summary"], "properties": {"summary": {"type": "string"}}}},
            {"id": "u", "dependsOn": ["t"], "task": "{steps.t.json.verdict} {steps.t.json.verdict.deep} {steps.t.json.verdcit}"}
        ]"#;
    let diags = check(text);
    assert_eq!(codes(text), ["W0106"], "{diags:#?}");
    let d = find(&diags, "W0106");
    assert!(
        d.message.contains("{steps.t.json.verdcit}"),
        "{}",
        d.message
    );
    assert!(
        d.message.contains("(it has: summary, verdict)"),
        "{}",
        d.message
    );
    assert_eq!(
        ty(r#"{"required":["a"],"properties":{"b":{}}}"#).to_string(),
        "object{b, a}"
    );
}

/// `additionalProperties: false` closes an object: an undeclared key never resolves (E0209,
/// not W0106), at the top and through a map's items; `true` keeps it open.
#[test]
fn closed_objects_make_undeclared_keys_unresolvable() {
    let text = r#"[
            {"id": "t", "output": "json", "task": "x",
             "expect": {"type": "object", "additionalProperties": false, "properties": {"severity": {"type": "string"}}}},
            {"id": "u", "dependsOn": ["t"], "task": "{steps.t.json.severty}"}
        ]"#;
    let diags = check(text);
    assert_eq!(codes(text), ["E0209"], "{diags:#?}");
    let d = find(&diags, "E0209");
    assert!(
        d.message.contains(
            "is a closed object (object{severity}): its contract sets \"additionalProperties\": false and does not declare 'severty'"
        ),
        "{}",
        d.message
    );
    assert_eq!(
        d.help.as_deref(),
        Some("did you mean 'severity'? {steps.t.json.severity}")
    );
    assert_eq!(&text[d.span.unwrap().range()], "severty");
    let open = text.replace(
        "\"additionalProperties\": false",
        "\"additionalProperties\": true",
    );
    assert_eq!(codes(&open), ["W0106"]);
    // Through a map's items, and a closed object with no properties at all.
    let text = r#"[
            {"id": "l", "output": "json", "task": "x", "expect": {"type": "array", "items": {"type": "string"}}},
            {"id": "m", "type": "map", "over": "{steps.l.json}", "dependsOn": ["l"], "output": "json", "task": "{item}",
             "expect": {"type": "object", "additionalProperties": false, "properties": {"path": {"type": "string"}, "meta": {"type": "object", "additionalProperties": false}}}},
            {"id": "u", "dependsOn": ["m"], "task": "{steps.m.json.0.path} {steps.m.json.0.size} {steps.m.json.0.meta.k}"}
        ]"#;
    let diags = typed(check(text));
    let spans: Vec<&str> = diags
        .iter()
        .map(|d| &text[d.span.unwrap().range()])
        .collect();
    assert_eq!(codes(text), ["E0209", "E0209"], "{diags:#?}");
    assert_eq!(spans, ["size", "k"]);
}

/// `expect` on a map types its JSON as an array of the contract's type.
#[test]
fn a_map_contract_types_its_items() {
    let text = r#"[
            {"id": "l", "output": "json", "task": "x", "expect": {"type": "array", "items": {"type": "string"}}},
            {"id": "m", "type": "map", "over": "{steps.l.json}", "dependsOn": ["l"], "output": "json", "task": "{item}",
             "expect": {"type": "object", "required": ["risk"], "properties": {"risk": {"enum": ["low", "high"]}}}},
            {"id": "u", "dependsOn": ["m"], "task": "{steps.m.json} {steps.m.json.0.risk} {steps.m.json.0.risk.x} {steps.m.json.0.rsk}"}
        ]"#;
    let flow = lower_source(text, &LowerOptions::default())
        .flow
        .expect("flow");
    let types = placeholder_types(&flow, None);
    let shown: Vec<String> = types
        .iter()
        .filter(|t| t.phase == "u")
        .map(|t| format!("{} {}", t.path, t.ty))
        .collect();
    assert_eq!(
        shown,
        [
            "steps.m.json array<object{risk}>",
            "steps.m.json.0.risk enum low|high | missing",
            "steps.m.json.0.risk.x missing",
            "steps.m.json.0.rsk any",
        ]
    );
    assert_eq!(codes(text), ["E0209", "W0106"]);
}

/// `{steps.S.json}` of a flow phase S whose object `def` is `def`, as the parent's `t` reads it.
fn sub_flow_json(def: &str) -> String {
    let text = format!(
        r#"[{{"id": "s", "type": "flow", "def": {def}}},
            {{"id": "t", "dependsOn": ["s"], "task": "{{steps.s.json}}"}}]"#
    );
    let lowered = lower_source(&text, &LowerOptions::default());
    let flow = lowered.flow.expect("flow");
    super::type_of_path(&flow, None, 1, "task", "steps.s.json")
        .expect("typed")
        .to_string()
}

/// SPEC §7.5: the flow phase's `json` is safeParse of the child's final output — a contract's
/// type for an agent final, a map final's *item* type, `any` for a final that can be skipped.
#[test]
fn a_sub_flows_json_follows_its_final_phase() {
    const C: &str = r#""output": "json", "expect": {"required": ["ok"], "properties": {"ok": {"type": "boolean"}}}"#;
    let agent = format!(r#"[{{"id": "a", "task": "x", {C}}}]"#);
    assert_eq!(sub_flow_json(&agent), "object{ok}");
    // A map's merged text: safeParse finds its first item.
    let map = format!(r#"[{{"id": "m", "type": "map", "over": "[1, 2]", "task": "x", {C}}}]"#);
    assert_eq!(sub_flow_json(&map), "object{ok}");
    let parallel =
        r#"[{"id": "p", "type": "parallel", "branches": [{"task": "a"}, {"task": "b"}]}]"#;
    assert_eq!(sub_flow_json(parallel), "any");
    // Skippable finals: its own `when`, a `join: all` over a guarded dependency.
    let own = format!(r#"[{{"id": "a", "task": "x", "when": "{{args.go}} == yes", {C}}}]"#);
    assert_eq!(sub_flow_json(&own), "any");
    let all = format!(
        r#"[{{"id": "g", "task": "x", "when": "{{args.go}} == yes"}}, {{"id": "h", "task": "y"}},
            {{"id": "f", "dependsOn": ["g", "h"], "task": "z", {C}}}]"#
    );
    assert_eq!(sub_flow_json(&all), "any");
    // Not skippable: a `join: any` with an unguarded route, a `when` that always holds, a
    // guard on a phase the final does not wait for.
    let any = all.replace(
        r#""dependsOn": ["g", "h"]"#,
        r#""join": "any", "dependsOn": ["g", "h"]"#,
    );
    assert_eq!(sub_flow_json(&any), "object{ok}");
    let holds = format!(r#"[{{"id": "a", "task": "x", "when": "true", {C}}}]"#);
    assert_eq!(sub_flow_json(&holds), "object{ok}");
    let aside = format!(
        r#"[{{"id": "g", "task": "x", "when": "{{args.go}} == yes"}}, {{"id": "f", "task": "z", "final": true, {C}}}]"#
    );
    assert_eq!(sub_flow_json(&aside), "object{ok}");
}
