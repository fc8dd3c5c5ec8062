//! A reused `done` state as the driver hands it to the machine ([`CacheHit`]), and how its
//! record is written to the journal without building its JSON tree first.

use super::super::record::{PhaseRecord, PhaseStatus};
use crate::flow::PhaseType;
use crate::value::Value;

/// A reused `done` state, as the driver found it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CacheHit {
    /// `run-only` or `cross-run`.
    pub source: String,
    /// The phase record (in the journal: its SPEC §11.1 form).
    pub record: HitRecord,
}

/// The phase record of a [`CacheHit`]. A resumed run's parent states are handed over as the
/// records `resume::open` read (shared, never converted again); a cross-run entry and a
/// journal line give its JSON. Either way the journal holds the §11.1 form.
#[derive(Clone, Debug, PartialEq)]
pub enum HitRecord {
    /// A phase record, as read.
    Record(std::sync::Arc<PhaseRecord>),
    /// A phase record's JSON (`type`, when missing, is the phase's own).
    Json(Value),
}

impl HitRecord {
    /// The record as the phase of kind `ty` restores it (`None`: not a phase record).
    pub(super) fn phase_record(&self, ty: PhaseType) -> Option<PhaseRecord> {
        match self {
            HitRecord::Record(r) => Some(PhaseRecord::clone(r)),
            HitRecord::Json(v) => PhaseRecord::from_value(v, ty),
        }
    }

    /// The `output` of a `done` record (a reused map item).
    pub(crate) fn done_output(&self) -> Option<String> {
        match self {
            HitRecord::Record(r) => (r.status == PhaseStatus::Done).then(|| r.output.clone()),
            HitRecord::Json(Value::Object(m))
                if m.get("status").and_then(Value::as_str) == Some("done") =>
            {
                m.get("output").and_then(Value::as_str).map(str::to_owned)
            }
            HitRecord::Json(_) => None,
        }
    }
}

impl From<serde_json::Value> for HitRecord {
    fn from(v: serde_json::Value) -> HitRecord {
        HitRecord::Json(Value::from(&v))
    }
}

impl serde::Serialize for HitRecord {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HitRecord::Record(r) => Json(&r.to_value(), 0).serialize(s),
            HitRecord::Json(v) => Json(v, 0).serialize(s),
        }
    }
}

impl<'de> serde::Deserialize<'de> for HitRecord {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<HitRecord, D::Error> {
        serde_json::Value::deserialize(d).map(HitRecord::from)
    }
}

impl CacheHit {
    /// This hit written as serde writes it (compact JSON: `{"source":…,"record":…}`) straight
    /// into `out`, with no serializer; `false`, with `out` untouched, for a JSON hit or a
    /// record with a rarer nested member (see [`has_rare_members`]).
    pub(crate) fn write_compact(&self, out: &mut String) -> bool {
        let HitRecord::Record(r) = &self.record else {
            return false;
        };
        if has_rare_members(r) {
            return false;
        }
        out.push_str("{\"source\":");
        crate::value::write_string(&self.source, out);
        out.push_str(",\"record\":");
        write_record(r, out);
        out.push('}');
        true
    }
}

/// Whether a record has a rarer nested member (gate, approval, loop, tournament, items,
/// sub-run), which the hand writer leaves to [`PhaseRecord::to_value`].
fn has_rare_members(r: &PhaseRecord) -> bool {
    r.gate.is_some()
        || r.approval.is_some()
        || r.loop_info.is_some()
        || r.tournament.is_some()
        || r.items.is_some()
        || r.sub_run.is_some()
}

