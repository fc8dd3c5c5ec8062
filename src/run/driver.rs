//! The local driver: runs a [`Machine`] on a smol executor. It executes the machine's
//! commands — agent calls through the [`Agent`](crate::agent::Agent) trait with their wall
//! timeouts and stop grace, scripts through the process supervisor, timers, approval prompts,
//! working directories, context files, the store — and feeds every result back as an input.
//! It holds no run state of its own: only the handles of what is in flight.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_lite::future;
use smol::Timer;

use super::ctx::{RunOptions, caught};
use super::machine::{
    CallDir, CallEnd, CallOutcome, CallRequest, Command, Decision, Event, Input, Line, Machine,
    ScriptEnd, ScriptOutcome, ScriptRequest,
};
use super::record::RunRecord;
use super::store::RunStore;
use crate::agent::{
    Cancel, CancelSource, Outcome, Request, ResolvedAgent, Roster, StopReason, ToolPolicy,
};
use crate::process::env;
use crate::process::{End, Keep, ProcessSpec, StdoutMode, run_process};
use crate::value::Value;

/// How long a backend may keep running after it was told to stop.
const STOP_GRACE: Duration = Duration::from_millis(5500);

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
    /// Inputs to hand the machine before waiting for more.
    pub pending: VecDeque<Input>,
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
}

