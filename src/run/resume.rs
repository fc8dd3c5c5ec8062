//! Resume (SPEC §10.4): open a parent run's directory, rebuild its state — from the journal
//! when it has one that can be replayed (an interrupted run's `run.json` may lag), else from
//! `run.json` — and plan the child: which `done` states it may reuse, the spend it carries,
//! the patched definition. The parent is only read, never written.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;

use super::cache::key::hash_parts;
use super::cache::{fingerprint, store};
use super::machine::{CacheHit, Config, Event, HitRecord, Machine};
use super::record::{PhaseRecord, PhaseStatus, usage_from_value};
use crate::agent::Usage;
use crate::flow::{LowerOptions, PhaseType};
use crate::value::{Map, Value};

mod read;

/// What a resumed run carries from its parent.
#[derive(Clone, Debug, Default)]
pub struct Carried {
    /// The parent's run id.
    pub parent_run_id: String,
    /// The parent's `spentBefore` plus its usage.
    pub spent_before: Option<Usage>,
    /// Node path → (inputHash, record) of the parent's reusable `done` states.
    pub states: HashMap<String, (String, Arc<PhaseRecord>)>,
    /// Non-idempotent phases the parent had `done` (they run again, with a warning).
    pub rerun_warn: Vec<String>,
    /// The parent's finished map items: node (`map#3`) → (key, output).
    pub items: IndexMap<String, (String, String)>,
    /// The deadlines of the parent's pending approvals (SPEC §8.8): id → epoch ms. The
    /// resumed run keeps them: the clock never restarts.
    pub deadlines: IndexMap<String, u64>,
    /// How it was planned: another process (a Temporal worker) plans it again from this.
    pub origin: Option<Origin>,
    /// The parent's trace, which the resumed run's trace links to.
    pub parent_trace: Option<crate::telemetry::SpanContext>,
    /// The states copied whatever their kind and key (a fork's, SPEC §10.4 "Fork", and
    /// those a resumed run's parent had itself copied); `None` when there are none.
    pub fork: Option<Forked>,
}

/// What a fork adds to [`Carried`].
#[derive(Clone, Debug, Default)]
pub struct Forked {
    /// The machine's side: the phases copied and set.
    pub nodes: Arc<super::machine::ForkNodes>,
    /// Phases re-run because of `--from`: never served from the cross-run store.
    pub fresh: std::collections::HashSet<String>,
    /// The child's `forkedFrom` (`{runId, from, set}`); `Null` for a resumed run.
    pub forked_from: Value,
}

/// How a resumed run's [`Carried`] was planned: the parent's directory, its effective
/// status, the patch and the caps ([`plan`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Origin {
    /// The parent run's directory.
    pub dir: PathBuf,
    /// Its effective status when it was resumed.
    pub status: String,
    /// `--phase` and what it changed.
    pub patch: Option<Patch>,
    /// `--max-usd`/`--max-tokens`/`--max-calls`.
    pub caps: Caps,
    /// A fork's request (`tfc fork`); `None` for a resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<ForkRequest>,
}

/// What `tfc fork` asks for (SPEC §10.4 "Fork"), planned by [`super::fork::plan`].
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ForkRequest {
    /// `--from P`: re-run P and its descendants.
    pub from: Vec<String>,
    /// `--set P=…` / `--set P#i=…`, in the order given.
    pub set: Vec<SetOutput>,
    /// `--args` overrides of the parent's arguments, as JSON text of an object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<String>,
    /// `K=V` overrides (after `--args`), typed by the flow's declarations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<(String, String)>,
}

/// One `--set`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SetOutput {
    /// The phase id.
    pub phase: String,
    /// `P#i`: one map item.
    pub item: Option<usize>,
    /// The output (a file's text for `@FILE`).
    pub text: String,
}

/// The key of a carried state reused whatever the phase's key is now: a fork's copies and
/// `--set`s, and a resumed run's states its parent had itself copied (SPEC §10.4).
pub(crate) const ANY_KEY: &str = "*";

/// One lookup the driver answers (see `Command::CacheLookup`).
pub(crate) struct Lookup<'a> {
    pub op: u64,
    pub node: &'a str,
    pub parts: Vec<String>,
    pub fingerprints: &'a [String],
    pub resumed: Option<&'a Carried>,
    pub store: Option<&'a Path>,
    pub ttl_ms: Option<u64>,
    pub cwd: &'a Path,
    pub now: u64,
}

