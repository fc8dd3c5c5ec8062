//! Fork (SPEC §10.4 "Fork"): a new run from any ended run that re-runs only what it must.
//! The re-run set R is each `--from P` and its descendants, the descendants of each `--set`
//! phase, the phases that read an argument whose value changed and their descendants, and
//! the gates that blocked and approvals that were rejected, pending or expired in the parent
//! (and their descendants). Every other `done` phase is copied as it is — loops, tournaments
//! and `idempotent: false` phases too: a fork never fires a side effect again unless asked.
//! `--set` phases are given their output (checked against their contract first).
//!
//! The plan is made here from the parent's directory alone, so a Temporal worker makes the
//! same one again ([`replan`]); the machine learns only which phases are copied or set
//! ([`ForkNodes`]) and asks the driver for their states like any reuse.

use std::collections::HashSet;
use std::sync::Arc;

use indexmap::IndexMap;

use super::machine::ForkNodes;
use super::record::{PhaseRecord, PhaseStatus};
use super::resume::{
    ANY_KEY, Caps, Carried, ForkRequest, Forked, Origin, Parent, Patch, Plan, SetOutput,
    apply_patch, def_budget, def_ids, grafted, item_agrees, lower_def, open, pending_deadlines,
};
use crate::agent::Usage;
use crate::flow::{Flow, Invocation, OutputMode, Phase, PhaseType};
use crate::value::{Map, Value};

/// Why a phase of the fork runs again (or not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Copied from the parent as it is.
    Copy,
    /// Its output was given with `--set`.
    Set,
    /// It runs: the reason.
    Run(Why),
}

/// Why a phase of a fork runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// It is a `--from` phase or depends on one.
    From,
    /// It is the `--phase` patched, or depends on it.
    Patch,
    /// It depends on a `--set` phase.
    AfterSet,
    /// It reads an argument whose value changed, or depends on such a phase.
    Args,
    /// A gate that blocked or an approval left undecided, or a phase after one.
    Undecided,
    /// It ended `done` but cut short by the budget (items skipped, a loop cut).
    Truncated,
    /// It failed in the parent.
    Failed,
    /// It was skipped in the parent.
    Skipped,
    /// It had started but not ended in the parent.
    NotFinished,
    /// The parent never reached it.
    NotReached,
}

impl Why {
    /// How `tfc fork --plan` and `tfc_fork` say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Why::From => "--from",
            Why::Patch => "--phase",
            Why::AfterSet => "after --set",
            Why::Args => "arguments changed",
            Why::Undecided => "blocked or undecided",
            Why::Truncated => "cut short by the budget",
            Why::Failed => "failed",
            Why::Skipped => "skipped",
            Why::NotFinished => "not finished",
            Why::NotReached => "not reached",
        }
    }

    /// Whether every item of a map that runs for this reason is called again (else the
    /// items the parent finished are reused, as a resume reuses them).
    fn reruns_all(self) -> bool {
        matches!(
            self,
            Why::From | Why::Patch | Why::AfterSet | Why::Args | Why::Undecided
        )
    }
}

impl Action {
    /// How `tfc fork --plan` names it.
    pub fn label(&self) -> String {
        match self {
            Action::Copy => "copy".to_owned(),
            Action::Set => "set".to_owned(),
            Action::Run(why) => format!("run ({})", why.as_str()),
        }
    }
}

/// A fork, planned: the child's definition and what it carries, its arguments, and what
/// happens to each phase.
#[derive(Debug)]
pub struct Fork {
    /// The definition and the carried states.
    pub plan: Plan,
    /// The child's arguments (the parent's, with the overrides).
    pub args: Map,
    /// Each top-level phase, in definition order, and what the fork does with it.
    pub actions: IndexMap<String, Action>,
    /// The maps that run again over the same items as in the parent (every dependency copied,
    /// no argument changed): their item count, for the plan's bounds.
    pub known_items: IndexMap<String, u64>,
}

/// The statuses a fork starts from.
const ENDED: [&str; 5] = ["completed", "failed", "blocked", "paused", "interrupted"];