/// The `run.json` text of each phase as last written, with the record it was written from:
/// a rewrite serialises only the phases whose record changed since.
#[derive(Default)]
pub(crate) struct PhaseTexts {
    /// By the phase's place in the record: its id, record and text.
    at: Vec<Option<(String, super::record::PhaseRecord, String)>>,
    /// Where the last phase text was made (in `at`), for runs of equal records (every pending
    /// phase of a chain).
    last: Option<usize>,
    /// The text of `def`, which does not change during a run: made once.
    def: Option<String>,
    /// The last write (the run is over): texts made now are not kept.
    closing: bool,
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
        let mut cmds = self.machine.handle(input);
        if let Some(root) = root {
            if let Some(l) = &self.opts.launch {
                self.meta.insert("launch".into(), l.clone());
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
            while let Some(input) = self.pending.pop_front() {
                self.feed(input);
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
                    Msg::Input(what) => {
                        self.pending.push_back(Input { at: now_ms(), what });
                    }
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
                        self.pending.push_back(Input { at: now_ms(), what });
                    }
                },
                Next::Cancelled if !interrupted => {
                    interrupted = true;
                    self.pending.push_back(Input {
                        at: now_ms(),
                        what: Event::Interrupt,
                    });
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
        (record, self.kept.take())
    }

    /// Hand one input to the machine and do what it says.
    fn feed(&mut self, input: Input) {
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

    fn now(&mut self, what: Event) {
        self.pending.push_back(Input { at: now_ms(), what });
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
        match c {
            Command::StartCall { op, request } => self.call(op, *request),
            Command::Cancel { op } => {
                if let Some(s) = self.stops.get(&op) {
                    s.cancel();
                }
            }
            Command::StartScript { op, script } => self.script(op, *script),
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
            } => self.send(Box::pin(async move {
                let (decision, note) = smol::unblock(move || ask(&message, &upstream)).await;
                Event::Approval {
                    op,
                    phase,
                    decision,
                    note,
                }
            })),
            Command::PrepareDir {
                op,
                phase,
                dir,
                base,
                run_id,
            } => {
                let root = self.opts.project_root.clone();
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
            } => {
                let text = super::workdir::read_context(&base, &paths, limit);
                self.now(Event::ContextRead { op, text });
            }
            Command::RunScorer { op, language, code } => self.send(Box::pin(async move {
                let (pass, detail) = code_compiles(&language, &code).await;
                Event::ScorerEnded { op, pass, detail }
            })),
            Command::LoadFlow { op, name, cwd } => {
                let saved = crate::project::SavedFlows::new(&cwd);
                let text = crate::check::FlowLoader::load(&saved, &name)
                    .ok()
                    .map(|(_, t)| t);
                self.now(Event::FlowLoaded { op, text });
            }
            Command::ResolveAgents { op, names, flow } => {
                let mut backends = Vec::new();
                let mut error = None;
                for a in names {
                    let resolved = match self.agents.get(&a) {
                        Some(r) => Ok(r.clone()),
                        None => self.roster.resolve(&a),
                    };
                    match resolved {
                        Ok(r) => {
                            backends.push((a.clone(), r.backend_name.clone()));
                            self.agents.insert(a, r);
                        }
                        Err(e) => {
                            error = Some(e);
                            break;
                        }
                    }
                }
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
                let root = self.opts.project_root.clone();
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
                if let Some(root) = &self.opts.project_root
                    && let Err(e) = super::cache::store::store(root, &key, &record, now_ms())
                {
                    self.store_error(std::io::Error::new(
                        e.kind(),
                        format!("the cross-run cache entry {key} could not be written: {e}"),
                    ));
                }
            }
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
        }
    }

    /// Start one attempt of a call.
    fn call(&mut self, op: u64, req: CallRequest) {
        let node = req.node.clone();
        let attempt = req.attempt;
        let ended = move |end: CallEnd| Event::CallEnded {
            op,
            node,
            attempt,
            end,
        };
        let prepared = match prepare_call(self.agents.get(&req.agent), self.roster.as_ref(), req) {
            Ok(p) => p,
            Err(end) => {
                self.now(ended(end));
                return;
            }
        };
        // One stop per attempt: fired by the machine's cancel, or by the wall timeout.
        let stop = Arc::new(CancelSource::new());
        self.stops.insert(op, stop.clone());
        self.send(Box::pin(async move {
            ended(perform_call(prepared, stop).await)
        }));
    }

    fn script(&mut self, op: u64, s: ScriptRequest) {
        if s.argv.is_empty() {
            return;
        }
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
        if let Err(e) = store.save(&value, since).and_then(|()| store.close()) {
            self.store_error(e);
        }
        let late: Vec<String> = self.store_errors[errors.len()..]
            .iter()
            .map(|e| format!("run record: {e}"))
            .collect();
        record.store_errors = self.store_errors.clone();
        record.warnings.extend(late);
    }

    /// A failed write: reported once per distinct message; the run goes on.
    fn store_error(&mut self, e: std::io::Error) {
        let msg = e.to_string();
        if !self.store_errors.contains(&msg) && self.store_errors.len() < 20 {
            self.store_errors.push(msg);
        }
    }
}

/// A call ready to be made: the backend, the request, and what the record keeps of it.
pub(crate) struct PreparedCall {
    backend: Arc<dyn crate::agent::Agent>,
    backend_name: String,
    model: Option<String>,
    warnings: Vec<String>,
    request: Request,
}

/// Turn the machine's request into a backend request: the agent's backend (`resolved`), the
/// branch directory checked, the model role mapped. `Err`: the call's end, nothing called.
pub(crate) fn prepare_call(
    resolved: Option<&ResolvedAgent>,
    roster: &dyn Roster,
    req: CallRequest,
) -> Result<PreparedCall, CallEnd> {
    let Some(resolved) = resolved else {
        let message = format!("no backend for agent '{}'", req.agent);
        return Err(CallEnd::NoBackend { message });
    };
    let cwd = match &req.cwd {
        CallDir::At(p) => p.to_path_buf(),
        CallDir::Branch {
            index,
            path,
            phase,
            base,
        } => match super::workdir::existing(
            base,
            path,
            &format!("of branch {index} \"{path}\""),
            true,
        ) {
            Ok(d) => d,
            Err(e) => {
                let message = format!("{phase}: {e}");
                return Err(CallEnd::Refused { message });
            }
        },
    };
    let mut warnings = Vec::new();
    let model = match req.model.as_ref().map(|m| roster.role_model(m)) {
        Some(Ok(m)) => Some(m),
        Some(Err(w)) => {
            warnings.push(w);
            resolved.model.clone()
        }
        None => resolved.model.clone(),
    };
    let tools = if req.tools.is_empty() {
        resolved.tools.clone()
    } else {
        req.tools.clone()
    };
    let request = Request {
        run_id: req.run_id,
        phase_id: req.phase_id,
        node: req.node,
        attempt: req.attempt,
        agent: req.agent,
        system_prompt: resolved.system_prompt.clone(),
        prompt: req.prompt,
        model: model.clone(),
        thinking: req.thinking.or_else(|| resolved.thinking.clone()),
        tools: ToolPolicy::from_tools(&tools),
        cwd,
        idle_timeout: req.idle_timeout_ms.map(Duration::from_millis),
        wall_timeout: req.wall_timeout_ms.map(Duration::from_millis),
        purpose: req.purpose,
        iteration: req.iteration,
        item_index: req.item_index,
        json_stub: req.json_stub,
    };
    Ok(PreparedCall {
        backend: resolved.backend.clone(),
        backend_name: resolved.backend_name.clone(),
        model,
        warnings,
        request,
    })
}

/// Make one attempt of a prepared call; `stop` cancels it (the backend gets 5.5 s to stop).
pub(crate) async fn perform_call(call: PreparedCall, stop: Arc<CancelSource>) -> CallEnd {
    let PreparedCall {
        backend,
        backend_name,
        model,
        warnings,
        request,
    } = call;
    let wall = request.wall_timeout;
    let started = Instant::now();
    match caught(attempt_call(backend.as_ref(), request, wall, stop)).await {
        Ok(outcome) => {
            let mut o = CallOutcome {
                output: outcome.output,
                usage: outcome.usage.into(),
                model: outcome.model.or(model),
                stop: outcome.stop.as_str().to_owned(),
                error: outcome.error,
                stderr: outcome.stderr,
                warnings,
                backend: backend_name,
                elapsed_ms: started.elapsed().as_millis() as u64,
            };
            o.warnings.extend(outcome.warnings);
            CallEnd::Outcome(Box::new(o))
        }
        Err(message) => CallEnd::Panicked { message },
    }
}

/// Run a script under the process supervisor; `token` stops it (its process group killed).
pub(crate) async fn run_script(s: ScriptRequest, token: crate::agent::Cancel) -> ScriptOutcome {
    let spawn_failed = |e: String| ScriptOutcome {
        spawn_error: Some(e),
        end: ScriptEnd::Exited,
        code: -1,
        stdout: String::new(),
        stdout_truncated: false,
        stderr: String::new(),
        elapsed_ms: 0,
    };
    let Some((program, args)) = s.argv.split_first() else {
        return spawn_failed("the script has no command".into());
    };
    let mut spec = ProcessSpec::new(program).args(args);
    spec.cwd = Some(s.cwd.clone());
    spec.env = env::parent_env();
    env::set(
        &mut spec.env,
        [
            ("TFC_RUN_ID", s.run_id.as_str()),
            ("TFC_PHASE_ID", s.phase_id.as_str()),
        ],
    );
    spec.stdin = s.input.map(String::into_bytes);
    spec.wall_timeout = Some(Duration::from_millis(s.timeout_ms));
    spec.kill_on_cancel = true;
    spec.stdout = StdoutMode::Keep(Keep::Head(1_048_576));
    spec.stderr = Keep::Head(500);
    // A script's stdout beyond its first MiB is read and dropped (SPEC §3.11), never capped.
    spec.max_output = None;
    match run_process(spec, token).await {
        Err(e) => spawn_failed(e.to_string()),
        Ok(r) => ScriptOutcome {
            spawn_error: None,
            end: match r.end {
                End::WallTimeout | End::IdleTimeout => ScriptEnd::Timeout,
                End::Cancelled => ScriptEnd::Cancelled,
                _ => ScriptEnd::Exited,
            },
            code: r.code(),
            stdout: r.stdout_text(),
            stdout_truncated: r.stdout_truncated,
            stderr: r.stderr_text(),
            elapsed_ms: r.elapsed.as_millis() as u64,
        },
    }
}

/// `flowDefHash`: 16 hex digits of sha256 of the definition's canonical JSON.
pub(crate) fn flow_def_hash(def: &Value) -> crate::value::Map {
    let mut m = crate::value::Map::default();
    let hash = super::cache::key::hex16(super::cache::key::canonical_json(def).as_bytes());
    m.insert("flowDefHash".into(), Value::from(hash));
    m
}

/// The journal line of an input.
#[cfg(test)]
pub(crate) fn input_line(input: &Input) -> String {
    let mut out = String::new();
    write_input_line(input, &mut out);
    out
}

/// [`input_line`] appended to `out` (no newline): the input is serialised straight into the
/// text, with no intermediate JSON tree.
pub(crate) fn write_input_line(input: &Input, out: &mut String) {
    out.push_str("{\"type\":\"input\",\"ts\":\"");
    out.push_str(&super::record::timestamp(
        std::time::UNIX_EPOCH + Duration::from_millis(input.at),
    ));
    out.push_str("\",\"input\":");
    // Serialising an `Input` cannot fail (string keys only); were it to, the line says null.
    let start = out.len();
    let mut bytes = std::mem::take(out).into_bytes();
    if serde_json::to_writer(&mut bytes, input).is_err() {
        bytes.truncate(start);
        bytes.extend_from_slice(b"null");
    }
    *out = String::from_utf8(bytes).unwrap_or_else(|e| {
        let mut b = e.into_bytes();
        b.truncate(start);
        b.extend_from_slice(b"null");
        String::from_utf8_lossy(&b).into_owned()
    });
    out.push('}');
}

#[allow(clippy::too_many_arguments)]
fn stored_value_with_errors(
    record: &mut RunRecord,
    store_errors: &[String],
    versions: &[u64],
    store: Option<&mut RunStore>,
    def: Option<&Value>,
    cwd: &Path,
    meta: &crate::value::Map,
    texts: &mut PhaseTexts,
) -> (String, Vec<std::io::Error>) {
    record.store_errors = store_errors.to_vec();
    stored_value(record, versions, store, def, cwd, meta, texts)
}

/// `run.json`: the record plus `def`, `cwd`, `tfcVersion`; outputs over
/// [`INLINE_OUTPUT_MAX`](super::store::INLINE_OUTPUT_MAX) are kept in files of their own, each
/// written once per result version.
#[allow(clippy::too_many_arguments)]
pub(crate) fn stored_value(
    record: &RunRecord,
    versions: &[u64],
    mut store: Option<&mut RunStore>,
    def: Option<&Value>,
    cwd: &Path,
    meta: &crate::value::Map,
    texts: &mut PhaseTexts,
) -> (String, Vec<std::io::Error>) {
    let limit = super::store::INLINE_OUTPUT_MAX;
    let mut errors = Vec::new();
    let mut m = record.fields();
    if record.final_output.len() > limit
        && let Some(store) = store.as_deref_mut()
    {
        match store.final_output(&record.final_output) {
            Ok(file) => {
                m.insert("finalOutput".into(), Value::Null);
                m.insert("finalOutputFile".into(), Value::from(file));
            }
            Err(e) => errors.push(e),
        }
    }
    if def.is_some() {
        // Its text is written from the cache below.
        m.insert("def".into(), Value::Null);
        m.insert("cwd".into(), Value::from(cwd.display().to_string()));
        m.insert("tfcVersion".into(), Value::from(env!("CARGO_PKG_VERSION")));
        for (k, v) in meta {
            m.insert(k.clone(), v.clone());
        }
    }
    // Written member by member, each phase built, written and dropped in turn: the same
    // text as the whole record's `to_pretty_json`, without a tree of the whole record.
    use crate::value::{newline, write_readable_at, write_string};
    let mut out = String::with_capacity(256 * (record.phases.len() + 4));
    out.push('{');
    for (i, (key, v)) in m.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline(&mut out, 1);
        write_string(key, &mut out);
        out.push_str(": ");
        if key == "def"
            && let Some(def) = def
        {
            let text = texts.def.get_or_insert_with(|| {
                let mut t = String::new();
                write_readable_at(def, &mut t, 1);
                t
            });
            out.push_str(text);
            continue;
        }
        if key != "phases" {
            write_readable_at(v, &mut out, 1);
            continue;
        }
        if record.phases.is_empty() {
            out.push_str("{}");
            continue;
        }
        out.push('{');
        for (k, (id, p)) in record.phases.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            newline(&mut out, 2);
            write_string(id, &mut out);
            out.push_str(": ");
            let version = versions.get(k).copied().unwrap_or(0);
            let value = match store.as_deref_mut() {
                Some(store) if p.output.len() > limit => {
                    match store.externalize(id, version, &p.output, p.json.as_ref()) {
                        Ok(files) => p.to_value_stored(Some(&files)),
                        Err(e) => {
                            errors.push(e);
                            p.to_value()
                        }
                    }
                }
                _ => {
                    // Inline output: the text depends on the record alone.
                    if let Some(Some((i, r, t))) = texts.at.get(k)
                        && i == id
                        && r == p
                    {
                        out.push_str(t);
                        continue;
                    }
                    if texts.closing {
                        p.write_readable_at(&mut out, 2);
                        continue;
                    }
                    let same = texts
                        .last
                        .and_then(|l| texts.at.get(l))
                        .and_then(Option::as_ref)
                        .filter(|(_, r, _)| r == p)
                        .map(|(_, _, t)| t.clone());
                    let text = same.unwrap_or_else(|| {
                        let mut t = String::new();
                        p.write_readable_at(&mut t, 2);
                        t
                    });
                    out.push_str(&text);
                    if texts.at.len() <= k {
                        texts
                            .at
                            .resize_with(record.phases.len().max(k + 1), || None);
                    }
                    texts.at[k] = Some((id.clone(), p.clone(), text));
                    texts.last = Some(k);
                    continue;
                }
            };
            write_readable_at(&value, &mut out, 2);
        }
        newline(&mut out, 1);
        out.push('}');
    }
    newline(&mut out, 0);
    out.push('}');
    (out, errors)
}

