//! Deterministic simulation of the run machine: a seeded generator of flows (all twelve
//! kinds, joins, `optional`, `when`, retries, budgets, concurrency caps) and a simulated
//! world that answers the machine's commands in a random order with random latencies,
//! transient and hard failures, timeouts, panics, interrupts and approval decisions — and
//! results of cancelled calls that arrive anyway, after the cancel request (as from a durable
//! engine). After every input the invariants of SPEC §8 are checked.
//!
//! `cargo test` runs a few thousand seeds; `TFC_SIM_SEEDS=N` runs N (a soak);
//! `TFC_SIM_SEED=S` runs seed S alone. A failure names its seed.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{
    CallEnd, CallOutcome, Command, Config, Decision, Event, Input, Line, Machine, RunSettings,
    ScriptEnd, ScriptOutcome, UsageData,
};
use crate::agent::Purpose;
use crate::check::{CheckOptions, check_source};
use crate::flow::{Flow, Join, LowerOptions, PhaseType};
use crate::run::record::{PhaseStatus, RunRecord, RunStatus};
use crate::value::{Map, Value};

/// A small PRNG (SplitMix64): enough spread for choosing, no dependency.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// True with probability `pct` percent.
    pub(crate) fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
}

const KINDS: [&str; 12] = [
    "agent",
    "parallel",
    "map",
    "gate",
    "reduce",
    "approval",
    "loop",
    "race",
    "tournament",
    "script",
    "flow",
    "expand",
];