/// A number as its JSON text reads back: integers as integers, non-finite as null.
pub(crate) fn number(n: f64) -> serde_json::Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if !n.is_finite() {
        serde_json::Value::Null
    } else if n.fract() == 0.0 && n.abs() < EXACT {
        if n == 0.0 {
            // `-0` is written `0`.
            serde_json::Value::from(0u64)
        } else if n > 0.0 {
            serde_json::Value::from(n as u64)
        } else {
            serde_json::Value::from(n as i64)
        }
    } else {
        let mut text = String::new();
        crate::value::write_number(n, &mut text);
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
    }
}

/// Complete the key, then look in the parent's states and the cross-run store.
pub(crate) fn look_up(l: Lookup<'_>) -> Event {
    let mut parts = l.parts;
    if !l.fingerprints.is_empty() {
        parts.push(format!("fp:{}", fingerprint::digest(l.fingerprints, l.cwd)));
    }
    let key = hash_parts(&parts);
    let mut warning = None;
    let mut hit = None;
    if let Some((k, rec)) = l.resumed.and_then(|c| c.states.get(l.node))
        && (*k == key || k == ANY_KEY)
    {
        hit = Some(Box::new(CacheHit {
            source: "run-only".into(),
            record: HitRecord::Record(rec.clone()),
        }));
    }
    let fresh = l
        .resumed
        .and_then(|c| c.fork.as_ref())
        .is_some_and(|f| f.fresh.contains(l.node));
    if hit.is_none()
        && !fresh
        && let Some(root) = l.store
    {
        match store::lookup(root, &key, l.now, l.ttl_ms) {
            store::Lookup::Hit(rec) => {
                hit = Some(Box::new(CacheHit {
                    source: "cross-run".into(),
                    record: HitRecord::Json(rec),
                }))
            }
            store::Lookup::Corrupt(w) => warning = Some(w),
            store::Lookup::Miss => {}
        }
    }
    Event::CacheChecked {
        op: l.op,
        key,
        hit,
        warning,
    }
}

/// A parent run, read.
#[derive(Debug)]
pub struct Parent {
    /// Its directory.
    pub dir: PathBuf,
    /// Its run id.
    pub run_id: String,
    /// Its flow's name.
    pub flow: String,
    /// Its status as stored (`running` for an interrupted run).
    pub status: String,
    /// Its reason.
    pub reason: Option<String>,
    /// The flow definition it ran.
    pub def: Value,
    /// Its invocation arguments.
    pub args: Map,
    /// Where it ran.
    pub cwd: Option<PathBuf>,
    /// Its phases' states (rebuilt from the journal when it could be replayed).
    pub phases: IndexMap<String, PhaseRecord>,
    /// Its own spend.
    pub usage: Usage,
    /// What it carried from its own parents.
    pub spent_before: Option<Usage>,
    /// How it was launched (`launch` in `run.json`): backend flags to use again.
    pub launch: Option<Value>,
    /// Problems met reading it (a torn journal line): warnings, never errors.
    pub warnings: Vec<String>,
    /// Its finished map items (`item-end` journal lines): node → (key, output).
    pub items: IndexMap<String, (String, String)>,
    /// Its trace's root span (`traceId`, `rootSpanId`), when it was exported.
    pub trace: Option<crate::telemetry::SpanContext>,
}