/// Plan a fork of `parent` (`status`: its effective status, `interrupted` for a running
/// record whose lock is stale). `Err`: the message of a refusal (exit 2, nothing runs).
pub fn plan(
    parent: &Parent,
    status: &str,
    req: &ForkRequest,
    patch: Option<&Patch>,
    caps: Caps,
) -> Result<Fork, String> {
    if !ENDED.contains(&status) {
        return Err(format!(
            "Run '{}' has status '{status}': a fork starts from an ended run (completed, failed, blocked, paused or interrupted); wait for it to end, or stop it first",
            parent.run_id
        ));
    }
    let mut def = parent.def.clone();
    if let Some(p) = patch {
        apply_patch(&mut def, p)?;
    }
    let flow = lower_def(&def, &parent.flow).ok_or_else(|| {
        format!(
            "Run '{}': its stored flow definition cannot be read, so it cannot be forked",
            parent.run_id
        )
    })?;
    let graph = Graph::new(&flow);
    for p in &req.from {
        graph.index(p, "--from", &parent.run_id)?;
    }
    for s in &req.set {
        graph.index(&s.phase, "--set", &parent.run_id)?;
    }
    let (args, changed) = child_args(&flow, parent, req)?;
    let from_set = graph.closure(req.from.iter().filter_map(|p| graph.id(p)));
    let set: HashSet<usize> = req.set.iter().filter_map(|s| graph.id(&s.phase)).collect();
    let why = rerun_set(&graph, parent, req, patch, &changed, &from_set, &set)?;
    let actions = actions_of(&flow, parent, &set, &why);
    for s in &req.set {
        unreachable_set(&flow, &graph, parent, s, &actions)?;
    }
    let mut carried = Carried {
        parent_run_id: parent.run_id.clone(),
        parent_trace: parent.trace,
        deadlines: pending_deadlines(&parent.phases),
        origin: Some(Origin {
            dir: parent.dir.clone(),
            status: status.to_owned(),
            patch: patch.cloned(),
            caps,
            fork: Some(req.clone()),
        }),
        ..Carried::default()
    };
    let (nodes, spent) = copy_states(parent, &def, &actions, &mut carried);
    for s in group_sets(&req.set) {
        let i = graph.id(&s[0].phase).unwrap_or_default();
        set_output(&flow.phases[i], parent, &s, &mut carried)?;
    }
    refuse_over_caps(parent, &def, caps, &spent)?;
    carried.spent_before = Some(spent);
    carried.fork = Some(Forked {
        nodes: Arc::new(nodes),
        fresh: from_set
            .iter()
            .map(|&i| flow.phases[i].id.clone())
            .collect(),
        forked_from: forked_from(parent, req),
    });
    let known_items = known_items(&flow, parent, &actions);
    Ok(Fork {
        plan: Plan { def, carried },
        args,
        actions,
        known_items,
    })
}

/// The re-run set R (SPEC §10.4 "Fork"), each phase with the reason it runs: the closures of
/// `--from` (`from_set`, already closed), `--phase`, the `--set` phases' dependents, the
/// readers of `changed` arguments, and blocked gates and undecided approvals — never a `--set`
/// phase (`set`), which may not sit inside a `--from`'s closure.
fn rerun_set(
    graph: &Graph<'_>,
    parent: &Parent,
    req: &ForkRequest,
    patch: Option<&Patch>,
    changed: &HashSet<String>,
    from_set: &HashSet<usize>,
    set: &HashSet<usize>,
) -> Result<IndexMap<usize, Why>, String> {
    let flow = graph.flow;
    for s in &req.set {
        let i = graph.id(&s.phase).unwrap_or_default();
        if from_set.contains(&i) {
            let by = req
                .from
                .iter()
                .find(|f| graph.id(f).is_some_and(|f| graph.closure([f]).contains(&i)))
                .map_or("", String::as_str);
            return Err(format!(
                "--set {0}: '{0}' runs again because of --from {by} (it is {by} or depends on it), so its output cannot be set; drop one of the two",
                s.phase
            ));
        }
    }
    let mut why: IndexMap<usize, Why> = IndexMap::new();
    let mut seed = |ids: HashSet<usize>, reason: Why| {
        for i in graph.closure(ids) {
            why.entry(i).or_insert(reason);
        }
    };
    seed(from_set.clone(), Why::From);
    if let Some(p) = patch {
        seed(graph.id(&p.phase).into_iter().collect(), Why::Patch);
    }
    let set_children = set
        .iter()
        .flat_map(|&i| graph.dependents[i].iter().copied())
        .collect();
    seed(set_children, Why::AfterSet);
    if !changed.is_empty() {
        let reads = (0..flow.phases.len())
            .filter(|&i| reads_any(&flow.phases[i], changed))
            .collect();
        seed(reads, Why::Args);
    }
    let undecided = (0..flow.phases.len())
        .filter(|&i| {
            parent.phases.get(&flow.phases[i].id).is_some_and(|r| {
                r.gate.as_ref().is_some_and(|g| g.verdict == "block")
                    || r.approval
                        .as_ref()
                        .is_some_and(|a| matches!(a.decision, "reject" | "pending" | "expired"))
            })
        })
        .collect();
    seed(undecided, Why::Undecided);
    // A set phase is set, never re-run, whatever else reaches it.
    why.retain(|i, _| !set.contains(i));
    Ok(why)
}