/// A random flow's JSON text.
pub(crate) fn gen_flow(rng: &mut Rng) -> String {
    let n = 1 + rng.below(10) as usize;
    let mut phases = Vec::new();
    let mut kinds: Vec<&str> = Vec::new();
    for i in 0..n {
        let mut kind = KINDS[rng.below(12) as usize];
        if i == 0 && kind == "reduce" {
            kind = "agent";
        }
        kinds.push(kind);
        let id = format!("p{i}");
        let mut deps: Vec<usize> = Vec::new();
        if i > 0 {
            // Every phase hangs off the graph (a disconnected phase is an error).
            deps.push(rng.below(i as u64) as usize);
            for _ in 0..rng.below(2) {
                let d = rng.below(i as u64) as usize;
                if !deps.contains(&d) {
                    deps.push(d);
                }
            }
        }
        deps.sort_unstable();
        let mut f: Vec<String> = vec![format!("\"id\": \"{id}\"")];
        if kind != "agent" {
            f.push(format!("\"type\": \"{kind}\""));
        }
        if !deps.is_empty() {
            let list: Vec<String> = deps.iter().map(|d| format!("\"p{d}\"")).collect();
            f.push(format!("\"dependsOn\": [{}]", list.join(", ")));
            if rng.chance(25) {
                f.push("\"join\": \"any\"".into());
            }
        }
        if rng.chance(20) {
            f.push("\"optional\": true".into());
        }
        if rng.chance(10) {
            f.push("\"when\": \"{args.go} == true\"".into());
        }
        let retry = |rng: &mut Rng| {
            format!(
                "\"retry\": {{\"max\": {}, \"backoffMs\": {}}}",
                rng.below(3),
                [0, 50, 1000][rng.below(3) as usize]
            )
        };
        if rng.chance(25) && matches!(kind, "agent" | "map" | "loop" | "reduce" | "parallel") {
            f.push(retry(rng));
        }
        if rng.chance(10) && kind != "script" {
            f.push("\"idempotent\": false".into());
        }
        match kind {
            "agent" => f.push(format!("\"task\": \"do {i}\"")),
            "parallel" | "race" => {
                let b: Vec<String> = (0..2 + rng.below(2))
                    .map(|k| format!("{{\"task\": \"branch {k}\"}}"))
                    .collect();
                f.push(format!("\"branches\": [{}]", b.join(", ")));
                if kind == "parallel" && rng.chance(50) {
                    f.push(format!("\"concurrency\": {}", 1 + rng.below(2)));
                }
                if kind == "race" {
                    f.push(format!("\"cancelLosers\": {}", rng.chance(70)));
                    if rng.chance(30) {
                        f.push("\"timeout\": 1000".into());
                    }
                }
            }
            "map" => {
                f.push("\"over\": \"{args.items}\"".into());
                f.push("\"task\": \"item {item}\"".into());
                if rng.chance(60) {
                    f.push(format!("\"concurrency\": {}", 1 + rng.below(3)));
                }
            }
            "tournament" => {
                f.push(format!("\"variants\": {}", 2 + rng.below(2)));
                f.push("\"task\": \"name it\"".into());
            }
            "gate" => {
                f.push("\"task\": \"Check. VERDICT?\"".into());
                if !deps.is_empty() && rng.chance(50) {
                    f.push("\"onBlock\": \"retry\"".into());
                    f.push(format!(
                        "\"retry\": {{\"max\": {}, \"backoffMs\": 0}}",
                        1 + rng.below(2)
                    ));
                }
            }
            "reduce" => {
                if !deps.is_empty() {
                    let list: Vec<String> = deps.iter().map(|d| format!("\"p{d}\"")).collect();
                    f.push(format!("\"from\": [{}]", list.join(", ")));
                }
                f.push("\"task\": \"merge {previous.output}\"".into());
                if rng.chance(50) {
                    f.push("\"reduceStrategy\": \"tree\"".into());
                    f.push("\"batchSize\": 2".into());
                }
            }
            "approval" => f.push("\"task\": \"ok?\"".into()),
            "loop" => {
                f.push("\"task\": \"try {loop.iteration}\"".into());
                f.push(format!("\"maxIterations\": {}", 1 + rng.below(3)));
                if rng.chance(50) {
                    f.push("\"until\": \"{loop.iteration} >= 2\"".into());
                } else {
                    f.push("\"until\": \"false\"".into());
                }
                if rng.chance(30) {
                    f.push("\"convergence\": true".into());
                }
                if rng.chance(30) {
                    f.push("\"reflexion\": true".into());
                }
            }
            "script" => f.push("\"run\": \"echo hi\"".into()),
            "flow" => f.push(
                "\"def\": {\"phases\": [{\"id\": \"in1\", \"task\": \"inner\"}, {\"id\": \"in2\", \"dependsOn\": [\"in1\"], \"task\": \"inner2\"}]}"
                    .into(),
            ),
            _ => {
                f.push(
                    "\"def\": {\"phases\": [{\"id\": \"x1\", \"task\": \"frag\"}]}".into(),
                );
                if rng.chance(50) {
                    f.push("\"expandMode\": \"graft\"".into());
                }
            }
        }
        phases.push(format!("{{{}}}", f.join(", ")));
    }
    let mut top = vec![format!(
        "\"args\": {{\"go\": {{\"type\": \"boolean\", \"default\": {}}}, \"items\": {{\"default\": [{}]}}}}",
        rng.chance(70),
        (0..rng.below(5))
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )];
    if rng.chance(30) {
        top.push(format!("\"concurrency\": {}", 1 + rng.below(3)));
    }
    if rng.chance(25) {
        top.push(format!(
            "\"budget\": {{\"maxTokens\": {}}}",
            20 + rng.below(200)
        ));
    } else {
        // A call cap, drawn aside so that the flows generated before it existed stay the
        // same.
        let mut aside = Rng::new(rng.0 ^ 0x5851_F42D_4C95_7F2D);
        if aside.chance(15) {
            top.push(format!(
                "\"budget\": {{\"maxCalls\": {}}}",
                1 + aside.below(12)
            ));
        }
    }
    if rng.chance(15) && n > 1 {
        // Mark a random phase final.
        let k = rng.below(n as u64) as usize;
        phases[k] = phases[k].replacen('{', "{\"final\": true, ", 1);
    }
    top.push(format!("\"phases\": [{}]", phases.join(",\n")));
    format!("{{{}}}", top.join(", "))
}

