//! serde over tfc's own JSON values, for the on-disk formats of this folder (the `agent-call`
//! record, replay fixtures).
//!
//! Writing: a `Serialize` type is serialized straight into a [`Value`], whose writer has
//! JavaScript's number formatting (`0.000001`, not `1e-6`; `1`, not `1.0`), so the bytes on
//! disk stay what the journal has always written. Reading: [`from_value`] deserializes straight
//! from a parsed [`Value`] (numbers arrive as `f64`, like JSON.parse), with the path of a field
//! that does not fit. Fields that are not read are skipped without being walked, so a deep
//! value in an unknown field costs nothing and never recurses.
//!
//! The field types ([`Text`], [`Flag`], [`Count`], [`Cost`]) accept `null` as absent and say
//! what they expected and what they found: `must be a boolean, found string`.

use serde::de::value::{Error, MapDeserializer, SeqDeserializer};
use serde::de::{self, IntoDeserializer, Visitor};
use serde::{Deserialize, Deserializer, Serialize, ser};

use crate::value::{Map, Value};

/// `value` as a tfc [`Value`] (struct fields in declaration order), serialized directly.
pub(crate) fn to_value<T: Serialize + ?Sized>(value: &T) -> Value {
    match value.serialize(ValueSer) {
        Ok(v) => v,
        // Only a map with non-string keys or a failing `Serialize` impl can fail; the record
        // types have neither.
        Err(e) => Value::String(format!("unserializable record: {e}")),
    }
}

/// Deserialize `T` from `value`; the error is `"<path>" <what is wrong>`, or just the message
/// when it concerns the whole value.
pub(crate) fn from_value<'de, T: Deserialize<'de>>(value: &'de Value) -> Result<T, String> {
    serde_path_to_error::deserialize(ValueDe(value)).map_err(|e| {
        let path = e.path().to_string();
        let msg = e.into_inner().to_string();
        if path == "." {
            msg
        } else {
            format!("\"{path}\" {msg}")
        }
    })
}

/// A borrowed [`Value`] as a serde deserializer.
#[derive(Clone, Copy)]
struct ValueDe<'de>(&'de Value);

impl<'de> IntoDeserializer<'de, Error> for ValueDe<'de> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> Deserializer<'de> for ValueDe<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => visitor.visit_f64(*n),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => {
                visitor.visit_seq(SeqDeserializer::new(items.iter().map(ValueDe)))
            }
            Value::Object(members) => visitor.visit_map(MapDeserializer::new(
                members.iter().map(|(k, v)| (k.as_str(), ValueDe(v))),
            )),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
    }
}

/// Any JSON value, kept only as far as the field types need: scalars, and the kind of a
/// container (which is not walked).
#[derive(Debug)]
pub(crate) enum Any {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array,
    Object,
}

impl Any {
    /// The JSON type's name, as [`Value::type_name`] spells it.
    fn type_name(&self) -> &'static str {
        match self {
            Any::Null => "null",
            Any::Bool(_) => "boolean",
            Any::Number(_) => "number",
            Any::String(_) => "string",
            Any::Array => "array",
            Any::Object => "object",
        }
    }

    fn wrong(&self, expected: &str) -> String {
        format!("must be {expected}, found {}", self.type_name())
    }
}

