//! The local driver: runs a [`Machine`] on a smol executor. It executes the machine's
//! commands — agent calls through the [`Agent`](crate::agent::Agent) trait with their wall
//! timeouts and stop grace, scripts through the process supervisor, timers, approval prompts,
//! working directories, context files, the store — and feeds every result back as an input.
//! It holds no run state of its own: only the handles of what is in flight.

mod calls;
mod persist;
mod tty;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_lite::future;
use smol::Timer;

use super::ctx::RunOptions;
use super::machine::{CallEnd, CallRequest, Command, Event, Input, Line, Machine, ScriptRequest};
use super::record::RunRecord;
use super::store::RunStore;
use crate::agent::{Cancel, CancelSource, ResolvedAgent, Roster};
use crate::telemetry::SpanContext;
use crate::value::Value;
use persist::stored_value_with_errors;
use tty::ask;

/// The Temporal activities resolve their calls' agents one by one.
#[cfg(feature = "temporal")]
pub(crate) use calls::resolve_agent;
pub(crate) use calls::{
    code_compiles, load_saved_flow, perform_call, prepare_call, resolve_agents, run_script,
};
#[cfg(test)]
pub(crate) use persist::input_line;
pub(crate) use persist::{PhaseTexts, flow_def_hash, stored_value, write_input_line};

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// What a task in flight reports.
enum Msg {
    /// An input for the machine.
    Input(Event),
    /// A prepared working directory (kept here until its phase ends).
    Dir(u64, super::workdir::Prepared),
}

/// The driver of one top-level run.
pub(crate) struct Driver {
    pub machine: Machine,
    pub agents: HashMap<String, ResolvedAgent>,
    pub roster: Arc<dyn Roster>,
    pub opts: RunOptions,
    /// The caller's abort.
    pub cancel: Cancel,
    pub store: Option<RunStore>,
    /// The flow's definition, for `run.json`.
    pub def: Option<Value>,
    /// `gitCommit` and `flowDefHash` for `run.json` (SPEC §10.1).
    meta: crate::value::Map,
    /// The invocation directory, for `run.json`.
    pub cwd: PathBuf,
    pub executor: Arc<smol::Executor<'static>>,
    /// Inputs to hand the machine before waiting for more, each with the moment (ns since the
    /// epoch) it arrived: its `at`, and its time in the trace.
    pub pending: VecDeque<(u64, Input)>,
    /// Every input, in order, when asked to keep them (replay tests).
    pub kept: Option<Vec<Input>>,
    tx: async_channel::Sender<Msg>,
    rx: async_channel::Receiver<Msg>,
    /// Stop handles of calls and scripts in flight.
    stops: BTreeMap<u64, Arc<CancelSource>>,
    timers: HashMap<u64, smol::Task<()>>,
    dirs: HashMap<u64, super::workdir::WorkDir>,
    store_errors: Vec<String>,
    finished: Option<Box<RunRecord>>,
    /// The commands of the input being handled (reused).
    cmds: Vec<Command>,
    /// The text of the journal line being written (reused).
    line: String,
    /// Each phase's last `run.json` text, reused while its record is unchanged.
    texts: PhaseTexts,
    /// The run's OpenTelemetry trace, when it is exported.
    trace: Option<super::trace::RunTrace>,
    /// The clock, read once per input for the trace: the commands of one input share it.
    trace_now: u64,
}

