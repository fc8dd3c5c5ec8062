//! The spans of one run, made from what its driver tells the trace ([`Note`]s, each with
//! the time it happened): phase, item and iteration spans, one GenAI span per agent call,
//! script and pre-read spans, and the run's root. Each span is written into a [`Telemetry`]
//! batch as it ends; only what its end needs is kept while it is open.

use std::collections::HashMap;

/// Maps keyed by node or operation, with a fast hash (keys are ours, not an attacker's).
type Fast<K, V> = HashMap<K, V, foldhash::fast::FixedState>;
use std::sync::Arc;

use crate::agent::StopReason;
use crate::telemetry::metrics::{Call as CallPoint, Metrics};
use crate::telemetry::span::Kind;
use crate::telemetry::{Attr, Head, IdGen, SpanContext, SpanId, Telemetry, TraceId};

use super::super::RunStatus;
use super::super::machine::{Progress, ScriptEnd};
use super::super::record::PhaseStatus;
use super::super::runs::parse_timestamp;
use super::TracePlan;
use crate::agent::record::AgentCallRecord;
use crate::flow::PhaseType;

/// `gen_ai.operation.name` of an agent call.
pub(super) const INVOKE_AGENT: &str = "invoke_agent";

/// Finished spans wait at most this long (ns) before they are handed over.
const HANDOVER_NS: u64 = 1_000_000_000;

/// A phase, item or iteration span that has started (keyed by its node in `RunTrace::open`).
/// Only what the node's name and the end cannot tell is kept: attributes are written once,
/// when the span ends.
struct Open {
    id: SpanId,
    parent: SpanId,
    start_ns: u64,
    /// `Some` for an item (`P#i`) or iteration (`P@i`) span: ends with its phase, at its last
    /// child's end.
    group: Option<Group>,
    /// A phase's kind.
    kind: Option<PhaseType>,
    /// A phase re-run by a gate's rework.
    rework: bool,
    /// Item and iteration spans opened under it (a phase's groups are looked for only then).
    groups: u32,
    /// The latest end of its children (groups).
    last_ns: u64,
}

/// What an item or iteration span is.
#[derive(Clone, Copy)]
struct Group {
    /// `item` or `iteration`.
    word: &'static str,
    /// `tfc.item.index` or `tfc.loop.iteration`.
    key: &'static str,
    /// The phase's node: this many bytes of the group's node.
    phase_len: usize,
    index: i64,
}