/// One attempt, with the wall timeout and the stop enforced here for every backend: the
/// backend is told to stop (by the machine's cancel, or here at the wall timeout), and given
/// 5.5 s to do so.
async fn attempt_call(
    backend: &dyn crate::agent::Agent,
    request: Request,
    wall: Option<Duration>,
    stop: Arc<CancelSource>,
) -> Outcome {
    let abort = stop.token();
    let call = backend.call(request, abort.clone());
    futures_lite::pin!(call);
    enum Trigger {
        Abort,
        Wall,
    }
    let watchdog = async {
        future::or(
            async {
                abort.cancelled().await;
                Trigger::Abort
            },
            async {
                match wall {
                    Some(w) => Timer::after(w).await,
                    None => future::pending::<Instant>().await,
                };
                Trigger::Wall
            },
        )
        .await
    };
    let first = future::or(async { Ok((&mut call).await) }, async {
        Err(watchdog.await)
    })
    .await;
    let (mut outcome, trigger) = match first {
        // The backend saw the machine's cancel before the watchdog did.
        Ok(outcome) if abort.is_cancelled() && !outcome.is_ok() => (outcome, Trigger::Abort),
        Ok(outcome) => return outcome,
        Err(t) => {
            stop.cancel();
            let settled = future::or(async { Some((&mut call).await) }, async {
                Timer::after(STOP_GRACE).await;
                None
            })
            .await;
            let outcome = settled.unwrap_or_else(|| {
                Outcome::failed(
                    StopReason::Cancelled,
                    "Phase runner did not stop within 5500ms after abort",
                )
            });
            (outcome, t)
        }
    };
    match trigger {
        Trigger::Wall => {
            outcome.stop = StopReason::WallTimeout;
        }
        Trigger::Abort => {
            outcome.stop = StopReason::Cancelled;
            if outcome.error.is_none() || outcome.error.as_deref() == Some("cancelled") {
                outcome.error = Some("Aborted".into());
            }
        }
    }
    outcome
}

