//! serde over a parsed TOML table, with the error wording of `config.toml` messages.
//!
//! [`from_toml`] deserializes a derived type from a [`toml::Value`] through [`TomlDe`], and
//! turns a failure into `<dotted key>: <message>` (keys quoted as TOML would write them,
//! array elements as `[i]`). Every table is closed: the derived types carry
//! `deny_unknown_fields`, and [`TomlDe`] hands a table's unknown keys to the visitor before the
//! known ones, so an unknown key is reported before any value of its table is looked at (with a
//! did-you-mean hint and the keys allowed there).
//!
//! The field types ([`Str`], [`Strings`], [`Bool`], [`Num`], [`Int`]) say what they expected
//! and what they found, in TOML's type names: `expected a string, found integer`. TOML has no
//! null; a datetime reaches visitors as a unit value, which no field accepts.

use std::fmt;

use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{self, IntoDeserializer, Visitor};
use serde::{Deserialize, Deserializer};

use crate::diag::did_you_mean;

/// Why deserializing failed, before the key is attached.
#[derive(Debug)]
pub(crate) enum DeError {
    /// A value that does not fit (the message says what was expected and found).
    Message(String),
    /// A key the table does not allow.
    UnknownKey {
        key: String,
        allowed: &'static [&'static str],
    },
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            DeError::Message(m) => f.write_str(m),
            DeError::UnknownKey { key, .. } => write!(f, "unknown key '{key}'"),
        }
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> DeError {
        DeError::Message(msg.to_string())
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> DeError {
        DeError::UnknownKey {
            key: field.to_owned(),
            allowed: expected,
        }
    }
}

/// Deserialize `T` from `value`, which sits at the dotted key `base` (empty: the file's root).
/// Errors: `<key>: <message>`, or `unknown key '<key>'<hint>; allowed here: <keys>`.
pub(crate) fn from_toml<'de, T: Deserialize<'de>>(
    value: &'de toml::Value,
    base: &str,
) -> Result<T, String> {
    serde_path_to_error::deserialize(TomlDe(value)).map_err(|e| {
        let mut key = base.to_owned();
        for segment in e.path().iter() {
            match segment {
                serde_path_to_error::Segment::Seq { index } => key.push_str(&format!("[{index}]")),
                serde_path_to_error::Segment::Map { key: k }
                | serde_path_to_error::Segment::Enum { variant: k } => key = join(&key, k),
                serde_path_to_error::Segment::Unknown => key = join(&key, "?"),
            }
        }
        match e.into_inner() {
            DeError::Message(m) => format!("{key}: {m}"),
            DeError::UnknownKey { key: k, allowed } => {
                // The path ends at the table when the key itself did not deserialize.
                let key = if key.is_empty() || !key.ends_with(&quote_key(&k)) {
                    join(&key, &k)
                } else {
                    key
                };
                let hint = did_you_mean(&k, allowed.iter().copied())
                    .map(|s| format!(" (did you mean '{s}'?)"))
                    .unwrap_or_default();
                format!(
                    "unknown key '{key}'{hint}; allowed here: {}",
                    allowed.join(", ")
                )
            }
        }
    })
}

/// `prefix.k`, with `k` quoted when TOML would quote it.
pub(crate) fn join(prefix: &str, k: &str) -> String {
    if prefix.is_empty() {
        quote_key(k)
    } else {
        format!("{prefix}.{}", quote_key(k))
    }
}

/// A key as TOML would write it in a dotted path.
pub(crate) fn quote_key(k: &str) -> String {
    if !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        k.to_owned()
    } else {
        format!("\"{}\"", k.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// A borrowed TOML value as a serde deserializer.
#[derive(Clone, Copy)]
pub(crate) struct TomlDe<'de>(pub(crate) &'de toml::Value);

impl<'de> IntoDeserializer<'de, DeError> for TomlDe<'de> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> TomlDe<'de> {
    fn table(self) -> Result<&'de toml::Table, DeError> {
        self.0.as_table().ok_or_else(|| {
            DeError::Message(format!("expected a table, found {}", self.0.type_str()))
        })
    }
}