/// How a span that is still open ends.
#[derive(Clone, Copy)]
enum Cut<'a> {
    /// As it is (an item or iteration span whose phase ended).
    Ended,
    /// Failed with this message: the run stopped before it finished.
    Interrupted(&'a str),
    /// The run paused (awaiting approval, budget, Ctrl-C): a phase still open is pending,
    /// not failed (UNSET); a call or script cut short failed with this message.
    Paused(&'a str),
}

/// An agent call in flight.
struct Call {
    id: SpanId,
    parent: SpanId,
    /// The item or iteration span it is under: this many bytes of `node`.
    group: Option<usize>,
    start_ns: u64,
    node: String,
    /// Its agent, by index in `RunTrace::agents`.
    agent: usize,
    attempt: u32,
    /// The model the call asked for, when it is not its agent's.
    model: Option<String>,
    prompt: Option<String>,
}

/// A script or pre-read in flight.
struct Work {
    id: SpanId,
    parent: SpanId,
    start_ns: u64,
    node: String,
    what: WorkKind,
}

enum WorkKind {
    Script {
        program: String,
    },
    /// `files`: how many it was asked to read.
    PreRead {
        files: usize,
    },
}

/// An agent's backend and model, for its calls' attributes.
#[derive(Clone, Default)]
struct AgentInfo {
    backend: Option<String>,
    model: Option<String>,
}

/// What is known of an agent no run declared.
const NO_AGENT: AgentInfo = AgentInfo {
    backend: None,
    model: None,
};

/// What the trace is told of a run, owned (it may be turned into spans on another thread),
/// each with the time it happened.
pub(crate) enum Note {
    /// A phase starts (`rework`: again, re-run by a gate's rework).
    PhaseStarted {
        phase: String,
        kind: Option<PhaseType>,
        rework: bool,
    },
    /// A phase ended (done, failed or skipped), as its progress note tells.
    PhaseEnded(Progress),
    /// An agent call's attempt starts.
    CallStarted(Box<Started>),
    /// An agent call's attempt ended.
    CallEnded { op: u64, end: Ended },
    /// A script phase's command starts.
    ScriptStarted {
        op: u64,
        node: String,
        program: String,
    },
    /// A script ended: it exited (`code`), timed out or was stopped, or could not start.
    ScriptEnded {
        op: u64,
        end: ScriptEnd,
        code: i32,
        spawn_error: Option<String>,
    },
    /// A phase's context files are read (its pre-read)…
    ReadStarted { op: u64, node: String, files: usize },
    /// … and `chars` characters, from `files` files actually read, go before its prompts.
    ReadEnded { op: u64, chars: usize, files: usize },
    /// A shard of a map's calls ended (on Temporal): its `agent-call` journal lines.
    ShardEnded(Vec<String>),
    /// The run ended.
    Finish(Box<RunEnd>),
    /// What was told so far was exported by another process (the Temporal worker that held
    /// the run before this one): from here on, spans are exported.
    Live,
}

/// An agent call's attempt that starts.
pub(crate) struct Started {
    pub op: u64,
    pub node: String,
    pub agent: String,
    pub attempt: u32,
    /// The model asked for.
    pub model: Option<String>,
    /// The prompt, cut, when content is recorded.
    pub prompt: Option<String>,
}

/// How an agent call's attempt ended.
pub(crate) struct Ended {
    /// How the agent stopped; `None` when the call never reached one (no backend, refused,
    /// panicked).
    pub stop: Option<StopReason>,
    /// Completed without an error.
    pub ok: bool,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    /// The model the backend says answered.
    pub model: Option<String>,
    pub error: Option<String>,
    /// The backend that answered.
    pub backend: Option<String>,
    /// The output, cut, when content is recorded.
    pub output: Option<String>,
    /// The `error.type` of a call that never reached a backend (see [`error_class`]).
    pub class: Option<&'static str>,
    /// The backend process's exit code.
    pub exit_code: Option<i32>,
}

/// How the run ended: what its root span says.
pub(crate) struct RunEnd {
    pub status: RunStatus,
    pub reason: Option<String>,
    pub agent_calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    pub output_phase: Option<String>,
    /// `<phase>: <error>` of the first failed phase (the root's status text when the run
    /// failed without a reason).
    pub first_failure: Option<String>,
}

/// The spans of one run.
pub(super) struct Spans {
    tel: Arc<Telemetry>,
    ids: IdGen,
    trace: TraceId,
    root: SpanId,
    /// The caller's span (`TRACEPARENT`).
    caller: Option<SpanId>,
    /// The run this one resumes.
    link: Option<SpanContext>,
    start_ns: u64,
    run_id: String,
    flow: String,
    parent_run_id: Option<String>,
    /// Agents by name (calls keep an index).
    agents: indexmap::IndexMap<String, AgentInfo>,
    /// Phase, item and iteration spans by node.
    open: Fast<String, Open>,
    calls: Fast<u64, Call>,
    /// Scripts and pre-reads by operation.
    work: Fast<u64, Work>,
    batch: crate::telemetry::Batch,
    handed_ns: u64,
    metrics: Metrics,
    /// Prompts and outputs are recorded, cut to this many characters.
    content: Option<usize>,
    /// The trace has ended (its root span is written).
    ended: bool,
    /// Spans are made but not exported: another process exported them (until [`Note::Live`]).
    quiet: bool,
}

/// Who the run is: what the root span says about it.
pub(crate) struct RunIdentity<'a> {
    pub run_id: &'a str,
    pub flow: &'a str,
    pub parent_run_id: Option<&'a str>,
    pub backends: &'a indexmap::IndexMap<String, String>,
    pub models: &'a indexmap::IndexMap<String, String>,
}

impl<'a> RunIdentity<'a> {
    /// The run `cfg` describes, of flow `flow`.
    pub fn of(cfg: &'a super::super::machine::Config, flow: &'a str) -> RunIdentity<'a> {
        RunIdentity {
            run_id: &cfg.run_id,
            flow,
            parent_run_id: cfg.parent_run_id.as_deref(),
            backends: &cfg.backends,
            models: &cfg.models,
        }
    }
}

impl Spans {
    /// The spans of the run `who` traced as `plan` says, exported unless `quiet` (until
    /// [`Note::Live`]). Span ids are a function of the plan and the notes, in order: any
    /// process told the same notes names the same spans.
    pub fn start(
        tel: Arc<Telemetry>,
        who: RunIdentity<'_>,
        plan: &TracePlan,
        quiet: bool,
    ) -> Spans {
        let batch = tel.batch();
        let (trace, root) = (plan.trace, plan.root);
        let mut agents: indexmap::IndexMap<String, AgentInfo> = who
            .backends
            .iter()
            .map(|(a, b)| {
                let info = AgentInfo {
                    backend: Some(b.clone()),
                    model: None,
                };
                (a.clone(), info)
            })
            .collect();
        for (a, m) in who.models {
            agents.entry(a.clone()).or_default().model = Some(m.clone());
        }
        Spans {
            tel,
            ids: IdGen::under(trace, root),
            trace,
            root,
            caller: plan.caller,
            link: plan.link,
            start_ns: plan.start_ns,
            run_id: who.run_id.to_owned(),
            flow: who.flow.to_owned(),
            parent_run_id: who.parent_run_id.map(str::to_owned),
            agents,
            open: Fast::default(),
            calls: Fast::default(),
            work: Fast::default(),
            batch,
            handed_ns: plan.start_ns,
            metrics: Metrics::new(plan.start_ns),
            content: plan.content,
            ended: false,
            quiet,
        }
    }