/// What the fork does with each phase: set, run (R, or not `done` in the parent), or copy.
fn actions_of(
    flow: &Flow,
    parent: &Parent,
    set: &HashSet<usize>,
    why: &IndexMap<usize, Why>,
) -> IndexMap<String, Action> {
    let mut actions = IndexMap::new();
    for (i, p) in flow.phases.iter().enumerate() {
        let action = if set.contains(&i) {
            Action::Set
        } else if let Some(reason) = why.get(&i) {
            Action::Run(*reason)
        } else {
            match parent.phases.get(&p.id) {
                Some(r) if r.status == PhaseStatus::Done && !r.budget_truncated => Action::Copy,
                Some(r) if r.status == PhaseStatus::Done => Action::Run(Why::Truncated),
                Some(r) => Action::Run(not_done(r.status)),
                None => Action::Run(Why::NotReached),
            }
        };
        actions.insert(p.id.clone(), action);
    }
    actions
}

/// The parent's states of the copied phases into `carried` (a graft expand with its grafted
/// phases), and the finished items of maps that run again for want of their own end (cut
/// short, failed) as a resume keeps them — not those R re-runs. The machine's side (the ids
/// copied and set) and what the copies had spent.
fn copy_states(
    parent: &Parent,
    def: &Value,
    actions: &IndexMap<String, Action>,
    carried: &mut Carried,
) -> (ForkNodes, Usage) {
    let (own_ids, grafts) = def_ids(def);
    let own: HashSet<&str> = own_ids.iter().map(String::as_str).collect();
    let grafts: HashSet<&str> = grafts.iter().map(String::as_str).collect();
    let mut spent = Usage::default();
    let mut nodes = ForkNodes {
        parent: parent.run_id.clone(),
        ..ForkNodes::default()
    };
    for (id, action) in actions {
        match action {
            Action::Copy => {
                let Some(r) = parent.phases.get(id) else {
                    continue;
                };
                let mut r = r.clone();
                if grafts.contains(id.as_str()) && r.sub_run.is_none() {
                    r.sub_run = Some(Box::new(grafted(parent, id, &own)));
                }
                spent.add(&r.usage);
                spent.calls += u64::from(r.agent_calls());
                carried
                    .states
                    .insert(id.clone(), (ANY_KEY.to_owned(), Arc::new(r)));
                nodes.copy.insert(id.clone());
            }
            Action::Set => {
                nodes.set.insert(id.clone());
            }
            Action::Run(_) => {}
        }
    }
    for (node, state) in &parent.items {
        let (phase, index) = node.rsplit_once('#').unwrap_or((node.as_str(), ""));
        let keep = match actions.get(phase) {
            Some(Action::Run(why)) => !why.reruns_all(),
            _ => false,
        };
        if keep && item_agrees(parent, phase, index, &state.0) {
            carried.items.insert(node.clone(), state.clone());
        }
    }
    (nodes, spent)
}

/// The maps that run again over the parent's items (every dependency copied, no argument
/// changed), with their number.
fn known_items(
    flow: &Flow,
    parent: &Parent,
    actions: &IndexMap<String, Action>,
) -> IndexMap<String, u64> {
    flow.phases
        .iter()
        .filter(|p| {
            p.ty() == PhaseType::Map
                && matches!(actions.get(&p.id), Some(Action::Run(why)) if *why != Why::Args)
        })
        .filter(|p| {
            p.deps
                .iter()
                .all(|d| actions.get(&flow.phases[d.index()].id) == Some(&Action::Copy))
        })
        .filter_map(|p| {
            let n = parent.phases.get(&p.id)?.items.as_ref()?.len();
            Some((p.id.clone(), n as u64))
        })
        .collect()
}