impl Driver {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        machine: Machine,
        agents: HashMap<String, ResolvedAgent>,
        roster: Arc<dyn Roster>,
        opts: RunOptions,
        cancel: Cancel,
        def: Option<Value>,
        cwd: PathBuf,
    ) -> Driver {
        let (tx, rx) = async_channel::unbounded();
        Driver {
            machine,
            agents,
            roster,
            opts,
            cancel,
            store: None,
            meta: def.as_ref().map(flow_def_hash).unwrap_or_default(),
            def,
            cwd,
            executor: Arc::new(smol::Executor::new()),
            pending: VecDeque::new(),
            kept: None,
            tx,
            rx,
            stops: BTreeMap::new(),
            timers: HashMap::new(),
            dirs: HashMap::new(),
            store_errors: Vec::new(),
            finished: None,
            cmds: Vec::new(),
            line: String::new(),
            texts: PhaseTexts::default(),
            trace: None,
            trace_now: 0,
        }
    }

    /// Start the run: the machine's first commands. With a store root, the run directory is
    /// created first (a run that cannot create its record does not start, SPEC §10.2).
    pub(crate) fn start(&mut self, root: Option<&Path>) -> std::io::Result<()> {
        let input = Input {
            at: now_ms(),
            what: Event::Start,
        };
        self.keep(&input);
        self.start_trace();
        if self.trace.is_some() {
            self.trace_now = crate::telemetry::now_ns();
        }
        let mut cmds = self.machine.handle(input);
        if let Some(root) = root {
            if let Some(l) = &self.opts.launch {
                self.meta.insert("launch".into(), l.clone());
            }
            if let Some(f) = self.opts.resume.as_ref().and_then(|r| r.fork.as_ref())
                && !matches!(f.forked_from, Value::Null)
            {
                self.meta.insert("forkedFrom".into(), f.forked_from.clone());
            }
            let commit = super::cache::fingerprint::head_commit(&self.cwd);
            self.meta
                .insert("gitCommit".into(), commit.map_or(Value::Null, Value::from));
            let first = match cmds.first() {
                Some(Command::Journal(Line::Event(v))) => v.clone(),
                _ => Value::Null,
            };
            if matches!(cmds.first(), Some(Command::Journal(Line::Event(_)))) {
                cmds.remove(0);
            }
            let (record, versions) = self.machine.snapshot_mut();
            record.store_errors = self.store_errors.clone();
            let flow = record.flow.clone();
            let run_id = record.run_id.clone();
            let (value, _) = stored_value(
                record,
                &versions,
                None,
                self.def.as_ref(),
                &self.cwd,
                &self.meta,
                &mut self.texts,
            );
            self.store = Some(RunStore::create(root, &flow, &run_id, &value, &first)?);
        }
        self.execute(cmds);
        self.flush_journal();
        Ok(())
    }

    /// Start the run's trace when it is exported; its ids go into `run.json`.
    fn start_trace(&mut self) {
        let flow = self.machine.flow_name().to_owned();
        self.trace = super::trace::RunTrace::for_run(
            &self.opts,
            self.machine.config(),
            &flow,
            &mut self.meta,
        );
    }

    fn keep(&mut self, input: &Input) {
        if let Some(k) = self.kept.as_mut() {
            k.push(input.clone());
        }
    }

    /// Run to the end (inside [`Driver::executor`]'s `run`, which drives the tasks in
    /// flight on this thread).
    pub(crate) async fn run(mut self) -> (RunRecord, Option<Vec<Input>>) {
        let mut interrupted = false;
        loop {
            while let Some((ns, input)) = self.pending.pop_front() {
                self.feed(input, ns);
            }
            self.flush_journal();
            if self.finished.is_some() {
                break;
            }
            let flush = self
                .store
                .as_ref()
                .filter(|s| s.is_dirty())
                .map(RunStore::wait);
            // Held for one turn on the stack: not worth a box per input.
            #[allow(clippy::large_enum_variant)]
            enum Next {
                Msg(Msg),
                Cancelled,
                Flush,
            }
            let cancel = self.cancel.clone();
            let rx = self.rx.clone();
            let next = future::or(
                async {
                    match rx.recv().await {
                        Ok(e) => Next::Msg(e),
                        Err(_) => Next::Cancelled,
                    }
                },
                future::or(
                    async {
                        if interrupted {
                            future::pending::<()>().await;
                        }
                        cancel.cancelled().await;
                        Next::Cancelled
                    },
                    async {
                        match flush {
                            Some(d) => {
                                Timer::after(d).await;
                                Next::Flush
                            }
                            None => future::pending().await,
                        }
                    },
                ),
            )
            .await;
            match next {
                Next::Msg(m) => match m {
                    Msg::Input(what) => self.now(what),
                    Msg::Dir(op, r) => {
                        let what = match r {
                            Ok((dir, warning)) => {
                                let path = Ok(dir.path().to_path_buf());
                                self.dirs.insert(op, dir);
                                Event::DirReady { op, path, warning }
                            }
                            Err(e) => Event::DirReady {
                                op,
                                path: Err(e),
                                warning: None,
                            },
                        };
                        self.now(what);
                    }
                },
                Next::Cancelled if !interrupted => {
                    interrupted = true;
                    self.now(Event::Interrupt);
                }
                Next::Cancelled => {}
                Next::Flush => self.save(true),
            }
        }
        let mut record = self.finished.take().map(|b| *b).unwrap_or_else(|| {
            let (r, _) = self.machine.snapshot();
            r.clone()
        });
        self.close(&mut record);
        self.hooks(&record).await;
        self.release(&mut record);
        if let Some(trace) = self.trace.take() {
            trace.finish(&record, crate::telemetry::now_ns());
        }
        (record, self.kept.take())
    }

    /// Hand one input, which arrived at `arrived_ns`, to the machine and do what it says.
    fn feed(&mut self, input: Input, arrived_ns: u64) {
        if let Some(trace) = self.trace.as_mut() {
            self.trace_now = arrived_ns;
            trace.input(&input.what, arrived_ns);
        }
        match &input.what {
            Event::CallEnded { op, .. } | Event::ScriptEnded { op, .. } => {
                self.stops.remove(op);
            }
            Event::TimerFired { op } => {
                self.timers.remove(op);
            }
            _ => {}
        }
        self.keep(&input);
        // One buffer for every input's commands.
        let mut cmds = std::mem::take(&mut self.cmds);
        self.machine.handle_into(input, &mut cmds);
        for c in cmds.drain(..) {
            self.command(c);
        }
        self.cmds = cmds;
    }

    /// Write the journal lines queued so far (see [`RunStore::queue`]): before anything
    /// leaves the process (a call, a script, a cache entry, `run.json`) and before the driver
    /// waits, so no effect and no moment of waiting is ahead of its journal. Steps answered
    /// at once in between (a reused state, a condition) share one write.
    fn flush_journal(&mut self) {
        if let Some(Err(e)) = self.store.as_mut().map(RunStore::flush_queued) {
            self.store_error(e);
        }
    }

    fn execute(&mut self, cmds: Vec<Command>) {
        for c in cmds {
            self.command(c);
        }
    }

    /// Run `fut` (boxed where it is made: a call's future is large, and moving it would copy
    /// it whole) and send its input back.
    fn send(&self, fut: std::pin::Pin<Box<dyn std::future::Future<Output = Event> + Send>>) {
        let tx = self.tx.clone();
        self.executor
            .spawn(async move {
                let e = fut.await;
                let _ = tx.send(Msg::Input(e)).await;
            })
            .detach();
    }

    /// An input that arrives now.
    fn now(&mut self, what: Event) {
        // One reading of the clock for the machine (ms) and the trace (ns).
        let ns = crate::telemetry::now_ns();
        self.pending.push_back((
            ns,
            Input {
                at: ns / 1_000_000,
                what,
            },
        ));
    }

    fn command(&mut self, c: Command) {
        // What reaches outside the process (a call, a script, a file) waits for the journal
        // lines before it: a crash never leaves an effect its journal does not explain
        // (`run.json` when it is rewritten, see `save`).
        if !matches!(
            c,
            Command::Journal(_)
                | Command::Progress(_)
                | Command::CacheLookup { .. }
                | Command::Save
                | Command::Finish(_)
        ) {
            self.flush_journal();
        }
        // The trace sees each command as it is carried out (a progress note once the sink has
        // seen it); a span it starts gives the call or script its `TRACEPARENT`.
        let traceparent = match self.trace.as_mut() {
            Some(t) if !matches!(c, Command::Progress(_)) => t.command(&c, self.trace_now),
            _ => None,
        };
        match c {
            Command::StartCall { op, request } => self.call(op, *request, traceparent),
            Command::Cancel { op } => {
                if let Some(s) = self.stops.get(&op) {
                    s.cancel();
                }
            }
            Command::StartScript { op, script } => self.script(op, *script, traceparent),
            Command::StartTimer { op, ms } => {
                let tx = self.tx.clone();
                let task = self.executor.spawn(async move {
                    Timer::after(Duration::from_millis(ms)).await;
                    let _ = tx.send(Msg::Input(Event::TimerFired { op })).await;
                });
                self.timers.insert(op, task);
            }
            Command::CancelTimer { op } => {
                self.timers.remove(&op);
            }
            Command::AskApproval {
                op,
                phase,
                message,
                upstream,
                ..
            } => self.send(Box::pin(async move {
                let (decision, note) = smol::unblock(move || ask(&message, &upstream)).await;
                Event::Approval {
                    op,
                    phase,
                    decision,
                    note,
                    by_signal: false,
                }
            })),
            Command::PrepareDir {
                op,
                phase,
                dir,
                base,
                run_id,
            } => {
                let root = self.opts.settings.project_root.clone();
                let tx = self.tx.clone();
                self.executor
                    .spawn(async move {
                        let r =
                            super::workdir::prepare(&dir, &base, &phase, &run_id, root.as_deref())
                                .await;
                        let _ = tx.send(Msg::Dir(op, r)).await;
                    })
                    .detach();
            }
            Command::ReleaseDir { op } => {
                self.dirs.remove(&op);
            }
            Command::ReadContext {
                op,
                paths,
                limit,
                base,
                ..
            } => {
                let text = super::workdir::read_context(&base, &paths, limit);
                self.now(Event::ContextRead { op, text });
            }
            Command::RunScorer { op, language, code } => self.send(Box::pin(async move {
                let (pass, detail) = code_compiles(&language, &code).await;
                Event::ScorerEnded { op, pass, detail }
            })),
            Command::LoadFlow { op, name, cwd } => {
                let text = load_saved_flow(&name, &cwd);
                self.now(Event::FlowLoaded { op, text });
            }
            Command::ResolveAgents { op, names, flow } => {
                let (backends, error) =
                    resolve_agents(names, &mut self.agents, self.roster.as_ref());
                self.now(Event::AgentsResolved {
                    op,
                    run_id: super::store::new_run_id(&flow),
                    backends,
                    error,
                });
            }
            Command::Progress(p) => {
                if let Some(sink) = &self.opts.progress {
                    sink.tell(&p);
                }
                if let Some(t) = self.trace.as_mut() {
                    t.progress(&p, self.trace_now);
                }
            }
            Command::CacheLookup {
                op,
                node,
                parts,
                fingerprints,
                run_only,
                cross_run,
                ttl_ms,
                cwd,
            } => {
                let root = self.opts.settings.project_root.clone();
                let resume = self.opts.resume.clone().filter(|_| run_only);
                let quick = fingerprints.is_empty();
                let look = move || {
                    super::resume::look_up(super::resume::Lookup {
                        op,
                        node: &node,
                        parts,
                        fingerprints: &fingerprints,
                        resumed: resume.as_deref(),
                        store: root.as_deref().filter(|_| cross_run),
                        ttl_ms,
                        cwd: &cwd,
                        now: now_ms(),
                    })
                };
                if quick {
                    // Quick: answered at once.
                    let e = look();
                    self.now(e);
                } else {
                    // Fingerprints read files and run git: off this thread.
                    self.send(Box::pin(smol::unblock(look)));
                }
            }
            Command::CacheStore { key, record } => {
                if let Some(root) = &self.opts.settings.project_root
                    && let Err(e) = super::cache::store::store(root, &key, &record, now_ms())
                {
                    self.store_error(std::io::Error::new(
                        e.kind(),
                        format!("the cross-run cache entry {key} could not be written: {e}"),
                    ));
                }
            }
            Command::StartShard { op, shard } => {
                // Only a host that shards sets `shard_items`; a local run never does.
                let result = crate::run::machine::ShardEnd::all_failed(
                    shard.calls.iter().map(|c| c.slot),
                    "internal error: a local run was asked to run a shard",
                );
                self.now(Event::ShardEnded {
                    op,
                    result: Box::new(result),
                });
            }
            Command::EndShard(_) | Command::CapShard { .. } => {}
            Command::Journal(line) => self.journal(line),
            Command::Save => self.save(false),
            Command::Finish(record) => self.finished = Some(record),
        }
    }

    fn journal(&mut self, line: Line) {
        let Some(store) = self.store.as_mut() else {
            return;
        };
        match line {
            Line::Event(v) => store.queue(&v),
            Line::Input(input) => {
                let mut line = std::mem::take(&mut self.line);
                line.clear();
                write_input_line(&input, &mut line);
                line.push('\n');
                store.queue_raw(&line);
                self.line = line;
            }
            Line::Raw(mut text) => {
                text.push('\n');
                store.queue_raw(&text);
            }
        }
    }

    /// Start one attempt of a call.
    fn call(&mut self, op: u64, req: CallRequest, traceparent: Option<SpanContext>) {
        let node = req.node.clone();
        let attempt = req.attempt;
        let ended = move |end: CallEnd| Event::CallEnded {
            op,
            node,
            attempt,
            end,
        };
        let mut prepared =
            match prepare_call(self.agents.get(&req.agent), self.roster.as_ref(), req) {
                Ok(p) => p,
                Err(end) => {
                    self.now(ended(end));
                    return;
                }
            };
        prepared.request.traceparent = traceparent.map(|t| t.traceparent());
        // One stop per attempt: fired by the machine's cancel, or by the wall timeout.
        let stop = Arc::new(CancelSource::new());
        self.stops.insert(op, stop.clone());
        self.send(Box::pin(async move {
            ended(perform_call(prepared, stop).await)
        }));
    }

    fn script(&mut self, op: u64, mut s: ScriptRequest, traceparent: Option<SpanContext>) {
        if s.argv.is_empty() {
            return;
        }
        s.traceparent = traceparent.map(|t| t.traceparent());
        let stop = Arc::new(CancelSource::new());
        let token = stop.token();
        self.stops.insert(op, stop);
        self.send(Box::pin(async move {
            let result = run_script(s, token).await;
            Event::ScriptEnded { op, result }
        }));
    }

    /// Rewrite `run.json`: now when `force`, else when the throttle allows.
    fn save(&mut self, force: bool) {
        let Some(store) = self.store.as_mut() else {
            return;
        };
        if !force && !store.due() {
            store.mark_dirty();
            return;
        }
        // `run.json` is never ahead of the journal.
        self.flush_journal();
        let since = Instant::now();
        let (record, versions) = self.machine.snapshot_mut();
        let (value, errors) = stored_value_with_errors(
            record,
            &self.store_errors,
            &versions,
            self.store.as_mut(),
            self.def.as_ref(),
            &self.cwd,
            &self.meta,
            &mut self.texts,
        );
        for e in errors {
            self.store_error(e);
        }
        if let Some(Err(e)) = self.store.as_mut().map(|s| s.save(&value, since)) {
            self.store_error(e);
        }
    }

    /// The run is over: the final `run.json`, the store closed, store problems in the record.
    fn close(&mut self, record: &mut RunRecord) {
        self.flush_journal();
        let Some(mut store) = self.store.take() else {
            return;
        };
        let versions = self.machine.versions();
        let errors = self.store_errors.clone();
        record.store_errors = errors.clone();
        record
            .warnings
            .extend(errors.iter().map(|e| format!("run record: {e}")));
        self.texts.closing = true;
        let (value, late) = stored_value(
            record,
            &versions,
            Some(&mut store),
            self.def.as_ref(),
            &self.cwd,
            &self.meta,
            &mut self.texts,
        );
        for e in late {
            self.store_error(e);
        }
        let since = Instant::now();
        if let Err(e) = store.save(&value, since) {
            self.store_error(e);
        }
        // Kept open (and locked) for the hooks' journal lines; `release` closes it.
        self.store = Some(store);
        self.late_store_errors(record, errors.len());
    }

    /// Store problems found since `before` (their count then) go into the record.
    fn late_store_errors(&mut self, record: &mut RunRecord, before: usize) {
        let late: Vec<String> = self.store_errors[before.min(self.store_errors.len())..]
            .iter()
            .filter(|e| !record.store_errors.contains(e))
            .map(|e| format!("run record: {e}"))
            .collect();
        record.store_errors = self.store_errors.clone();
        record.warnings.extend(late);
    }

    /// The flow's hook for how the run ended (SPEC §8.10), once `run.json` is final: its
    /// journal line, and one warning when it did not succeed. Never in a dry run; the run's
    /// record is not changed.
    async fn hooks(&mut self, record: &RunRecord) {
        if self.opts.settings.dry_run {
            return;
        }
        let flow = self.machine.flow.clone();
        let dir = self.store.as_ref().map(|s| s.dir().to_path_buf());
        let Some(call) = super::hooks::prepare(&flow, record, dir.as_deref(), &self.cwd) else {
            return;
        };
        let ran = super::hooks::run(&call, crate::process::Cancel::never()).await;
        if let Some(store) = self.store.as_mut()
            && let Err(e) = store.append(&ran.journal_value())
        {
            self.store_error(e);
        }
        if let (Some(error), Some(sink)) = (&ran.error, &self.opts.progress) {
            sink.warn(&format!("hooks.{}", call.event.key()), error);
        }
    }

    /// Close the store (its lock goes) once the hooks have run.
    fn release(&mut self, record: &mut RunRecord) {
        let Some(store) = self.store.take() else {
            return;
        };
        let before = self.store_errors.len();
        if let Err(e) = store.close() {
            self.store_error(e);
        }
        self.late_store_errors(record, before);
    }

    /// A failed write: reported once per distinct message; the run goes on.
    fn store_error(&mut self, e: std::io::Error) {
        let msg = e.to_string();
        if !self.store_errors.contains(&msg) && self.store_errors.len() < 20 {
            self.store_errors.push(msg);
        }
    }
}