/// An operation the simulated world has yet to answer.
#[derive(Debug)]
enum Pending {
    Call {
        node: String,
        attempt: u32,
        purpose: Purpose,
        cancelled: bool,
    },
    Timer,
    Script {
        cancelled: bool,
    },
    Approval {
        phase: String,
    },
    Dir,
    Context,
    /// A cache lookup (always a miss here: nothing was stored before this run).
    Cache,
    Scorer,
    Load,
    Resolve {
        names: Vec<String>,
    },
}

/// What one simulated run produced.
pub(crate) struct Outcome {
    pub journal: Vec<String>,
    pub trace: Vec<String>,
    pub record: RunRecord,
    pub inputs: Vec<Input>,
}

/// Per-phase state the invariants track, from the machine's journal events.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Seen {
    NotStarted,
    Running,
    Ended,
}

/// Run one simulated run of seed `seed`; `Err` says which invariant broke.
pub(crate) fn simulate(seed: u64) -> Result<Option<Outcome>, String> {
    let mut rng = Rng::new(seed);
    let text = gen_flow(&mut rng);
    let checked = check_source(&text, &LowerOptions::default(), &CheckOptions::default());
    let flow = match checked.flow {
        Some(f) if !checked.has_errors() => f,
        _ => return Ok(None),
    };
    let flow = Arc::new(flow);
    let args = crate::flow::effective_args(&flow, Map::default());
    // Drawn in this order (the seeds' cases stay the same).
    let concurrency = rng.chance(20).then(|| 1 + rng.below(3) as usize);
    let ask = rng.chance(50);
    let approve_all = rng.chance(15);
    let reject = if rng.chance(15) {
        (0..flow.phases.len()).map(|i| format!("p{i}")).collect()
    } else {
        Vec::new()
    };
    let cfg = Config {
        run_id: format!("sim-{seed}"),
        settings: RunSettings {
            concurrency,
            approve_all,
            reject,
            ..RunSettings::default()
        },
        ask,
        max_output: 1 << 20,
        max_prompt: 1 << 20,
        journaling: true,
        progress: true,
        cwd: "/sim".into(),
        incremental: rng.chance(20),
        ..Config::default()
    };
    let mut cfg = cfg;
    cfg.max_tokens = flow.budget.as_ref().and_then(|b| b.value.max_tokens);
    cfg.max_calls = flow.budget.as_ref().and_then(|b| b.value.max_calls);
    let limit = cfg
        .settings
        .concurrency
        .unwrap_or_else(|| {
            flow.concurrency
                .as_ref()
                .map_or(8, |c| c.value.floor().max(1.0) as usize)
        })
        .max(1);
    let mut m = Machine::new(flow.clone(), args.clone(), cfg.clone());
    let mut world = World {
        rng,
        trace: Vec::new(),
        pending: BTreeMap::new(),
        now: 1_700_000_000_000,
        spent: 0,
        journal: Vec::new(),
        inputs: Vec::new(),
        seen: vec![Seen::NotStarted; flow.phases.len()],
        ended: vec![0; flow.phases.len()],
        status: vec![None; flow.phases.len()],
        running: 0,
        limit,
        concurrency: cfg.settings.concurrency,
        flow: flow.clone(),
        over_at: None,
        calls: 0,
        max_calls: cfg.max_calls,
        halted: false,
        record: None,
    };
    let verbose = std::env::var("TFC_SIM_SEED").is_ok();
    let result = drive(&mut world, &mut m);
    if let Err(e) = result {
        if verbose {
            let tail: Vec<&String> = world.journal.iter().rev().take(60).rev().collect();
            let lines: Vec<&str> = tail.iter().map(|s| s.as_str()).collect();
            return Err(format!("{e}\njournal (last lines):\n{}", lines.join("\n")));
        }
        return Err(e);
    }
    let record = world.record.take().expect("finished");
    world.check_final(&record)?;
    if record.usage.calls != world.calls {
        return Err(format!(
            "usage.calls is {}, but {} calls started",
            record.usage.calls, world.calls
        ));
    }
    // The journal of inputs replays to the same record.
    let replayed = crate::run::journal::replay(flow, args, cfg, &world.inputs)
        .ok_or("the replay did not finish")?;
    if replayed != record {
        return Err("replaying the inputs gave another record".into());
    }
    Ok(Some(Outcome {
        trace: world.trace,
        journal: world.journal,
        record,
        inputs: world.inputs,
    }))
}