/// Plan a resumed or forked run again from its [`Origin`] (a Temporal worker's lookups):
/// the same parent gives the same states.
pub fn replan(origin: &Origin) -> Result<Carried, String> {
    let parent = open(&origin.dir)?;
    match &origin.fork {
        Some(req) => Ok(plan(
            &parent,
            &origin.status,
            req,
            origin.patch.as_ref(),
            origin.caps,
        )?
        .plan
        .carried),
        None => {
            Ok(
                super::resume::plan(&parent, &origin.status, origin.patch.as_ref(), origin.caps)?
                    .carried,
            )
        }
    }
}

/// The caps (flags, else the flow's `budget`) apply to the total, the copied phases' spend
/// included (SPEC §8.7, §10.4): a fork that would start over them is refused.
fn refuse_over_caps(
    parent: &Parent,
    def: &Value,
    flags: Caps,
    spent: &Usage,
) -> Result<(), String> {
    let budget = def_budget(def);
    let mut meter = super::machine::Meter::new(
        flags.max_usd.or(budget.max_usd),
        flags.max_tokens.or(budget.max_tokens),
    )
    .with_max_calls(flags.max_calls.or(budget.max_calls));
    meter.add(spent);
    if meter.calls_full() {
        return Err(format!(
            "the phases copied from run '{}' made {} call(s), which already reaches the call cap; pass --max-calls above {} (the cap counts the copied calls too)",
            parent.run_id,
            meter.calls(),
            meter.calls()
        ));
    }
    if let Some(reason) = meter.over() {
        return Err(format!(
            "the phases copied from run '{}' already spent over the budget ({reason}); pass --max-usd/--max-tokens above the amount they spent",
            parent.run_id
        ));
    }
    Ok(())
}

/// How a phase that did not end `done` is described.
fn not_done(s: PhaseStatus) -> Why {
    match s {
        PhaseStatus::Failed => Why::Failed,
        PhaseStatus::Skipped => Why::Skipped,
        _ => Why::NotFinished,
    }
}

/// The child's arguments — the parent's, overridden — and the names whose value changed.
fn child_args(
    flow: &Flow,
    parent: &Parent,
    req: &ForkRequest,
) -> Result<(Map, HashSet<String>), String> {
    let mut args = parent.args.clone();
    let mut changed = HashSet::new();
    let json = match req.args.as_deref().map(crate::value::parse_json) {
        None => Map::default(),
        Some(Ok(v)) => v
            .into_object()
            .ok_or_else(|| "--args must be a JSON object".to_owned())?,
        Some(Err(_)) => return Err("--args is not valid JSON".to_owned()),
    };
    let inv = Invocation {
        json,
        pairs: req.pairs.clone(),
        positional: None,
    };
    let (given, diags) = crate::flow::resolve_invocation(flow, &inv);
    if let Some(d) = diags.iter().find(|d| d.is_error()) {
        return Err(format!("{}: {}", d.code.as_str(), d.message));
    }
    for (k, v) in given {
        if args.get(&k) != Some(&v) {
            changed.insert(k.clone());
        }
        args.insert(k, v);
    }
    // As `tfc check` will take them: an unknown or missing argument is refused here, before
    // anything starts (an MCP caller gets it as the tool's error).
    let reads = crate::check::ArgReads::of(flow);
    if let Err(problems) = crate::flow::resolve_args(flow, args.clone(), |n| reads.reads(n)) {
        let lines: Vec<String> = problems
            .iter()
            .map(|p| format!("{}: {}", p.code.as_str(), p.message))
            .collect();
        return Err(lines.join("; "));
    }
    Ok((args, changed))
}

/// Whether any text, condition or `cwd` of `p` reads one of the `names` arguments (or the
/// whole `args` object).
fn reads_any(p: &Phase, names: &HashSet<String>) -> bool {
    let hits = |text: &str| match text.strip_prefix("args") {
        Some("") => true,
        Some(rest) => {
            let rest = rest.trim_start_matches('.');
            let name = rest.split(['.', '[']).next().unwrap_or_default();
            names.contains(name)
        }
        None => false,
    };
    let mut found = false;
    p.each_text(|_, t| {
        found = found || t.template.paths().iter().any(|path| hits(&path.text));
    });
    found
        || p.conditions().iter().any(|(_, c)| {
            c.parsed
                .as_ref()
                .is_ok_and(|c| c.refs().any(|(_, path)| hits(&path.text)))
        })
        || matches!(p.cwd.as_deref().map(|c| &c.value), Some(crate::flow::Cwd::Arg(a)) if names.contains(a.as_str()))
}