    /// A span's head: under `parent`, from `start_ns` to `end_ns`.
    fn head(&self, id: SpanId, parent: SpanId, kind: Kind, start_ns: u64, end_ns: u64) -> Head {
        Head {
            trace: self.trace,
            id,
            parent: Some(parent),
            kind,
            start_ns,
            end_ns,
        }
    }

    /// Take in what happened at `now_ns` (nothing more, once the trace has ended).
    pub fn apply(&mut self, note: Note, now_ns: u64) {
        if self.ended {
            return;
        }
        match note {
            Note::PhaseStarted {
                phase,
                kind,
                rework,
            } => self.phase_started(phase, kind, rework, now_ns),
            Note::PhaseEnded(p) => self.phase_ended(&p, now_ns),
            Note::CallStarted(c) => self.call_started(*c, now_ns),
            Note::CallEnded { op, end } => {
                if let Some(c) = self.calls.remove(&op) {
                    self.end_call(c, &end, now_ns, now_ns);
                }
            }
            Note::ScriptStarted { op, node, program } => {
                let id = SpanId::of_op(self.trace, op);
                self.work_started(op, id, node, WorkKind::Script { program }, now_ns);
            }
            Note::ScriptEnded {
                op,
                end,
                code,
                spawn_error,
            } => self.script_ended(op, end, code, spawn_error, now_ns),
            Note::ReadStarted { op, node, files } => {
                let id = self.ids.span();
                self.work_started(op, id, node, WorkKind::PreRead { files }, now_ns);
            }
            Note::ReadEnded { op, chars, files } => self.read_ended(op, chars, files, now_ns),
            Note::ShardEnded(lines) => self.shard_ended(lines, now_ns),
            Note::Finish(end) => self.finish(&end, now_ns),
            Note::Live => self.live(now_ns),
        }
    }

    /// From now on spans are exported: what was made while quiet is dropped (another process
    /// exported it), the metrics count from now.
    fn live(&mut self, now_ns: u64) {
        if self.quiet {
            self.quiet = false;
            self.batch.clear();
            self.metrics = Metrics::new(now_ns);
            self.handed_ns = now_ns;
        }
    }

    /// A phase starts (again, for a gate's rework): its span, unless it has one.
    fn phase_started(&mut self, phase: String, kind: Option<PhaseType>, rework: bool, now_ns: u64) {
        if !self.open.contains_key(&phase) {
            let open = self.phase_span(&phase, kind, rework, now_ns);
            self.open.insert(phase, open);
        }
    }

    /// A phase's span, starting now.
    fn phase_span(
        &mut self,
        phase: &str,
        kind: Option<PhaseType>,
        rework: bool,
        now_ns: u64,
    ) -> Open {
        let (parent, _) = self.parent_of(phase, now_ns, false);
        Open {
            id: self.ids.span(),
            parent,
            start_ns: now_ns,
            group: None,
            kind,
            rework,
            groups: 0,
            last_ns: now_ns,
        }
    }

    fn phase_ended(&mut self, p: &Progress, now_ns: u64) {
        // Skipped (or answered from a cache) without ever running: a span of no length,
        // where it would have been.
        let open = match self.open.remove(&p.phase) {
            Some(o) => o,
            None => self.phase_span(&p.phase, p.kind, false, now_ns),
        };
        if open.groups > 0 {
            self.close_groups(open.id, now_ns);
        }
        let head = self.head(open.id, open.parent, Kind::Internal, open.start_ns, now_ns);
        let mut w = self.batch.span(head, ("phase", &p.phase));
        w.attr("tfc.phase.id", &p.phase)
            .attr_opt("tfc.phase.kind", open.kind.map(|k| k.as_str()))
            .attr_opt("tfc.phase.rework", open.rework.then_some(true))
            .attr("tfc.phase.status", p.status)
            .attr("tfc.phase.attempts", p.facts.record_attempts);
        let f = &p.facts;
        w.attr_opt("tfc.phase.cache_hit", f.cache_hit)
            .attr_opt("tfc.phase.items", f.items.map(|(_, total)| total));
        if let Some(t) = &f.tally {
            w.attr("tfc.phase.items_done", t.done)
                .attr("tfc.phase.items_failed", t.failed);
        }
        w.attr_opt("tfc.loop.iterations", f.iteration.map(|(n, _)| n))
            .attr_opt("tfc.loop.stop", f.stop)
            .attr_opt("tfc.gate.verdict", f.verdict)
            .attr_opt("tfc.gate.reason", f.reason.as_ref())
            .attr_opt("tfc.gate.rework_rounds", f.rework.map(|(round, _)| round))
            .attr_opt("tfc.usage.tokens", (p.tokens > 0).then_some(p.tokens))
            .attr_opt("tfc.usage.cost_usd", p.cost_usd);
        match (p.status, &p.detail) {
            ("skipped", Some(why)) => {
                w.attr("tfc.phase.skip_reason", why);
            }
            ("failed", Some(e)) => {
                w.error(e);
            }
            ("failed", None) => {
                w.error("the phase failed");
            }
            _ => {}
        }
        w.end();
        self.finished(now_ns);
    }

