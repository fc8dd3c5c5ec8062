//! The traits of [`Value`] that walk nested containers — `Clone`, `PartialEq`, `Debug`, `Drop`,
//! and the conversion from `serde_json` — written with explicit stacks.
//!
//! Values come from model output and files, so they may be nested as deep as memory allows
//! (`[` × 1,000,000 is a valid answer). The derived traits recurse once per level and overflow
//! the call stack long before that; these use a fixed amount of native stack whatever the depth.
//! Containers whose members are all scalars (or empty containers) — nearly every value in
//! practice — take the direct route without building a stack.

use std::fmt;

use super::types::{Map, Value};

/// A non-empty array or object: a member that needs a frame of its own.
pub(super) fn is_container(v: &Value) -> bool {
    match v {
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        _ => false,
    }
}

impl Clone for Value {
    fn clone(&self) -> Value {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(*b),
            Value::Number(n) => Value::Number(*n),
            Value::String(s) => Value::String(s.clone()),
            // Members are scalars or empty containers: cloning them recurses one level at most.
            Value::Array(a) if !a.iter().any(is_container) => Value::Array(a.clone()),
            Value::Object(o) if !o.values().any(is_container) => Value::Object(o.clone()),
            _ => build(self),
        }
    }
}

impl From<&serde_json::Value> for Value {
    fn from(v: &serde_json::Value) -> Value {
        build(v)
    }
}

/// What a node of a source tree is, for [`build`]: a finished value, or a container to copy
/// member by member (with its length, for the capacity).
enum Shape<I, M> {
    Leaf(Value),
    Array(I, usize),
    Object(M, usize),
}

/// A tree that can be copied into a [`Value`] by [`build`].
trait Tree: Sized {
    type Items<'a>: Iterator<Item = &'a Self>
    where
        Self: 'a;
    type Members<'a>: Iterator<Item = (&'a String, &'a Self)>
    where
        Self: 'a;
    fn shape(&self) -> Shape<Self::Items<'_>, Self::Members<'_>>;
}

impl Tree for Value {
    type Items<'a> = std::slice::Iter<'a, Value>;
    type Members<'a> = indexmap::map::Iter<'a, String, Value>;

    fn shape(&self) -> Shape<Self::Items<'_>, Self::Members<'_>> {
        match self {
            Value::Array(a) if a.iter().any(is_container) => Shape::Array(a.iter(), a.len()),
            Value::Object(o) if o.values().any(is_container) => Shape::Object(o.iter(), o.len()),
            flat => Shape::Leaf(flat.clone()),
        }
    }
}

impl Tree for serde_json::Value {
    type Items<'a> = std::slice::Iter<'a, serde_json::Value>;
    type Members<'a> = serde_json::map::Iter<'a>;

    fn shape(&self) -> Shape<Self::Items<'_>, Self::Members<'_>> {
        use serde_json::Value as J;
        Shape::Leaf(match self {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
            J::String(s) => Value::String(s.clone()),
            J::Array(a) => return Shape::Array(a.iter(), a.len()),
            J::Object(o) => return Shape::Object(o.iter(), o.len()),
        })
    }
}

/// A container being copied: the source members still to visit and the copy so far (for an
/// object, also the key of the member being copied).
enum Open<I, M> {
    Array(I, Vec<Value>),
    Object(M, Map, String),
}

impl<I, M> Open<I, M> {
    fn into_value(self) -> Value {
        match self {
            Open::Array(_, items) => Value::Array(items),
            Open::Object(_, map, _) => Value::Object(map),
        }
    }
}

