//! The type lattice of SPEC §7.5: what a placeholder can hold at run time, and one `dig` step
//! through it (SPEC §4.3).
//!
//! `any` is the top: nothing is ever reported about it. `missing` is "no value" (an optional
//! property that is absent; an out-of-bounds index), which is never an error either. Object
//! types are open: a key they do not declare may still be there at run time — unless the
//! contract closed them (`additionalProperties: false`), when it never is.

use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;

use crate::source::Span;
use crate::value::{Value, write_number};

/// A static type.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// Unknown: anything, never reported.
    Any,
    /// No value at all (undefined): a property that need not be there, an index past the end.
    Missing,
    /// JSON `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// Any number.
    Number,
    /// A whole number (`integer` ⊂ `number`).
    Integer,
    /// Any string.
    String,
    /// One of a fixed set of scalar values (an `enum`): strings, numbers, booleans, `null`.
    Lits(Arc<[Value]>),
    /// An array whose elements have one type.
    Array(Arc<Elem>),
    /// An open object: the declared properties, any other key possible.
    Object(Arc<Obj>),
    /// One of several types (never nested, never holding `any`).
    Union(Arc<[Ty]>),
}

/// The element type of an array, and where it was declared (the contract's `items`).
#[derive(Clone, Debug, PartialEq)]
pub struct Elem {
    /// The elements' type.
    pub ty: Ty,
    /// The `items` key that declared it.
    pub decl: Option<Span>,
}

/// The declared properties of an object type, in declaration order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Obj {
    /// Each declared property.
    pub props: IndexMap<Box<str>, Prop>,
    /// No other key can be there (`additionalProperties: false`).
    pub closed: bool,
}

/// One declared property.
#[derive(Clone, Debug, PartialEq)]
pub struct Prop {
    /// Its type (with `missing` when the property is not required).
    pub ty: Ty,
    /// The property's key in the file.
    pub decl: Option<Span>,
}

/// Why a path segment can never resolve.
#[derive(Clone, Debug, PartialEq)]
pub enum Stuck {
    /// A segment after a scalar or a literal set (the type reached).
    Scalar(Ty),
    /// A segment that is neither an index nor `length`, after an array (the array type).
    ArrayKey(Ty),
    /// A key a closed object (`additionalProperties: false`) does not declare (the object
    /// type).
    Closed(Ty),
}

/// One `dig` step.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// The segment may resolve, to a value of this type declared there.
    To(Ty, Option<Span>),
    /// The object declares properties, but not this one (W0106): it resolves only if the
    /// output holds an undeclared key.
    Undeclared,
    /// The segment never resolves.
    Stuck(Stuck),
}

impl Ty {
    /// A literal set, or `any` when a value is not a scalar (an `enum` of objects).
    pub fn lits(values: &[Value]) -> Ty {
        let scalar = |v: &Value| {
            matches!(
                v,
                Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null
            )
        };
        if values.is_empty() || !values.iter().all(scalar) {
            return Ty::Any;
        }
        let mut distinct: Vec<Value> = Vec::with_capacity(values.len());
        for v in values {
            if !distinct.contains(v) {
                distinct.push(v.clone());
            }
        }
        Ty::Lits(distinct.into())
    }

    /// An array of `elem`.
    pub fn array(elem: Ty, decl: Option<Span>) -> Ty {
        Ty::Array(Arc::new(Elem { ty: elem, decl }))
    }

    /// `a | b`, flattened, without repeats; `any` absorbs everything, `number` absorbs
    /// `integer`.
    pub fn union(members: impl IntoIterator<Item = Ty>) -> Ty {
        let mut out: Vec<Ty> = Vec::new();
        let push = |t: Ty, out: &mut Vec<Ty>| {
            if !out.contains(&t) {
                out.push(t);
            }
        };
        for t in members {
            match t {
                Ty::Any => return Ty::Any,
                Ty::Union(ms) => {
                    for m in ms.iter() {
                        push(m.clone(), &mut out);
                    }
                }
                other => push(other, &mut out),
            }
        }
        if out.contains(&Ty::Number) {
            out.retain(|t| *t != Ty::Integer);
        }
        match out.len() {
            0 => Ty::Missing,
            1 => out.pop().unwrap_or(Ty::Any),
            _ => Ty::Union(out.into()),
        }
    }