    /// End the item and iteration spans of the phase span `phase`.
    fn close_groups(&mut self, phase: SpanId, now_ns: u64) {
        let nodes: Vec<String> = self
            .open
            .iter()
            .filter(|(_, o)| o.group.is_some() && o.parent == phase)
            .map(|(n, _)| n.clone())
            .collect();
        for node in nodes {
            if let Some(g) = self.open.remove(&node) {
                let end = g.last_ns;
                self.end_open(&node, g, end, Cut::Ended, now_ns);
            }
        }
    }

    /// End the phase, item or iteration span `o` of `node` at `end_ns`, as `cut` says (a phase's own attributes are those it had when it started: a phase ended
    /// by its progress note is written by `phase_ended`).
    fn end_open(&mut self, node: &str, o: Open, end_ns: u64, cut: Cut<'_>, now_ns: u64) {
        let head = self.head(o.id, o.parent, Kind::Internal, o.start_ns, end_ns);
        match o.group {
            Some(g) => {
                let mut w = self.batch.span(head, (g.word, node));
                w.attr("tfc.phase.id", &node[..g.phase_len])
                    .attr(g.key, g.index);
                w.end();
            }
            None => {
                let mut w = self.batch.span(head, ("phase", node));
                w.attr("tfc.phase.id", node)
                    .attr_opt("tfc.phase.kind", o.kind.map(|k| k.as_str()))
                    .attr_opt("tfc.phase.rework", o.rework.then_some(true));
                match cut {
                    Cut::Interrupted(e) => {
                        w.attr("error.type", "interrupted").error(e);
                    }
                    // Waiting (an approval, or a sub-flow holding one): not an error.
                    Cut::Paused(_) => {
                        w.attr("tfc.phase.status", PhaseStatus::Pending.as_str());
                    }
                    Cut::Ended => {}
                }
                w.end();
            }
        }
        self.finished(now_ns);
    }

    /// The span a node's work belongs under: its own span (`with_self`), else the nearest
    /// enclosing phase, item (`P#3`) or iteration (`P@2`) span — an item or iteration span is
    /// made when first needed — else the run's root. With it, the length of the node's
    /// prefix that names an item or iteration span, when the parent is one.
    fn parent_of(&mut self, node: &str, now_ns: u64, with_self: bool) -> (SpanId, Option<usize>) {
        if with_self && let Some(found) = self.enclosing(node, now_ns) {
            return found;
        }
        let mut n = node;
        while let Some(k) = n.rfind(['#', '@', '/', ':']).filter(|&k| k > 0) {
            n = &n[..k];
            if let Some(found) = self.enclosing(n, now_ns) {
                return found;
            }
        }
        (self.root, None)
    }

    /// The open span of node `n`, or its item or iteration span when `n` is `P#i` / `P@i` of
    /// an open phase `P` (made now if new).
    fn enclosing(&mut self, n: &str, now_ns: u64) -> Option<(SpanId, Option<usize>)> {
        if let Some(o) = self.open.get(n) {
            return Some((o.id, o.group.map(|_| n.len())));
        }
        let k = n.rfind(['#', '@'])?;
        let (prefix, index) = (&n[..k], &n[k + 1..]);
        if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let phase = self.open.get_mut(prefix).filter(|o| o.group.is_none())?;
        phase.groups += 1;
        let phase = phase.id;
        let (word, key) = if n.as_bytes()[k] == b'@' {
            ("iteration", "tfc.loop.iteration")
        } else {
            ("item", "tfc.item.index")
        };
        let id = self.ids.span();
        let group = Group {
            word,
            key,
            phase_len: k,
            index: index.parse().unwrap_or(i64::MAX),
        };
        self.open.insert(
            n.to_owned(),
            Open {
                id,
                parent: phase,
                start_ns: now_ns,
                group: Some(group),
                kind: None,
                rework: false,
                groups: 0,
                last_ns: now_ns,
            },
        );
        Some((id, Some(n.len())))
    }

