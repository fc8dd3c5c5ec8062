//! The machine's side of reuse (SPEC §10.4–§10.5): when a phase starts (after `when`, after
//! its pre-read) its cache key is computed from what it would send — the rendered prompts —
//! and, when a `done` state may exist for it (a resumed run's parent, the cross-run store),
//! a [`Command::CacheLookup`] asks the driver; the answer comes back as an input
//! ([`Event::CacheChecked`]), so replaying the journal makes the same decisions. A phase
//! that ends `done` in cross-run scope is stored ([`Command::CacheStore`]).

use super::super::cache::key::{KeyParts, canonical_json, hex16, json_strings};
use super::super::cache::{self, Scope};
use super::super::record::{PhaseRecord, PhaseStatus};
use super::super::scope::WithLocal;
use super::{Cx, Exec};
use crate::eval::coerce_array;
use crate::flow::{Cwd, Phase, PhaseType, Run};
use crate::value::{Map, Value};

/// What the machine knows of a phase's reuse while it runs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Reuse {
    /// The key, once computed.
    pub key: Option<String>,
    /// The phase stores its `done` state in the cross-run cache.
    pub cross_run: bool,
}

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
    fn phase_record(&self, ty: PhaseType) -> Option<PhaseRecord> {
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
struct Json<'a>(&'a Value, usize);

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

impl Exec {
    /// The key of map item `index` whose full prompt is `prompt` (SPEC §10.5 "map item":
    /// id, agent, model, item prompt).
    pub(crate) fn item_key(&self, cx: &Cx<'_>, agent: &str, prompt: &str) -> String {
        self.item_parts(cx, agent, prompt).key(None)
    }

    /// The key parts of a map item (see [`Exec::item_key`]).
    pub(crate) fn item_parts(&self, cx: &Cx<'_>, agent: &str, prompt: &str) -> KeyParts {
        let flow = cx.flow();
        let phase = &flow.phases[self.index];
        let model = self.model_of(cx, agent);
        let kind = vec![phase.id.clone(), agent.to_owned(), model, prompt.to_owned()];
        self.key_parts_with(cx, kind)
    }

    /// The model a call of `agent` in this phase runs on, when known.
    fn model_of(&self, cx: &Cx<'_>, agent: &str) -> String {
        let flow = cx.flow();
        flow.phases[self.index]
            .model
            .as_ref()
            .map(|m| m.value.clone())
            .or_else(|| cx.cfg().models.get(agent).cloned())
            .unwrap_or_default()
    }

