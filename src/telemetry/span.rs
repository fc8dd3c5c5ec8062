//! A finished span as plain data: what the exporter encodes as OTLP. Names and attribute
//! values stay as the run gave them; the encoding happens on the exporter's thread.

use super::ids::{SpanContext, SpanId, TraceId};

/// The span's role (OTLP `SpanKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Work inside tfc (the run, a phase, an item).
    Internal,
    /// A call out of tfc (an agent, a script).
    Client,
}

/// An attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Text.
    Str(String),
    /// Fixed text.
    Static(&'static str),
    /// A whole number.
    Int(i64),
    /// A number.
    F64(f64),
    /// A flag.
    Bool(bool),
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}

impl From<&'static str> for Value {
    fn from(s: &'static str) -> Value {
        Value::Static(s)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Int(n)
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<u32> for Value {
    fn from(n: u32) -> Value {
        Value::Int(i64::from(n))
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Value {
        Value::F64(n)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl Value {
    /// The text of a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            Value::Static(s) => Some(s),
            _ => None,
        }
    }
}

/// How the span's operation ended (OTLP `Status`).
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// Not said (the default for work that did not fail).
    Unset,
    /// Failed, with what went wrong.
    Error(String),
}

/// One finished span.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// Its trace.
    pub trace: TraceId,
    /// Its id.
    pub id: SpanId,
    /// The span it is part of (`None`: a root).
    pub parent: Option<SpanId>,
    /// What it is (`phase build`, `invoke_agent reviewer`, …).
    pub name: String,
    /// Its role.
    pub kind: Kind,
    /// Start, in nanoseconds since the Unix epoch.
    pub start_ns: u64,
    /// End, in nanoseconds since the Unix epoch (at least `start_ns`).
    pub end_ns: u64,
    /// Attributes, in the order they were set.
    pub attrs: Vec<(&'static str, Value)>,
    /// How it ended.
    pub status: Status,
    /// Spans of other traces it follows from (a resumed run's parent run).
    pub links: Vec<SpanContext>,
}

impl Span {
    /// The value of attribute `key`.
    pub fn attr(&self, key: &str) -> Option<&Value> {
        self.attrs.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The text of attribute `key`.
    pub fn attr_str(&self, key: &str) -> Option<&str> {
        self.attr(key).and_then(Value::as_str)
    }

    /// The number of attribute `key`.
    pub fn attr_int(&self, key: &str) -> Option<i64> {
        match self.attr(key)? {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }
}