    /// An agent call's attempt starts.
    fn call_started(&mut self, c: Started, now_ns: u64) {
        let (parent, group) = self.parent_of(&c.node, now_ns, true);
        let agent = self.agent(c.agent);
        let model = c
            .model
            .filter(|m| self.agents[agent].model.as_ref() != Some(m));
        let call = Call {
            id: SpanId::of_op(self.trace, c.op),
            parent,
            group,
            start_ns: now_ns,
            node: c.node,
            agent,
            attempt: c.attempt,
            model,
            prompt: c.prompt,
        };
        self.calls.insert(c.op, call);
    }

    /// A shard of a map's calls ended (on Temporal, a workflow of its own, whose calls the
    /// run never saw start): each attempt its journal lines tell of becomes a span under its
    /// item, at the times the line gives.
    fn shard_ended(&mut self, lines: Vec<String>, now_ns: u64) {
        for line in &lines {
            let Some(rec) = crate::value::parse_json(line)
                .ok()
                .and_then(|v| AgentCallRecord::from_value(&v).ok())
            else {
                continue;
            };
            let end_ns = parse_timestamp(&rec.ts).map_or(now_ns, |ms| ms.saturating_mul(1_000_000));
            let start_ns = end_ns.saturating_sub(rec.duration_ms.saturating_mul(1_000_000));
            // An item's span starts with its first call.
            let (parent, group) = self.parent_of(&rec.node, start_ns, true);
            let agent = self.agent(rec.agent);
            let call = Call {
                id: SpanId::of_call(self.trace, &rec.node, rec.attempt),
                parent,
                group,
                start_ns,
                node: rec.node,
                agent,
                attempt: rec.attempt,
                model: None,
                prompt: None,
            };
            let ok = rec.stop_reason == StopReason::Completed && rec.error.is_none();
            let end = Ended {
                stop: Some(rec.stop_reason),
                ok,
                input_tokens: rec.usage.input,
                output_tokens: rec.usage.output,
                cost_usd: rec.usage.cost_usd,
                model: rec.model,
                output: self
                    .content
                    .filter(|_| ok || !rec.output.is_empty())
                    .map(|n| cut(&rec.output, n)),
                error: rec.error,
                backend: Some(rec.backend).filter(|b| !b.is_empty()),
                class: None,
                exit_code: None,
            };
            self.end_call(call, &end, end_ns, now_ns);
        }
    }

    /// The index of `agent` in `agents` (added if new).
    fn agent(&mut self, agent: String) -> usize {
        match self.agents.get_index_of(&agent) {
            Some(i) => i,
            None => self.agents.insert_full(agent, AgentInfo::default()).0,
        }
    }

    /// The span of call `c`, which ended at `end_ns` as `end` says.
    fn end_call(&mut self, c: Call, end: &Ended, end_ns: u64, now_ns: u64) {
        let (agent, info) = self
            .agents
            .get_index(c.agent)
            .map_or(("", &NO_AGENT), |(a, i)| (a.as_str(), i));
        let model = c.model.as_deref().or(info.model.as_deref());
        let head = self.head(c.id, c.parent, Kind::Client, c.start_ns, end_ns);
        let mut w = self.batch.span(head, (INVOKE_AGENT, agent));
        w.attr("gen_ai.operation.name", INVOKE_AGENT)
            .attr("gen_ai.agent.name", agent);
        let tokens = (end.input_tokens > 0 || end.output_tokens > 0)
            .then_some((end.input_tokens, end.output_tokens));
        if let Some(stop) = end.stop {
            w.attr("tfc.call.outcome", stop.as_str());
        }
        // Only a call that answered has a model that responded.
        w.attr_opt(
            "gen_ai.response.model",
            end.model.as_ref().filter(|_| end.ok),
        );
        let error_type = (!end.ok).then(|| error_class(end));
        if !end.ok {
            match (&end.error, end.stop) {
                (Some(e), _) => w.error(e),
                (None, Some(stop)) => w.error(&format!("the call stopped: {}", stop.as_str())),
                (None, None) => w.error("the call failed"),
            };
        }
        w.attr_opt("tfc.cost_usd", end.cost_usd);
        if let Some(text) = &end.output {
            w.attr("gen_ai.output.messages", &messages("assistant", text));
        }
        let provider = end.backend.as_deref();
        let provider = provider.or(info.backend.as_deref()).unwrap_or("unknown");
        w.attr("gen_ai.provider.name", provider)
            .attr_opt("gen_ai.request.model", model);
        if let Some((input, output)) = tokens {
            w.attr("gen_ai.usage.input_tokens", input)
                .attr("gen_ai.usage.output_tokens", output);
        }
        w.attr_opt("error.type", error_type)
            .attr("tfc.attempt", c.attempt)
            .attr("tfc.node", &c.node);
        if let Some(p) = &c.prompt {
            w.attr("gen_ai.input.messages", &messages("user", p));
        }
        w.end();
        let seconds = end_ns.saturating_sub(c.start_ns) as f64 / 1e9;
        self.metrics.call(
            CallPoint {
                operation: INVOKE_AGENT,
                provider,
                model,
                error: error_type,
            },
            seconds,
            tokens,
        );
        if let Some(g) = c.group.and_then(|len| self.open.get_mut(&c.node[..len])) {
            g.last_ns = g.last_ns.max(end_ns);
        }
        self.finished(now_ns);
    }

