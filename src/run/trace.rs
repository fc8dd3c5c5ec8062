//! A run as an OpenTelemetry trace: one root span for the run; one span per phase under it
//! (a sub-flow's phases under their flow phase); an `item` span per fan-out item and an
//! `iteration` span per loop iteration where a phase has them; one GenAI span per agent call
//! under its phase, item or iteration; and spans of their own for scripts and pre-reads.
//!
//! [`RunTrace`] is fed what the driver sees — the machine's progress notes, the calls,
//! scripts and pre-reads it starts and their ends — and hands finished spans to the
//! [`Telemetry`] sink in batches. It only records plain data on the run's thread; encoding and
//! sending happen on the exporter's. Names and attributes follow the OpenTelemetry GenAI
//! conventions (`invoke_agent {agent}`, `gen_ai.*`); tfc's own facts are `tfc.*`.

use std::collections::HashMap;

/// Maps keyed by node or operation, with a fast hash (keys are ours, not an attacker's).
type Fast<K, V> = HashMap<K, V, foldhash::fast::FixedState>;
use std::sync::Arc;

use crate::agent::StopReason;
use crate::telemetry::metrics::{Call as CallPoint, Metrics};
use crate::telemetry::span::{Kind, Span, Status, Value};
use crate::telemetry::{BATCH, IdGen, SpanContext, SpanId, Telemetry, TraceId};

use super::machine::{CallEnd, CallRequest, Command, Event, Progress, ScriptEnd, ScriptOutcome};
use super::record::RunRecord;

/// `gen_ai.operation.name` of an agent call.
const INVOKE_AGENT: &str = "invoke_agent";

/// Finished spans wait at most this long (ns) before they are handed over.
const HANDOVER_NS: u64 = 1_000_000_000;

/// A span that has started.
struct Open {
    id: SpanId,
    parent: SpanId,
    name: String,
    start_ns: u64,
    /// An item or iteration span: ends with its phase, at its last child's end.
    group: bool,
    /// Item and iteration spans opened under it (a phase's groups are looked for only then).
    groups: u32,
    /// The latest end of its children (groups).
    last_ns: u64,
    attrs: Vec<(&'static str, Value)>,
}

impl Open {
    /// The finished span, ended at `end_ns` (never before its start).
    fn into_span(self, trace: TraceId, kind: Kind, end_ns: u64, status: Status) -> Span {
        Span {
            trace,
            id: self.id,
            parent: Some(self.parent),
            name: self.name,
            kind,
            start_ns: self.start_ns,
            end_ns: end_ns.max(self.start_ns),
            attrs: self.attrs,
            status,
            links: Vec::new(),
        }
    }
}

/// An agent call in flight.
struct Call {
    id: SpanId,
    parent: SpanId,
    group: Option<String>,
    start_ns: u64,
    node: String,
    agent: String,
    attempt: u32,
    model: Option<String>,
    prompt: Option<String>,
}

/// The trace of one run.
pub(crate) struct RunTrace {
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
    /// Agents' backends and models, for calls' attributes.
    backends: indexmap::IndexMap<String, String>,
    models: indexmap::IndexMap<String, String>,
    /// Phase, item and iteration spans by node.
    open: Fast<String, Open>,
    calls: Fast<u64, Call>,
    /// Scripts and pre-reads by operation.
    work: Fast<u64, Open>,
    batch: crate::telemetry::Batch,
    handed_ns: u64,
    metrics: Metrics,
    content: Option<usize>,
}

/// Who the run is: what the root span says about it.
pub(crate) struct RunIdentity<'a> {
    pub run_id: &'a str,
    pub flow: &'a str,
    pub parent_run_id: Option<&'a str>,
    pub backends: &'a indexmap::IndexMap<String, String>,
    pub models: &'a indexmap::IndexMap<String, String>,
}

