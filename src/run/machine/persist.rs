//! The machine's [`Config`] in the journal's `run-start` line (`config`), so a run can be
//! rebuilt from its journal alone (SPEC §14.2: crash recovery replays the inputs into a
//! machine built exactly like the original). Older journals without it stay readable: the
//! caller then rebuilds what it can from `run.json`.

use std::path::PathBuf;
use std::sync::Arc;

use indexmap::IndexMap;

use super::{Config, RunSettings};
use crate::value::{Map, Value};

fn strings(v: &[String]) -> Value {
    Value::Array(v.iter().map(|s| Value::from(s.as_str())).collect())
}

fn map(m: &IndexMap<String, String>) -> Value {
    Value::Object(
        m.iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect(),
    )
}

fn num(v: Option<f64>) -> Value {
    v.map_or(Value::Null, Value::Number)
}

impl Config {
    /// The configuration as JSON (the `config` of `run-start`).
    pub fn to_value(&self) -> Value {
        let mut m = Map::default();
        let s = |v: &str| Value::from(v);
        m.insert("runId".into(), s(&self.run_id));
        m.insert(
            "concurrency".into(),
            num(self.settings.concurrency.map(|c| c as f64)),
        );
        m.insert("dryRun".into(), Value::Bool(self.settings.dry_run));
        m.insert(
            "dryRunScripts".into(),
            Value::Bool(self.settings.dry_run_scripts),
        );
        m.insert("approve".into(), strings(&self.settings.approve));
        m.insert("approveAll".into(), Value::Bool(self.settings.approve_all));
        m.insert("reject".into(), strings(&self.settings.reject));
        m.insert(
            "rejectReason".into(),
            self.settings
                .reject_reason
                .as_deref()
                .map_or(Value::Null, s),
        );
        if !self.settings.reject_notes.is_empty() {
            m.insert("rejectNotes".into(), map(&self.settings.reject_notes));
        }
        m.insert("ask".into(), Value::Bool(self.ask));
        m.insert("maxUsd".into(), num(self.max_usd));
        m.insert("maxTokens".into(), num(self.max_tokens));
        if let Some(c) = self.max_calls {
            m.insert("maxCalls".into(), Value::Number(c as f64));
        }
        m.insert(
            "defaultIdleTimeoutMs".into(),
            num(self.settings.default_idle_timeout_ms.map(|t| t as f64)),
        );
        m.insert("maxOutput".into(), Value::Number(self.max_output as f64));
        m.insert("maxPrompt".into(), Value::Number(self.max_prompt as f64));
        m.insert("backends".into(), map(&self.backends));
        m.insert("replay".into(), Value::Bool(self.replay));
        m.insert("cwd".into(), s(&self.cwd.to_string_lossy()));
        m.insert(
            "projectRoot".into(),
            self.settings
                .project_root
                .as_ref()
                .map_or(Value::Null, |p| s(&p.to_string_lossy())),
        );
        m.insert("incremental".into(), Value::Bool(self.incremental));
        m.insert("lookups".into(), Value::Bool(self.lookups));
        m.insert("phaseFps".into(), strings(&self.phase_fps));
        m.insert("agentDefs".into(), map(&self.agent_defs));
        m.insert("models".into(), map(&self.models));
        m.insert(
            "spentBefore".into(),
            self.spent_before
                .as_ref()
                .map_or(Value::Null, crate::agent::Usage::to_value),
        );
        m.insert("rerunWarn".into(), strings(&self.rerun_warn));
        m.insert(
            "itemStates".into(),
            Value::Object(
                self.item_states
                    .iter()
                    .map(|(k, (key, out))| {
                        (
                            k.clone(),
                            Value::Array(vec![key.as_str().into(), out.as_str().into()]),
                        )
                    })
                    .collect(),
            ),
        );
        if let Some(p) = &self.parent_run_id {
            m.insert("parentRunId".into(), s(p));
        }
        if let Some(n) = self.shard_items {
            m.insert("shardItems".into(), Value::Number(n as f64));
        }
        if !self.approval_deadlines.is_empty() {
            m.insert(
                "approvalDeadlines".into(),
                Value::Object(
                    self.approval_deadlines
                        .iter()
                        .map(|(k, ms)| (k.clone(), Value::Number(*ms as f64)))
                        .collect(),
                ),
            );
        }
        if let Some(f) = &self.fork {
            let sorted = |set: &std::collections::HashSet<String>| {
                let mut v: Vec<String> = set.iter().cloned().collect();
                v.sort();
                strings(&v)
            };
            let mut o = Map::default();
            o.insert("parent".into(), s(&f.parent));
            o.insert("copy".into(), sorted(&f.copy));
            o.insert("set".into(), sorted(&f.set));
            m.insert("fork".into(), Value::Object(o));
        }
        Value::Object(m)
    }