    fn work_started(&mut self, op: u64, id: SpanId, node: String, what: WorkKind, now_ns: u64) {
        let (parent, _) = self.parent_of(&node, now_ns, true);
        let work = Work {
            id,
            parent,
            start_ns: now_ns,
            node,
            what,
        };
        self.work.insert(op, work);
    }

    /// A script ended.
    fn script_ended(
        &mut self,
        op: u64,
        end: ScriptEnd,
        code: i32,
        spawn_error: Option<String>,
        now_ns: u64,
    ) {
        let Some(w) = self.work.remove(&op) else {
            return;
        };
        let error = match (&spawn_error, end) {
            (Some(e), _) => Some(format!("the script could not start: {e}")),
            (None, ScriptEnd::Timeout) => Some("the script's timeout stopped it".into()),
            (None, ScriptEnd::Cancelled) => Some("the run's abort stopped the script".into()),
            (None, ScriptEnd::Exited) if code != 0 => {
                Some(format!("the script exited with code {code}"))
            }
            (None, ScriptEnd::Exited) => None,
        };
        let exit = spawn_error.is_none().then_some(Attr::Int(i64::from(code)));
        let timeout = (spawn_error.is_none() && end == ScriptEnd::Timeout).then_some("timeout");
        self.end_work(
            w,
            &[
                ("process.exit.code", exit),
                ("error.type", timeout.map(Attr::Str)),
            ],
            error.as_deref(),
            now_ns,
        );
    }

    /// The pre-read is done: `chars` characters, from `files` of the files asked for, go
    /// before the phase's prompts.
    fn read_ended(&mut self, op: u64, chars: usize, files: usize, now_ns: u64) {
        if let Some(w) = self.work.remove(&op) {
            let asked = match w.what {
                WorkKind::PreRead { files } => files,
                WorkKind::Script { .. } => 0,
            };
            let missing = asked.saturating_sub(files);
            self.end_work(
                w,
                &[
                    ("tfc.context.chars", Some(Attr::from(chars))),
                    ("tfc.context.files", Some(Attr::from(files))),
                    (
                        "tfc.context.files_skipped",
                        (missing > 0).then(|| Attr::from(missing)),
                    ),
                ],
                None,
                now_ns,
            );
        }
    }

    /// End a script or pre-read with the attributes of its end, failed with `error` when
    /// given.
    fn end_work(
        &mut self,
        w: Work,
        ended: &[(&'static str, Option<Attr<'_>>)],
        error: Option<&str>,
        now_ns: u64,
    ) {
        let head = self.head(w.id, w.parent, Kind::Client, w.start_ns, now_ns);
        let word = match w.what {
            WorkKind::Script { .. } => "script",
            WorkKind::PreRead { .. } => "pre_read",
        };
        let mut s = self.batch.span(head, (word, &w.node));
        s.attr("tfc.phase.id", &w.node);
        match &w.what {
            WorkKind::Script { program } => {
                // A script's run counts as one attempt (SPEC §11.1, §16).
                s.attr("process.executable.name", program)
                    .attr("tfc.attempt", 1u32)
            }
            // The files read are counted when it ends (a cut pre-read read none).
            WorkKind::PreRead { .. } => &mut s,
        };
        for (k, v) in ended {
            s.attr_opt(k, *v);
        }
        if let Some(e) = error {
            s.error(e);
        }
        s.end();
        self.finished(now_ns);
    }

    /// A span was added to the batch: hand the batch over when it is full or old (dropped
    /// when full, while quiet).
    fn finished(&mut self, now_ns: u64) {
        if self.quiet {
            if self.batch.is_full() {
                self.batch.clear();
            }
        } else if self.batch.is_full() || now_ns.saturating_sub(self.handed_ns) >= HANDOVER_NS {
            self.hand_over(now_ns);
        }
    }

    /// Hand the spans ended so far to the exporter (nothing, while quiet).
    pub fn hand_over(&mut self, now_ns: u64) {
        if !self.quiet {
            self.handed_ns = now_ns;
            self.tel.hand_over(&mut self.batch);
        }
    }