impl RunTrace {
    /// The trace of the run `cfg` describes, when `opts` export it; its ids (and a link to it,
    /// with `[telemetry] trace_url`) go into `meta`, the members `run.json` adds to the record.
    pub fn for_run(
        opts: &super::RunOptions,
        cfg: &super::machine::Config,
        flow: &str,
        meta: &mut crate::value::Map,
    ) -> Option<RunTrace> {
        let tel = opts.telemetry.clone()?;
        let link = opts.resume.as_ref().and_then(|r| r.parent_trace);
        let trace = RunTrace::start(
            tel.clone(),
            RunIdentity {
                run_id: &cfg.run_id,
                flow,
                parent_run_id: cfg.parent_run_id.as_deref(),
                backends: &cfg.backends,
                models: &cfg.models,
            },
            opts.trace_parent,
            link,
            crate::telemetry::now_ns(),
        );
        let root = trace.root();
        let id = root.trace.to_string();
        if let Some(url) = &tel.settings().trace_url {
            meta.insert("traceUrl".into(), url.replace("{traceId}", &id).into());
        }
        meta.insert("traceId".into(), id.into());
        meta.insert("rootSpanId".into(), root.span.to_string().into());
        Some(trace)
    }

    /// Start the run's trace at `now_ns`: a child of `caller` when given (its trace id is
    /// kept), linked to the trace of the run it resumes (`link`).
    pub fn start(
        tel: Arc<Telemetry>,
        who: RunIdentity<'_>,
        caller: Option<SpanContext>,
        link: Option<SpanContext>,
        now_ns: u64,
    ) -> RunTrace {
        let mut ids = IdGen::new();
        let trace = caller.map_or_else(|| ids.trace(), |c| c.trace);
        let root = ids.span();
        let content = tel.settings().content;
        let batch = tel.batch();
        RunTrace {
            tel,
            ids,
            trace,
            root,
            caller: caller.map(|c| c.span),
            link,
            start_ns: now_ns,
            run_id: who.run_id.to_owned(),
            flow: who.flow.to_owned(),
            parent_run_id: who.parent_run_id.map(str::to_owned),
            backends: who.backends.clone(),
            models: who.models.clone(),
            open: Fast::default(),
            calls: Fast::default(),
            work: Fast::default(),
            batch,
            handed_ns: now_ns,
            metrics: Metrics::new(now_ns),
            content,
        }
    }