    /// The key parts of this phase's execution, rendered against its scope now.
    pub(crate) fn key_parts(&self, cx: &Cx<'_>) -> KeyParts {
        let flow = cx.flow();
        let phase = &flow.phases[self.index];
        let cfg = cx.cfg();
        let agent = phase.agent.value.as_str();
        let model = phase
            .model
            .as_ref()
            .map(|m| m.value.clone())
            .or_else(|| cfg.models.get(agent).cloned())
            .unwrap_or_default();
        let prefix = format!("{}{}", cfg.prompt_prefix, self.pre_read);
        let cap = cfg.max_prompt;
        let render = |t: &crate::flow::Text| capped(t, &self.scope, cap);
        let task = phase.task.as_ref().map(render).unwrap_or_default();
        let id = phase.id.clone();
        let kind = match phase.ty() {
            PhaseType::Agent | PhaseType::Gate => {
                vec![
                    id,
                    agent.to_owned(),
                    model.clone(),
                    format!("{prefix}{task}"),
                ]
            }
            PhaseType::Reduce => {
                let inputs = match &self.scope.previous {
                    Some(Value::String(s)) => s.clone(),
                    _ => String::new(),
                };
                vec![
                    id,
                    agent.to_owned(),
                    model.clone(),
                    format!("{prefix}{task}\u{0}{inputs}"),
                ]
            }
            PhaseType::Map => {
                let prompts = map_prompts(phase, &self.scope, &prefix, cap);
                vec![id, model.clone(), json_strings(&prompts)]
            }
            PhaseType::Parallel | PhaseType::Race => {
                let branches: Vec<Value> = phase
                    .branches()
                    .iter()
                    .map(|b| {
                        let mut m = Map::default();
                        let a = b.agent.as_ref().map_or(agent, |a| a.value.as_str());
                        m.insert("agent".into(), Value::from(a));
                        let t = b.task.as_ref().map(render).unwrap_or_default();
                        m.insert("task".into(), Value::from(format!("{prefix}{t}")));
                        if let Some(c) = &b.cwd {
                            m.insert("cwd".into(), Value::from(c.value.as_str()));
                        }
                        Value::Object(m)
                    })
                    .collect();
                let mut v = vec![id];
                if phase.ty() == PhaseType::Race {
                    v.push("race".into());
                }
                v.push(model.clone());
                v.push(canonical_json(&Value::Array(branches)));
                v
            }
            PhaseType::Script => {
                let s = phase.script_fields();
                let cmd = match s.run.as_ref().map(|r| &r.value) {
                    Some(Run::Shell(c)) => canonical_json(&Value::from(c.value.as_str())),
                    Some(Run::Argv(items)) => {
                        let argv: Vec<String> = items.iter().map(render).collect();
                        json_strings(&argv)
                    }
                    None => "null".to_owned(),
                };
                let stdin = s.input.as_ref().map(render).unwrap_or_default();
                vec![id, cmd, stdin]
            }
            PhaseType::Approval => vec![id, model.clone(), "approval".into(), task],
            _ => {
                // flow, loop, tournament, expand: every rendered field.
                let mut texts = Map::default();
                phase.each_text(|field, t| {
                    texts.insert(field.into_owned(), Value::from(render(t)));
                });
                let (tag, name) = match phase.def().map(|d| &d.value) {
                    Some(crate::flow::Def::Inline(child)) => ("def", child.name.clone()),
                    Some(crate::flow::Def::Template(t)) => ("def", render(t)),
                    None => match &phase.flow_fields().use_flow {
                        Some(n) if phase.ty() == PhaseType::Flow => ("flow", n.value.clone()),
                        _ => ("kind", phase.ty().as_str().to_owned()),
                    },
                };
                vec![
                    id,
                    format!("{tag}:{name}:{}", canonical_json(&Value::Object(texts))),
                    self.pre_read.clone(),
                    canonical_json(&cx.m.args),
                ]
            }
        };
        self.key_parts_with(cx, kind)
    }

    /// The key parts around the kind's own (`kind`).
    fn key_parts_with(&self, cx: &Cx<'_>, kind: Vec<String>) -> KeyParts {
        let flow = cx.flow();
        let phase = &flow.phases[self.index];
        let cfg = cx.cfg();
        let agent = phase.agent.value.as_str();
        let model = self.model_of(cx, agent);
        let agents: Map = super::super::phase_agent_names(phase)
            .into_iter()
            .map(|a| {
                let def = cfg.agent_defs.get(&a).cloned().unwrap_or_default();
                (a, Value::from(def))
            })
            .collect();
        let backend = cfg.backends.get(agent).cloned().unwrap_or_default();
        KeyParts {
            flow: flow.name.clone(),
            phase_fp: cfg
                .phase_fps
                .get(self.index)
                .cloned()
                .unwrap_or_else(|| hex16(format!("{:?}", phase.common).as_bytes())),
            kind,
            think: phase
                .thinking
                .as_ref()
                .map(|t| t.value.clone())
                .unwrap_or_default(),
            tools: phase.tools.iter().map(|t| t.value.clone()).collect(),
            pre_read: self.pre_read.clone(),
            agent_scope: flow.agent_scope.as_str().to_owned(),
            agents: canonical_json(&Value::Object(agents)),
            backend: format!("{backend}/{model}"),
            cwd: phase.cwd.as_ref().map(|c| cwd_text(&c.value)),
        }
    }
}

/// A field rendered for the key, never past `cap` bytes (the phase itself fails on such a
/// prompt; its key only has to be cheap and deterministic).
fn capped<S: crate::eval::Scope + ?Sized>(t: &crate::flow::Text, scope: &S, cap: usize) -> String {
    match t.template.render_capped(scope, cap) {
        Ok(r) => r.text,
        Err(over) => over.partial.text,
    }
}

/// `cwd` as written.
fn cwd_text(c: &Cwd) -> String {
    match c {
        Cwd::Path(p) => p.clone(),
        Cwd::Temp => "temp".into(),
        Cwd::Dedicated => "dedicated".into(),
        Cwd::Worktree => "worktree".into(),
        Cwd::Arg(a) => format!("{{args.{a}}}"),
    }
}

