//! Declarations → types: an `expect` contract (SPEC §3.15) and an ArgSpec (SPEC §2.2).

use std::sync::Arc;

use super::lattice::{Obj, Prop, Ty};
use crate::flow::{ArgSpec, ArgType, Contract};
use crate::value::Value;

/// The type of every value that satisfies `c`, as the run-time contract checker judges it
/// (`run::contract`): `properties`/`required` imply an object and `items` an array when no
/// `type` is given; an `enum` narrows to its literals; a property not `required` may be
/// missing, and a key named only in `required` is declared with type `any`;
/// `additionalProperties: false` closes the object. A contract that constrains nothing is
/// `any`.
pub fn contract(c: &Contract) -> Ty {
    let types = c.ty.as_ref().map(|t| t.value.as_slice());
    if let Some(values) = &c.enum_values {
        // The literals that also pass `type`; when none does, no output satisfies the
        // contract and the phase always fails: nothing to say about its value.
        let kept: Vec<Value> = values
            .iter()
            .filter(|v| types.is_none_or(|ts| ts.iter().any(|t| value_has_type(v, t))))
            .cloned()
            .collect();
        return if kept.is_empty() {
            Ty::Any
        } else {
            Ty::lits(&kept)
        };
    }
    let object = || {
        let mut obj = Obj {
            closed: c.closed(),
            ..Obj::default()
        };
        for (key, p) in &c.properties {
            let mut t = contract(&p.value);
            if !c.required.iter().any(|r| r.value == *key) {
                t = t.or_missing();
            }
            obj.props.insert(
                key.as_str().into(),
                Prop {
                    ty: t,
                    decl: Some(p.key),
                },
            );
        }
        // A key named only in `required` is declared too: it is there, of any type.
        for r in &c.required {
            if !obj.props.contains_key(r.value.as_str()) {
                obj.props.insert(
                    r.value.as_str().into(),
                    Prop {
                        ty: Ty::Any,
                        decl: Some(r.span),
                    },
                );
            }
        }
        Ty::Object(Arc::new(obj))
    };
    let array = || match &c.items {
        Some(items) => Ty::array(contract(&items.value), Some(items.key)),
        None => Ty::array(Ty::Any, None),
    };
    let one = |t: &str| match t {
        "object" => object(),
        "array" => array(),
        "string" => Ty::String,
        "number" => Ty::Number,
        "integer" => Ty::Integer,
        "boolean" => Ty::Boolean,
        "null" => Ty::Null,
        _ => Ty::Any,
    };
    match types {
        // A type list is a union (SPEC §7.5).
        Some(ts) => Ty::union(ts.iter().map(|t| one(t))),
        None if !c.properties.is_empty() || !c.required.is_empty() => object(),
        None if c.items.is_some() => array(),
        None => Ty::Any,
    }
}

/// Does `v` pass the contract keyword `type: t`?
fn value_has_type(v: &Value, t: &str) -> bool {
    match (t, v) {
        ("string", Value::String(_))
        | ("number", Value::Number(_))
        | ("boolean", Value::Bool(_))
        | ("null", Value::Null)
        | ("object", Value::Object(_))
        | ("array", Value::Array(_)) => true,
        ("integer", Value::Number(n)) => n.is_finite() && n.fract() == 0.0,
        _ => false,
    }
}

/// The type of `{args.X}` from X's declaration: typed arguments are checked on every
/// invocation (E0502), so the value has the declared type; without a default or `required`
/// it may be missing. Legacy (untyped) arguments are `any`.
pub fn arg(spec: &ArgSpec) -> Ty {
    let t = match spec.ty {
        None => return Ty::Any,
        Some(ArgType::String | ArgType::RelativePath) => Ty::String,
        Some(ArgType::Number) => Ty::Number,
        Some(ArgType::Boolean) => Ty::Boolean,
        Some(ArgType::Enum) => Ty::lits(&spec.values),
    };
    if spec.default.is_some() || spec.required || t.is_any() {
        t
    } else {
        t.or_missing()
    }
}