impl<'de> Deserializer<'de> for TomlDe<'de> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.0 {
            toml::Value::String(s) => visitor.visit_borrowed_str(s),
            toml::Value::Integer(i) => visitor.visit_i64(*i),
            toml::Value::Float(f) => visitor.visit_f64(*f),
            toml::Value::Boolean(b) => visitor.visit_bool(*b),
            toml::Value::Datetime(_) => visitor.visit_unit(),
            toml::Value::Array(items) => {
                visitor.visit_seq(SeqDeserializer::new(items.iter().map(TomlDe)))
            }
            toml::Value::Table(t) => visitor.visit_map(MapDeserializer::new(
                t.iter().map(|(k, v)| (k.as_str(), TomlDe(v))),
            )),
        }
    }

    /// TOML has no null: a present key is always `Some`.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_some(self)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let t = self.table()?;
        visitor.visit_map(MapDeserializer::new(
            t.iter().map(|(k, v)| (k.as_str(), TomlDe(v))),
        ))
    }

    /// Unknown keys first (in table order), then the known ones.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let t = self.table()?;
        let known = |k: &str| fields.contains(&k);
        let unknown = t.iter().filter(|(k, _)| !known(k));
        let entries = unknown.chain(t.iter().filter(|(k, _)| known(k)));
        visitor.visit_map(MapDeserializer::new(
            entries.map(|(k, v)| (k.as_str(), TomlDe(v))),
        ))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct enum identifier
    }
}

/// Any TOML value, as far as the field types need it (containers are not walked).
enum Any {
    String(String),
    Integer(i64),
    Float(f64),
    Boolean(bool),
    Datetime,
    Array,
    Table,
}

impl Any {
    /// TOML's name of the type (as `toml::Value::type_str` spells it).
    fn type_str(&self) -> &'static str {
        match self {
            Any::String(_) => "string",
            Any::Integer(_) => "integer",
            Any::Float(_) => "float",
            Any::Boolean(_) => "boolean",
            Any::Datetime => "datetime",
            Any::Array => "array",
            Any::Table => "table",
        }
    }

    fn expected(&self, what: &str) -> String {
        format!("expected {what}, found {}", self.type_str())
    }
}

struct AnyVisitor;

impl<'de> Visitor<'de> for AnyVisitor {
    type Value = Any;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a TOML value")
    }
    fn visit_str<E>(self, s: &str) -> Result<Any, E> {
        Ok(Any::String(s.to_owned()))
    }
    fn visit_i64<E>(self, i: i64) -> Result<Any, E> {
        Ok(Any::Integer(i))
    }
    fn visit_u64<E>(self, i: u64) -> Result<Any, E> {
        Ok(i64::try_from(i).map_or(Any::Float(i as f64), Any::Integer))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Any, E> {
        Ok(Any::Float(f))
    }
    fn visit_bool<E>(self, b: bool) -> Result<Any, E> {
        Ok(Any::Boolean(b))
    }
    fn visit_unit<E>(self) -> Result<Any, E> {
        Ok(Any::Datetime)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<Any, A::Error> {
        Ok(Any::Array)
    }
    fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<Any, A::Error> {
        Ok(Any::Table)
    }
}

impl<'de> Deserialize<'de> for Any {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Any, D::Error> {
        d.deserialize_any(AnyVisitor)
    }
}

/// A string.
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "Any")]
pub(crate) struct Str(pub(crate) String);

impl TryFrom<Any> for Str {
    type Error = String;
    fn try_from(a: Any) -> Result<Str, String> {
        match a {
            Any::String(s) => Ok(Str(s)),
            other => Err(other.expected("a string")),
        }
    }
}

/// `true` or `false`.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "Any")]
pub(crate) struct Bool(pub(crate) bool);

impl TryFrom<Any> for Bool {
    type Error = String;
    fn try_from(a: Any) -> Result<Bool, String> {
        match a {
            Any::Boolean(b) => Ok(Bool(b)),
            other => Err(other.expected("true or false")),
        }
    }
}

/// A finite, non-negative number (integer or float).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "Any")]
pub(crate) struct Num(pub(crate) f64);

impl TryFrom<Any> for Num {
    type Error = String;
    fn try_from(a: Any) -> Result<Num, String> {
        let n = match a {
            Any::Integer(i) => i as f64,
            Any::Float(f) => f,
            other => return Err(other.expected("a number")),
        };
        if n.is_finite() && n >= 0.0 {
            Ok(Num(n))
        } else {
            Err("expected a non-negative number".into())
        }
    }
}

