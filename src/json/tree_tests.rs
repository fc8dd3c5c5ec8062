//! Tests of the JSON tree's accessors and conversions.

use super::parse;
use super::tree::*;
use crate::source::Span;
use crate::value::{Map, Value};

fn root(text: &str) -> Node {
    let parsed = parse(text);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    parsed.root.expect("a root")
}

#[test]
fn get_finds_the_first_member() {
    let text = r#"{"a": 1, "b": "x", "a": 2}"#;
    let parsed = parse(text);
    let node = parsed.root.unwrap();
    assert_eq!(node.get("a").map(|n| &n.kind), Some(&Kind::Number(1.0)));
    assert_eq!(node.get("b").and_then(Node::as_str).unwrap().value, "x");
    assert!(node.get("c").is_none());
    assert!(node.get("a").unwrap().get("a").is_none());
    assert!(node.get("a").unwrap().as_str().is_none());
}

#[test]
fn type_names() {
    let node = root(r#"[null, true, 1, "s", [], {}]"#);
    let Kind::Array(items) = &node.kind else {
        panic!("not an array")
    };
    let names: Vec<_> = items.iter().map(Node::type_name).collect();
    assert_eq!(
        names,
        ["null", "boolean", "number", "string", "array", "object"]
    );
    assert_eq!(node.type_name(), "array");
}

#[test]
fn to_value_matches_serde_json() {
    let text = r#"{"a": [1, 2.5, -0, 1e400, {"b": null}], "c": {"d": "e\u00e9"}, "f": []}"#;
    let mine = root(text).to_value();
    assert_eq!(mine.as_object().unwrap()["a"].as_array().unwrap().len(), 5);
    let expected = r#"{"a":[1,2.5,0,null,{"b":null}],"c":{"d":"eé"},"f":[]}"#;
    assert_eq!(mine.to_json(), expected);
}

#[test]
fn to_value_duplicate_keys_like_json_parse() {
    let parsed = parse(r#"{"a": 1, "b": 2, "a": 3}"#);
    let value = parsed.root.unwrap().to_value();
    assert_eq!(value.to_json(), r#"{"a":3,"b":2}"#);
}

#[test]
fn to_value_of_scalars_and_empty_containers() {
    assert_eq!(root("null").to_value(), Value::Null);
    assert_eq!(root("\"x\"").to_value(), Value::from("x"));
    assert_eq!(root("[]").to_value(), Value::Array(Vec::new()));
    assert_eq!(root("{}").to_value(), Value::Object(Map::default()));
}

#[test]
fn to_value_survives_deep_hand_built_trees() {
    let mut node = Node {
        span: Span::default(),
        kind: Kind::Null,
    };
    for _ in 0..100_000 {
        node = Node {
            span: Span::default(),
            kind: Kind::Array(vec![node]),
        };
    }
    let value = node.to_value();
    let (mut depth, mut at) = (0, &value);
    while let Value::Array(items) = at {
        at = &items[0];
        depth += 1;
    }
    assert_eq!(depth, 100_000);
    // `Value` drops without recursion; take the node tree apart by hand.
    let mut node = Some(node);
    while let Some(Node {
        kind: Kind::Array(mut items),
        ..
    }) = node
    {
        node = items.pop();
    }
}

/// The tree is moved around a lot while it is read: its nodes stay small (a string's map back
/// to the file is boxed apart unless it is a plain shift, and `Kind` needs no tag word).
#[test]
#[cfg(target_pointer_width = "64")]
fn tree_nodes_stay_small() {
    use std::mem::size_of;
    assert_eq!(size_of::<super::Str>(), 40);
    assert_eq!(size_of::<Kind>(), 40);
    assert_eq!(size_of::<Node>(), 48);
    assert_eq!(size_of::<Option<Node>>(), 48);
    assert_eq!(size_of::<Member>(), 88);
}

/// Containers are read into vectors of exactly their size, at any depth.
#[test]
fn containers_have_no_spare_capacity() {
    fn check(node: &Node) {
        match &node.kind {
            Kind::Array(items) => {
                assert_eq!(items.capacity(), items.len());
                items.iter().for_each(check);
            }
            Kind::Object(members) => {
                assert_eq!(members.capacity(), members.len());
                members.iter().for_each(|m| check(&m.value));
            }
            _ => {}
        }
    }
    check(&root(
        r#"[1, {"a": [2, 3, {"b": []}], "c": {}}, [[4], 5], "x"]"#,
    ));
    check(&root(
        r#"{"a": [1, 2, 3], "b": {"c": [4], "d": 5}, "e": 6}"#,
    ));
    // Large ones too, alone or inside others, and what is read after them.
    let many = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let members = |n: usize| {
        let members = (0..n).map(|i| format!(r#""k{i}": {i}"#));
        members.collect::<Vec<_>>().join(",")
    };
    for n in [255, 256, 1000] {
        check(&root(&format!("[{}]", many(n))));
        check(&root(&format!("{{{}}}", members(n))));
        let nested = format!(
            r#"[[{0}], {{{1}}}, [1, [{0}]], {{"a": [2]}}]"#,
            many(n),
            members(n)
        );
        check(&root(&nested));
        let node = root(&nested);
        let Kind::Array(items) = &node.kind else {
            panic!()
        };
        assert_eq!(items.len(), 4);
        assert!(matches!(&items[0].kind, Kind::Array(v) if v.len() == n));
    }
}
