//! A run as an OpenTelemetry trace: one root span for the run; one span per phase under it
//! (a sub-flow's phases under their flow phase); an `item` span per fan-out item and an
//! `iteration` span per loop iteration where a phase has them; one GenAI span per agent call
//! under its phase, item or iteration; and spans of their own for scripts and pre-reads.
//!
//! [`RunTrace`] is what the driver feeds: the machine's progress notes, the calls, scripts
//! and pre-reads it starts and their ends, a Temporal shard's calls from its result. On the
//! run's path it only notes down what happened, with the time, as plain data (`bunch`) and
//! hands the notes over a bunch at a time; `spans` turns them into spans on the telemetry's
//! deferred-work thread, and the exporter's thread sends them. Names and attributes follow
//! the OpenTelemetry GenAI conventions (`invoke_agent {agent}`, `gen_ai.*`); tfc's own facts
//! are `tfc.*`.
//!
//! A [`TracePlan`] names the trace; span ids are a function of the plan and the notes, in
//! order. On Temporal the worker holding a run's workflow feeds its trace from the
//! workflow's steps; a worker taking the run over replays them quietly and names every span
//! as the worker before it did (`temporal::traced`).

mod bunch;
mod spans;

use std::sync::{Arc, Mutex};

use crate::telemetry::{IdGen, SpanContext, SpanId, Telemetry, TraceId};

use super::machine::{Command, Event, Progress};
use super::record::RunRecord;
use bunch::Bunch;
pub(crate) use spans::RunIdentity;
use spans::Spans;

/// Notes handed over at once, at most…
const BUNCH: usize = 256;

/// … and the longest a note waits to be handed over (ns), when the run goes on.
const BUNCH_NS: u64 = 250_000_000;

/// The trace of one run, as its driver sees it.
pub(crate) struct RunTrace {
    tel: Arc<Telemetry>,
    trace: TraceId,
    /// Prompts and outputs are recorded, cut to this many characters.
    content: Option<usize>,
    /// What turns the notes into spans (on the deferred-work thread).
    spans: Arc<Mutex<Spans>>,
    /// Notes not handed over yet, with their times.
    notes: Bunch,
    /// When notes were last handed over.
    handed_ns: u64,
    /// The paths of each pre-read in flight, by operation (its span counts the files read).
    reads: std::collections::HashMap<u64, Vec<String>>,
}

/// Who and where a run's trace is: its ids, the caller's span (`TRACEPARENT`), the trace of
/// the run it resumes, whether prompts and outputs are recorded, and when the run started.
/// The process that starts the run decides it; on Temporal it travels with the run's input
/// to the workers, which export the run's spans.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TracePlan {
    pub trace: TraceId,
    pub root: SpanId,
    pub caller: Option<SpanId>,
    pub link: Option<SpanContext>,
    /// Prompts and outputs are recorded, cut to this many characters.
    pub content: Option<usize>,
    pub start_ns: u64,
}

impl TracePlan {
    /// A new trace starting at `now_ns`: a child of `caller` when given (its trace id is
    /// kept), linked to the trace of the run it resumes (`link`).
    pub fn new(
        caller: Option<SpanContext>,
        link: Option<SpanContext>,
        content: Option<usize>,
        now_ns: u64,
    ) -> TracePlan {
        let mut ids = IdGen::new();
        TracePlan {
            trace: caller.map_or_else(|| ids.trace(), |c| c.trace),
            root: ids.span(),
            caller: caller.map(|c| c.span),
            link,
            content,
            start_ns: now_ns,
        }
    }

    /// The trace of the run `opts` start, when they export it; its ids (and a link to it,
    /// with `[telemetry] trace_url`) go into `meta`, the members `run.json` adds to the
    /// record.
    pub fn for_run(opts: &super::RunOptions, meta: &mut crate::value::Map) -> Option<TracePlan> {
        let tel = opts.telemetry.as_ref()?;
        let link = opts.resume.as_ref().and_then(|r| r.parent_trace);
        let plan = TracePlan::new(
            opts.trace_parent,
            link,
            tel.settings().content,
            crate::telemetry::now_ns(),
        );
        let id = plan.trace.to_string();
        if let Some(url) = &tel.settings().trace_url {
            meta.insert("traceUrl".into(), url.replace("{traceId}", &id).into());
        }
        meta.insert("traceId".into(), id.into());
        meta.insert("rootSpanId".into(), plan.root.to_string().into());
        Some(plan)
    }