/// Ask on the terminal (stderr), reading the answer from stdin.
fn ask(message: &str, upstream: &str) -> (Decision, Option<String>) {
    use std::io::{BufRead, Write};
    let mut err = std::io::stderr();
    let shown: String = upstream.chars().take(2000).collect();
    let _ = writeln!(err, "\n── approval ──\n{message}");
    if !shown.is_empty() {
        let _ = writeln!(err, "\n{shown}");
    }
    let stdin = std::io::stdin();
    loop {
        let _ = write!(err, "[a]pprove / [r]eject / [e]dit note: ");
        let _ = err.flush();
        let mut line = String::new();
        if stdin.lock().read_line(&mut line).unwrap_or(0) == 0 {
            return (Decision::Reject, Some("no answer (stdin closed)".into()));
        }
        match line.trim() {
            "a" | "approve" => return (Decision::Approve, None),
            "r" | "reject" => return (Decision::Reject, None),
            "e" | "edit" => {
                let _ = write!(err, "note: ");
                let _ = err.flush();
                let mut note = String::new();
                let _ = stdin.lock().read_line(&mut note);
                return (Decision::Edit, Some(note.trim().to_owned()));
            }
            _ => {}
        }
    }
}

/// `node --check` / `tsc --noEmit` on a temp file, 30 s; a missing tool fails.
pub(crate) async fn code_compiles(language: &str, code: &str) -> (bool, Option<String>) {
    let (ext, program, args): (&str, &str, &[&str]) = if language == "typescript" {
        ("ts", "tsc", &["--noEmit"])
    } else {
        ("js", "node", &["--check"])
    };
    let dir = std::env::temp_dir().join(format!(
        "tfc-score-{}-{}",
        std::process::id(),
        super::store::random_hex(6)
    ));
    if std::fs::create_dir_all(&dir).is_err() {
        return (false, Some("cannot create a temp dir".into()));
    }
    let file = dir.join(format!("candidate.{ext}"));
    let _ = std::fs::write(&file, code);
    let mut cmd = smol::process::Command::new(program);
    cmd.args(args)
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let result = match cmd.spawn() {
        Err(e) => (false, Some(format!("{program} not available: {e}"))),
        Ok(child) => {
            let waited = future::or(async { Some(child.output().await) }, async {
                Timer::after(Duration::from_secs(30)).await;
                None
            })
            .await;
            match waited {
                Some(Ok(out)) if out.status.success() => (true, None),
                Some(Ok(out)) => (
                    false,
                    Some(
                        String::from_utf8_lossy(&out.stderr)
                            .lines()
                            .next()
                            .unwrap_or("does not compile")
                            .to_owned(),
                    ),
                ),
                Some(Err(e)) => (false, Some(e.to_string())),
                None => (false, Some("timed out after 30 s".into())),
            }
        }
    };
    let _ = std::fs::remove_dir_all(&dir);
    result
}