    /// End every span still open at `now_ns`, as `cut` says.
    fn close_all(&mut self, cut: Cut<'_>, now_ns: u64) {
        let error = match cut {
            Cut::Interrupted(e) | Cut::Paused(e) => Some(e),
            Cut::Ended => None,
        };
        let ops: Vec<u64> = self.calls.keys().copied().collect();
        for op in ops {
            if let Some(c) = self.calls.remove(&op) {
                let agent = self.agents.get_index(c.agent).map_or("", |(a, _)| a);
                let head = self.head(c.id, c.parent, Kind::Client, c.start_ns, now_ns);
                let mut w = self.batch.span(head, (INVOKE_AGENT, agent));
                w.attr("gen_ai.operation.name", INVOKE_AGENT)
                    .attr("gen_ai.agent.name", agent)
                    .attr("tfc.attempt", c.attempt)
                    .attr("tfc.node", &c.node);
                if let Some(e) = error {
                    w.attr("error.type", "interrupted").error(e);
                }
                w.end();
                self.finished(now_ns);
            }
        }
        let ops: Vec<u64> = self.work.keys().copied().collect();
        for op in ops {
            if let Some(w) = self.work.remove(&op) {
                let class = error.map(|_| Attr::Str("interrupted"));
                self.end_work(w, &[("error.type", class)], error, now_ns);
            }
        }
        // Innermost first, so a phase's groups end with it.
        let mut nodes: Vec<String> = self.open.keys().cloned().collect();
        nodes.sort_by_key(|n| std::cmp::Reverse(n.len()));
        for node in nodes {
            if let Some(o) = self.open.remove(&node) {
                self.end_open(&node, o, now_ns, cut, now_ns);
            }
        }
    }

    /// The root span's head, ending at `end_ns`.
    fn root_head(&self, end_ns: u64) -> Head {
        Head {
            trace: self.trace,
            id: self.root,
            parent: self.caller,
            kind: Kind::Internal,
            start_ns: self.start_ns,
            end_ns,
        }
    }

    /// The run ended: whatever is still open ends now (a stopped run's phases and calls
    /// say they were interrupted), then the root span with the run's outcome and totals.
    fn finish(&mut self, end: &RunEnd, now_ns: u64) {
        let interrupted = match end.status {
            RunStatus::Running => "the run was interrupted".to_owned(),
            s => format!("the run ended ({}) before this finished", s.as_str()),
        };
        let paused = end.status == RunStatus::Paused;
        self.close_all(
            if paused {
                Cut::Paused(&interrupted)
            } else {
                Cut::Interrupted(&interrupted)
            },
            now_ns,
        );
        // ERROR only for a run that failed or was blocked (or cut off while running): its
        // reason, else its first failed phase and that phase's error. A pause is no error.
        let status = match end.status {
            RunStatus::Completed | RunStatus::Paused => None,
            s => Some(
                end.reason
                    .clone()
                    .or_else(|| end.first_failure.clone())
                    .unwrap_or_else(|| format!("the run ended {}", s.as_str())),
            ),
        };
        let mut w = self.batch.span(self.root_head(now_ns), ("run", &self.flow));
        w.attr("tfc.run.id", &self.run_id)
            .attr("tfc.flow.name", &self.flow)
            .attr("tfc.run.status", end.status.as_str())
            .attr("tfc.run.agent_calls", end.agent_calls)
            .attr("gen_ai.usage.input_tokens", end.input_tokens)
            .attr("gen_ai.usage.output_tokens", end.output_tokens)
            .attr_opt("tfc.run.parent_id", self.parent_run_id.as_ref())
            .attr_opt("tfc.usage.cost_usd", end.cost_usd)
            .attr_opt("tfc.run.output_phase", end.output_phase.as_ref())
            .attr_opt("tfc.run.reason", end.reason.as_ref());
        if let Some(l) = self.link {
            w.link(l);
        }
        if let Some(e) = &status {
            w.error(e);
        }
        w.end();
        self.close();
    }

    /// The trace has ended: its last spans and the run's metrics go to the exporter (unless
    /// quiet: the run ended before this process took it over).
    fn close(&mut self) {
        self.ended = true;
        if !self.quiet {
            self.tel.close(std::mem::take(&mut self.batch));
            self.tel.metrics(&self.metrics);
        }
    }
}