/// Answer the machine until it finishes.
fn drive(world: &mut World, m: &mut Machine) -> Result<(), String> {
    world.feed(m, Event::Start)?;
    let mut steps = 0;
    let mut interrupted = false;
    while world.record.is_none() {
        steps += 1;
        if steps > 50_000 {
            return Err("the run did not end within 50 000 inputs".into());
        }
        if !interrupted && world.rng.chance(1) && world.rng.chance(20) {
            interrupted = true;
            world.feed(m, Event::Interrupt)?;
            continue;
        }
        let Some(what) = world.answer() else {
            return Err("the machine waits for nothing but has not finished".into());
        };
        world.feed(m, what)?;
    }
    Ok(())
}

struct World {
    rng: Rng,
    /// Every command, as debug text (the same seed must give the same commands).
    trace: Vec<String>,
    pending: BTreeMap<u64, Pending>,
    now: u64,
    /// Tokens handed out so far.
    spent: u64,
    journal: Vec<String>,
    inputs: Vec<Input>,
    seen: Vec<Seen>,
    ended: Vec<u32>,
    /// Statuses from `phase-end` events.
    status: Vec<Option<String>>,
    running: usize,
    limit: usize,
    /// `--concurrency`.
    concurrency: Option<usize>,
    flow: Arc<Flow>,
    /// How many phases had started when the budget was first exceeded.
    over_at: Option<u64>,
    /// Attempts started, and the call cap they must never pass.
    calls: u64,
    max_calls: Option<u64>,
    halted: bool,
    record: Option<RunRecord>,
}

impl World {
    fn index(&self, id: &str) -> Option<usize> {
        self.flow.phases.iter().position(|p| p.id == id)
    }

    fn satisfied(&self, j: usize) -> bool {
        match self.status[j].as_deref() {
            Some("done") => true,
            Some("failed") => self.flow.phases[j].optional,
            _ => false,
        }
    }

    /// Hand the machine one input; check the invariants on what it says.
    fn feed(&mut self, m: &mut Machine, what: Event) -> Result<(), String> {
        self.now += self.rng.below(40);
        let input = Input { at: self.now, what };
        self.inputs.push(input.clone());
        let cmds = m.handle(input);
        for c in cmds {
            self.command(c)?;
        }
        if self.halted
            && let Some(i) = self.seen.iter().position(|s| *s == Seen::NotStarted)
        {
            return Err(format!(
                "{} was neither started nor skipped when the run halted",
                self.flow.phases[i].id
            ));
        }
        if let Some(cap) = m.meter.max_tokens
            && m.meter.tokens() as f64 > cap
            && self.over_at.is_none()
        {
            self.over_at = Some(m.meter.tokens());
        }
        Ok(())
    }