#[cfg(test)]
mod stored_tests {
    use super::*;
    use crate::agent::{FnAgent, Outcome};
    use crate::run::{Interpreter, RunOptions};
    use crate::value::Map;

    fn nested(depth: usize) -> Value {
        let mut v = Value::from("leaf");
        for i in 0..depth {
            v = if i % 2 == 0 {
                Value::Array(vec![Value::Number(i as f64), v])
            } else {
                let mut m = Map::default();
                m.insert(format!("k{i}"), v);
                Value::Object(m)
            };
        }
        v
    }

    #[test]
    fn the_record_is_written_piece_by_piece_as_its_whole_pretty_json() {
        let flow = r#"{"name": "s", "phases": [{"id": "a", "task": "one"},
            {"id": "b", "dependsOn": ["a"], "task": "two \"{steps.a.output}\""}]}"#;
        let agent = FnAgent::new("echo", |req| Outcome::ok(format!("<{}>\n", req.prompt)));
        let mut record = Interpreter::with_agent(agent)
            .options(RunOptions::default())
            .eval_text("s", flow, Map::default())
            .expect("runs");
        record.warnings.push("a: w".into());
        if let Some(p) = record.phases.get_mut("b") {
            p.json = Some(nested(150));
        }
        let def = crate::json::parse(flow).root.expect("json").to_value();
        let mut meta = Map::default();
        meta.insert("flowDefHash".into(), Value::from("0123"));
        let mut texts = PhaseTexts::default();
        let (text, errors) = stored_value(
            &record,
            &[],
            None,
            Some(&def),
            Path::new("/w"),
            &meta,
            &mut texts,
        );
        assert!(errors.is_empty());
        let mut whole = record.to_value();
        if let Value::Object(m) = &mut whole {
            m.insert("def".into(), def.clone());
            m.insert("cwd".into(), Value::from("/w"));
            m.insert("tfcVersion".into(), Value::from(env!("CARGO_PKG_VERSION")));
            m.insert("flowDefHash".into(), Value::from("0123"));
        }
        assert_eq!(text, whole.to_pretty_json());
        // Again, from the texts kept, after one phase changed.
        if let Some(p) = record.phases.get_mut("a") {
            p.output = "changed".into();
        }
        let (again, _) = stored_value(
            &record,
            &[],
            None,
            Some(&def),
            Path::new("/w"),
            &meta,
            &mut texts,
        );
        let mut whole = record.to_value();
        if let Value::Object(m) = &mut whole {
            m.insert("def".into(), def.clone());
            m.insert("cwd".into(), Value::from("/w"));
            m.insert("tfcVersion".into(), Value::from(env!("CARGO_PKG_VERSION")));
            m.insert("flowDefHash".into(), Value::from("0123"));
        }
        assert!(again.contains("\"output\": \"changed\""));
        assert_eq!(again, whole.to_pretty_json());
        // No phases at all.
        record.phases.clear();
        let (text, _) = stored_value(
            &record,
            &[],
            None,
            None,
            Path::new("/w"),
            &meta,
            &mut PhaseTexts::default(),
        );
        assert_eq!(text, record.to_value().to_pretty_json());
    }

    #[test]
    fn input_lines_are_written_as_their_json_tree_would_be() {
        let reference = |input: &Input| {
            let mut m = serde_json::Map::new();
            m.insert("type".into(), serde_json::Value::from("input"));
            m.insert(
                "ts".into(),
                serde_json::Value::from(super::super::record::timestamp(
                    std::time::UNIX_EPOCH + Duration::from_millis(input.at),
                )),
            );
            m.insert(
                "input".into(),
                serde_json::to_value(input).unwrap_or(serde_json::Value::Null),
            );
            serde_json::Value::Object(m).to_string()
        };
        let record = serde_json::json!({"status": "done", "output": "x\n\"y\"", "n": 1.5,
            "big": 12345678901234567u64, "neg": -3, "list": [1, {"a": null}]});
        let inputs = [
            Input {
                at: 1_800_000_000_123,
                what: Event::Start,
            },
            Input {
                at: 5,
                what: Event::CacheChecked {
                    op: 7,
                    key: "00ff".into(),
                    hit: Some(Box::new(super::super::machine::CacheHit {
                        source: "run-only".into(),
                        record: record.into(),
                    })),
                    warning: Some("w\u{1}".into()),
                },
            },
        ];
        for i in &inputs {
            assert_eq!(input_line(i), reference(i));
        }
    }
}