impl<'de> Deserialize<'de> for Any {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Any, D::Error> {
        struct AnyVisitor;
        impl<'de> Visitor<'de> for AnyVisitor {
            type Value = Any;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<Any, E> {
                Ok(Any::Null)
            }
            fn visit_none<E>(self) -> Result<Any, E> {
                Ok(Any::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Any, E> {
                Ok(Any::Bool(b))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Any, E> {
                Ok(Any::Number(n))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Any, E> {
                Ok(Any::Number(n as f64))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Any, E> {
                Ok(Any::Number(n as f64))
            }
            fn visit_str<E>(self, s: &str) -> Result<Any, E> {
                Ok(Any::String(s.to_owned()))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<Any, A::Error> {
                Ok(Any::Array)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<Any, A::Error> {
                Ok(Any::Object)
            }
        }
        d.deserialize_any(AnyVisitor)
    }
}

/// An optional string: absent or `null` is `None`.
#[derive(Debug, Default, Deserialize)]
#[serde(try_from = "Any")]
pub(crate) struct Text(pub(crate) Option<String>);

impl TryFrom<Any> for Text {
    type Error = String;
    fn try_from(a: Any) -> Result<Text, String> {
        match a {
            Any::Null => Ok(Text(None)),
            Any::String(s) => Ok(Text(Some(s))),
            other => Err(other.wrong("a string")),
        }
    }
}

/// A boolean; absent is `None`, `null` is wrong.
#[derive(Debug, Default, Deserialize)]
#[serde(try_from = "Any")]
pub(crate) struct Flag(pub(crate) Option<bool>);

impl TryFrom<Any> for Flag {
    type Error = String;
    fn try_from(a: Any) -> Result<Flag, String> {
        match a {
            Any::Bool(b) => Ok(Flag(Some(b))),
            other => Err(other.wrong("a boolean")),
        }
    }
}

/// A non-negative whole number; absent or `null` is 0.
#[derive(Debug, Default, Deserialize)]
#[serde(try_from = "Any")]
pub(crate) struct Count(pub(crate) u64);

impl TryFrom<Any> for Count {
    type Error = String;
    fn try_from(a: Any) -> Result<Count, String> {
        match a {
            Any::Null => Ok(Count(0)),
            Any::Number(n) if n >= 0.0 && n.fract() == 0.0 && n <= u64::MAX as f64 => {
                Ok(Count(n as u64))
            }
            other => Err(other.wrong("a non-negative whole number")),
        }
    }
}

/// A cost in USD: absent or `null` is unknown (`None`); otherwise finite and non-negative.
#[derive(Debug, Default, Deserialize)]
#[serde(try_from = "Any")]
pub(crate) struct Cost(pub(crate) Option<f64>);

impl TryFrom<Any> for Cost {
    type Error = String;
    fn try_from(a: Any) -> Result<Cost, String> {
        match a {
            Any::Null => Ok(Cost(None)),
            Any::Number(n) if n.is_finite() && n >= 0.0 => Ok(Cost(Some(n))),
            other => Err(other.wrong("a number or null")),
        }
    }
}

/// A field whose presence matters (even as `null`): `.0` says it was there.
#[derive(Debug, Default)]
pub(crate) struct Seen<T>(pub(crate) bool, pub(crate) T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Seen<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Seen<T>, D::Error> {
        T::deserialize(d).map(|t| Seen(true, t))
    }
}

/// An object read as `T`; absent or `null` is `T::default()`, anything else is wrong.
#[derive(Debug, Default)]
pub(crate) struct Object<T>(pub(crate) T);

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Object<T>, D::Error> {
        struct ObjectVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Default> Visitor<'de> for ObjectVisitor<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Object)
            }
            fn visit_unit<E>(self) -> Result<Object<T>, E> {
                Ok(Object(T::default()))
            }
            fn visit_none<E>(self) -> Result<Object<T>, E> {
                Ok(Object(T::default()))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Object<T>, E> {
                Err(E::custom(Any::Bool(false).wrong("an object")))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Object<T>, E> {
                Err(E::custom(Any::Number(0.0).wrong("an object")))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Object<T>, E> {
                Err(E::custom(Any::Number(0.0).wrong("an object")))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Object<T>, E> {
                Err(E::custom(Any::Number(0.0).wrong("an object")))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Object<T>, E> {
                Err(E::custom(Any::String(String::new()).wrong("an object")))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<Object<T>, A::Error> {
                Err(de::Error::custom(Any::Array.wrong("an object")))
            }
        }
        d.deserialize_any(ObjectVisitor(std::marker::PhantomData))
    }
}

/// Serializes into a [`Value`] directly (no intermediate tree): numbers become `f64`, like
/// JSON.parse would read them back; `None` and unit are `null`; a map key must be a string.
struct ValueSer;

/// Why a value could not be serialized: a map key that is not a string, or a custom error.
#[derive(Debug)]
pub(crate) struct SerError(String);

impl std::fmt::Display for SerError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SerError {}

impl ser::Error for SerError {
    fn custom<T: std::fmt::Display>(msg: T) -> SerError {
        SerError(msg.to_string())
    }
}

/// An array being built.
struct SeqSer(Vec<Value>);

/// An object being built (`key` waits for its value in `serialize_key`/`serialize_value`).
struct MapSer {
    map: Map,
    key: Option<String>,
}

/// A variant with content: `{"Variant": content}`.
struct VariantSer<S> {
    name: &'static str,
    inner: S,
}

impl ser::Serializer for ValueSer {
    type Ok = Value;
    type Error = SerError;
    type SerializeSeq = SeqSer;
    type SerializeTuple = SeqSer;
    type SerializeTupleStruct = SeqSer;
    type SerializeTupleVariant = VariantSer<SeqSer>;
    type SerializeMap = MapSer;
    type SerializeStruct = MapSer;
    type SerializeStructVariant = VariantSer<MapSer>;

    fn serialize_bool(self, v: bool) -> Result<Value, SerError> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, SerError> {
        Ok(Value::Number(f64::from(v)))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, SerError> {
        Ok(Value::Number(f64::from(v)))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, SerError> {
        Ok(Value::Number(f64::from(v)))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, SerError> {
        Ok(Value::Number(v as f64))
    }
    fn serialize_u8(self, v: u8) -> Result<Value, SerError> {
        Ok(Value::Number(f64::from(v)))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, SerError> {
        Ok(Value::Number(f64::from(v)))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, SerError> {
        Ok(Value::Number(f64::from(v)))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, SerError> {
        Ok(Value::Number(v as f64))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, SerError> {
        Ok(Value::Number(f64::from(v)))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, SerError> {
        Ok(Value::Number(v))
    }
    fn serialize_char(self, v: char) -> Result<Value, SerError> {
        Ok(Value::String(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Value, SerError> {
        Ok(Value::String(v.to_owned()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, SerError> {
        Ok(Value::Array(
            v.iter().map(|b| Value::Number(f64::from(*b))).collect(),
        ))
    }
    fn serialize_none(self) -> Result<Value, SerError> {
        Ok(Value::Null)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<Value, SerError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, SerError> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Value, SerError> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Value, SerError> {
        Ok(Value::String(variant.to_owned()))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Value, SerError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<Value, SerError> {
        let mut m = Map::default();
        m.insert(variant.to_owned(), v.serialize(ValueSer)?);
        Ok(Value::Object(m))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqSer, SerError> {
        Ok(SeqSer(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqSer, SerError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<SeqSer, SerError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantSer<SeqSer>, SerError> {
        Ok(VariantSer {
            name: variant,
            inner: self.serialize_seq(Some(len))?,
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<MapSer, SerError> {
        Ok(MapSer {
            map: Map::with_capacity_and_hasher(len.unwrap_or(0), Default::default()),
            key: None,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<MapSer, SerError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantSer<MapSer>, SerError> {
        Ok(VariantSer {
            name: variant,
            inner: self.serialize_map(Some(len))?,
        })
    }
}

impl ser::SerializeSeq for SeqSer {
    type Ok = Value;
    type Error = SerError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), SerError> {
        self.0.push(v.serialize(ValueSer)?);
        Ok(())
    }
    fn end(self) -> Result<Value, SerError> {
        Ok(Value::Array(self.0))
    }
}

impl ser::SerializeTuple for SeqSer {
    type Ok = Value;
    type Error = SerError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), SerError> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<Value, SerError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for SeqSer {
    type Ok = Value;
    type Error = SerError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), SerError> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<Value, SerError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeMap for MapSer {
    type Ok = Value;
    type Error = SerError;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, k: &T) -> Result<(), SerError> {
        let mut key = k.serialize(ValueSer)?;
        match &mut key {
            Value::String(s) => {
                self.key = Some(std::mem::take(s));
                Ok(())
            }
            other => Err(SerError(format!(
                "an object key must be a string, not {}",
                other.type_name()
            ))),
        }
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), SerError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| SerError("an object value without a key".into()))?;
        self.map.insert(key, v.serialize(ValueSer)?);
        Ok(())
    }
    fn end(self) -> Result<Value, SerError> {
        Ok(Value::Object(self.map))
    }
}

impl ser::SerializeStruct for MapSer {
    type Ok = Value;
    type Error = SerError;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), SerError> {
        self.map.insert(key.to_owned(), v.serialize(ValueSer)?);
        Ok(())
    }
    fn end(self) -> Result<Value, SerError> {
        Ok(Value::Object(self.map))
    }
}

impl ser::SerializeTupleVariant for VariantSer<SeqSer> {
    type Ok = Value;
    type Error = SerError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), SerError> {
        ser::SerializeSeq::serialize_element(&mut self.inner, v)
    }
    fn end(self) -> Result<Value, SerError> {
        let mut m = Map::default();
        m.insert(self.name.to_owned(), ser::SerializeSeq::end(self.inner)?);
        Ok(Value::Object(m))
    }
}

impl ser::SerializeStructVariant for VariantSer<MapSer> {
    type Ok = Value;
    type Error = SerError;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), SerError> {
        ser::SerializeStruct::serialize_field(&mut self.inner, key, v)
    }
    fn end(self) -> Result<Value, SerError> {
        let mut m = Map::default();
        m.insert(self.name.to_owned(), ser::SerializeStruct::end(self.inner)?);
        Ok(Value::Object(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::parse_json;

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct Inner {
        n: Count,
        m: Seen<Text>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct Outer {
        s: Text,
        b: Flag,
        c: Cost,
        o: Object<Inner>,
    }

    fn read(text: &str) -> Result<Outer, String> {
        from_value(&parse_json(text).unwrap())
    }

    #[test]
    fn null_and_absent_are_defaults() {
        let o = read(r#"{"s":null,"c":null,"o":null,"deep":[[[[[[1]]]]]]}"#).unwrap();
        assert_eq!((o.s.0, o.b.0, o.c.0, o.o.0.n.0), (None, None, None, 0));
        assert!(!o.o.0.m.0);
        assert!(read(r#"{"o":{"m":null}}"#).unwrap().o.0.m.0);
        let o = read(r#"{"s":"x","b":false,"c":0.5,"o":{"n":3e0}}"#).unwrap();
        assert_eq!(
            (o.s.0.as_deref(), o.b.0, o.c.0, o.o.0.n.0),
            (Some("x"), Some(false), Some(0.5), 3)
        );
    }

    #[test]
    fn errors_name_the_path_and_both_types() {
        assert_eq!(
            read(r#"{"b":null}"#).unwrap_err(),
            "\"b\" must be a boolean, found null"
        );
        assert_eq!(
            read(r#"{"s":[1]}"#).unwrap_err(),
            "\"s\" must be a string, found array"
        );
        assert_eq!(
            read(r#"{"o":{"n":1.5}}"#).unwrap_err(),
            "\"o.n\" must be a non-negative whole number, found number"
        );
        assert_eq!(
            read(r#"{"o":"x"}"#).unwrap_err(),
            "\"o\" must be an object, found string"
        );
        assert_eq!(
            read(r#"{"c":-1}"#).unwrap_err(),
            "\"c\" must be a number or null, found number"
        );
    }

    #[test]
    fn containers_and_variants_serialize_like_serde_json() {
        use std::collections::BTreeMap;
        #[derive(Serialize)]
        enum E {
            Unit,
            New(u8),
            Tuple(u8, bool),
            Struct { a: Option<String> },
        }
        #[derive(Serialize)]
        struct S {
            list: Vec<E>,
            map: BTreeMap<String, (i32, char)>,
            unit: (),
        }
        let s = S {
            list: vec![E::Unit, E::New(1), E::Tuple(2, true), E::Struct { a: None }],
            map: BTreeMap::from([("k".to_owned(), (-3, 'x'))]),
            unit: (),
        };
        let want = serde_json::to_string(&s).unwrap();
        assert_eq!(to_value(&s).to_json(), want);
        let bad = BTreeMap::from([(1, 2)]);
        assert_eq!(
            to_value(&bad),
            Value::from("unserializable record: an object key must be a string, not number")
        );
    }

    #[test]
    fn numbers_are_written_as_javascript_does() {
        #[derive(Serialize)]
        struct N {
            a: f64,
            b: u64,
            c: Option<f64>,
        }
        let v = to_value(&N {
            a: 0.000001,
            b: 3,
            c: None,
        });
        assert_eq!(v.to_json(), r#"{"a":0.000001,"b":3,"c":null}"#);
    }
}
