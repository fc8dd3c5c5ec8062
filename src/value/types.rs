//! [`Value`] and [`Map`]: the JSON value every stage works on.

use indexmap::IndexMap;

/// An ordered JSON object.
pub type Map = IndexMap<String, Value, foldhash::fast::RandomState>;

/// A JSON value. `Clone`, `PartialEq`, `Debug` and `Drop` are written by hand to walk nested
/// containers with explicit stacks: values come from models and files, so their depth is
/// bounded by memory only and must never be bounded by the call stack (see `deep.rs`).
#[derive(Default)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A double (may be non-finite: `1e400` parses as `+∞`).
    Number(f64),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object, keys in insertion order.
    Object(Map),
}

impl Value {
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The object's map, moved out (values implement `Drop`, so they cannot be destructured).
    pub fn into_object(mut self) -> Option<Map> {
        match &mut self {
            Value::Object(m) => Some(std::mem::take(m)),
            _ => None,
        }
    }

    /// The JSON type name, as used in messages (`object`, `array`, …).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Value {
        Value::Number(n)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