    /// `self | missing`.
    pub fn or_missing(self) -> Ty {
        Ty::union([self, Ty::Missing])
    }

    /// The members of a union; the type itself otherwise.
    pub fn members(&self) -> &[Ty] {
        match self {
            Ty::Union(ms) => ms,
            other => std::slice::from_ref(other),
        }
    }

    /// The declared properties of an object type (of every object member of a union, each
    /// name once), in declaration order: what an editor offers after `.json.`.
    pub fn properties(&self) -> Vec<(&str, &Ty)> {
        let mut out: Vec<(&str, &Ty)> = Vec::new();
        for m in self.members() {
            if let Ty::Object(o) = m {
                for (k, p) in &o.props {
                    if !out.iter().any(|(n, _)| *n == &**k) {
                        out.push((k, &p.ty));
                    }
                }
            }
        }
        out
    }

    /// The element type of an array type (of the first array member of a union).
    pub fn element(&self) -> Option<&Ty> {
        self.members().iter().find_map(|m| match m {
            Ty::Array(e) => Some(&e.ty),
            _ => None,
        })
    }

    /// Is nothing known about it?
    pub fn is_any(&self) -> bool {
        matches!(self, Ty::Any)
    }

    /// One `dig` step with segment `key` (SPEC §4.3): an object gives the property, an array
    /// an element for a canonical index or its `length`, anything else nothing.
    pub fn dig(&self, key: &str, index: Option<u32>) -> Step {
        match self {
            Ty::Any => Step::To(Ty::Any, None),
            Ty::Missing => Step::To(Ty::Missing, None),
            Ty::Null | Ty::Boolean | Ty::Number | Ty::Integer | Ty::String | Ty::Lits(_) => {
                Step::Stuck(Stuck::Scalar(self.clone()))
            }
            Ty::Array(elem) => {
                if index.is_some() {
                    Step::To(elem.ty.clone().or_missing(), elem.decl)
                } else if key == "length" {
                    Step::To(Ty::Number, None)
                } else {
                    Step::Stuck(Stuck::ArrayKey(self.clone()))
                }
            }
            Ty::Object(obj) => match obj.props.get(key) {
                Some(p) => Step::To(p.ty.clone(), p.decl),
                None if obj.closed => Step::Stuck(Stuck::Closed(self.clone())),
                None if obj.props.is_empty() => Step::To(Ty::Any, None),
                None => Step::Undeclared,
            },
            Ty::Union(members) => {
                // Each member on its own: the step is stuck only when it is stuck on every
                // member that can hold a value, and undeclared when no member declares it
                // (`object{path} | missing`, an optional property or an element, is read
                // through its object).
                let mut reached: Vec<Ty> = Vec::new();
                let mut decl = None;
                let mut stuck = None;
                let mut undeclared = false;
                for m in members.iter() {
                    match m.dig(key, index) {
                        Step::To(t, d) => {
                            decl = decl.or(d);
                            reached.push(t);
                        }
                        Step::Undeclared => undeclared = true,
                        Step::Stuck(s) => {
                            stuck.get_or_insert(s);
                            reached.push(Ty::Missing);
                        }
                    }
                }
                let only_missing = reached.iter().all(|t| *t == Ty::Missing);
                match stuck {
                    _ if undeclared && only_missing => Step::Undeclared,
                    Some(s) if only_missing => Step::Stuck(s),
                    _ if undeclared => {
                        reached.push(Ty::Any);
                        Step::To(Ty::union(reached), decl)
                    }
                    _ => Step::To(Ty::union(reached), decl),
                }
            }
        }
    }