    fn command(&mut self, c: Command) -> Result<(), String> {
        self.trace.push(format!("{c:?}"));
        match c {
            Command::StartCall { op, request } => {
                self.calls += 1;
                if let Some(max) = self.max_calls
                    && self.calls > max
                {
                    return Err(format!(
                        "{}: call {} past the cap {max}",
                        request.node, self.calls
                    ));
                }
                if self.over_at.is_some() && request.attempt == 1 {
                    return Err(format!(
                        "{} started after the budget was exceeded",
                        request.node
                    ));
                }
                let width_node = request.node.split('#').next().unwrap_or("").to_owned();
                self.pending.insert(
                    op,
                    Pending::Call {
                        node: request.node,
                        attempt: request.attempt,
                        purpose: request.purpose,
                        cancelled: false,
                    },
                );
                self.check_width(&width_node)?;
            }
            Command::Cancel { op } => match self.pending.get_mut(&op) {
                Some(Pending::Call { cancelled, .. }) | Some(Pending::Script { cancelled }) => {
                    *cancelled = true
                }
                Some(_) => return Err(format!("cancel of operation {op}, not a call or script")),
                None => return Err(format!("cancel of operation {op}, which has ended")),
            },
            Command::StartScript { op, .. } => {
                self.pending
                    .insert(op, Pending::Script { cancelled: false });
            }
            Command::StartTimer { op, .. } => {
                self.pending.insert(op, Pending::Timer);
            }
            Command::CancelTimer { op } => {
                if !matches!(self.pending.remove(&op), Some(Pending::Timer)) {
                    return Err(format!("cancel of timer {op}, which is not pending"));
                }
            }
            Command::AskApproval { op, phase, .. } => {
                self.pending.insert(op, Pending::Approval { phase });
            }
            Command::PrepareDir { op, .. } => {
                self.pending.insert(op, Pending::Dir);
            }
            Command::Progress(p) if p.status == "pending" => {
                // An approval waiting for a decision has left the running set.
                if let Some(i) = self.index(&p.phase)
                    && self.seen[i] == Seen::Running
                {
                    self.seen[i] = Seen::Ended;
                    self.running -= 1;
                }
            }
            Command::ReleaseDir { .. } | Command::Progress(_) | Command::Save => {}
            Command::ReadContext { op, .. } => {
                self.pending.insert(op, Pending::Context);
            }
            Command::CacheLookup { op, .. } => {
                self.pending.insert(op, Pending::Cache);
            }
            Command::CacheStore { key, record } => {
                let done = matches!(&record, crate::value::Value::Object(m)
                    if m.get("status").and_then(crate::value::Value::as_str) == Some("done"));
                if !done {
                    return Err(format!("cache entry {key} stored for a phase not done"));
                }
            }
            Command::RunScorer { op, .. } => {
                self.pending.insert(op, Pending::Scorer);
            }
            Command::LoadFlow { op, .. } => {
                self.pending.insert(op, Pending::Load);
            }
            Command::ResolveAgents { op, names, .. } => {
                self.pending.insert(op, Pending::Resolve { names });
            }
            Command::Journal(Line::Input(i)) => {
                self.journal.push(crate::run::driver::input_line(&i));
            }
            Command::Journal(Line::Event(v)) => {
                self.journal.push(v.to_json());
                self.event(&v)?;
            }
            Command::StartShard { .. }
            | Command::EndShard(_)
            | Command::CapShard { .. }
            | Command::Journal(Line::Raw(_)) => {
                return Err("a run without `shard_items` asked for a shard".into());
            }
            Command::Finish(record) => {
                if self.record.is_some() {
                    return Err("the run finished twice".into());
                }
                self.record = Some(*record);
            }
        }
        Ok(())
    }

    /// A fan-out's calls in flight never pass its width.
    fn check_width(&self, phase_node: &str) -> Result<(), String> {
        let Some(i) = self.index(phase_node) else {
            return Ok(());
        };
        let p = &self.flow.phases[i];
        if !matches!(p.ty(), PhaseType::Map | PhaseType::Parallel) {
            return Ok(());
        }
        let width = p
            .concurrency
            .as_ref()
            .map(|c| c.value)
            .or(self.concurrency.map(|c| c as f64))
            .or_else(|| self.flow.concurrency.as_ref().map(|c| c.value))
            .unwrap_or(8.0)
            .floor()
            .max(1.0) as usize;
        let prefix = format!("{phase_node}#");
        let in_flight = self
            .pending
            .values()
            .filter(|p| matches!(p, Pending::Call { node, .. } if node.starts_with(&prefix)))
            .count();
        if in_flight > width {
            return Err(format!(
                "{phase_node}: {in_flight} items in flight, over its width {width}"
            ));
        }
        Ok(())
    }