/// Read a run directory: `run.json`, and the journal when the record may lag behind it.
pub fn open(dir: &Path) -> Result<Parent, String> {
    let path = dir.join("run.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    // Phases straight from the text (no value tree of them) when the text is plainly a run
    // record; else the strict parser, straight into values (no depth limit), and a record
    // it refuses goes through the lenient one before it is called corrupt.
    let (mut record, stored) = match read::run_text(&text) {
        Some(r) => (Value::Object(r.members), Some(r.phases)),
        None => {
            let record = crate::value::parse_json(&text)
                .ok()
                .or_else(|| crate::json::parse(&text).root.map(|r| r.to_value()))
                .ok_or_else(|| {
                    format!(
                        "{} is not valid JSON; the run cannot be resumed",
                        path.display()
                    )
                })?;
            (record, None)
        }
    };
    drop(text);
    let Value::Object(m) = &mut record else {
        return Err(format!("{} is not a run record", path.display()));
    };
    // Taken, not copied: the definition is the record's largest member.
    let def = m.swap_remove("def");
    let args = match m.get_mut("args") {
        Some(Value::Object(a)) => std::mem::take(a),
        _ => Map::default(),
    };
    let text_of = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_owned);
    let run_id = text_of("runId").ok_or_else(|| format!("{} has no runId", path.display()))?;
    let def = def.ok_or_else(|| {
        format!(
            "{} has no flow definition (`def`); only runs recorded with a store can be resumed",
            path.display()
        )
    })?;
    let mut parent = Parent {
        dir: dir.to_path_buf(),
        run_id,
        flow: text_of("flow").unwrap_or_default(),
        status: text_of("status").unwrap_or_default(),
        reason: text_of("reason"),
        def,
        args,
        cwd: text_of("cwd").map(PathBuf::from),
        phases: IndexMap::new(),
        usage: m.get("usage").map(usage_from_value).unwrap_or_default(),
        spent_before: m
            .get("spentBefore")
            .filter(|v| !matches!(v, Value::Null))
            .map(usage_from_value),
        launch: m.get("launch").cloned(),
        warnings: Vec::new(),
        items: IndexMap::new(),
        trace: text_of("traceId")
            .and_then(|t| crate::telemetry::TraceId::parse(&t))
            .zip(text_of("rootSpanId").and_then(|s| crate::telemetry::SpanId::parse(&s)))
            .map(|(trace, span)| crate::telemetry::SpanContext {
                trace,
                span,
                sampled: true,
            }),
    };
    match stored {
        Some(phases) => {
            parent.phases.reserve(phases.len());
            for p in phases {
                let mut r = p.record;
                restore_files(
                    dir,
                    p.output_file.as_deref(),
                    p.json_file.as_deref(),
                    &mut r,
                );
                parent.phases.insert(p.id, r);
            }
        }
        None => {
            if let Some(Value::Object(phases)) = m.get("phases") {
                for (id, v) in phases {
                    if let Some(mut r) = PhaseRecord::from_value(v, PhaseType::Agent) {
                        if let Value::Object(pm) = v {
                            let file = |k: &str| pm.get(k).and_then(Value::as_str);
                            restore_files(dir, file("outputFile"), file("jsonFile"), &mut r);
                        }
                        parent.phases.insert(id.clone(), r);
                    }
                }
            }
        }
    }
    if parent.status == "running" {
        replay_journal(&mut parent);
    }
    if let Ok(bytes) = std::fs::read(dir.join("journal.jsonl")) {
        parent.items = super::journal::item_ends_in(&bytes);
    }
    Ok(parent)
}

/// Outputs kept in files of their own (`outputFile`, `jsonFile`) are read back.
fn restore_files(dir: &Path, output: Option<&str>, json: Option<&str>, r: &mut PhaseRecord) {
    if let Some(f) = output
        && let Ok(t) = std::fs::read_to_string(dir.join(f))
    {
        r.output = t;
    }
    if let Some(f) = json
        && let Ok(t) = std::fs::read_to_string(dir.join(f))
    {
        r.json = crate::json::parse(&t).root.map(|j| j.to_value());
    }
}

/// The journal is the source of truth of a run that did not end: its inputs, replayed into
/// a machine built like the original, give every phase's state at the last line written.
fn replay_journal(parent: &mut Parent) {
    let path = parent.dir.join("journal.jsonl");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    let (inputs, warnings) = super::journal::inputs_lenient(&text);
    parent.warnings.extend(warnings);
    let Some(cfg) = super::journal::start_config(&text) else {
        return;
    };
    let Some(flow) = lower_def(&parent.def, &parent.flow) else {
        return;
    };
    let args = super::journal::start_args(&text).unwrap_or_else(|| parent.args.clone());
    // As the original ran: journaling (its lines are dropped here) decides that keys are
    // computed, so every phase gets its `inputHash` back.
    let cfg = Config {
        journaling: true,
        progress: false,
        ..cfg
    };
    let mut m = Machine::new(Arc::new(flow), args, cfg);
    let mut out = Vec::new();
    let mut finished = None;
    for input in inputs {
        m.handle_into(input, &mut out);
        for c in out.drain(..) {
            if let super::machine::Command::Finish(r) = c {
                finished = Some(r);
            }
        }
    }
    // A run killed after its last input but before its final `run.json`: the machine's own
    // final record.
    let record = match finished {
        Some(r) => *r,
        None => m.snapshot().0.clone(),
    };
    parent.usage = record.usage;
    parent.phases = record.phases;
}