    /// The run's root span (its trace id goes into `run.json`).
    pub fn root(&self) -> SpanContext {
        SpanContext {
            trace: self.trace,
            span: self.root,
            sampled: true,
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
        match what {
            Event::CallEnded { op, end, .. } => self.call_ended(*op, end, now_ns),
            Event::ScriptEnded { op, result } => self.script_ended(*op, result, now_ns),
            Event::ContextRead { op, text } => self.read_ended(*op, text.chars().count(), now_ns),
            _ => {}
        }
    }

    /// A command of the machine, as it is carried out: progress, and the start of a call, a
    /// script or a pre-read. The `traceparent` of the span it starts comes back.
    pub fn command(&mut self, c: &Command, now_ns: u64) -> Option<String> {
        match c {
            Command::Progress(p) => self.progress(p, now_ns),
            Command::StartCall { op, request } => {
                return Some(self.call_started(*op, request, now_ns));
            }
            Command::StartScript { op, script } => {
                let program = script.argv.first().map_or("", String::as_str);
                return Some(self.script_started(*op, &script.node, program, now_ns));
            }
            Command::ReadContext {
                op, paths, node, ..
            } => self.read_started(*op, node, paths.len(), now_ns),
            _ => {}
        }
        None
    }

    /// A progress note of the machine: a phase starts, ends, or tells news.
    pub fn progress(&mut self, p: &Progress, now_ns: u64) {
        match p.status {
            "running" if !self.open.contains_key(&p.phase) => {
                let open = self.phase_span(p, now_ns);
                self.open.insert(p.phase.clone(), open);
            }
            "done" | "failed" | "skipped" => self.phase_ended(p, now_ns),
            _ => {}
        }
    }

    /// A phase's span, starting now.
    fn phase_span(&mut self, p: &Progress, now_ns: u64) -> Open {
        let (parent, _) = self.parent_of(&p.phase, now_ns, false);
        let mut attrs = Vec::with_capacity(12);
        attrs.push(("tfc.phase.id", Value::Str(p.phase.clone())));
        if let Some(k) = p.kind {
            attrs.push(("tfc.phase.kind", Value::Static(k.as_str())));
        }
        if p.detail.as_deref() == Some("re-run by a gate's rework") {
            attrs.push(("tfc.phase.rework", Value::Bool(true)));
        }
        Open {
            id: self.ids.span(),
            parent,
            name: name("phase", &p.phase),
            start_ns: now_ns,
            group: false,
            groups: 0,
            last_ns: now_ns,
            attrs,
        }
    }

    fn phase_ended(&mut self, p: &Progress, now_ns: u64) {
        // Skipped (or answered from a cache) without ever running: a span of no length,
        // where it would have been.
        let mut open = match self.open.remove(&p.phase) {
            Some(o) => o,
            None => self.phase_span(p, now_ns),
        };
        if open.groups > 0 {
            self.close_groups(open.id, now_ns);
        }
        let mut attrs = std::mem::take(&mut open.attrs);
        attrs.push(("tfc.phase.status", Value::Static(p.status)));
        attrs.push(("tfc.phase.attempts", Value::from(p.attempts)));
        let f = &p.facts;
        if let Some(hit) = f.cache_hit {
            attrs.push(("tfc.phase.cache_hit", Value::Static(hit)));
        }
        if let Some((_, total)) = f.items {
            attrs.push(("tfc.phase.items", Value::from(total as u64)));
        }
        if let Some(t) = &f.tally {
            attrs.push(("tfc.phase.items_done", Value::from(t.done as u64)));
            attrs.push(("tfc.phase.items_failed", Value::from(t.failed as u64)));
        }
        if let Some((n, _)) = f.iteration {
            attrs.push(("tfc.loop.iterations", Value::from(n)));
        }
        if let Some(stop) = f.stop {
            attrs.push(("tfc.loop.stop", Value::Static(stop)));
        }
        if let Some(v) = f.verdict {
            attrs.push(("tfc.gate.verdict", Value::Static(v)));
        }
        if let Some(r) = &f.reason {
            attrs.push(("tfc.gate.reason", Value::Str(r.clone())));
        }
        if let Some((round, _)) = f.rework {
            attrs.push(("tfc.gate.rework_rounds", Value::from(round)));
        }
        if p.tokens > 0 {
            attrs.push(("tfc.usage.tokens", Value::from(p.tokens)));
        }
        if let Some(c) = p.cost_usd {
            attrs.push(("tfc.usage.cost_usd", Value::F64(c)));
        }
        let mut status = Status::Unset;
        match (p.status, &p.detail) {
            ("skipped", Some(why)) => {
                attrs.push(("tfc.phase.skip_reason", Value::Str(why.clone())))
            }
            ("failed", Some(e)) => status = Status::Error(e.clone()),
            ("failed", None) => status = Status::Error("the phase failed".into()),
            _ => {}
        }
        let span = Open { attrs, ..open }.into_span(self.trace, Kind::Internal, now_ns, status);
        self.finished(span, now_ns);
    }

    /// End the item and iteration spans of the phase span `phase`.
    fn close_groups(&mut self, phase: SpanId, now_ns: u64) {
        let nodes: Vec<String> = self
            .open
            .iter()
            .filter(|(_, o)| o.group && o.parent == phase)
            .map(|(n, _)| n.clone())
            .collect();
        for node in nodes {
            if let Some(g) = self.open.remove(&node) {
                let end = g.last_ns;
                let span = g.into_span(self.trace, Kind::Internal, end, Status::Unset);
                self.finished(span, now_ns);
            }
        }
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
            return Some((o.id, o.group.then_some(n.len())));
        }
        let k = n.rfind(['#', '@'])?;
        let (prefix, index) = (&n[..k], &n[k + 1..]);
        if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let phase = self.open.get_mut(prefix).filter(|o| !o.group)?;
        phase.groups += 1;
        let phase = phase.id;
        let (word, key) = if n.as_bytes()[k] == b'@' {
            ("iteration", "tfc.loop.iteration")
        } else {
            ("item", "tfc.item.index")
        };
        let attrs = vec![
            ("tfc.phase.id", Value::Str(prefix.to_owned())),
            (key, Value::Int(index.parse().unwrap_or(i64::MAX))),
        ];
        let id = self.ids.span();
        self.open.insert(
            n.to_owned(),
            Open {
                id,
                parent: phase,
                name: name(word, n),
                start_ns: now_ns,
                group: true,
                groups: 0,
                last_ns: now_ns,
                attrs,
            },
        );
        Some((id, Some(n.len())))
    }