    /// Check a journal event against the scheduling rules.
    fn event(&mut self, v: &Value) -> Result<(), String> {
        let Value::Object(m) = v else {
            return Ok(());
        };
        let kind = m.get("type").and_then(Value::as_str).unwrap_or("");
        let phase = m.get("phase").and_then(Value::as_str).unwrap_or("");
        let Some(i) = self.index(phase) else {
            return Ok(());
        };
        match kind {
            "phase-start" => {
                if self.seen[i] != Seen::NotStarted {
                    return Err(format!("{phase} started twice"));
                }
                if self.halted {
                    return Err(format!("{phase} started after the run halted"));
                }
                if self.over_at.is_some() {
                    return Err(format!("{phase} started after the budget was exceeded"));
                }
                let p = &self.flow.phases[i];
                let deps: Vec<usize> = p.deps.iter().map(|d| d.index()).collect();
                let holds = if p.join == Join::Any && !deps.is_empty() {
                    deps.iter().any(|&j| self.satisfied(j))
                } else {
                    deps.iter().all(|&j| self.satisfied(j))
                };
                if !holds {
                    return Err(format!("{phase} started before its join held"));
                }
                self.seen[i] = Seen::Running;
                self.running += 1;
                if self.running > self.limit {
                    return Err(format!(
                        "{} phases running, over the concurrency {}",
                        self.running, self.limit
                    ));
                }
            }
            "phase-end" => {
                self.ended[i] += 1;
                if self.ended[i] > 1 || self.seen[i] == Seen::Ended {
                    return Err(format!("{phase} ended twice"));
                }
                let status = m.get("status").and_then(Value::as_str).unwrap_or("");
                let reason = m.get("skipReason").and_then(Value::as_str).unwrap_or("");
                if self.seen[i] == Seen::Running {
                    // Only the call cap skips a phase that started: the call it needed
                    // was refused (SPEC §8.7).
                    if status == "skipped" && !reason.starts_with("Budget exceeded: calls ") {
                        return Err(format!("{phase} was skipped while running ({reason})"));
                    }
                    self.running -= 1;
                } else if status != "skipped" {
                    return Err(format!("{phase} ended {status} without starting"));
                }
                if reason.starts_with("Gate blocked") || reason.starts_with("Budget exceeded") {
                    self.halted = true;
                }
                if self.halted
                    && self.seen[i] == Seen::NotStarted
                    && !reason.starts_with("Gate blocked")
                    && !reason.starts_with("Budget exceeded")
                    && !reason.starts_with("Aborted")
                    && !reason.starts_with("Upstream")
                    && !reason.starts_with("All dependencies")
                {
                    return Err(format!("{phase} skipped after a halt for '{reason}'"));
                }
                self.seen[i] = Seen::Ended;
                self.status[i] = Some(status.to_owned());
            }
            _ => {}
        }
        Ok(())
    }

    /// Answer one pending operation, chosen at random.
    fn answer(&mut self) -> Option<Event> {
        if self.pending.is_empty() {
            return None;
        }
        let k = self.rng.below(self.pending.len() as u64) as usize;
        let op = *self.pending.keys().nth(k)?;
        let p = self.pending.remove(&op)?;
        Some(match p {
            Pending::Timer => Event::TimerFired { op },
            Pending::Call {
                node,
                attempt,
                purpose,
                cancelled,
            } => {
                let end = self.call_end(purpose, cancelled);
                Event::CallEnded {
                    op,
                    node,
                    attempt,
                    end,
                }
            }
            Pending::Script { cancelled } => Event::ScriptEnded {
                op,
                result: ScriptOutcome {
                    spawn_error: None,
                    end: if cancelled {
                        ScriptEnd::Cancelled
                    } else if self.rng.chance(10) {
                        ScriptEnd::Timeout
                    } else {
                        ScriptEnd::Exited
                    },
                    code: if self.rng.chance(20) { 1 } else { 0 },
                    stdout: "hi\n".into(),
                    stdout_truncated: false,
                    stderr: String::new(),
                    elapsed_ms: self.rng.below(100),
                },
            },
            Pending::Approval { phase } => Event::Approval {
                op,
                phase,
                decision: [Decision::Approve, Decision::Edit, Decision::Reject]
                    [self.rng.below(3) as usize],
                note: self.rng.chance(50).then(|| "note".to_owned()),
                by_signal: false,
            },
            Pending::Dir => Event::DirReady {
                op,
                path: Ok("/sim".into()),
                warning: None,
            },
            Pending::Cache => Event::CacheChecked {
                op,
                key: format!("{op:016x}"),
                hit: None,
                warning: None,
            },
            Pending::Context => Event::ContextRead {
                op,
                text: String::new(),
            },
            Pending::Scorer => Event::ScorerEnded {
                op,
                pass: self.rng.chance(50),
                detail: None,
            },
            Pending::Load => Event::FlowLoaded { op, text: None },
            Pending::Resolve { names } => Event::AgentsResolved {
                op,
                run_id: format!("sub-{op}"),
                backends: names.into_iter().map(|n| (n, "sim".to_owned())).collect(),
                error: None,
            },
        })
    }

