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
            HitRecord::Record(r) => Direct(r).serialize(s),
            HitRecord::Json(v) => Json(v, 0).serialize(s),
        }
    }
}

impl<'de> serde::Deserialize<'de> for HitRecord {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<HitRecord, D::Error> {
        serde_json::Value::deserialize(d).map(HitRecord::from)
    }
}

/// A phase record written member by member, in [`PhaseRecord::to_value`]'s order, without
/// building its JSON tree first (a resumed run journals one per reused phase). Records with
/// any of the rarer nested members (gate, approval, loop, tournament, items, sub-run, prompt
/// statistics) go through [`PhaseRecord::to_value`].
struct Direct<'a>(&'a PhaseRecord);

impl serde::Serialize for Direct<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let r = self.0;
        if r.gate.is_some()
            || r.approval.is_some()
            || r.loop_info.is_some()
            || r.tournament.is_some()
            || r.items.is_some()
            || r.sub_run.is_some()
            || r.prompt_stats.is_some()
        {
            return Json(&r.to_value(), 0).serialize(s);
        }
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("status", r.status.as_str())?;
        m.serialize_entry("output", &r.output)?;
        if let Some(j) = &r.json {
            m.serialize_entry("json", &Json(j, 1))?;
        }
        m.serialize_entry("warnings", &r.warnings)?;
        m.serialize_entry("attempts", &r.attempts)?;
        m.serialize_entry("reads", &r.reads)?;
        m.serialize_entry("usage", &UsageJson(&r.usage))?;
        m.serialize_entry("startedAt", &r.started_at)?;
        m.serialize_entry("endedAt", &r.ended_at)?;
        if let Some(e) = &r.error {
            m.serialize_entry("error", e)?;
        }
        if let Some(x) = &r.skip_reason {
            m.serialize_entry("skipReason", x)?;
        }
        m.serialize_entry("type", r.ty.as_str())?;
        if let Some(a) = &r.agent {
            m.serialize_entry("agent", a)?;
        }
        if let Some(x) = &r.model {
            m.serialize_entry("model", x)?;
        }
        if let Some(h) = &r.input_hash {
            m.serialize_entry("inputHash", h)?;
        }
        if let Some(h) = r.cache_hit {
            m.serialize_entry("cacheHit", h)?;
        }
        for (key, flag) in [
            ("timedOut", r.timed_out),
            ("budgetTruncated", r.budget_truncated),
            ("sideEffect", r.side_effect),
            ("optional", r.optional),
        ] {
            if flag {
                m.serialize_entry(key, &true)?;
            }
        }
        if let Some(d) = &r.def_error {
            m.serialize_entry("defError", d)?;
        }
        m.end()
    }
}

/// A usage written as [`crate::agent::Usage::to_value`]'s tree is (numbers as [`Json`]
/// writes them), without building it.
struct UsageJson<'a>(&'a crate::agent::Usage);

impl serde::Serialize for UsageJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let u = self.0;
        let n = |x: f64| super::super::resume::number(x);
        let mut m = s.serialize_map(Some(6))?;
        m.serialize_entry("input", &n(u.input as f64))?;
        m.serialize_entry("output", &n(u.output as f64))?;
        m.serialize_entry("cacheRead", &n(u.cache_read as f64))?;
        m.serialize_entry("cacheWrite", &n(u.cache_write as f64))?;
        m.serialize_entry("costUSD", &u.cost_usd.map(n))?;
        m.serialize_entry("turns", &n(f64::from(u.turns)))?;
        m.end()
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
