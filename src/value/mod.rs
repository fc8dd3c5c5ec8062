//! The values templates and conditions work on: JSON with IEEE-754 doubles (so `1e400` is
//! `+∞`), insertion-ordered objects, and no `undefined` (that is `Option::None` at use sites).

mod json;
mod number;
mod parse;

pub use json::{write_compact, write_pretty};
pub use number::{format_number, js_number_value, write_number};
pub use parse::{ParseError, parse_json};

pub(crate) use parse::find_byte;
#[cfg(test)]
pub(crate) use parse::strategies;

use indexmap::IndexMap;

/// An ordered JSON object.
pub type Map = IndexMap<String, Value, foldhash::fast::RandomState>;

#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

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

    /// Compact JSON (`JSON.stringify(v)`): non-finite numbers become `null`.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        write_compact(self, &mut out);
        out
    }

    /// Two-space pretty JSON (`JSON.stringify(v, null, 2)`).
    pub fn to_pretty_json(&self) -> String {
        let mut out = String::new();
        write_pretty(self, &mut out);
        out
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

impl From<&serde_json::Value> for Value {
    fn from(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
            serde_json::Value::String(s) => Value::String(s.clone()),
            serde_json::Value::Array(a) => Value::Array(a.iter().map(Value::from).collect()),
            serde_json::Value::Object(o) => {
                Value::Object(o.iter().map(|(k, v)| (k.clone(), Value::from(v))).collect())
            }
        }
    }
}

/// Values can be nested arbitrarily deep (model output is untrusted), so dropping one must not
/// recurse: children are moved onto an explicit stack first.
impl Drop for Value {
    fn drop(&mut self) {
        let mut stack = match self {
            Value::Array(a) if a.iter().any(is_container) => std::mem::take(a),
            Value::Object(o) if o.values().any(is_container) => {
                std::mem::take(o).into_values().collect()
            }
            _ => return,
        };
        while let Some(mut v) = stack.pop() {
            match &mut v {
                Value::Array(a) => stack.append(a),
                Value::Object(o) => stack.extend(std::mem::take(o).into_values()),
                _ => {}
            }
        }
    }
}

fn is_container(v: &Value) -> bool {
    matches!(v, Value::Array(a) if !a.is_empty()) || matches!(v, Value::Object(o) if !o.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_values_drop_without_overflow() {
        let mut v = Value::Null;
        for _ in 0..1_000_000 {
            v = Value::Array(vec![v]);
        }
        drop(v);
        let mut v = Value::Null;
        for _ in 0..1_000_000 {
            let mut m = Map::default();
            m.insert("k".into(), v);
            v = Value::Object(m);
        }
        drop(v);
    }
}
