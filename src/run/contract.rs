//! Output contracts (SPEC §3.15): checking a parsed output against `expect`, and the minimal
//! value that satisfies one (dry-run stubs, SPEC §9.9).

use crate::flow::Contract;
use crate::value::{Map, Value};

/// At most this many violations are reported.
const MAX_VIOLATIONS: usize = 8;

/// Check `output` (through safeParse) against a contract; `Err` holds the violations.
pub fn check_output(contract: &Contract, output: &str) -> Result<(), Vec<String>> {
    match crate::eval::safe_parse::safe_parse(output).value {
        None => Err(vec![
            "$: output is not valid JSON (contract could not be checked)".to_owned(),
        ]),
        Some(v) => {
            let mut out = Vec::new();
            check(contract, &v, "$".to_owned(), &mut out);
            if out.is_empty() { Ok(()) } else { Err(out) }
        }
    }
}

/// The error text of a violated contract.
pub fn violation_error(violations: &[String]) -> String {
    let mut s = String::from("Output contract violated:");
    for v in violations {
        s.push_str("\n- ");
        s.push_str(v);
    }
    s
}

/// The types a value may have: `type` (one name or a list), else what `properties`/`required`
/// (object) or `items` (array) imply; `None` = any type.
fn effective_types(c: &Contract) -> Option<&[String]> {
    static OBJECT: std::sync::LazyLock<[String; 1]> =
        std::sync::LazyLock::new(|| ["object".to_owned()]);
    static ARRAY: std::sync::LazyLock<[String; 1]> =
        std::sync::LazyLock::new(|| ["array".to_owned()]);
    match &c.ty {
        Some(t) => Some(&t.value),
        None if !c.properties.is_empty() || !c.required.is_empty() => Some(&*OBJECT),
        None if c.items.is_some() => Some(&*ARRAY),
        None => None,
    }
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Number(n) if n.fract() == 0.0 && n.is_finite() => "integer",
        other => other.type_name(),
    }
}

/// One value to check against one contract, at a path (`$.a[1]`).
type Task<'a> = (&'a Contract, &'a Value, String);

/// The members of a checked container still to visit.
enum Members<'a> {
    /// An object's `properties` contracts, applied to the keys it has.
    Properties(
        indexmap::map::Iter<'a, String, crate::flow::Field<Contract>>,
        &'a Map,
    ),
    /// An array's elements, all against `items`.
    Items(
        &'a Contract,
        std::iter::Enumerate<std::slice::Iter<'a, Value>>,
    ),
}

impl<'a> Members<'a> {
    fn next(&mut self, path: &str) -> Option<Task<'a>> {
        match self {
            Members::Properties(props, map) => props.find_map(|(key, sub)| {
                let child = map.get(key)?;
                Some((&sub.value, child, format!("{path}.{key}")))
            }),
            Members::Items(contract, items) => items
                .next()
                .map(|(i, item)| (*contract, item, format!("{path}[{i}]"))),
        }
    }
}