    /// As JSON text (a Temporal run's input).
    #[cfg_attr(not(feature = "temporal"), allow(dead_code))]
    pub fn to_json(&self) -> String {
        let wire = PlanWire {
            trace_id: self.trace.to_string(),
            root_span_id: self.root.to_string(),
            caller_span_id: self.caller.map(|c| c.to_string()),
            link: self.link.map(|l| l.traceparent()),
            content: self.content,
            start_ns: self.start_ns,
        };
        serde_json::to_string(&wire).unwrap_or_default()
    }

    /// Read back from [`TracePlan::to_json`]'s text.
    #[cfg_attr(not(feature = "temporal"), allow(dead_code))]
    pub fn from_json(text: &str) -> Option<TracePlan> {
        let w: PlanWire = serde_json::from_str(text).ok()?;
        Some(TracePlan {
            trace: TraceId::parse(&w.trace_id)?,
            root: SpanId::parse(&w.root_span_id)?,
            caller: match w.caller_span_id {
                Some(c) => Some(SpanId::parse(&c)?),
                None => None,
            },
            link: match w.link {
                Some(l) => Some(SpanContext::from_traceparent(&l)?),
                None => None,
            },
            content: w.content,
            start_ns: w.start_ns,
        })
    }
}

/// [`TracePlan`] as JSON: ids in hex, the link as a `traceparent`.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlanWire {
    trace_id: String,
    root_span_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    caller_span_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    link: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    content: Option<usize>,
    start_ns: u64,
}

impl RunTrace {
    /// The trace of the run `cfg` describes, when `opts` export it (see
    /// [`TracePlan::for_run`]).
    pub fn for_run(
        opts: &super::RunOptions,
        cfg: &super::machine::Config,
        flow: &str,
        meta: &mut crate::value::Map,
    ) -> Option<RunTrace> {
        let plan = TracePlan::for_run(opts, meta)?;
        let tel = opts.telemetry.clone()?;
        Some(RunTrace::start(
            tel,
            RunIdentity::of(cfg, flow),
            &plan,
            false,
        ))
    }

    /// The run `who`'s trace, as `plan` says; while `quiet`, its spans are made but not
    /// exported (a Temporal worker replaying what the worker before it exported), until
    /// [`RunTrace::live`].
    pub fn start(
        tel: Arc<Telemetry>,
        who: RunIdentity<'_>,
        plan: &TracePlan,
        quiet: bool,
    ) -> RunTrace {
        let spans = Spans::start(tel.clone(), who, plan, quiet);
        RunTrace {
            content: plan.content,
            tel,
            trace: plan.trace,
            spans: Arc::new(Mutex::new(spans)),
            notes: Bunch::new(BUNCH),
            handed_ns: plan.start_ns,
            reads: std::collections::HashMap::new(),
        }
    }

    fn context(&self, span: SpanId) -> SpanContext {
        SpanContext {
            trace: self.trace,
            span,
            sampled: true,
        }
    }

    /// An input for the machine, before the machine has it: the end of a call, a script or
    /// a pre-read.
    pub fn input(&mut self, what: &Event, now_ns: u64) {
        let n = &mut self.notes;
        match what {
            Event::CallEnded { op, end, .. } => n.call_ended(now_ns, *op, end, self.content),
            Event::ScriptEnded { op, result } => n.script_ended(now_ns, *op, result),
            Event::ContextRead { op, text } => {
                let asked = self.reads.remove(op).unwrap_or_default();
                let files = super::workdir::context_files_read(&asked, text);
                n.read_ended(now_ns, *op, text.chars().count(), files);
            }
            Event::ShardEnded { result, .. } => n.shard_ended(now_ns, &result.lines),
            _ => return,
        }
        self.noted(now_ns);
    }