    /// An agent call's attempt starts; its `traceparent` (for `TRACEPARENT`) comes back.
    pub fn call_started(&mut self, op: u64, req: &CallRequest, now_ns: u64) -> String {
        let (parent, group) = self.parent_of(&req.node, now_ns, true);
        let group = group.map(|len| req.node[..len].to_owned());
        let id = SpanId::of_op(self.trace, op);
        let model = req
            .model
            .clone()
            .or_else(|| self.models.get(&req.agent).cloned());
        self.calls.insert(
            op,
            Call {
                id,
                parent,
                group,
                start_ns: now_ns,
                node: req.node.clone(),
                agent: req.agent.clone(),
                attempt: req.attempt,
                model,
                prompt: self.content.map(|n| cut(&req.prompt, n)),
            },
        );
        self.context(id).traceparent()
    }

    /// An agent call's attempt ended.
    pub fn call_ended(&mut self, op: u64, end: &CallEnd, now_ns: u64) {
        let Some(c) = self.calls.remove(&op) else {
            return;
        };
        let backend = self.backends.get(&c.agent).cloned();
        let mut attrs: Vec<(&'static str, Value)> = Vec::with_capacity(14);
        attrs.push(("gen_ai.operation.name", Value::Static(INVOKE_AGENT)));
        attrs.push(("gen_ai.agent.name", Value::Str(c.agent.clone())));
        let mut status = Status::Unset;
        let mut error_type = None;
        let mut tokens = None;
        let start_ns = c.start_ns;
        let provider = match end {
            CallEnd::Outcome(o) => {
                if o.usage.input > 0 || o.usage.output > 0 {
                    tokens = Some((o.usage.input, o.usage.output));
                }
                let stop = o.stop();
                attrs.push(("tfc.call.outcome", Value::Static(stop.as_str())));
                if let Some(m) = &o.model {
                    attrs.push(("gen_ai.response.model", Value::Str(m.clone())));
                }
                if !o.is_ok() {
                    let kind = match stop {
                        StopReason::WallTimeout => "timeout",
                        StopReason::IdleTimeout => "idle_timeout",
                        StopReason::Cancelled => "cancelled",
                        _ => "error",
                    };
                    error_type = Some(kind);
                    status = Status::Error(
                        o.error
                            .clone()
                            .unwrap_or_else(|| format!("the call stopped: {}", stop.as_str())),
                    );
                }
                if let Some(cost) = o.usage.cost_usd {
                    attrs.push(("tfc.cost_usd", Value::F64(cost)));
                }
                if let (Some(n), true) = (self.content, o.is_ok() || !o.output.is_empty()) {
                    attrs.push((
                        "gen_ai.output.messages",
                        Value::Str(messages("assistant", &cut(&o.output, n))),
                    ));
                }
                if o.backend.is_empty() {
                    backend
                } else {
                    Some(o.backend.clone())
                }
            }
            CallEnd::NoBackend { message }
            | CallEnd::Refused { message }
            | CallEnd::Panicked { message } => {
                error_type = Some("error");
                status = Status::Error(message.clone());
                backend
            }
        };
        let provider = provider.unwrap_or_else(|| "unknown".into());
        let seconds = now_ns.saturating_sub(start_ns) as f64 / 1e9;
        self.metrics.call(
            CallPoint {
                operation: INVOKE_AGENT,
                provider: &provider,
                model: c.model.as_deref(),
                error: error_type,
            },
            seconds,
            tokens,
        );
        attrs.push(("gen_ai.provider.name", Value::Str(provider)));
        if let Some(m) = c.model {
            attrs.push(("gen_ai.request.model", Value::Str(m)));
        }
        if let Some((input, output)) = tokens {
            attrs.push(("gen_ai.usage.input_tokens", Value::from(input)));
            attrs.push(("gen_ai.usage.output_tokens", Value::from(output)));
        }
        if let Some(e) = error_type {
            attrs.push(("error.type", Value::Static(e)));
        }
        attrs.push(("tfc.attempt", Value::from(c.attempt)));
        attrs.push(("tfc.node", Value::Str(c.node)));
        if let Some(p) = c.prompt {
            attrs.push(("gen_ai.input.messages", Value::Str(messages("user", &p))));
        }
        if let Some(g) = c.group.and_then(|g| self.open.get_mut(&g)) {
            g.last_ns = g.last_ns.max(now_ns);
        }
        let span = Span {
            trace: self.trace,
            id: c.id,
            parent: Some(c.parent),
            name: name(INVOKE_AGENT, &c.agent),
            kind: Kind::Client,
            start_ns,
            end_ns: now_ns.max(start_ns),
            attrs,
            status,
            links: Vec::new(),
        };
        self.finished(span, now_ns);
    }

    /// A script phase's command starts; its `traceparent` comes back.
    pub fn script_started(&mut self, op: u64, node: &str, program: &str, now_ns: u64) -> String {
        let (parent, _) = self.parent_of(node, now_ns, true);
        let id = SpanId::of_op(self.trace, op);
        let attrs = vec![
            ("tfc.phase.id", Value::Str(node.to_owned())),
            ("process.executable.name", Value::Str(program.to_owned())),
        ];
        self.work.insert(
            op,
            Open {
                id,
                parent,
                name: name("script", node),
                start_ns: now_ns,
                group: false,
                groups: 0,
                last_ns: now_ns,
                attrs,
            },
        );
        self.context(id).traceparent()
    }

    /// A script ended.
    pub fn script_ended(&mut self, op: u64, r: &ScriptOutcome, now_ns: u64) {
        let Some(mut w) = self.work.remove(&op) else {
            return;
        };
        let mut status = Status::Unset;
        if let Some(e) = &r.spawn_error {
            status = Status::Error(format!("the script could not start: {e}"));
        } else {
            w.attrs
                .push(("process.exit.code", Value::Int(i64::from(r.code))));
            match r.end {
                ScriptEnd::Timeout => {
                    w.attrs.push(("error.type", Value::Static("timeout")));
                    status = Status::Error("the script's timeout stopped it".into());
                }
                ScriptEnd::Cancelled => {
                    status = Status::Error("the run's abort stopped the script".into());
                }
                ScriptEnd::Exited if r.code != 0 => {
                    status = Status::Error(format!("the script exited with code {}", r.code));
                }
                ScriptEnd::Exited => {}
            }
        }
        self.end_work(w, status, now_ns);
    }

    /// A phase's context files are read (its pre-read).
    pub fn read_started(&mut self, op: u64, node: &str, files: usize, now_ns: u64) {
        let (parent, _) = self.parent_of(node, now_ns, true);
        let attrs = vec![
            ("tfc.phase.id", Value::Str(node.to_owned())),
            ("tfc.context.files", Value::from(files as u64)),
        ];
        let id = self.ids.span();
        self.work.insert(
            op,
            Open {
                id,
                parent,
                name: name("pre_read", node),
                start_ns: now_ns,
                group: false,
                groups: 0,
                last_ns: now_ns,
                attrs,
            },
        );
    }

    /// The pre-read is done: `chars` characters go before the phase's prompts.
    pub fn read_ended(&mut self, op: u64, chars: usize, now_ns: u64) {
        if let Some(mut w) = self.work.remove(&op) {
            w.attrs
                .push(("tfc.context.chars", Value::from(chars as u64)));
            self.end_work(w, Status::Unset, now_ns);
        }
    }

    fn end_work(&mut self, w: Open, status: Status, now_ns: u64) {
        let span = w.into_span(self.trace, Kind::Client, now_ns, status);
        self.finished(span, now_ns);
    }

    fn finished(&mut self, span: Span, now_ns: u64) {
        self.batch.push(span);
        if self.batch.len() >= BATCH || now_ns.saturating_sub(self.handed_ns) >= HANDOVER_NS {
            self.hand_over(now_ns);
        }
    }

    fn hand_over(&mut self, now_ns: u64) {
        self.handed_ns = now_ns;
        self.tel.hand_over(&mut self.batch);
    }

    /// The run ended: whatever is still open ends now (a stopped run's phases and calls
    /// say they were interrupted), then the root span with the run's outcome and totals.
    pub fn finish(mut self, record: &RunRecord, now_ns: u64) {
        let interrupted = Status::Error(match record.status {
            super::RunStatus::Running => "the run was interrupted".to_owned(),
            s => format!("the run ended ({}) before this finished", s.as_str()),
        });
        let ops: Vec<u64> = self.calls.keys().copied().collect();
        for op in ops {
            if let Some(c) = self.calls.remove(&op) {
                let span = Span {
                    trace: self.trace,
                    id: c.id,
                    parent: Some(c.parent),
                    name: name(INVOKE_AGENT, &c.agent),
                    kind: Kind::Client,
                    start_ns: c.start_ns,
                    end_ns: now_ns.max(c.start_ns),
                    attrs: vec![
                        ("gen_ai.operation.name", Value::Static(INVOKE_AGENT)),
                        ("gen_ai.agent.name", Value::Str(c.agent)),
                        ("tfc.attempt", Value::from(c.attempt)),
                        ("tfc.node", Value::Str(c.node)),
                    ],
                    status: interrupted.clone(),
                    links: Vec::new(),
                };
                self.finished(span, now_ns);
            }
        }
        let ops: Vec<u64> = self.work.keys().copied().collect();
        for op in ops {
            if let Some(w) = self.work.remove(&op) {
                self.end_work(w, interrupted.clone(), now_ns);
            }
        }
        // Innermost first, so a phase's groups end with it.
        let mut nodes: Vec<String> = self.open.keys().cloned().collect();
        nodes.sort_by_key(|n| std::cmp::Reverse(n.len()));
        for node in nodes {
            if let Some(o) = self.open.remove(&node) {
                let status = if o.group {
                    Status::Unset
                } else {
                    interrupted.clone()
                };
                let span = o.into_span(self.trace, Kind::Internal, now_ns, status);
                self.finished(span, now_ns);
            }
        }
        let mut attrs = vec![
            ("tfc.run.id", Value::Str(self.run_id.clone())),
            ("tfc.flow.name", Value::Str(self.flow.clone())),
            ("tfc.run.status", Value::Static(record.status.as_str())),
            ("tfc.run.agent_calls", Value::from(record.agent_calls())),
            ("gen_ai.usage.input_tokens", Value::from(record.usage.input)),
            (
                "gen_ai.usage.output_tokens",
                Value::from(record.usage.output),
            ),
        ];
        if let Some(p) = &self.parent_run_id {
            attrs.push(("tfc.run.parent_id", Value::Str(p.clone())));
        }
        if let Some(c) = record.usage.cost_usd {
            attrs.push(("tfc.usage.cost_usd", Value::F64(c)));
        }
        if let Some(p) = &record.output_phase {
            attrs.push(("tfc.run.output_phase", Value::Str(p.clone())));
        }
        let status = match (record.status, &record.reason) {
            (super::RunStatus::Completed, _) => Status::Unset,
            (s, Some(r)) => Status::Error(format!("{}: {r}", s.as_str())),
            (s, None) => Status::Error(format!("the run ended {}", s.as_str())),
        };
        if let Some(r) = &record.reason {
            attrs.push(("tfc.run.reason", Value::Str(r.clone())));
        }
        let root = Span {
            trace: self.trace,
            id: self.root,
            parent: self.caller,
            name: format!("run {}", self.flow),
            kind: Kind::Internal,
            start_ns: self.start_ns,
            end_ns: now_ns.max(self.start_ns),
            attrs,
            status,
            links: self.link.into_iter().collect(),
        };
        self.batch.push(root);
        self.hand_over(now_ns);
        self.tel.metrics(&self.metrics, now_ns);
    }
}

/// The `traceparent` a call or script of operation `op` gets in a run traced as `trace_id`
/// (32 hex digits, as `run.json`'s `traceId`): what a Temporal worker hands its agents and
/// scripts, naming the span the run's follower records for the operation.
#[cfg(feature = "temporal")]
pub(crate) fn op_traceparent(trace_id: &str, op: u64) -> Option<String> {
    let trace = TraceId::parse(trace_id)?;
    Some(
        SpanContext {
            trace,
            span: SpanId::of_op(trace, op),
            sampled: true,
        }
        .traceparent(),
    )
}

/// A span's name: what it is, then which (`phase build`, `invoke_agent reviewer`).
fn name(what: &str, which: &str) -> String {
    let mut s = String::with_capacity(what.len() + 1 + which.len());
    s.push_str(what);
    s.push(' ');
    s.push_str(which);
    s
}

/// The first `n` characters of `s`, with a note when cut.
fn cut(s: &str, n: usize) -> String {
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