/// A map's item prompts, rendered against `scope` without side effects.
fn map_prompts(
    phase: &Phase,
    scope: &super::super::scope::PhaseScope,
    prefix: &str,
    cap: usize,
) -> Vec<String> {
    let Some(over) = phase.map_fields().over.as_ref() else {
        return Vec::new();
    };
    let paths = over.template.paths();
    let whole = over.template.refs().len() == 1
        && over.template.refs()[0].span.range() == (0..over.as_str().len());
    let value: Option<Value> = if whole {
        crate::eval::resolve(scope, &paths[0]).and_then(|v| match &*v {
            Value::String(s) => crate::eval::safe_parse::safe_parse(s).value,
            other => Some(other.clone()),
        })
    } else {
        crate::eval::safe_parse::safe_parse(&capped(over, scope, cap)).value
    };
    let Some(items) = value.as_ref().and_then(coerce_array) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|v| {
            let item = WithLocal {
                base: scope,
                name: phase.local_name(),
                value: v,
            };
            let t = phase
                .task
                .as_ref()
                .map(|t| capped(t, &item, cap))
                .unwrap_or_default();
            format!("{prefix}{t}")
        })
        .collect()
}

/// The record of a reused `done` state: the stored record, with zero usage and attempts,
/// `cacheHit` set, the key as `inputHash`.
pub(crate) fn restored(
    stored: &HitRecord,
    fresh: &PhaseRecord,
    key: &str,
    source: &str,
) -> Option<PhaseRecord> {
    let mut r = stored.phase_record(fresh.ty)?;
    if r.status != PhaseStatus::Done {
        return None;
    }
    r.usage = crate::agent::Usage::default();
    r.attempts = 0;
    r.input_hash = Some(key.to_owned());
    r.cache_hit = Some(if source == "cross-run" {
        "cross-run"
    } else {
        "run-only"
    });
    r.started_at = fresh.started_at.clone();
    r.agent = fresh.agent.clone().or(r.agent);
    r.optional = fresh.optional;
    r.side_effect = false;
    Some(r)
}

/// Whether a phase of this flow may look for a reusable state: not `off`, not a kind that
/// always re-runs; and the cross-run scope.
pub(crate) fn lookup_scope(phase: &Phase, incremental: bool) -> (Scope, bool) {
    let scope = cache::scope(phase, incremental);
    (scope, scope != Scope::Off && !cache::always_reruns(phase))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(r: &PhaseRecord) -> (String, String) {
        let rec = std::sync::Arc::new(r.clone());
        let direct = serde_json::to_string(&HitRecord::Record(rec)).expect("writes");
        let via_value = serde_json::to_string(&Json(&r.to_value(), 0)).expect("writes");
        (direct, via_value)
    }

    #[test]
    fn a_record_is_journaled_as_its_value_is() {
        let mut r = PhaseRecord::new(PhaseType::Agent);
        r.status = PhaseStatus::Done;
        r.output = "out \"quoted\"\n".into();
        let (a, b) = written(&r);
        assert_eq!(a, b);

        let mut json = Map::default();
        json.insert("n".into(), Value::Number(2.5));
        json.insert("i".into(), Value::Number(-3.0));
        json.insert("inf".into(), Value::Number(f64::INFINITY));
        json.insert(
            "list".into(),
            Value::Array(vec![Value::Null, Value::Bool(true), "x".into()]),
        );
        r.json = Some(Value::Object(json));
        r.warnings = vec!["w1".into(), "w2".into()];
        r.attempts = 3;
        r.reads = vec!["a".into()];
        r.usage.input = 7;
        r.usage.cost_usd = Some(0.125);
        r.started_at = Some("2026-01-01T00:00:00.000Z".into());
        r.error = Some("e".into());
        r.skip_reason = Some("s".into());
        r.agent = Some("ag".into());
        r.model = Some("m".into());
        r.input_hash = Some("00ff".into());
        r.cache_hit = Some("run-only");
        r.timed_out = true;
        r.optional = true;
        r.def_error = Some("d".into());
        let (a, b) = written(&r);
        assert_eq!(a, b);
        assert!(a.contains("\"defError\":\"d\""), "{a}");
        r.usage.cost_usd = Some(1.0);
        r.usage.output = u64::MAX;
        r.usage.turns = 2;
        let (a, b) = written(&r);
        assert_eq!(a, b);

        r.tournament = Some((1, 3));
        r.prompt_stats = Some((10, 3));
        let (a, b) = written(&r);
        assert_eq!(a, b);
        assert!(a.contains("\"tournament\""), "{a}");
    }
}