/// Lower a stored definition (no checks: the caller checks the child's).
pub(super) fn lower_def(def: &Value, name: &str) -> Option<crate::flow::Flow> {
    let text = def.to_json();
    let parsed = crate::json::parse(&text);
    let root = parsed.root?;
    crate::flow::lower(
        &root,
        &LowerOptions {
            default_name: Some(name.to_owned()),
        },
    )
    .flow
}

/// `--phase P` and what to change in it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Patch {
    /// The phase id.
    pub phase: String,
    /// `--task`.
    pub task: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--timeout` (ms).
    pub timeout: Option<f64>,
    /// `--idle-timeout` (ms).
    pub idle_timeout: Option<f64>,
}

/// The caps the child runs under (flow or flags), for the budget refusal.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Caps {
    /// Cost cap.
    pub max_usd: Option<f64>,
    /// Token cap.
    pub max_tokens: Option<f64>,
    /// Call cap (SPEC §8.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_calls: Option<u64>,
}

/// The child's plan: its definition and what it carries.
#[derive(Debug)]
pub struct Plan {
    /// The (patched) definition.
    pub def: Value,
    /// What it carries.
    pub carried: Carried,
}

impl Plan {
    /// The refusal of a flag (`--approve`/`--reject` `ids`) for an approval whose deadline
    /// passed by `now_ms` (SPEC §8.8): its `onTimeout` decides, not the flag.
    pub fn expired_flag(&self, ids: &[String], now_ms: u64) -> Option<String> {
        ids.iter().find_map(|id| {
            let at = *self.carried.deadlines.get(id).filter(|&&at| at <= now_ms)?;
            let on = phases_of(&self.def)
                .iter()
                .filter_map(|ph| match ph {
                    Value::Object(m) => Some(m),
                    _ => None,
                })
                .find(|m| m.get("id").and_then(Value::as_str) == Some(id.as_str()))
                .and_then(|m| m.get("onTimeout")?.as_str())
                .unwrap_or("reject");
            Some(format!(
                "approval '{id}' expired at {}; its onTimeout ({on}) decides",
                super::record::timestamp(
                    std::time::UNIX_EPOCH + std::time::Duration::from_millis(at)
                )
            ))
        })
    }
}

/// Whether the parent may be resumed (`status` = its effective status, `interrupted` for a
/// running record whose lock is stale), the budget refusal, the patch; `flag_caps` are
/// `--max-usd/--max-tokens/--max-calls`. `Err` = the message (exit 2).
pub fn plan(
    parent: &Parent,
    status: &str,
    patch: Option<&Patch>,
    flag_caps: Caps,
) -> Result<Plan, String> {
    if !matches!(status, "failed" | "paused" | "interrupted") {
        return Err(format!(
            "Run '{}' has status '{status}' and is not resumable (expected failed or paused)",
            parent.run_id
        ));
    }
    let mut spent = parent.spent_before.unwrap_or_default();
    spent.add(&parent.usage);
    let mut def = parent.def.clone();
    let mut dropped = std::collections::HashSet::new();
    if let Some(p) = patch {
        apply_patch(&mut def, p)?;
        dropped = descendants(&def, &p.phase);
    }
    if let Some(reason) = parent
        .reason
        .as_deref()
        .and_then(|r| r.strip_prefix("budget exceeded: "))
    {
        let budget = def_budget(&def);
        let caps = Caps {
            max_usd: flag_caps.max_usd.or(budget.max_usd),
            max_tokens: flag_caps.max_tokens.or(budget.max_tokens),
            max_calls: flag_caps.max_calls.or(budget.max_calls),
        };
        let mut meter = super::machine::Meter::new(caps.max_usd, caps.max_tokens)
            .with_max_calls(caps.max_calls);
        meter.add(&spent);
        if meter.over().is_none() && meter.calls_full() {
            return Err(format!(
                "Run '{}' stopped at its budget ({reason}); pass --max-calls above the {} call(s) already made to continue",
                parent.run_id,
                meter.calls()
            ));
        }
        if meter.over().is_some() {
            return Err(format!(
                "Run '{}' stopped at its budget ({reason}); pass --max-usd/--max-tokens above the amount already spent to continue",
                parent.run_id
            ));
        }
    }
    let idempotent: std::collections::HashSet<String> = non_idempotent(&def).into_iter().collect();
    let mut carried = Carried {
        parent_run_id: parent.run_id.clone(),
        spent_before: Some(spent),
        parent_trace: parent.trace,
        origin: Some(Origin {
            dir: parent.dir.clone(),
            status: status.to_owned(),
            patch: patch.cloned(),
            caps: flag_caps,
            fork: None,
        }),
        ..Carried::default()
    };
    for (node, state) in &parent.items {
        let (phase, index) = node.rsplit_once('#').unwrap_or((node.as_str(), ""));
        if !dropped.contains(phase)
            && !idempotent.contains(phase)
            && item_agrees(parent, phase, index, &state.0)
        {
            carried.items.insert(node.clone(), state.clone());
        }
    }
    let (ids, grafts) = def_ids(&def);
    let own: std::collections::HashSet<&str> = ids.iter().map(String::as_str).collect();
    let grafts: std::collections::HashSet<&str> = grafts.iter().map(String::as_str).collect();
    carried.deadlines = pending_deadlines(&parent.phases);
    carried.states.reserve(parent.phases.len());
    let mut copied = std::collections::HashSet::new();
    for (id, r) in &parent.phases {
        if r.status != PhaseStatus::Done || dropped.contains(id) || !own.contains(id.as_str()) {
            continue;
        }
        // Stopped short by the budget (items skipped, a loop cut): it runs again, calling
        // only what it did not finish (its finished items are carried above).
        if r.budget_truncated {
            continue;
        }
        // A state the parent had copied (from its own fork or parent) stays copied, whatever
        // its kind: a loop or side effect copied by a fork is never run again by a resume.
        if r.cache_hit.is_some() {
            carried
                .states
                .insert(id.clone(), (ANY_KEY.to_owned(), Arc::new(r.clone())));
            copied.insert(id.clone());
            continue;
        }
        if idempotent.contains(id) {
            carried.rerun_warn.push(id.clone());
            continue;
        }
        if let Some(h) = &r.input_hash {
            let mut r = r.clone();
            if grafts.contains(id.as_str()) && r.sub_run.is_none() {
                r.sub_run = Some(Box::new(grafted(parent, id, &own)));
            }
            carried.states.insert(id.clone(), (h.clone(), Arc::new(r)));
        }
    }
    if !copied.is_empty() {
        carried.fork = Some(Forked {
            nodes: Arc::new(super::machine::ForkNodes {
                parent: parent.run_id.clone(),
                copy: copied,
                set: std::collections::HashSet::new(),
            }),
            fresh: std::collections::HashSet::new(),
            forked_from: Value::Null,
        });
    }
    Ok(Plan { def, carried })
}

/// The deadlines (epoch ms) of the pending approvals among `phases`, by id.
pub(crate) fn pending_deadlines<'a>(
    phases: impl IntoIterator<Item = (&'a String, &'a PhaseRecord)>,
) -> IndexMap<String, u64> {
    phases
        .into_iter()
        .filter_map(|(id, r)| {
            let a = r.approval.as_ref().filter(|a| a.decision == "pending")?;
            let at = super::runs::parse_timestamp(a.expires_at.as_deref()?)?;
            Some((id.clone(), at))
        })
        .collect()
}

/// The fragment a graft expand `id` put into the parent's record — the phases after it
/// named `<id>-<childId>` that the definition does not declare (`own`) — as the sub-run
/// its reused state carries, so the child grafts them again. They are reused with it:
/// zero usage and attempts, `cacheHit: "run-only"`.
pub(super) fn grafted(
    parent: &Parent,
    id: &str,
    own: &std::collections::HashSet<&str>,
) -> super::record::RunRecord {
    let prefix = format!("{id}-");
    let mut phases = IndexMap::new();
    let start = parent.phases.get_index_of(id).map_or(0, |i| i + 1);
    for (pid, r) in parent.phases.iter().skip(start) {
        if own.contains(pid.as_str()) {
            break;
        }
        let Some(cid) = pid.strip_prefix(&prefix) else {
            continue;
        };
        let mut r = r.clone();
        if r.status == PhaseStatus::Done {
            r.usage = Usage::default();
            r.attempts = 0;
            r.cache_hit = Some("run-only");
        }
        phases.insert(cid.to_owned(), r);
    }
    super::record::RunRecord {
        run_id: format!("{}/{id}", parent.run_id),
        flow: id.to_owned(),
        parent_run_id: Some(parent.run_id.clone()),
        status: super::record::RunStatus::Completed,
        reason: None,
        final_output: String::new(),
        output_phase: None,
        args: Map::default(),
        started_at: String::new(),
        ended_at: None,
        usage: Usage::default(),
        spent_before: None,
        warnings: Vec::new(),
        backends: IndexMap::new(),
        phases,
        replay: false,
        store_errors: Vec::new(),
    }
}

/// The definition's phase ids, and those of its graft expands.
pub(super) fn def_ids(def: &Value) -> (Vec<String>, Vec<String>) {
    let mut ids = Vec::new();
    let mut grafts = Vec::new();
    for ph in phases_of(def) {
        let Value::Object(m) = ph else { continue };
        let Some(id) = m.get("id").and_then(Value::as_str) else {
            continue;
        };
        if m.get("type").and_then(Value::as_str) == Some("expand")
            && m.get("expandMode").and_then(Value::as_str) == Some("graft")
        {
            grafts.push(id.to_owned());
        }
        ids.push(id.to_owned());
    }
    (ids, grafts)
}

/// Whether the parent's record agrees that map item `index` of `phase` ended `done` under
/// `key`: its `items` entry carries the same `inputHash` (a journal line that disagrees
/// with the record — a later run of the same map, a journal not of this record — is not
/// trusted). A record without the key (a phase nested in a sub-flow, a record written
/// before items carried keys) leaves the journal's word standing.
pub(super) fn item_agrees(parent: &Parent, phase: &str, index: &str, key: &str) -> bool {
    let entry = parent
        .phases
        .get(phase)
        .and_then(|r| r.items.as_ref())
        .and_then(|items| {
            let i: usize = index.parse().ok()?;
            items.iter().find(|it| it.index == i)
        });
    match entry.and_then(|it| it.input_hash.as_deref().map(|h| (it.status, h))) {
        Some((status, h)) => status == PhaseStatus::Done && h == key,
        None => true,
    }
}

/// The phases array of a definition.
fn phases_of(def: &Value) -> &[Value] {
    match def {
        Value::Array(a) => a,
        Value::Object(m) => match m.get("phases") {
            Some(Value::Array(a)) => a,
            _ => &[],
        },
        _ => &[],
    }
}

/// The phases array of a definition, to patch.
fn phases_mut(def: &mut Value) -> Option<&mut Vec<Value>> {
    match def {
        Value::Array(a) => Some(a),
        Value::Object(m) => match m.get_mut("phases") {
            Some(Value::Array(a)) => Some(a),
            _ => None,
        },
        _ => None,
    }
}

pub(super) fn apply_patch(def: &mut Value, p: &Patch) -> Result<(), String> {
    if p.task.is_none() && p.model.is_none() && p.timeout.is_none() && p.idle_timeout.is_none() {
        return Err(format!(
            "--phase {} needs at least one of --task, --model, --timeout, --idle-timeout",
            p.phase
        ));
    }
    let phases = phases_mut(def).ok_or("the stored definition has no phases array")?;
    let ids: Vec<String> = phases
        .iter()
        .filter_map(|ph| match ph {
            Value::Object(m) => m.get("id").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        })
        .collect();
    let Some(Value::Object(m)) = phases.iter_mut().find(|ph| match ph {
        Value::Object(m) => m.get("id").and_then(Value::as_str) == Some(p.phase.as_str()),
        _ => false,
    }) else {
        return Err(format!(
            "--phase {}: the run's flow has no such phase (its phases: {})",
            p.phase,
            ids.join(", ")
        ));
    };
    if let Some(t) = &p.task {
        m.insert("task".into(), Value::from(t.as_str()));
    }
    if let Some(t) = &p.model {
        m.insert("model".into(), Value::from(t.as_str()));
    }
    if let Some(t) = p.timeout {
        m.insert("timeout".into(), Value::Number(t));
    }
    if let Some(t) = p.idle_timeout {
        m.insert("idleTimeout".into(), Value::Number(t));
    }
    Ok(())
}

/// `phase` and every phase that depends on it, directly or not (edges: `dependsOn ∪ from`).
pub(super) fn descendants(def: &Value, phase: &str) -> std::collections::HashSet<String> {
    // dependency → the phases that name it.
    let mut dependents: HashMap<&str, Vec<&str>> = HashMap::new();
    for ph in phases_of(def) {
        let Value::Object(m) = ph else { continue };
        let Some(id) = m.get("id").and_then(Value::as_str) else {
            continue;
        };
        for k in ["dependsOn", "from"] {
            match m.get(k) {
                Some(Value::Array(a)) => {
                    for d in a.iter().filter_map(Value::as_str) {
                        dependents.entry(d).or_default().push(id);
                    }
                }
                Some(Value::String(d)) => dependents.entry(d).or_default().push(id),
                _ => {}
            }
        }
    }
    let mut out = std::collections::HashSet::from([phase.to_owned()]);
    let mut todo = vec![phase];
    while let Some(p) = todo.pop() {
        for &d in dependents.get(p).map(Vec::as_slice).unwrap_or(&[]) {
            if out.insert(d.to_owned()) {
                todo.push(d);
            }
        }
    }
    out
}

/// Phase ids with `idempotent: false`.
pub(super) fn non_idempotent(def: &Value) -> Vec<String> {
    phases_of(def)
        .iter()
        .filter_map(|ph| {
            let Value::Object(m) = ph else { return None };
            matches!(m.get("idempotent"), Some(Value::Bool(false)))
                .then(|| m.get("id")?.as_str().map(str::to_owned))?
        })
        .collect()
}

/// The definition's `budget` caps.
pub(super) fn def_budget(def: &Value) -> Caps {
    let Value::Object(m) = def else {
        return Caps::default();
    };
    let Some(Value::Object(b)) = m.get("budget") else {
        return Caps::default();
    };
    let n = |k: &str| match b.get(k) {
        Some(Value::Number(x)) => Some(*x),
        _ => None,
    };
    Caps {
        max_usd: n("maxUSD").or(n("maxUsd")),
        max_tokens: n("maxTokens"),
        max_calls: n("maxCalls").filter(|c| *c >= 1.0).map(|c| c as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{FnAgent, Outcome};
    use crate::run::{Interpreter, RunOptions, RunSettings, RunStatus};

    const FLOW: &str = r#"{"name": "r", "phases": [
        {"id": "a", "task": "one"},
        {"id": "b", "dependsOn": ["a"], "task": "two {steps.a.output}"},
        {"id": "c", "dependsOn": ["b"], "task": "three {steps.b.output}", "idempotent": false},
        {"id": "d", "dependsOn": ["c"], "task": "four"}
    ]}"#;

    fn run(root: &Path) -> crate::run::RunRecord {
        let agent = FnAgent::new("echo", |req| Outcome::ok(format!("<{}>", req.prompt)));
        Interpreter::with_agent(agent)
            .options(RunOptions {
                settings: RunSettings {
                    project_root: Some(root.to_path_buf()),
                    ..RunSettings::default()
                },
                cwd: Some(root.to_path_buf()),
                ..RunOptions::default()
            })
            .eval_text("r", FLOW, Map::default())
            .expect("runs")
    }

    fn run_dir(root: &Path, id: &str) -> PathBuf {
        root.join(".tfc/runs/r").join(id)
    }

    #[test]
    fn a_completed_run_is_refused_verbatim() {
        let tmp = tempfile::tempdir().expect("temp");
        let rec = run(tmp.path());
        assert_eq!(rec.status, RunStatus::Completed);
        let parent = open(&run_dir(tmp.path(), &rec.run_id)).expect("opens");
        let err = plan(&parent, "completed", None, Caps::default()).expect_err("refused");
        assert_eq!(
            err,
            format!(
                "Run '{}' has status 'completed' and is not resumable (expected failed or paused)",
                rec.run_id
            )
        );
        // Every phase recorded its key the moment it ended.
        for p in parent.phases.values() {
            assert!(p.input_hash.as_ref().is_some_and(|h| h.len() == 16));
        }
    }

    #[test]
    fn an_interrupted_run_is_rebuilt_from_its_journal_despite_a_torn_line() {
        let tmp = tempfile::tempdir().expect("temp");
        let rec = run(tmp.path());
        let dir = run_dir(tmp.path(), &rec.run_id);
        // What a kill leaves: the journal up to b's end plus half a line, and a run.json
        // that still says `running` with nothing done (its rewrite lagged).
        let journal = std::fs::read_to_string(dir.join("journal.jsonl")).expect("journal");
        let cut = journal
            .find("{\"type\":\"phase-end\",\"ts\"")
            .and_then(|first| {
                journal[first + 1..]
                    .find("{\"type\":\"phase-end\"")
                    .map(|i| i + first + 1)
            })
            .expect("b's phase-end");
        let end = cut + journal[cut..].find('\n').expect("line end") + 1;
        let torn = format!("{}{{\"type\":\"input\",\"ts\":\"2026", &journal[..end]);
        std::fs::write(dir.join("journal.jsonl"), torn).expect("write");
        let mut stale = rec.to_value();
        if let Value::Object(m) = &mut stale {
            m.insert("status".into(), Value::from("running"));
            m.insert("phases".into(), Value::Object(Map::default()));
            let text = std::fs::read_to_string(dir.join("run.json")).expect("run.json");
            let stored = crate::json::parse(&text).root.expect("json").to_value();
            if let Value::Object(s) = &stored {
                m.insert("def".into(), s.get("def").cloned().expect("def"));
            }
        }
        std::fs::write(dir.join("run.json"), stale.to_json()).expect("write");
        let parent = open(&dir).expect("opens");
        assert_eq!(parent.warnings.len(), 1, "{:?}", parent.warnings);
        assert!(parent.warnings[0].contains("incomplete"));
        let status = |id: &str| parent.phases.get(id).map(|p| p.status);
        assert_eq!(status("a"), Some(PhaseStatus::Done));
        assert_eq!(status("b"), Some(PhaseStatus::Done));
        assert_ne!(status("c"), Some(PhaseStatus::Done));
        assert_eq!(parent.phases["b"].output, "<two <one>>");
        let p = plan(&parent, "interrupted", None, Caps::default()).expect("plan");
        let mut reused: Vec<&String> = p.carried.states.keys().collect();
        reused.sort();
        assert_eq!(reused, vec!["a", "b"]);
        assert_eq!(p.carried.parent_run_id, rec.run_id);
    }

    #[test]
    fn a_run_killed_after_its_last_input_is_rebuilt_whole() {
        let tmp = tempfile::tempdir().expect("temp");
        let rec = run(tmp.path());
        let dir = run_dir(tmp.path(), &rec.run_id);
        let text = std::fs::read_to_string(dir.join("run.json")).expect("run.json");
        let stale = text.replacen("\"status\": \"completed\"", "\"status\": \"running\"", 1);
        assert_ne!(stale, text);
        std::fs::write(dir.join("run.json"), stale).expect("write");
        let parent = open(&dir).expect("opens");
        assert!(parent.warnings.is_empty(), "{:?}", parent.warnings);
        assert_eq!(parent.phases.len(), 4);
        assert!(
            parent
                .phases
                .values()
                .all(|p| p.status == PhaseStatus::Done)
        );
        let p = plan(&parent, "interrupted", None, Caps::default()).expect("plan");
        assert_eq!(
            p.carried.states.len(),
            3,
            "all but the idempotent:false phase"
        );
    }

    #[test]
    fn patches_drop_the_phase_and_its_descendants_and_side_effects_rerun() {
        let tmp = tempfile::tempdir().expect("temp");
        let rec = run(tmp.path());
        let parent = open(&run_dir(tmp.path(), &rec.run_id)).expect("opens");
        let patch = Patch {
            phase: "b".into(),
            model: Some("bigger".into()),
            ..Patch::default()
        };
        let p = plan(&parent, "failed", Some(&patch), Caps::default()).expect("plan");
        let keys: Vec<&String> = p.carried.states.keys().collect();
        assert_eq!(keys, vec!["a"]);
        // c is idempotent:false: it runs again with a warning, never reused.
        assert!(
            p.carried.rerun_warn.is_empty(),
            "c was dropped by the patch"
        );
        let p = plan(&parent, "failed", None, Caps::default()).expect("plan");
        assert_eq!(p.carried.rerun_warn, vec!["c"]);
        assert!(!p.carried.states.contains_key("c"));
        let Value::Object(def) = &plan(&parent, "paused", Some(&patch), Caps::default())
            .expect("plan")
            .def
        else {
            panic!("object def");
        };
        let Some(Value::Array(phases)) = def.get("phases") else {
            panic!("phases");
        };
        assert!(phases[1].to_json().contains("\"model\":\"bigger\""));
    }
}