    /// Read [`Config::to_value`] back; `journaling` and `progress` are the caller's.
    pub fn from_value(v: &Value) -> Option<Config> {
        let Value::Object(m) = v else {
            return None;
        };
        let text = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_owned);
        let flag = |k: &str| matches!(m.get(k), Some(Value::Bool(true)));
        let number = |k: &str| match m.get(k) {
            Some(Value::Number(n)) if n.is_finite() => Some(*n),
            _ => None,
        };
        let list = |k: &str| -> Vec<String> {
            match m.get(k) {
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            }
        };
        let pairs = |k: &str| -> IndexMap<String, String> {
            match m.get(k) {
                Some(Value::Object(o)) => o
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect(),
                _ => IndexMap::new(),
            }
        };
        Some(Config {
            run_id: text("runId")?,
            settings: RunSettings {
                concurrency: number("concurrency").map(|c| c as usize),
                dry_run: flag("dryRun"),
                dry_run_scripts: flag("dryRunScripts"),
                approve: list("approve"),
                approve_all: flag("approveAll"),
                reject: list("reject"),
                reject_reason: text("rejectReason"),
                reject_notes: pairs("rejectNotes"),
                default_idle_timeout_ms: number("defaultIdleTimeoutMs").map(|t| t as u64),
                project_root: text("projectRoot").map(PathBuf::from),
            },
            ask: flag("ask"),
            max_usd: number("maxUsd"),
            max_tokens: number("maxTokens"),
            max_calls: number("maxCalls").map(|c| c as u64),
            max_output: number("maxOutput")? as usize,
            max_prompt: number("maxPrompt")? as usize,
            journaling: true,
            progress: false,
            backends: pairs("backends"),
            replay: flag("replay"),
            cwd: PathBuf::from(text("cwd")?),
            incremental: flag("incremental"),
            lookups: flag("lookups"),
            phase_fps: Arc::new(list("phaseFps")),
            agent_defs: pairs("agentDefs"),
            models: pairs("models"),
            spent_before: m
                .get("spentBefore")
                .filter(|v| !matches!(v, Value::Null))
                .map(crate::run::record::usage_from_value),
            rerun_warn: list("rerunWarn"),
            item_states: Arc::new(match m.get("itemStates") {
                Some(Value::Object(o)) => o
                    .iter()
                    .filter_map(|(k, v)| match v {
                        Value::Array(a) => Some((
                            k.clone(),
                            (
                                a.first()?.as_str()?.to_owned(),
                                a.get(1)?.as_str()?.to_owned(),
                            ),
                        )),
                        _ => None,
                    })
                    .collect(),
                _ => IndexMap::new(),
            }),
            shard_items: number("shardItems").map(|n| n.max(1.0) as usize),
            parent_run_id: text("parentRunId"),
            approval_deadlines: Arc::new(match m.get("approvalDeadlines") {
                Some(Value::Object(o)) => o
                    .iter()
                    .filter_map(|(k, v)| match v {
                        Value::Number(n) if n.is_finite() && *n >= 0.0 => {
                            Some((k.clone(), *n as u64))
                        }
                        _ => None,
                    })
                    .collect(),
                _ => IndexMap::new(),
            }),
            fork: match m.get("fork") {
                Some(Value::Object(f)) => {
                    let set = |k: &str| match f.get(k) {
                        Some(Value::Array(a)) => a
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect(),
                        _ => std::collections::HashSet::new(),
                    };
                    Some(Arc::new(super::ForkNodes {
                        parent: f.get("parent")?.as_str()?.to_owned(),
                        copy: set("copy"),
                        set: set("set"),
                    }))
                }
                _ => None,
            },
            ..Config::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_round_trips() {
        let mut backends = IndexMap::new();
        backends.insert("default".to_owned(), "echo".to_owned());
        let cfg = Config {
            run_id: "r-1".into(),
            settings: RunSettings {
                concurrency: Some(3),
                approve: vec!["ok".into()],
                reject_reason: Some("no".into()),
                reject_notes: IndexMap::from([("gate".to_owned(), "its own".to_owned())]),
                ..RunSettings::default()
            },
            max_usd: Some(1.5),
            max_calls: Some(7),
            max_output: 10,
            max_prompt: 20,
            journaling: true,
            backends,
            cwd: "/w".into(),
            incremental: true,
            lookups: true,
            phase_fps: Arc::new(vec!["00".into()]),
            spent_before: Some(crate::agent::Usage {
                input: 5,
                cost_usd: Some(0.25),
                calls: 4,
                ..Default::default()
            }),
            rerun_warn: vec!["side".into()],
            item_states: Arc::new(
                [("m#1".to_owned(), ("k".to_owned(), "out".to_owned()))]
                    .into_iter()
                    .collect(),
            ),
            shard_items: Some(500),
            parent_run_id: Some("r-0".into()),
            approval_deadlines: Arc::new(
                [("ok".to_owned(), 1_800_000_000_000)].into_iter().collect(),
            ),
            ..Config::default()
        };
        let back = Config::from_value(&cfg.to_value()).expect("reads back");
        assert_eq!(back.to_value().to_json(), cfg.to_value().to_json());
        assert_eq!(back.spent_before, cfg.spent_before);
        assert_eq!(back.max_calls, Some(7));
    }
}