/// The `--set`s grouped by phase, in the order first given (`P#0`, `P#2` together).
fn group_sets(sets: &[SetOutput]) -> Vec<Vec<SetOutput>> {
    let mut groups: IndexMap<&str, Vec<SetOutput>> = IndexMap::new();
    for s in sets {
        groups.entry(s.phase.as_str()).or_default().push(s.clone());
    }
    groups.into_values().collect()
}

/// A `--set` that nothing in the fork would reach: the phase was skipped in the parent by
/// its `when`, and none of its dependencies changes.
fn unreachable_set(
    flow: &Flow,
    graph: &Graph,
    parent: &Parent,
    s: &SetOutput,
    actions: &IndexMap<String, Action>,
) -> Result<(), String> {
    let Some(i) = graph.id(&s.phase) else {
        return Ok(());
    };
    let p = &flow.phases[i];
    let skipped = parent
        .phases
        .get(&p.id)
        .is_some_and(|r| r.status == PhaseStatus::Skipped);
    let moves = p.deps.iter().any(|d| {
        !matches!(
            actions.get(&flow.phases[d.index()].id),
            Some(Action::Copy) | None
        )
    });
    if skipped && p.when.is_some() && !moves {
        return Err(format!(
            "--set {0}: '{0}' was skipped in run '{1}' (its `when` was false) and nothing it depends on changes in the fork, so it would be skipped again and its output never used",
            s.phase, parent.run_id
        ));
    }
    Ok(())
}

/// Record the `--set`s of one phase in `carried`: a map's items as reusable item states,
/// any other phase as a `done` state (its JSON checked against its contract first).
fn set_output(
    p: &Phase,
    parent: &Parent,
    sets: &[SetOutput],
    carried: &mut Carried,
) -> Result<(), String> {
    let id = &p.id;
    if p.ty() != PhaseType::Map {
        if let Some(s) = sets.iter().find(|s| s.item.is_some()) {
            return Err(format!(
                "--set {id}#{}: '{id}' is not a map (its type is {}); only a map's items can be set one at a time (use --set {id}=…)",
                s.item.unwrap_or_default(),
                p.ty().as_str()
            ));
        }
        let text = &sets[sets.len() - 1].text;
        let mut r = PhaseRecord::new(p.ty());
        r.status = PhaseStatus::Done;
        r.output = text.clone();
        r.json = checked_json(p, text, &format!("--set {id}"))?;
        carried
            .states
            .insert(id.clone(), (ANY_KEY.to_owned(), Arc::new(r)));
        return Ok(());
    }
    let count = parent
        .phases
        .get(id)
        .and_then(|r| r.items.as_ref())
        .map_or(0, Vec::len);
    let mut outputs: Vec<Option<String>> = (0..count)
        .map(|j| parent_item(parent, id, j).map(str::to_owned))
        .collect();
    for s in sets {
        match s.item {
            Some(j) if j < count => outputs[j] = Some(s.text.clone()),
            Some(j) => {
                return Err(format!(
                    "--set {id}#{j}: map '{id}' had {count} item(s) in run '{}'{}",
                    parent.run_id,
                    if count == 0 {
                        String::new()
                    } else {
                        format!(" (indexes 0 to {})", count - 1)
                    }
                ));
            }
            None => {
                let items = match &crate::eval::safe_parse::safe_parse(&s.text).value {
                    Some(Value::Array(a)) => a.clone(),
                    _ => {
                        return Err(format!(
                            "--set {id}: '{id}' is a map; give its outputs as a JSON array (one per item), or one item's with --set {id}#INDEX=…"
                        ));
                    }
                };
                if items.len() != count {
                    return Err(format!(
                        "--set {id}: map '{id}' had {count} item(s) in run '{}', and the array has {}; give one output per item",
                        parent.run_id,
                        items.len()
                    ));
                }
                for (j, v) in items.iter().enumerate() {
                    outputs[j] = Some(match v {
                        Value::String(t) => t.clone(),
                        other => other.to_json(),
                    });
                }
            }
        }
    }
    for (j, out) in outputs.into_iter().enumerate() {
        let out = out.ok_or_else(|| {
            format!(
                "--set {id}#…: item {j} of map '{id}' has no recorded output in run '{}' (it did not finish), so the map cannot be rebuilt from it; set the whole map with --set {id}=[…]",
                parent.run_id
            )
        })?;
        checked_json(p, &out, &format!("--set {id}#{j}"))?;
        carried.items.insert(
            format!("{id}#{j}"),
            (super::phases::SET_ITEM.to_owned(), out),
        );
    }
    Ok(())
}