/// Copy a tree into a [`Value`] without recursion: open containers live on a stack, and each
/// finished member is attached to the container on top.
fn build<T: Tree>(root: &T) -> Value {
    let mut open: Vec<Open<T::Items<'_>, T::Members<'_>>> = Vec::new();
    let mut node = root;
    loop {
        let mut finished = match node.shape() {
            Shape::Leaf(v) => Some(v),
            Shape::Array(items, n) => {
                open.push(Open::Array(items, Vec::with_capacity(n)));
                None
            }
            Shape::Object(members, n) => {
                let map = Map::with_capacity_and_hasher(n, Default::default());
                open.push(Open::Object(members, map, String::new()));
                None
            }
        };
        // Attach what is finished and find the next member to copy, closing every container
        // that has no members left.
        loop {
            let Some(top) = open.last_mut() else {
                return finished.unwrap_or_default();
            };
            let next = match top {
                Open::Array(items, out) => {
                    out.extend(finished.take());
                    items.next()
                }
                Open::Object(members, out, key) => {
                    if let Some(v) = finished.take() {
                        out.insert(std::mem::take(key), v);
                    }
                    members.next().map(|(k, v)| {
                        key.clone_from(k);
                        v
                    })
                }
            };
            match next {
                Some(member) => {
                    node = member;
                    break;
                }
                None => finished = open.pop().map(Open::into_value),
            }
        }
    }
}

/// Structural equality; objects compare as maps (same keys and values, in any order), as
/// `IndexMap`'s `PartialEq` does. Numbers compare as doubles (`NaN != NaN`).
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        // Pairs of containers still to compare; scalar members are compared on the spot.
        let mut pending: Vec<(&Value, &Value)> = Vec::new();
        let mut pair = (self, other);
        loop {
            match pair {
                (Value::Array(x), Value::Array(y)) => {
                    if x.len() != y.len() {
                        return false;
                    }
                    for (a, b) in x.iter().zip(y) {
                        if !member_eq(a, b, &mut pending) {
                            return false;
                        }
                    }
                }
                (Value::Object(x), Value::Object(y)) => {
                    if x.len() != y.len() {
                        return false;
                    }
                    for (k, a) in x {
                        match y.get(k) {
                            Some(b) if member_eq(a, b, &mut pending) => {}
                            _ => return false,
                        }
                    }
                }
                (a, b) => {
                    if !scalar_eq(a, b) {
                        return false;
                    }
                }
            }
            match pending.pop() {
                Some(next) => pair = next,
                None => return true,
            }
        }
    }
}

/// Two members: scalars now, two containers of the same kind later (pushed on `pending`).
fn member_eq<'v>(a: &'v Value, b: &'v Value, pending: &mut Vec<(&'v Value, &'v Value)>) -> bool {
    match (a, b) {
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => {
            pending.push((a, b));
            true
        }
        _ => scalar_eq(a, b),
    }
}

/// Equality of two values that are not both arrays or both objects.
fn scalar_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        _ => false,
    }
}

/// The derived format on one line (`Object({"a": Array([Number(1.0), Null])})`), also for
/// `{:#?}`.
impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        enum Frame<'a> {
            Array(std::slice::Iter<'a, Value>, bool),
            Object(indexmap::map::Iter<'a, String, Value>, bool),
        }
        let mut stack: Vec<Frame<'_>> = Vec::new();
        let mut next = Some(self);
        loop {
            match next.take() {
                None => {}
                Some(Value::Null) => f.write_str("Null")?,
                Some(Value::Bool(b)) => write!(f, "Bool({b:?})")?,
                Some(Value::Number(n)) => write!(f, "Number({n:?})")?,
                Some(Value::String(s)) => write!(f, "String({s:?})")?,
                Some(Value::Array(a)) => {
                    f.write_str("Array([")?;
                    stack.push(Frame::Array(a.iter(), true));
                }
                Some(Value::Object(o)) => {
                    f.write_str("Object({")?;
                    stack.push(Frame::Object(o.iter(), true));
                }
            }
            let Some(top) = stack.last_mut() else {
                return Ok(());
            };
            let (member, first) = match top {
                Frame::Array(items, first) => (items.next().map(|v| (None, v)), first),
                Frame::Object(members, first) => (members.next().map(|(k, v)| (Some(k), v)), first),
            };
            match member {
                Some((key, v)) => {
                    if !std::mem::take(first) {
                        f.write_str(", ")?;
                    }
                    if let Some(k) = key {
                        write!(f, "{k:?}: ")?;
                    }
                    next = Some(v);
                }
                None => {
                    let close = match top {
                        Frame::Array(..) => "])",
                        Frame::Object(..) => "})",
                    };
                    stack.pop();
                    f.write_str(close)?;
                }
            }
        }
    }
}