    fn call_end(&mut self, purpose: Purpose, cancelled: bool) -> CallEnd {
        let tokens = self.rng.below(15);
        self.spent += tokens;
        let usage = UsageData {
            input: tokens,
            ..UsageData::default()
        };
        let outcome = |output: String, stop: &str, error: Option<&str>| {
            CallEnd::Outcome(Box::new(CallOutcome {
                output,
                usage,
                model: None,
                stop: stop.to_owned(),
                error: error.map(str::to_owned),
                stderr: String::new(),
                warnings: Vec::new(),
                backend: "sim".into(),
                elapsed_ms: 1,
                exit_code: None,
            }))
        };
        // A cancelled call usually reports its cancellation; sometimes its answer (or
        // failure) crossed the cancel request, as a durable engine's activity that completed
        // before the cancellation reached it, delivered in any order with the others.
        if cancelled && !self.rng.chance(40) {
            return outcome(String::new(), "cancelled", Some("Aborted"));
        }
        let roll = self.rng.below(100);
        match roll {
            0 => CallEnd::Panicked {
                message: "sim panic".into(),
            },
            1..=8 => outcome(String::new(), "failed", Some("429 rate limit exceeded")),
            9..=14 => outcome(String::new(), "failed", Some("bad request")),
            15..=17 => outcome("partial".into(), "wall-timeout", Some("timed out")),
            _ => {
                let text = match purpose {
                    Purpose::Gate => {
                        if self.rng.chance(50) {
                            "VERDICT: PASS".to_owned()
                        } else {
                            "VERDICT: BLOCK".to_owned()
                        }
                    }
                    Purpose::Judge => format!("WINNER: {}", 1 + self.rng.below(3)),
                    _ => format!("out-{}", self.rng.below(3)),
                };
                outcome(text, "completed", None)
            }
        }
    }

    /// The end of the run: every phase ended once (or waits for an approval), and the final
    /// output follows SPEC §8.9.
    fn check_final(&self, r: &RunRecord) -> Result<(), String> {
        if !self.pending.values().all(|p| matches!(p, Pending::Timer)) {
            // Calls and scripts may still be settling only when the run was interrupted or a
            // race gave up on them; nothing else may be left behind.
            let stray = self
                .pending
                .values()
                .filter(|p| {
                    !matches!(
                        p,
                        Pending::Call { .. } | Pending::Timer | Pending::Script { .. }
                    )
                })
                .count();
            if stray > 0 {
                return Err(format!("{stray} operations left unanswered at the end"));
            }
        }
        let ids: Vec<&str> = self.flow.phases.iter().map(|p| p.id.as_str()).collect();
        for (i, id) in ids.iter().enumerate() {
            let rec = &r.phases[*id];
            let waiting = rec.status == PhaseStatus::Pending;
            if self.ended[i] != 1 && !waiting {
                return Err(format!(
                    "{id} ended {} times (status {})",
                    self.ended[i],
                    rec.status.as_str()
                ));
            }
            if waiting && self.ended[i] != 0 {
                return Err(format!("{id} is pending but ended"));
            }
            if waiting && r.status == RunStatus::Completed {
                return Err(format!("{id} is pending in a completed run"));
            }
        }
        // A race that cancels its losers has one `done` branch at most, whatever arrived
        // for the losers after it was decided (SPEC §3.12; the local driver's record).
        for (i, p) in self.flow.phases.iter().enumerate() {
            let crate::flow::PhaseKind::Race(k) = &p.kind else {
                continue;
            };
            let won = r.phases[ids[i]]
                .items
                .iter()
                .flatten()
                .filter(|it| it.status == PhaseStatus::Done)
                .count();
            if k.cancel_losers && won > 1 {
                return Err(format!("{}: {won} race branches done", ids[i]));
            }
        }
        let fin = self.flow.final_phase();
        let done = |i: usize| r.phases[ids[i]].status == PhaseStatus::Done;
        let chosen = fin
            .filter(|&f| done(f))
            .or_else(|| (0..ids.len()).rev().find(|&i| done(i)));
        let out = &r.final_output;
        let chosen_ok = match chosen {
            Some(c) => *out == r.phases[ids[c]].output && r.output_phase.as_deref() == Some(ids[c]),
            None => out == "(no output)" && r.output_phase.is_none(),
        };
        let blocked = out.starts_with("Gate blocked the workflow.");
        let budget = out.starts_with("Budget exceeded — run halted.");
        let crashed = r
            .reason
            .as_deref()
            .is_some_and(|x| x.starts_with("Taskflow "));
        let ok = match r.status {
            // A crash keeps the output its halt (if any) gave.
            RunStatus::Failed if crashed => blocked || budget || chosen_ok,
            RunStatus::Blocked => blocked,
            RunStatus::Paused if r.reason.as_deref().is_some_and(|x| x.starts_with("budget")) => {
                budget
            }
            RunStatus::Paused
                if r.reason
                    .as_deref()
                    .is_some_and(|x| x.starts_with("awaiting approval")) =>
            {
                out.starts_with("Run paused — awaiting approval: ")
            }
            _ => chosen_ok,
        };
        if !ok {
            return Err(format!(
                "final output {out:?} (status {}, reason {:?}) breaks §8.9",
                r.status.as_str(),
                r.reason
            ));
        }
        Ok(())
    }
}

