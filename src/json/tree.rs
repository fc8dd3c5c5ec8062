//! The JSON tree: every node keeps its byte span, objects keep every member in order.

use super::string::Str;
use crate::source::Span;
use crate::value::{Map, Value};

/// A JSON value and the span of its text in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The value's text in the file.
    pub span: Span,
    /// The value.
    pub kind: Kind,
}

/// What a [`Node`] is.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// The nearest double; out-of-range literals (`1e400`) are ±∞.
    Number(f64),
    /// A string, with its map back to the file.
    String(Str),
    /// Elements in file order.
    Array(Vec<Node>),
    /// Members in file order; duplicate keys are kept (and reported as E0002).
    Object(Vec<Member>),
}

/// One `"key": value` pair of an object.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// The key, with its span.
    pub key: Str,
    /// The member's value.
    pub value: Node,
}

impl Node {
    /// The value of the first member named `key`, if this is an object that has one.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Object(members) => members
                .iter()
                .find(|m| m.key.value == key)
                .map(|m| &m.value),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&Str> {
        match &self.kind {
            Kind::String(s) => Some(s),
            _ => None,
        }
    }

    /// The JSON type name, as used in messages (same names as [`Value::type_name`]).
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            Kind::Null => "null",
            Kind::Bool(_) => "boolean",
            Kind::Number(_) => "number",
            Kind::String(_) => "string",
            Kind::Array(_) => "array",
            Kind::Object(_) => "object",
        }
    }

    /// The plain value, without spans. Like `JSON.parse`, a repeated key keeps the position of
    /// its first occurrence and the value of its last. Works without recursion, so any depth
    /// is safe.
    pub fn to_value(&self) -> Value {
        /// A container being converted: the children still to visit and the finished ones.
        enum Frame<'a> {
            Array(std::slice::Iter<'a, Node>, Vec<Value>),
            Object(std::slice::Iter<'a, Member>, Map, Option<&'a str>),
        }
        let mut stack: Vec<Frame<'_>> = Vec::new();
        let mut next = self;
        loop {
            // Descend into `next`: a scalar is finished at once, a container becomes a frame.
            let mut done = match &next.kind {
                Kind::Array(items) => {
                    stack.push(Frame::Array(items.iter(), Vec::with_capacity(items.len())));
                    None
                }
                Kind::Object(members) => {
                    let map = Map::with_capacity_and_hasher(members.len(), Default::default());
                    stack.push(Frame::Object(members.iter(), map, None));
                    None
                }
                Kind::Null => Some(Value::Null),
                Kind::Bool(b) => Some(Value::Bool(*b)),
                Kind::Number(n) => Some(Value::Number(*n)),
                Kind::String(s) => Some(Value::String(s.value.clone())),
            };
            // Hand finished values to their parents until some frame has a child left.
            loop {
                let Some(frame) = stack.last_mut() else {
                    return done.unwrap_or_default();
                };
                let child = match frame {
                    Frame::Array(items, values) => {
                        values.extend(done.take());
                        items.next()
                    }
                    Frame::Object(members, map, key) => {
                        if let (Some(k), Some(v)) = (key.take(), done.take()) {
                            map.insert(k.to_owned(), v);
                        }
                        members.next().map(|m| {
                            *key = Some(m.key.value.as_str());
                            &m.value
                        })
                    }
                };
                if let Some(child) = child {
                    next = child;
                    break;
                }
                done = match stack.pop() {
                    Some(Frame::Array(_, values)) => Some(Value::Array(values)),
                    Some(Frame::Object(_, map, _)) => Some(Value::Object(map)),
                    None => None,
                };
            }
        }
    }
}