/// Collect the violations of `v` against `c` (at most [`MAX_VIOLATIONS`]), depth first in
/// document order. Nested contracts are walked with an explicit stack: the value comes from a
/// model and the contract from a file, and neither's depth may touch the call stack.
fn check(c: &Contract, v: &Value, path: String, out: &mut Vec<String>) {
    let mut open: Vec<(Members<'_>, String)> = Vec::new();
    let mut next = Some((c, v, path));
    while out.len() < MAX_VIOLATIONS {
        let task = match next.take() {
            Some(task) => task,
            None => {
                let Some((members, path)) = open.last_mut() else {
                    break;
                };
                match members.next(path) {
                    Some(task) => task,
                    None => {
                        open.pop();
                        continue;
                    }
                }
            }
        };
        let (c, v, path) = task;
        if let Some(members) = check_one(c, v, &path, out) {
            open.push((members, path));
        }
    }
    out.truncate(MAX_VIOLATIONS);
}

/// Check one value against one contract, without its members; the members to check next.
fn check_one<'a>(
    c: &'a Contract,
    v: &'a Value,
    path: &str,
    out: &mut Vec<String>,
) -> Option<Members<'a>> {
    if let Some(types) = effective_types(c) {
        let actual = type_of(v);
        let ok = types
            .iter()
            .any(|t| t == actual || (t == "number" && actual == "integer"));
        if !ok {
            let shown = if actual == "integer" {
                "number"
            } else {
                actual
            };
            out.push(format!(
                "{path}: expected {}, got {shown}",
                types.join(" or ")
            ));
            return None;
        }
    }
    if let Some(values) = &c.enum_values
        && !values.contains(v)
    {
        out.push(format!(
            "{path}: value is not one of the allowed enum literals"
        ));
    }
    match v {
        Value::Object(map) => {
            for key in &c.required {
                if !map.contains_key(&key.value) && out.len() < MAX_VIOLATIONS {
                    out.push(format!("{path}.{}: required key is missing", key.value));
                }
            }
            if c.closed() {
                for key in map.keys() {
                    if !c.properties.contains_key(key) && out.len() < MAX_VIOLATIONS {
                        out.push(format!("{path}.{key}: property is not allowed"));
                    }
                }
            }
            Some(Members::Properties(c.properties.iter(), map))
        }
        Value::Array(items) => {
            if let Some(min) = &c.min_items
                && (items.len() as u64) < min.value
            {
                out.push(format!("{path}: expected at least {} items", min.value));
            }
            if let Some(max) = &c.max_items
                && items.len() as u64 > max.value
            {
                out.push(format!("{path}: expected at most {} items", max.value));
            }
            let contract = &c.items.as_ref()?.value;
            Some(Members::Items(contract, items.iter().enumerate()))
        }
        _ => None,
    }
}

/// The most elements a stub array gets.
const MAX_STUB_ITEMS: u64 = 10_000;