/// A finished item's output in the parent: its journal line, else its value in the map's
/// `json`.
fn parent_item<'p>(parent: &'p Parent, id: &str, j: usize) -> Option<&'p str> {
    if let Some((_, out)) = parent.items.get(&format!("{id}#{j}")) {
        return Some(out);
    }
    let r = parent.phases.get(id)?;
    let done = r
        .items
        .as_ref()?
        .iter()
        .any(|it| it.index == j && it.status == PhaseStatus::Done);
    match (done, &r.json) {
        (true, Some(Value::Array(a))) => match a.get(j)? {
            Value::String(s) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// The parsed output of a phase given `text`, checked against its contract (SPEC §3.15):
/// `None` for a text phase without one.
fn checked_json(p: &Phase, text: &str, what: &str) -> Result<Option<Value>, String> {
    if p.output != OutputMode::Json && p.expect.is_none() {
        return Ok(None);
    }
    let parsed = crate::eval::safe_parse::safe_parse(text).value;
    if let Some(contract) = &p.expect
        && let Err(v) = super::contract::check_output(contract, text)
    {
        return Err(format!(
            "{what}: the output does not meet the phase's contract (`expect`): {}",
            super::contract::violation_error(&v)
        ));
    }
    match parsed {
        Some(v) => Ok(Some(v)),
        None if p.output == OutputMode::Json => Err(format!(
            "{what}: '{}' has `output: \"json\"` and the text given is not JSON",
            p.id
        )),
        None => Ok(None),
    }
}

/// The child's `forkedFrom`.
fn forked_from(parent: &Parent, req: &ForkRequest) -> Value {
    let mut m = Map::default();
    m.insert("runId".into(), Value::from(parent.run_id.as_str()));
    m.insert(
        "from".into(),
        Value::Array(req.from.iter().map(|p| Value::from(p.as_str())).collect()),
    );
    m.insert(
        "set".into(),
        Value::Array(
            req.set
                .iter()
                .map(|s| match s.item {
                    Some(i) => Value::from(format!("{}#{i}", s.phase)),
                    None => Value::from(s.phase.as_str()),
                })
                .collect(),
        ),
    );
    Value::Object(m)
}

/// The flow's edges, both ways, by index.
struct Graph<'f> {
    flow: &'f Flow,
    dependents: Vec<Vec<usize>>,
}

impl<'f> Graph<'f> {
    fn new(flow: &'f Flow) -> Graph<'f> {
        let mut dependents = vec![Vec::new(); flow.phases.len()];
        for (i, p) in flow.phases.iter().enumerate() {
            for d in &p.deps {
                dependents[d.index()].push(i);
            }
        }
        Graph { flow, dependents }
    }

    fn id(&self, id: &str) -> Option<usize> {
        self.flow.phases.iter().position(|p| p.id == id)
    }

    /// The index of phase `id`, or the refusal naming the flag and the nearest id.
    fn index(&self, id: &str, flag: &str, run: &str) -> Result<usize, String> {
        self.id(id).ok_or_else(|| {
            let ids = self.flow.phases.iter().map(|p| p.id.as_str());
            let hint = crate::diag::did_you_mean(id, ids)
                .map(|s| format!("; did you mean '{s}'?"))
                .unwrap_or_default();
            format!("{flag} {id}: run '{run}' has no phase '{id}'{hint}")
        })
    }

    /// `seeds` and every phase that depends on one, directly or not.
    fn closure(&self, seeds: impl IntoIterator<Item = usize>) -> HashSet<usize> {
        let mut out = HashSet::new();
        let mut todo: Vec<usize> = seeds.into_iter().collect();
        while let Some(i) = todo.pop() {
            if out.insert(i) {
                todo.extend(self.dependents[i].iter().copied());
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "fork_tests.rs"]
mod tests;