    /// The values of a literal-set type (an `enum`, `boolean`, `null`), when every member is
    /// one; `missing` adds nothing (undefined is always possible at run time).
    pub fn literal_values(&self) -> Option<Vec<Value>> {
        let mut out = Vec::new();
        let mut any_literal = false;
        for m in self.members() {
            match m {
                Ty::Lits(vs) => {
                    any_literal = true;
                    out.extend(vs.iter().cloned());
                }
                Ty::Boolean => {
                    any_literal = true;
                    out.extend([Value::Bool(true), Value::Bool(false)]);
                }
                Ty::Null => out.push(Value::Null),
                Ty::Missing => {}
                _ => return None,
            }
        }
        any_literal.then_some(out)
    }

    /// Is every value of this type (besides missing) a number?
    pub fn is_number(&self) -> bool {
        let mut some = false;
        for m in self.members() {
            match m {
                Ty::Number | Ty::Integer => some = true,
                Ty::Missing => {}
                _ => return false,
            }
        }
        some
    }

    /// The type's spelling without `| missing` (for "declared here as …" labels).
    pub fn present(&self) -> Ty {
        match self {
            Ty::Union(ms) => Ty::union(ms.iter().filter(|t| **t != Ty::Missing).cloned()),
            other => other.clone(),
        }
    }

    /// Can the value be a scalar that no path ever resolves in (string, number, boolean,
    /// null, a literal set), and nothing else?
    pub fn is_scalar(&self) -> bool {
        let mut some = false;
        for m in self.members() {
            match m {
                Ty::Null | Ty::Boolean | Ty::Number | Ty::Integer | Ty::String | Ty::Lits(_) => {
                    some = true
                }
                Ty::Missing => {}
                _ => return false,
            }
        }
        some
    }

    /// A phrase for messages: `a string`, `one of low|medium|high`, `an array`.
    pub fn describe(&self) -> String {
        match self {
            Ty::Lits(_) => format!("one of {}", lits_text(self)),
            Ty::Boolean => "a boolean".to_owned(),
            Ty::Number => "a number".to_owned(),
            Ty::Integer => "an integer".to_owned(),
            Ty::String => "a string".to_owned(),
            Ty::Null => "null".to_owned(),
            Ty::Array(_) => format!("an array ({self})"),
            Ty::Object(_) => format!("an object ({self})"),
            Ty::Union(_) => format!("of type {self}"),
            Ty::Any => "anything".to_owned(),
            Ty::Missing => "missing".to_owned(),
        }
    }
}

/// `low|medium|high`: the values of a literal set as text.
pub fn lits_text(t: &Ty) -> String {
    let mut out = String::new();
    if let Some(values) = t.literal_values() {
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                out.push('|');
            }
            push_literal(v, &mut out);
        }
    }
    out
}

/// A scalar as a literal set shows it: strings bare, numbers JS-formatted.
fn push_literal(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => out.push_str(s),
        Value::Number(n) => write_number(*n, out),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
        other => out.push_str(&other.to_json()),
    }
}

/// The spelling of SPEC §7.5: `string`, `enum low|medium|high`, `array<object{path, lines}>`,
/// `string | missing`.
impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Any => f.write_str("any"),
            Ty::Missing => f.write_str("missing"),
            Ty::Null => f.write_str("null"),
            Ty::Boolean => f.write_str("boolean"),
            Ty::Number => f.write_str("number"),
            Ty::Integer => f.write_str("integer"),
            Ty::String => f.write_str("string"),
            Ty::Lits(_) => write!(f, "enum {}", lits_text(self)),
            Ty::Array(elem) => write!(f, "array<{}>", elem.ty),
            Ty::Object(obj) => {
                f.write_str("object{")?;
                for (i, k) in obj.props.keys().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(k)?;
                }
                f.write_str("}")
            }
            Ty::Union(ms) => {
                for (i, m) in ms.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" | ")?;
                    }
                    match m {
                        Ty::Union(_) => write!(f, "({m})")?,
                        _ => write!(f, "{m}")?,
                    }
                }
                Ok(())
            }
        }
    }
}
