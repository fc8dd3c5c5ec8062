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
use super::{Cx, Exec, HitRecord};
use crate::eval::coerce_array;
use crate::flow::{Cwd, Phase, PhaseType, Run};
use crate::value::{Map, Value};

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
                    canonical_json(cx.m.args()),
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
    r.cache_hit = Some(match (source, r.cache_hit) {
        ("cross-run", _) => "cross-run",
        // An output a fork set stays marked so through the runs that copy it.
        (_, Some("set")) => "set",
        _ => "run-only",
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
    use super::super::hit::Json;
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
