//! Spans as a run writes them: what every span has ([`Head`]), attribute values borrowed
//! from the run's own data ([`Attr`]), and a finished span as plain data ([`Span`]), which an
//! in-memory sink keeps (a collector's sink encodes spans as they are written instead).

use super::ids::{SpanContext, SpanId, TraceId};

/// The span's role (OTLP `SpanKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Work inside tfc (the run, a phase, an item).
    Internal,
    /// A call out of tfc (an agent, a script).
    Client,
}

/// What every span has, fixed when it is written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Head {
    /// Its trace.
    pub trace: TraceId,
    /// Its id.
    pub id: SpanId,
    /// The span it is part of (`None`: a root).
    pub parent: Option<SpanId>,
    /// Its role.
    pub kind: Kind,
    /// Start, in nanoseconds since the Unix epoch.
    pub start_ns: u64,
    /// End, in nanoseconds since the Unix epoch (raised to `start_ns` if earlier).
    pub end_ns: u64,
}

/// An attribute value as it is written: text is borrowed, so recording it copies nothing
/// but the bytes that go out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Attr<'a> {
    /// Text.
    Str(&'a str),
    /// A whole number.
    Int(i64),
    /// A number.
    F64(f64),
    /// A flag.
    Bool(bool),
}

impl<'a> From<&'a str> for Attr<'a> {
    fn from(s: &'a str) -> Attr<'a> {
        Attr::Str(s)
    }
}

impl<'a> From<&'a String> for Attr<'a> {
    fn from(s: &'a String) -> Attr<'a> {
        Attr::Str(s)
    }
}

impl From<i64> for Attr<'_> {
    fn from(n: i64) -> Self {
        Attr::Int(n)
    }
}

impl From<u64> for Attr<'_> {
    fn from(n: u64) -> Self {
        Attr::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<u32> for Attr<'_> {
    fn from(n: u32) -> Self {
        Attr::Int(i64::from(n))
    }
}

impl From<usize> for Attr<'_> {
    fn from(n: usize) -> Self {
        Attr::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<f64> for Attr<'_> {
    fn from(n: f64) -> Self {
        Attr::F64(n)
    }
}

impl From<bool> for Attr<'_> {
    fn from(b: bool) -> Self {
        Attr::Bool(b)
    }
}

impl Value {
    /// The value as it is written.
    pub fn as_attr(&self) -> Attr<'_> {
        match self {
            Value::Str(s) => Attr::Str(s),
            Value::Int(n) => Attr::Int(*n),
            Value::F64(x) => Attr::F64(*x),
            Value::Bool(b) => Attr::Bool(*b),
        }
    }
}

impl From<Attr<'_>> for Value {
    fn from(a: Attr<'_>) -> Value {
        match a {
            Attr::Str(s) => Value::Str(s.to_owned()),
            Attr::Int(n) => Value::Int(n),
            Attr::F64(x) => Value::F64(x),
            Attr::Bool(b) => Value::Bool(b),
        }
    }
}

/// An attribute value of a kept span.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Text.
    Str(String),
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

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.to_owned())
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
    /// What every span has.
    pub fn head(&self) -> Head {
        Head {
            trace: self.trace,
            id: self.id,
            parent: self.parent,
            kind: self.kind,
            start_ns: self.start_ns,
            end_ns: self.end_ns,
        }
    }

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

/// Nanoseconds since the Unix epoch, now (a span's times).
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