/// Dropping moves the nested containers of a container onto a stack first (scalars stay where
/// they are and are freed with their container), so no drop recurses more than one level.
impl Drop for Value {
    fn drop(&mut self) {
        let mut stack = match self {
            // The members of an array of containers are the stack as they are.
            Value::Array(a) if a.iter().any(is_container) => std::mem::take(a),
            Value::Object(o) if o.values().any(is_container) => {
                let mut stack = Vec::new();
                take_containers(self, &mut stack);
                stack
            }
            _ => return,
        };
        while let Some(mut v) = stack.pop() {
            take_containers(&mut v, &mut stack);
            // `v` now holds scalars and empty containers only: its own drop stops at one scan.
        }
    }
}

/// Moves the non-empty containers among `v`'s members onto `stack`, leaving `null` behind.
fn take_containers(v: &mut Value, stack: &mut Vec<Value>) {
    match v {
        Value::Array(a) => {
            stack.extend(a.iter_mut().filter(|m| is_container(m)).map(std::mem::take))
        }
        Value::Object(o) => {
            stack.extend(
                o.values_mut()
                    .filter(|m| is_container(m))
                    .map(std::mem::take),
            );
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;
    use crate::value::strategies::arb_value;
    use proptest::prelude::*;

    #[test]
    fn deep_values_drop() {
        small_stack(|| {
            drop(nested_arrays(DEPTH, Value::Null));
            drop(nested_objects(DEPTH, Value::Null));
            drop(mixed(DEPTH, Value::Null));
        });
    }

    #[test]
    fn deep_values_clone() {
        small_stack(|| {
            let v = mixed(DEPTH, Value::from("end"));
            let copy = v.clone();
            drop(v);
            // The copy stands alone, whole.
            assert!(copy == mixed(DEPTH, Value::from("end")));
            let v = nested_objects(DEPTH, Value::Null);
            assert!(v.clone() == v);
        });
    }

    #[test]
    fn deep_values_compare() {
        small_stack(|| {
            let a = mixed(DEPTH, Value::from("leaf"));
            let b = mixed(DEPTH, Value::from("leaf"));
            assert!(a == b);
            drop(b);
            // Differences at the very bottom, and in the depth.
            assert!(a != mixed(DEPTH, Value::from("other")));
            assert!(a != mixed(DEPTH - 2, Value::from("leaf")));
            assert!(nested_objects(DEPTH, Value::Null) != nested_arrays(DEPTH, Value::Null));
        });
    }

    #[test]
    fn deep_values_debug() {
        small_stack(|| {
            let text = format!("{:?}", nested_arrays(DEPTH, Value::Bool(true)));
            assert_eq!(text.len(), DEPTH * "Array([])".len() + "Bool(true)".len());
            assert!(text.contains("Array([Array([Bool(true)])])") && text.ends_with("])])"));
            let text = format!("{:?}", mixed(DEPTH, Value::Null));
            assert!(text.starts_with(r#"Object({"k": Array([Number(999998.0), Object({"k": "#));
            assert!(text.contains("Array([Number(0.0), Null])"));
        });
    }

    #[test]
    fn deep_serde_json_values_convert() {
        // serde_json builds and drops its own values recursively, so the source stays shallow
        // enough for this thread; the conversion itself is checked on a small stack below.
        let text = format!("{}1{}", "[{\"a\":".repeat(50), "}]".repeat(50));
        let json: serde_json::Value = serde_json::from_str(&text).expect("valid");
        let ours = crate::value::parse::parse_json(&text).expect("valid");
        assert!(Value::from(&json) == ours);
        small_stack(move || {
            assert!(Value::from(&json) == ours);
            drop(json);
        });
    }

    #[test]
    fn debug_matches_the_derived_format() {
        let mut m = Map::default();
        m.insert(
            "a\"".into(),
            Value::Array(vec![Value::Number(1.0), Value::Null]),
        );
        m.insert("b".into(), Value::Object(Map::default()));
        m.insert("c".into(), Value::Array(vec![]));
        m.insert("d".into(), Value::from("q\n"));
        m.insert("e".into(), Value::Bool(false));
        assert_eq!(
            format!("{:?}", Value::Object(m)),
            r#"Object({"a\"": Array([Number(1.0), Null]), "b": Object({}), "c": Array([]), "d": String("q\n"), "e": Bool(false)})"#
        );
        assert_eq!(format!("{:?}", Value::Number(f64::NAN)), "Number(NaN)");
    }

    #[test]
    fn equality_is_structural() {
        let obj = |pairs: &[(&str, f64)]| {
            Value::Object(
                pairs
                    .iter()
                    .map(|(k, n)| ((*k).to_owned(), Value::Number(*n)))
                    .collect(),
            )
        };
        // Objects are maps: key order does not matter.
        assert_eq!(
            obj(&[("a", 1.0), ("b", 2.0)]),
            obj(&[("b", 2.0), ("a", 1.0)])
        );
        assert_ne!(obj(&[("a", 1.0)]), obj(&[("b", 1.0)]));
        assert_ne!(obj(&[("a", 1.0)]), obj(&[("a", 1.0), ("b", 2.0)]));
        assert_ne!(Value::Number(f64::NAN), Value::Number(f64::NAN));
        assert_eq!(Value::Number(0.0), Value::Number(-0.0));
        assert_ne!(Value::Array(vec![]), Value::Object(Map::default()));
        assert_ne!(Value::Null, Value::Bool(false));
        assert_ne!(Value::from("1"), Value::Number(1.0));
        let nested = |leaf: f64| Value::Array(vec![Value::Array(vec![Value::Number(leaf)])]);
        assert_eq!(nested(1.0), nested(1.0));
        assert_ne!(nested(1.0), nested(2.0));
    }

    /// What the derived traits did, written recursively, for comparison on shallow values.
    fn derived_eq(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| derived_eq(a, b))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, a)| y.get(k).is_some_and(|b| derived_eq(a, b)))
            }
            _ => scalar_eq(a, b),
        }
    }

    fn derived_debug(v: &Value) -> String {
        match v {
            Value::Array(a) => format!(
                "Array([{}])",
                a.iter().map(derived_debug).collect::<Vec<_>>().join(", ")
            ),
            Value::Object(o) => format!(
                "Object({{{}}})",
                o.iter()
                    .map(|(k, v)| format!("{k:?}: {}", derived_debug(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Value::Null => "Null".into(),
            Value::Bool(b) => format!("Bool({b:?})"),
            Value::Number(n) => format!("Number({n:?})"),
            Value::String(s) => format!("String({s:?})"),
        }
    }

    proptest! {
        #[test]
        fn clone_is_equal_and_identical(v in arb_value()) {
            let copy = v.clone();
            prop_assert!(derived_eq(&copy, &v));
            prop_assert_eq!(copy.to_json(), v.to_json());
            prop_assert_eq!(derived_debug(&copy), derived_debug(&v));
        }

        #[test]
        fn eq_agrees_with_the_recursive_definition(a in arb_value(), b in arb_value()) {
            prop_assert_eq!(a == b, derived_eq(&a, &b));
            prop_assert!(a == a.clone());
        }

        #[test]
        fn debug_agrees_with_the_derived_format(v in arb_value()) {
            prop_assert_eq!(format!("{v:?}"), derived_debug(&v));
        }
    }
}