/// The class of a failed call, as `error.type` says it (SPEC §16): `timeout`,
/// `idle_timeout`, `exit_status`, `spawn`, `contract`, `http_<code>`, `aborted`,
/// `cancelled`, `interrupted`, `budget`, else the call's stop reason (SPEC §9.3) — never a
/// bare `error`.
pub(super) fn error_class(end: &Ended) -> &'static str {
    if let Some(class) = end.class {
        return class;
    }
    let error = end.error.as_deref().unwrap_or("");
    match end.stop {
        Some(StopReason::WallTimeout) => return "timeout",
        Some(StopReason::IdleTimeout) => return "idle_timeout",
        Some(StopReason::Cancelled) => return "cancelled",
        Some(StopReason::BackendMissing) if error.starts_with("cannot start") => return "spawn",
        _ => {}
    }
    if error == crate::run::summary::ABORTED {
        return "aborted";
    }
    if let Some(code) = http_status(error) {
        return http_class(code);
    }
    let lower = error.to_ascii_lowercase();
    let exited = end.exit_code.is_some_and(|c| c != 0);
    if exited || lower.contains("exited with code") || lower.contains("exited without") {
        return "exit_status";
    }
    if lower.starts_with("output contract violated") {
        return "contract";
    }
    if lower.contains("budget exceeded") {
        return "budget";
    }
    end.stop.unwrap_or(StopReason::Failed).as_str()
}

/// `http_<code>` for a status code in 100..=599 (kept once: metrics key their points by it).
fn http_class(code: u16) -> &'static str {
    static CLASSES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let all = CLASSES.get_or_init(|| (100..600).map(|c| format!("http_{c}")).collect());
    all.get(usize::from(code).saturating_sub(100))
        .map_or("failed", String::as_str)
}

/// The status code of an HTTP error text (`HTTP 429: …`, `… (HTTP 503)`).
fn http_status(error: &str) -> Option<u16> {
    let at = error.find("HTTP ")?;
    let digits = error.get(at + 5..at + 8)?;
    let after = error[at + 8..].chars().next();
    let code: u16 = digits.parse().ok()?;
    let whole =
        digits.bytes().all(|b| b.is_ascii_digit()) && after.is_none_or(|c| !c.is_ascii_digit());
    (whole && (100..600).contains(&code)).then_some(code)
}

/// The first `n` characters of `s`, with a note when cut.
pub(super) fn cut(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        None => s.to_owned(),
        Some((i, _)) => format!("{}… [{} more characters]", &s[..i], s[i..].chars().count()),
    }
}

/// A message list as the GenAI conventions put it in `gen_ai.input.messages` /
/// `gen_ai.output.messages`: JSON `[{"role", "parts": [{"type": "text", "content"}]}]`.
fn messages(role: &str, text: &str) -> String {
    let mut part = crate::value::Map::default();
    part.insert("type".into(), "text".into());
    part.insert("content".into(), text.into());
    let mut m = crate::value::Map::default();
    m.insert("role".into(), role.into());
    m.insert(
        "parts".into(),
        crate::value::Value::Array(vec![crate::value::Value::Object(part)]),
    );
    crate::value::Value::Array(vec![crate::value::Value::Object(m)]).to_json()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(stop: Option<StopReason>, error: &str) -> Ended {
        Ended {
            stop,
            ok: false,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: None,
            model: None,
            error: Some(error.into()),
            backend: None,
            output: None,
            class: None,
            exit_code: None,
        }
    }

    #[test]
    fn failed_calls_are_classed_never_as_a_bare_error() {
        let f = StopReason::Failed;
        for (end, class) in [
            (failed(Some(StopReason::Cancelled), "Aborted"), "cancelled"),
            (failed(Some(f), "Aborted"), "aborted"),
            (
                failed(Some(StopReason::BackendMissing), "cannot start `x`: denied"),
                "spawn",
            ),
            (
                failed(Some(StopReason::BackendMissing), "command not found: `x`"),
                "backend-missing",
            ),
            (
                failed(Some(f), "opencode: rate limit (HTTP 429)"),
                "http_429",
            ),
            (failed(Some(f), "HTTP 4290"), "failed"),
            (failed(Some(f), "claude exited with code 1"), "exit_status"),
            (
                Ended {
                    exit_code: Some(3),
                    ..failed(Some(f), "the agent broke down")
                },
                "exit_status",
            ),
            (
                Ended {
                    exit_code: Some(0),
                    ..failed(Some(f), "the agent broke down")
                },
                "failed",
            ),
            (
                failed(Some(f), "Output contract violated:\n- $.a: missing"),
                "contract",
            ),
            (
                failed(Some(f), "Budget exceeded: tokens 9 exceeded cap 1"),
                "budget",
            ),
            (
                failed(Some(StopReason::PermissionDenied), "no"),
                "permission-denied",
            ),
            (failed(None, "broke"), "failed"),
            (
                Ended {
                    class: Some("spawn"),
                    ..failed(None, "phase: no such directory")
                },
                "spawn",
            ),
        ] {
            assert_eq!(error_class(&end), class, "{:?}", end.error);
        }
    }
}
