//! Types through the DAG (structure-aware): `arbitrary` builds an `expect` contract (nested
//! objects, arrays, enums, scalars), a map over it or one of its fields, and placeholders and
//! comparisons that read it — some along the contract's declared shape, some with arbitrary
//! segments and literals. The flow is checked, and its placeholder types inferred.
//!
//! Oracles: no panic; every span inside the input; a placeholder that follows the declared
//! shape (declared properties, indices and `length` of arrays, anything below an
//! unconstrained value) is never reported (E0209, W0106), and neither is a comparison with a
//! value the contract allows; every placeholder of the flow gets a type.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value as Json, json};
use tfc::check::{CheckOptions, check_source, types::placeholder_types};
use tfc::flow::{LowerOptions, lower_source};

#[derive(Arbitrary, Debug)]
enum Schema {
    Str,
    Num,
    Int,
    Bool,
    Null,
    Free,
    Enum(Vec<Lit>),
    Object(Vec<(u8, Schema, bool)>, bool),
    Array(Box<Schema>, bool),
}

#[derive(Arbitrary, Debug, Clone)]
enum Lit {
    Word(u8),
    Num(i16),
    Bool(bool),
    Null,
}

const NAMES: &[&str] = &["a", "items", "results", "x-y", "0", "length", "data", "b"];
const WORDS: &[&str] = &["low", "high", "10", "", "true", "1e3", "[1]", "critical"];

fn lit_json(l: &Lit) -> Json {
    match l {
        Lit::Word(w) => json!(WORDS[usize::from(*w) % WORDS.len()]),
        Lit::Num(n) => json!(n),
        Lit::Bool(b) => json!(b),
        Lit::Null => Json::Null,
    }
}

/// The contract as JSON, at most `depth` levels deep.
fn contract(s: &Schema, depth: usize) -> Json {
    if depth == 0 {
        return json!({});
    }
    match s {
        Schema::Str => json!({"type": "string"}),
        Schema::Num => json!({"type": "number"}),
        Schema::Int => json!({"type": "integer"}),
        Schema::Bool => json!({"type": "boolean"}),
        Schema::Null => json!({"type": "null"}),
        Schema::Free => json!({}),
        Schema::Enum(ls) if ls.is_empty() => json!({}),
        Schema::Enum(ls) => json!({"enum": ls.iter().map(lit_json).collect::<Vec<_>>()}),
        Schema::Object(props, typed) => {
            let mut p = serde_json::Map::new();
            let mut req = Vec::new();
            for (n, sub, r) in props.iter().take(6) {
                let name = NAMES[usize::from(*n) % NAMES.len()];
                if p.contains_key(name) {
                    continue;
                }
                p.insert(name.to_owned(), contract(sub, depth - 1));
                if *r {
                    req.push(json!(name));
                }
            }
            let mut c = json!({"properties": p, "required": req});
            if *typed {
                c["type"] = json!("object");
            }
            c
        }
        Schema::Array(items, typed) => {
            let mut c = json!({"items": contract(items, depth - 1)});
            if *typed {
                c["type"] = json!("array");
            }
            c
        }
    }
}

/// A path along the declared shape, led by `choices`; and a literal the value there may equal.
fn declared_path(c: &Json, choices: &[u8]) -> (Vec<String>, Option<Json>) {
    let mut path = Vec::new();
    let mut cur = c;
    for &k in choices {
        if k % 4 == 0 {
            break;
        }
        if let Some(props) = cur.get("properties").and_then(Json::as_object).filter(|p| !p.is_empty()) {
            let (name, sub) = props.iter().nth(usize::from(k) % props.len()).expect("in range");
            path.push(name.clone());
            cur = sub;
        } else if let Some(items) = cur.get("items") {
            if k % 5 == 0 {
                path.push("length".into());
                return (path, None);
            }
            path.push((k % 3).to_string());
            cur = items;
        } else if cur.as_object().is_some_and(|o| o.is_empty()) {
            path.push(format!("k{k}"));
        } else {
            break;
        }
    }
    let member = cur.get("enum").and_then(Json::as_array).and_then(|e| e.first().cloned());
    (path, member)
}

#[derive(Arbitrary, Debug)]
struct Input {
    schema: Schema,
    declared: Vec<u8>,
    wild: Vec<(u8, Option<u32>)>,
    op: u8,
    literal: Lit,
    over_field: bool,
}

fuzz_target!(|input: Input| {
    let c = contract(&input.schema, 5);
    let (path, member) = declared_path(&c, &input.declared);
    let full = std::iter::once("steps.t.json".to_owned()).chain(path).collect::<Vec<_>>().join(".");
    let wild: Vec<String> = input
        .wild
        .iter()
        .take(6)
        .map(|(n, i)| match i {
            Some(i) => i.to_string(),
            None => NAMES[usize::from(*n) % NAMES.len()].to_owned(),
        })
        .collect();
    let wild_path = std::iter::once("steps.t.json".to_owned()).chain(wild).collect::<Vec<_>>().join(".");
    let op = ["==", "!=", "<", ">=", ">"][usize::from(input.op) % 5];
    let lit = match lit_json(&input.literal) {
        Json::String(s) => format!("{s:?}"),
        other => other.to_string(),
    };
    let allowed = match &member {
        Some(Json::String(s)) => format!("{{{full}}} == {s:?}"),
        Some(other) => format!("{{{full}}} == {other}"),
        None => format!("{{{full}}} != ''"),
    };
    let over = if input.over_field { full.clone() } else { "steps.t.json".to_owned() };
    let flow = json!([
        {"id": "t", "output": "json", "task": "x", "expect": c},
        {"id": "ok", "dependsOn": ["t"], "task": format!("Read {{{full}}}."), "when": allowed},
        {"id": "wild", "dependsOn": ["t"], "task": format!("Read {{{wild_path}}}."),
         "when": format!("{{{wild_path}}} {op} {lit}")},
        {"id": "m", "type": "map", "dependsOn": ["t"], "over": format!("{{{over}}}"),
         "task": "Each {item} {item.a} {item.0.length}"},
        {"id": "end", "dependsOn": ["ok", "wild", "m"], "task": "done"}
    ]);
    let text = flow.to_string();
    let checked = check_source(&text, &LowerOptions::default(), &CheckOptions::default());
    for d in &checked.diagnostics {
        for span in d.span.iter().chain(d.labels.iter().map(|l| &l.span)) {
            assert!(span.start <= span.end && span.end as usize <= text.len(), "{span:?}");
            assert!(text.is_char_boundary(span.start as usize) && text.is_char_boundary(span.end as usize));
        }
        if d.phase.as_deref() == Some("ok") {
            panic!("a declared path or allowed comparison was reported: {text}\n{d:#?}");
        }
    }
    let flow = lower_source(&text, &LowerOptions::default()).flow.expect("lowers");
    let types = placeholder_types(&flow, None);
    for t in &types {
        assert!(t.span.end as usize <= text.len());
        assert_eq!(&text[t.span.range()], format!("{{{}}}", t.path));
    }
    assert!(types.iter().any(|t| t.path == full), "{full} has no type");
});