/// A minimal value satisfying the contract: one array element (`minItems` of them, none for
/// `maxItems: 0`), required properties filled,
/// strings `dry-run`, numbers 0, booleans false, enums' first literal; `{}` without one.
pub fn stub(contract: Option<&Contract>) -> Value {
    let Some(c) = contract else {
        return Value::Object(Map::default());
    };
    if let Some(first) = c.enum_values.as_ref().and_then(|v| v.first()) {
        return first.clone();
    }
    match effective_types(c)
        .and_then(|t| t.first())
        .map(String::as_str)
    {
        Some("array") => {
            // One element, or as many as `minItems` asks (up to a bound: a dry run does not
            // build a billion stubs), and none when `maxItems` is 0.
            let min = c.min_items.as_ref().map_or(1, |m| m.value.max(1));
            let n = c.max_items.as_ref().map_or(min, |m| min.min(m.value));
            let one = stub(c.items.as_ref().map(|i| &i.value));
            Value::Array(vec![one; n.min(MAX_STUB_ITEMS) as usize])
        }
        Some("string") => Value::from("dry-run"),
        Some("number" | "integer") => Value::Number(0.0),
        Some("boolean") => Value::Bool(false),
        Some("null") => Value::Null,
        _ => {
            let mut m = Map::default();
            for key in &c.required {
                let sub = c.properties.get(&key.value).map(|p| &p.value);
                m.insert(
                    key.value.clone(),
                    sub.map_or(Value::from("dry-run"), |s| stub(Some(s))),
                );
            }
            Value::Object(m)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::testing::contract;

    #[test]
    fn violations_have_paths() {
        let c = contract(
            r#"{"type":"object","required":["a","b"],"properties":{"a":{"type":"array","items":{"enum":["x","y"]}},"n":{"type":"integer"}}}"#,
        );
        assert_eq!(
            check_output(&c, r#"{"a":["x","z"],"b":1}"#),
            Err(vec![
                "$.a[1]: value is not one of the allowed enum literals".to_owned()
            ])
        );
        assert_eq!(
            check_output(&c, r#"[1]"#),
            Err(vec!["$: expected object, got array".to_owned()])
        );
        assert_eq!(
            check_output(&c, r#"Here: {"n": 1.5}"#),
            Err(vec![
                "$.a: required key is missing".to_owned(),
                "$.b: required key is missing".to_owned(),
                "$.n: expected integer, got number".to_owned()
            ])
        );
        assert_eq!(
            check_output(&c, "no json"),
            Err(vec![
                "$: output is not valid JSON (contract could not be checked)".to_owned()
            ])
        );
        assert_eq!(check_output(&c, r#"{"a":[],"b":null}"#), Ok(()));
        assert_eq!(
            violation_error(&["x".into(), "y".into()]),
            "Output contract violated:\n- x\n- y"
        );
    }

    /// A `type` list accepts a value of any listed type; the stub takes the first.
    #[test]
    fn type_lists_accept_any_listed_type() {
        let c = contract(r#"{"type":["string","null"]}"#);
        assert_eq!(check_output(&c, r#""x""#), Ok(()));
        assert_eq!(check_output(&c, "null"), Ok(()));
        assert_eq!(
            check_output(&c, "1"),
            Err(vec!["$: expected string or null, got number".to_owned()])
        );
        let c = contract(r#"{"type":["number","array"],"items":{"type":"string"}}"#);
        assert_eq!(check_output(&c, "2.5"), Ok(()));
        assert_eq!(check_output(&c, r#"["a"]"#), Ok(()));
        assert_eq!(
            check_output(&c, "[1]"),
            Err(vec!["$[0]: expected string, got number".to_owned()])
        );
        assert_eq!(stub(Some(&c)).to_json(), "0");
    }

    /// `additionalProperties: false` allows no key besides `properties`, at any depth;
    /// `true` (or nothing) allows any.
    #[test]
    fn closed_objects_name_each_extra_key() {
        let c = contract(
            r#"{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"string"},"f":{"type":"array","items":{"properties":{"path":{"type":"string"}},"additionalProperties":false}}}}"#,
        );
        assert_eq!(check_output(&c, r#"{"a":"x","f":[{"path":"p"}]}"#), Ok(()));
        assert_eq!(
            check_output(&c, r#"{"a":"x","b":1,"c":2,"f":[{"path":"p","size":3}]}"#),
            Err(vec![
                "$.b: property is not allowed".to_owned(),
                "$.c: property is not allowed".to_owned(),
                "$.f[0].size: property is not allowed".to_owned(),
            ])
        );
        let open = contract(r#"{"properties":{"a":{}},"additionalProperties":true}"#);
        assert_eq!(check_output(&open, r#"{"a":1,"b":2}"#), Ok(()));
        // Only objects are judged by it.
        let any = contract(r#"{"additionalProperties":false}"#);
        assert_eq!(check_output(&any, "[1]"), Ok(()));
        assert_eq!(
            check_output(&any, r#"{"k":1}"#),
            Err(vec!["$.k: property is not allowed".to_owned()])
        );
    }

    /// `minItems`/`maxItems` bound an array's length, at any depth; other values pass.
    #[test]
    fn item_counts_are_bounded() {
        let c = contract(
            r#"{"type":"object","properties":{"files":{"type":"array","minItems":1,"maxItems":2}}}"#,
        );
        assert_eq!(check_output(&c, r#"{"files":[1]}"#), Ok(()));
        assert_eq!(check_output(&c, r#"{"files":[1,2]}"#), Ok(()));
        assert_eq!(
            check_output(&c, r#"{"files":[]}"#),
            Err(vec!["$.files: expected at least 1 items".to_owned()])
        );
        assert_eq!(
            check_output(&c, r#"{"files":[1,2,3]}"#),
            Err(vec!["$.files: expected at most 2 items".to_owned()])
        );
        let top = contract(r#"{"minItems":3,"items":{"type":"integer"}}"#);
        assert_eq!(
            check_output(&top, r#"["x"]"#),
            Err(vec![
                "$: expected at least 3 items".to_owned(),
                "$[0]: expected integer, got string".to_owned(),
            ])
        );
        assert_eq!(
            check_output(&top, r#""not an array""#),
            Err(vec!["$: expected array, got string".to_owned()])
        );
        let counts = contract(r#"{"maxItems":0}"#);
        assert_eq!(check_output(&counts, "{}"), Ok(()));
    }

    /// Annotations change nothing at run time.
    #[test]
    fn annotations_are_ignored() {
        let c = contract(
            r#"{"type":"object","description":"d","title":"t","$comment":"c","examples":[{"a":1}],"properties":{"a":{"type":"integer","description":"the a"}}}"#,
        );
        assert_eq!(check_output(&c, r#"{"a":1}"#), Ok(()));
        assert_eq!(
            check_output(&c, r#"{"a":"x"}"#),
            Err(vec!["$.a: expected integer, got string".to_owned()])
        );
    }

    #[test]
    fn stubs_meet_item_counts_and_closed_objects() {
        for text in [
            r#"{"type":"array","minItems":3,"items":{"type":"string"}}"#,
            r#"{"type":"array","maxItems":0}"#,
            r#"{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"array","minItems":2}}}"#,
        ] {
            let c = contract(text);
            let s = stub(Some(&c));
            assert_eq!(
                check_output(&c, &s.to_json()),
                Ok(()),
                "{text}: {}",
                s.to_json()
            );
        }
        let c = contract(r#"{"type":"array","minItems":3}"#);
        assert_eq!(stub(Some(&c)).to_json(), r#"[{},{},{}]"#);
    }

    #[test]
    fn stubs_satisfy_their_contract() {
        let c = contract(
            r#"{"type":"object","required":["sev","items","n"],"properties":{"sev":{"enum":["high","low"]},"items":{"type":"array","items":{"type":"string"}},"n":{"type":"number"}}}"#,
        );
        let s = stub(Some(&c));
        assert_eq!(s.to_json(), r#"{"sev":"high","items":["dry-run"],"n":0}"#);
        assert_eq!(check_output(&c, &s.to_json()), Ok(()));
        assert_eq!(stub(None).to_json(), "{}");
    }

    /// A million-deep answer is checked (parsed, walked, compared with enum literals, dropped)
    /// on a 256 KiB stack, against contracts of ordinary depth.
    #[test]
    fn deep_outputs_are_checked_without_recursion() {
        use crate::value::fixtures::{DEPTH, small_stack};
        let nested = |depth: usize| {
            let mut c = String::from(r#"{"type":"integer"}"#);
            for _ in 0..depth {
                c = format!(r#"{{"type":"array","items":{c}}}"#);
            }
            contract(&c)
        };
        let arrays = contract(r#"{"type":"array","items":{"type":"array"}}"#);
        let deep_contract = nested(100);
        let literal = contract(r#"{"enum":[[[1]], "x"]}"#);
        small_stack(move || {
            let answer = format!("Result:\n{}1{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
            assert_eq!(check_output(&arrays, &answer), Ok(()));
            let bottom = format!("$[0]{}: expected integer, got array", "[0]".repeat(99));
            assert_eq!(check_output(&deep_contract, &answer), Err(vec![bottom]));
            assert_eq!(
                check_output(&literal, &answer),
                Err(vec![
                    "$: value is not one of the allowed enum literals".to_owned()
                ])
            );
            let exact = format!("{}1{}", "[".repeat(100), "]".repeat(100));
            assert_eq!(check_output(&deep_contract, &exact), Ok(()));
        });
    }
}