/// An integer, or `None` for any other type (the caller words that error).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(from = "Any")]
pub(crate) struct Int(pub(crate) Option<i64>);

impl From<Any> for Int {
    fn from(a: Any) -> Int {
        match a {
            Any::Integer(i) => Int(Some(i)),
            _ => Int(None),
        }
    }
}

/// An array of strings.
#[derive(Clone, Debug, Default)]
pub(crate) struct Strings(pub(crate) Vec<String>);

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Strings, D::Error> {
        d.deserialize_any(StringsVisitor { split: false })
            .map(|l| Strings(l.unwrap_or_default()))
    }
}

/// A tool list: an array of strings, or one comma-separated string (`"read, grep"`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Tools(pub(crate) Vec<String>);

impl<'de> Deserialize<'de> for Tools {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tools, D::Error> {
        d.deserialize_any(StringsVisitor { split: true })
            .map(|l| Tools(l.unwrap_or_default()))
    }
}

/// Reads an array of [`Str`]; with `split`, also one string split at commas.
struct StringsVisitor {
    split: bool,
}

impl StringsVisitor {
    fn wrong<E: de::Error>(a: Any) -> Result<Option<Vec<String>>, E> {
        Err(E::custom(a.expected("an array of strings")))
    }
}

impl<'de> Visitor<'de> for StringsVisitor {
    type Value = Option<Vec<String>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of strings")
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Str(s)) = seq.next_element()? {
            out.push(s);
        }
        Ok(Some(out))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        if self.split {
            Ok(Some(super::types::split_tools(s)))
        } else {
            Self::wrong(Any::String(String::new()))
        }
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Self::wrong(Any::Integer(0))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Self::wrong(Any::Integer(0))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Self::wrong(Any::Float(0.0))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Self::wrong(Any::Boolean(false))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Self::wrong(Any::Datetime)
    }
    fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Self::wrong(Any::Table)
    }
}

/// A table of strings, or one `key=value,key2=value2` string (the form of
/// `OTEL_RESOURCE_ATTRIBUTES`): `[telemetry] resource_attributes`. The string is split by
/// [`key_value_pairs`] when the table is checked.
#[derive(Debug)]
pub(crate) enum Pairs {
    Table(Vec<(String, String)>),
    Text(String),
}

impl<'de> Deserialize<'de> for Pairs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Pairs, D::Error> {
        struct PairsVisitor;
        impl<'de> Visitor<'de> for PairsVisitor {
            type Value = Pairs;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table of strings, or one \"key=value,key2=value2\" string")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Pairs, A::Error> {
                let mut out = Vec::new();
                while let Some((k, Str(v))) = map.next_entry::<String, Str>()? {
                    out.push((k, v));
                }
                Ok(Pairs::Table(out))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Pairs, E> {
                Ok(Pairs::Text(s.to_owned()))
            }
        }
        d.deserialize_any(PairsVisitor)
    }
}

/// `key=value,key=value` (W3C baggage-like lists, as the `OTEL_*` variables spell them:
/// spaces around items are dropped, values percent-decoded); the error says which item is
/// wrong (the caller names where it came from).
pub(crate) fn key_value_pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            return Err(format!(
                "'{item}' is not key=value (expected e.g. key1=value1,key2=value2)"
            ));
        };
        let k = k.trim();
        if k.is_empty() {
            return Err(format!("'{item}' has no key"));
        }
        out.push((k.to_owned(), percent_decode(v.trim())));
    }
    Ok(out)
}

fn percent_decode(s: &str) -> String {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(hi), Some(lo)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push(hi << 4 | lo);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A table's entries in file order (`[agents]`, `[roles]`, `[backends]`).
#[derive(Debug)]
pub(crate) struct Entries<T>(pub(crate) Vec<(String, T)>);

impl<T> Default for Entries<T> {
    fn default() -> Self {
        Entries(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Entries<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Entries<T>, D::Error> {
        struct EntriesVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for EntriesVisitor<T> {
            type Value = Entries<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Entries<T>, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, T>()? {
                    out.push((k, v));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(EntriesVisitor(std::marker::PhantomData))
    }
}