/// Run seeds, reporting the first failure with its seed: the valid flows, the phases of
/// each kind run, and the runs the call cap paused.
fn run_seeds(seeds: impl Iterator<Item = u64>) -> (usize, [usize; 12], usize) {
    let mut valid = 0;
    let mut kinds = [0usize; 12];
    let mut capped = 0;
    for seed in seeds {
        match simulate(seed) {
            Ok(Some(o)) => {
                valid += 1;
                for p in o.record.phases.values() {
                    if let Some(k) = KINDS.iter().position(|k| *k == p.ty.as_str()) {
                        kinds[k] += 1;
                    }
                }
                let _ = o.inputs.len();
                if o.record
                    .reason
                    .as_deref()
                    .is_some_and(|r| r.starts_with("budget exceeded: calls "))
                {
                    capped += 1;
                }
            }
            Ok(None) => {}
            Err(e) => panic!(
                "simulation seed {seed} failed: {e}\n(replay it with TFC_SIM_SEED={seed})\nflow: {}",
                gen_flow(&mut Rng::new(seed))
            ),
        }
    }
    (valid, kinds, capped)
}

#[test]
fn seeds_keep_the_invariants() {
    if let Ok(s) = std::env::var("TFC_SIM_SEED") {
        let seed: u64 = s.parse().expect("TFC_SIM_SEED is a number");
        let (valid, _, _) = run_seeds(std::iter::once(seed));
        assert_eq!(valid, 1, "seed {seed} generated an invalid flow");
        return;
    }
    let n: u64 = std::env::var("TFC_SIM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let (valid, kinds, capped) = run_seeds(0..n);
    assert!(
        valid * 10 >= n as usize * 7,
        "only {valid} of {n} generated flows were valid"
    );
    for (k, count) in KINDS.iter().zip(kinds) {
        assert!(count > 0 || n < 100, "no generated flow ran a {k} phase");
    }
    assert!(capped > 0 || n < 100, "no generated run met its call cap");
}

#[test]
fn the_same_seed_gives_the_same_journal() {
    for seed in 0..100 {
        let a = simulate(seed).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let b = simulate(seed).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        if let (Some(a), Some(b)) = (a, b) {
            assert_eq!(a.journal, b.journal, "seed {seed}: journals differ");
            assert_eq!(a.trace, b.trace, "seed {seed}: commands differ");
            assert_eq!(a.record, b.record, "seed {seed}: records differ");
        }
    }
}