    /// A command of the machine, as it is carried out: progress (the driver tells its notes
    /// through [`RunTrace::progress`] once its sink has seen them), and the start of a
    /// call, a script or a pre-read. The span a call or script starts comes back (its
    /// `TRACEPARENT`).
    pub fn command(&mut self, c: &Command, now_ns: u64) -> Option<SpanContext> {
        let n = &mut self.notes;
        let span = match c {
            Command::Progress(p) => {
                self.progress(p, now_ns);
                return None;
            }
            Command::StartCall { op, request } => {
                n.call_started(now_ns, *op, request, self.content);
                Some(*op)
            }
            Command::StartScript { op, script } => {
                let program = script.argv.first().map_or("", String::as_str);
                n.script_started(now_ns, *op, &script.node, program);
                Some(*op)
            }
            Command::ReadContext {
                op, paths, node, ..
            } => {
                n.read_started(now_ns, *op, node, paths.len());
                self.reads.insert(*op, paths.clone());
                None
            }
            _ => return None,
        };
        self.noted(now_ns);
        // A call's or script's span is named by its operation: known before its start is.
        span.map(|op| self.context(SpanId::of_op(self.trace, op)))
    }

    /// A progress note of the machine (the driver hands over those it is done with): a phase
    /// starts, ends, or tells news.
    pub fn progress(&mut self, p: &Progress, now_ns: u64) {
        if matches!(p.status, "running" | "done" | "failed" | "skipped") {
            self.notes.progress(now_ns, p);
            self.noted(now_ns);
        }
    }

    /// A note was added at `now_ns`: hand the notes over when there are enough of them or
    /// the oldest has waited long enough.
    fn noted(&mut self, now_ns: u64) {
        if self.notes.len() >= BUNCH || now_ns.saturating_sub(self.handed_ns) >= BUNCH_NS {
            self.hand_over(now_ns);
        }
    }

    fn hand_over(&mut self, now_ns: u64) {
        self.handed_ns = now_ns;
        if self.notes.len() == 0 {
            return;
        }
        let notes = std::mem::replace(&mut self.notes, Bunch::new(BUNCH));
        let spans = self.spans.clone();
        self.tel.defer(Box::new(move || {
            let mut spans = spans
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            notes.read(|note, at| spans.apply(note, at));
        }));
    }

    /// From `now_ns` on, spans are exported: what was noted so far was exported by another
    /// process (see [`RunTrace::start`]).
    #[cfg_attr(not(feature = "temporal"), allow(dead_code))]
    pub fn live(&mut self, now_ns: u64) {
        self.notes.live(now_ns);
        self.noted(now_ns);
    }

    /// Hand over what was noted, and the spans ended so far to the exporter, now (a run
    /// that waits, on a process that may not live to its end).
    #[cfg_attr(not(feature = "temporal"), allow(dead_code))]
    pub fn flush(&mut self, now_ns: u64) {
        self.hand_over(now_ns);
        let spans = self.spans.clone();
        self.tel.defer(Box::new(move || {
            spans
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .hand_over(now_ns);
        }));
    }

    /// The run ended: whatever is still open ends now (a stopped run's phases and calls
    /// say they were interrupted), then the root span with the run's outcome and totals.
    pub fn finish(mut self, record: &RunRecord, now_ns: u64) {
        self.notes.finish(now_ns, record);
        self.hand_over(now_ns);
    }
}

/// The `traceparent` a call or script of operation `op` gets in a run traced as `trace_id`
/// (32 hex digits, as `run.json`'s `traceId`): what a Temporal worker hands its agents and
/// scripts, naming the span the run's trace records for the operation.
#[cfg(feature = "temporal")]
pub(crate) fn op_traceparent(trace_id: &str, op: u64) -> Option<String> {
    traceparent(trace_id, |trace| SpanId::of_op(trace, op))
}

/// The `traceparent` attempt `attempt` of node `node`'s call gets in a run traced as
/// `trace_id` when the call is not one of the run's operations (a Temporal shard's): the
/// span the run's trace records for it from the shard's result.
#[cfg(feature = "temporal")]
pub(crate) fn call_traceparent(trace_id: &str, node: &str, attempt: u32) -> Option<String> {
    traceparent(trace_id, |trace| SpanId::of_call(trace, node, attempt))
}

#[cfg(feature = "temporal")]
fn traceparent(trace_id: &str, span: impl FnOnce(TraceId) -> SpanId) -> Option<String> {
    let trace = TraceId::parse(trace_id)?;
    let context = SpanContext {
        trace,
        span: span(trace),
        sampled: true,
    };
    Some(context.traceparent())
}