/// The compact serde text of a record without rarer members (the same bytes as serialising
/// its [`PhaseRecord::to_value`]), written by hand.
fn write_record(r: &PhaseRecord, out: &mut String) {
    use crate::value::write_string;
    fn key(k: &str, out: &mut String) {
        out.push_str(",\"");
        out.push_str(k);
        out.push_str("\":");
    }
    fn strings(list: &[String], out: &mut String) {
        out.push('[');
        for (i, s) in list.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_string(s, out);
        }
        out.push(']');
    }
    fn opt(s: Option<&str>, out: &mut String) {
        match s {
            Some(s) => write_string(s, out),
            None => out.push_str("null"),
        }
    }
    out.push_str("{\"status\":");
    write_string(r.status.as_str(), out);
    key("output", out);
    write_string(&r.output, out);
    if let Some(j) = &r.json {
        key("json", out);
        serde_text(&Json(j, 1), out);
    }
    key("warnings", out);
    strings(&r.warnings, out);
    key("attempts", out);
    out.push_str(&r.attempts.to_string());
    key("reads", out);
    strings(&r.reads, out);
    key("usage", out);
    let u = &r.usage;
    out.push_str("{\"input\":");
    compact_number(u.input as f64, out);
    out.push_str(",\"output\":");
    compact_number(u.output as f64, out);
    out.push_str(",\"cacheRead\":");
    compact_number(u.cache_read as f64, out);
    out.push_str(",\"cacheWrite\":");
    compact_number(u.cache_write as f64, out);
    out.push_str(",\"costUSD\":");
    match u.cost_usd {
        Some(c) => compact_number(c, out),
        None => out.push_str("null"),
    }
    out.push_str(",\"turns\":");
    compact_number(f64::from(u.turns), out);
    out.push('}');
    key("startedAt", out);
    opt(r.started_at.as_deref(), out);
    key("endedAt", out);
    opt(r.ended_at.as_deref(), out);
    if let Some(e) = &r.error {
        key("error", out);
        write_string(e, out);
    }
    if let Some(x) = &r.skip_reason {
        key("skipReason", out);
        write_string(x, out);
    }
    key("type", out);
    write_string(r.ty.as_str(), out);
    for (k, v) in [
        ("agent", r.agent.as_deref()),
        ("model", r.model.as_deref()),
        ("inputHash", r.input_hash.as_deref()),
        ("cacheHit", r.cache_hit),
        ("setFrom", r.set_from.as_deref()),
    ] {
        if let Some(v) = v {
            key(k, out);
            write_string(v, out);
        }
    }
    for (k, flag) in [
        ("timedOut", r.timed_out),
        ("budgetTruncated", r.budget_truncated),
        ("sideEffect", r.side_effect),
        ("optional", r.optional),
    ] {
        if flag {
            key(k, out);
            out.push_str("true");
        }
    }
    if let Some(d) = &r.def_error {
        key("defError", out);
        write_string(d, out);
    }
    if let Some((chars, est)) = r.prompt_stats {
        key("promptStats", out);
        out.push_str("{\"chars\":");
        compact_number(chars as f64, out);
        out.push_str(",\"estTokens\":");
        compact_number(est as f64, out);
        out.push('}');
    }
    out.push('}');
}

/// A number as [`super::super::resume::number`]'s value is written: integers below 2^53 by
/// hand, anything else through serde.
fn compact_number(n: f64, out: &mut String) {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if n.is_finite() && n.fract() == 0.0 && n.abs() < EXACT {
        if n == 0.0 {
            out.push('0');
        } else if n > 0.0 {
            out.push_str(&(n as u64).to_string());
        } else {
            out.push_str(&(n as i64).to_string());
        }
    } else {
        serde_text(&super::super::resume::number(n), out);
    }
}

/// A value's compact serde text appended to `out` (`null` should serde refuse it).
fn serde_text<T: serde::Serialize + ?Sized>(v: &T, out: &mut String) {
    match serde_json::to_string(v) {
        Ok(t) => out.push_str(&t),
        Err(_) => out.push_str("null"),
    }
}

/// How deep [`Json`] writes member by member; deeper values go through their JSON text.
const DIRECT_DEPTH: usize = 48;

/// A value written as serde writes its JSON text's tree (integers as integers, non-finite
/// numbers as null), at nesting `.1`.
pub(super) struct Json<'a>(pub(super) &'a Value, pub(super) usize);

impl serde::Serialize for Json<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        let Json(v, depth) = *self;
        match v {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::String(t) => s.serialize_str(t),
            Value::Number(n) => super::super::resume::number(*n).serialize(s),
            // Deep values: the text round trip (no recursion here, serde's own depth limit).
            _ if depth >= DIRECT_DEPTH => serde_json::from_str::<serde_json::Value>(&v.to_json())
                .unwrap_or(serde_json::Value::Null)
                .serialize(s),
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for x in a.iter() {
                    seq.serialize_element(&Json(x, depth + 1))?;
                }
                seq.end()
            }
            Value::Object(o) => {
                let mut map = s.serialize_map(Some(o.len()))?;
                for (k, x) in o.iter() {
                    map.serialize_entry(k, &Json(x, depth + 1))?;
                }
                map.end()
            }
        }
    }
}
