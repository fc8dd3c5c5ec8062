//! The interpreter: runs a checked flow against agent backends (SPEC §8).
//!
//! [`Interpreter::eval`] checks the flow (any error stops the run before anything executes),
//! resolves every agent the flow names to a backend, then runs it: the [`machine`] — one
//! deterministic state machine, the single owner of run state — makes every decision, and
//! the local `driver` (smol) executes the machine's commands and feeds their results back.
//! Modules: `machine` (scheduling, joins, cascades, halts, retries, budgets, final output),
//! `phases/` (one module per phase kind, plain state the machine drives), `driver` (agent
//! calls, scripts, timers, the store), `journal` (replaying a run's inputs), `scope` (what a
//! phase can read), `record` (the run record), `store` (run.json + journal).

pub mod cache;
pub(crate) mod contract;
mod ctx;
pub(crate) mod driver;
pub mod final_skip;
pub mod fork;
pub mod hooks;
pub mod journal;
pub mod machine;
mod phases;
pub mod record;
pub mod resume;
pub mod runs;
mod scope;
pub mod store;
pub mod summary;
pub(crate) mod trace;
mod verdict;
pub(crate) mod workdir;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod trace_tests;

pub use ctx::{ProgressNote, ProgressSink, RunOptions};
pub use final_skip::FinalSkip;
pub use machine::RunSettings;

pub use crate::agent::DEFAULT_MAX_PROMPT;
pub use record::{PhaseRecord, PhaseStatus, RunRecord, RunStatus};

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::agent::{Agent, CancelSource, Roster, SingleBackend};
use crate::check::{CheckOptions, check_document};
use crate::diag::Diagnostic;
use crate::flow::{Branch, Def, Flow, Invocation, LowerOptions, effective_args, resolve_owned};
use crate::source::Source;
use crate::value::Map;
use driver::Driver;
use machine::Machine;

/// Where a flow comes from.
pub enum FlowSource {
    /// A flow file.
    Path(PathBuf),
    /// Flow text with a name.
    Text {
        /// Shown in messages; the default flow name.
        name: String,
        /// The JSON text.
        text: String,
    },
    /// An already-lowered flow (checked again before running).
    Flow(Box<Flow>),
    /// A flow that passed a check just now: not checked a second time. Made by
    /// [`FlowSource::checked`] (from [`check_document`](crate::check::check_document) the
    /// parsed document comes along).
    Checked {
        /// The lowered flow.
        flow: Box<Flow>,
        /// Its source text (for messages).
        source: Box<Source>,
        /// The document the check parsed, kept as the run record's `def` (`None`: the text
        /// is parsed again when a store needs it).
        document: Option<Box<crate::json::Node>>,
    },
}

impl FlowSource {
    /// The result of a check that found no errors, ready to run without checking again.
    pub fn checked(checked: crate::check::Checked, source: Source) -> Option<FlowSource> {
        if checked.has_errors() {
            return None;
        }
        let document = checked.document.map(Box::new);
        checked.flow.map(|f| FlowSource::Checked {
            flow: Box::new(f),
            source: Box::new(source),
            document,
        })
    }
}

impl From<PathBuf> for FlowSource {
    fn from(p: PathBuf) -> FlowSource {
        FlowSource::Path(p)
    }
}

impl From<&std::path::Path> for FlowSource {
    fn from(p: &std::path::Path) -> FlowSource {
        FlowSource::Path(p.to_path_buf())
    }
}

impl From<Flow> for FlowSource {
    fn from(f: Flow) -> FlowSource {
        FlowSource::Flow(Box::new(f))
    }
}

/// Why a run could not start.
#[derive(Debug)]
pub enum RunError {
    /// The flow file could not be read.
    Io(String),
    /// The flow or its arguments have errors (exit code 2).
    Invalid {
        /// The flow's source.
        source: Box<Source>,
        /// What is wrong with it.
        diagnostics: Vec<Diagnostic>,
    },
    /// An agent has no usable backend (exit code 3).
    NoBackend(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Io(m) | RunError::NoBackend(m) => f.write_str(m),
            RunError::Invalid { diagnostics, .. } => {
                let errors: Vec<&str> = diagnostics
                    .iter()
                    .filter(|d| d.is_error())
                    .map(|d| d.message.as_str())
                    .collect();
                write!(f, "the flow has errors: {}", errors.join("; "))
            }
        }
    }
}

/// Runs flows against injected backends.
///
/// ```
/// use tfc::agent::{FnAgent, Outcome};
/// use tfc::run::{Interpreter, RunStatus};
/// use tfc::value::Map;
///
/// let flow = r#"{"name": "demo", "phases": [
///     {"id": "draft", "task": "Write a haiku about {args.topic}."},
///     {"id": "polish", "dependsOn": ["draft"], "task": "Polish: {steps.draft.output}"}
/// ]}"#;
/// let agent = FnAgent::new("echo", |req| Outcome::ok(format!("<{}>", req.prompt)));
/// let mut args = Map::default();
/// args.insert("topic".into(), "rust".into());
/// let record = Interpreter::with_agent(agent).eval_text("demo", flow, args).expect("valid flow");
/// assert_eq!(record.status, RunStatus::Completed);
/// assert_eq!(record.final_output, "<Polish: <Write a haiku about rust.>>");
/// ```
pub struct Interpreter {
    roster: Arc<dyn Roster>,
    opts: RunOptions,
    cancel: Option<crate::agent::Cancel>,
    /// Keep what the last run's machine was built from and its inputs (replay tests).
    keep_inputs: bool,
    kept: std::sync::Mutex<Option<journal::Recorded>>,
}

impl Interpreter {
    /// An interpreter resolving agents through `roster`.
    pub fn new(roster: Arc<dyn Roster>) -> Interpreter {
        Interpreter {
            roster,
            opts: RunOptions::default(),
            cancel: None,
            keep_inputs: false,
            kept: std::sync::Mutex::new(None),
        }
    }

    /// Every agent served by one backend.
    pub fn with_agent(agent: impl Agent + 'static) -> Interpreter {
        let name = agent.name().to_owned();
        Interpreter::new(Arc::new(SingleBackend::new(name, Arc::new(agent))))
    }

    /// Run with these options.
    pub fn options(mut self, opts: RunOptions) -> Interpreter {
        self.opts = opts;
        self
    }

    /// The options runs are made with.
    #[cfg(feature = "temporal")]
    pub(crate) fn run_options(&self) -> &RunOptions {
        &self.opts
    }

    /// How the run it makes resumes another, when it does.
    pub fn resumes(&self) -> Option<&resume::Origin> {
        self.opts.resume.as_ref().and_then(|c| c.origin.as_ref())
    }

    /// The `forkedFrom` of a fork (SPEC §10.4), for hosts that write `run.json` themselves.
    pub fn forked_from(&self) -> Option<&crate::value::Value> {
        self.opts
            .resume
            .as_ref()
            .and_then(|c| c.fork.as_ref())
            .map(|f| &f.forked_from)
            .filter(|v| !matches!(v, crate::value::Value::Null))
    }

    /// Abort the run when this fires (Ctrl-C in the CLI).
    pub fn cancel_on(mut self, cancel: crate::agent::Cancel) -> Interpreter {
        self.cancel = Some(cancel);
        self
    }

    /// Keep what each run's machine was built from and its inputs, for
    /// [`Interpreter::recorded`].
    pub fn keep_inputs(mut self) -> Interpreter {
        self.keep_inputs = true;
        self
    }

    /// The last run's machine setup and inputs (with [`Interpreter::keep_inputs`]):
    /// replaying them into a fresh machine gives the same record
    /// ([`journal::replay_recorded`]).
    pub fn recorded(&self) -> Option<journal::Recorded> {
        self.kept.lock().ok().and_then(|k| k.clone())
    }

    /// Check and run a flow; `args` are the invocation arguments (JSON values).
    pub fn eval(&self, flow: impl Into<FlowSource>, args: Map) -> Result<RunRecord, RunError> {
        let invocation = Invocation {
            json: args,
            ..Invocation::default()
        };
        smol::block_on(self.run(flow.into(), invocation))
    }

    /// [`Interpreter::eval`] of flow text.
    pub fn eval_text(&self, name: &str, text: &str, args: Map) -> Result<RunRecord, RunError> {
        self.eval(
            FlowSource::Text {
                name: name.to_owned(),
                text: text.to_owned(),
            },
            args,
        )
    }

    /// Check, resolve agents, and run.
    pub async fn run(
        &self,
        source: FlowSource,
        invocation: Invocation,
    ) -> Result<RunRecord, RunError> {
        if let Some(cap) = self.opts.max_output_bytes {
            // Process backends read the cap when they build each call's process spec.
            crate::process::set_max_output(cap);
        }
        let store_root = match &self.opts.settings.project_root {
            Some(root) if !self.opts.settings.dry_run => Some(root.clone()),
            _ => None,
        };
        let Prepared {
            flow,
            args,
            agents,
            config: cfg,
            def,
            cwd,
        } = self.prepare(source, invocation, store_root.is_some())?;
        let cancel_source = CancelSource::new();
        let cancel = self.cancel.clone().unwrap_or_else(|| cancel_source.token());
        let flow = Arc::new(flow);
        let setup = self
            .keep_inputs
            .then(|| (flow.clone(), args.clone(), cfg.clone()));
        let machine = Machine::new(flow, args, cfg);
        let mut driver = Driver::new(
            machine,
            agents,
            self.roster.clone(),
            self.opts.clone(),
            cancel,
            def,
            cwd,
        );
        if self.keep_inputs {
            driver.kept = Some(Vec::new());
        }
        // A run that cannot create its record does not start (SPEC §10.2).
        driver.start(store_root.as_deref()).map_err(|e| {
            RunError::Io(format!(
                "cannot create the run record: {e}; nothing was run (.tfc/runs must be a writable directory)"
            ))
        })?;
        // Tasks in flight run on this run's own executor, driven right here: one thread.
        let executor = driver.executor.clone();
        let (record, kept) = executor.run(driver.run()).await;
        if let (Some(inputs), Some((flow, args, config))) = (kept, setup) {
            *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = Some(journal::Recorded {
                flow,
                args,
                config,
                inputs,
            });
        }
        Ok(record)
    }

    /// Everything a run starts from, without running it (a local run drives the machine
    /// itself; a remote engine hands it over): the checked flow, the effective arguments, the
    /// resolved agents, the machine's configuration and, when a store keeps the run
    /// (`journaling`), the stored definition.
    pub(crate) fn prepare(
        &self,
        source: FlowSource,
        invocation: Invocation,
        journaling: bool,
    ) -> Result<Prepared, RunError> {
        let (flow, src, document) = load(source, &invocation, self.opts.cwd.clone())?;
        let (given, problems) = resolve_owned(&flow, invocation);
        if problems.iter().any(Diagnostic::is_error) {
            return Err(RunError::Invalid {
                source: Box::new(src),
                diagnostics: problems,
            });
        }
        let args = effective_args(&flow, given);
        let agents = resolve_agents(&flow, self.roster.as_ref())?;
        let cwd = self
            .opts
            .cwd
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        // The definition: kept in `run.json`, and the source of each phase's `phasefp:` key
        // part (keys are computed only when a store keeps them). The check's parse is reused;
        // the text is parsed again only for a checked source that did not keep its document.
        let def = journaling
            .then(|| match document {
                Some(doc) => Some(doc.to_value()),
                None => crate::json::parse(&src.text).root.map(|r| r.to_value()),
            })
            .flatten();
        let fps = def
            .as_ref()
            .map(|d| cache::phase_fps(d, flow.phases.len()))
            .unwrap_or_default();
        let config = self.config(&flow, &agents, cwd.clone(), journaling, fps);
        Ok(Prepared {
            flow,
            args,
            agents,
            config,
            def,
            cwd,
        })
    }

    /// What the machine is told up front.
    fn config(
        &self,
        flow: &Flow,
        agents: &HashMap<String, crate::agent::ResolvedAgent>,
        cwd: PathBuf,
        journaling: bool,
        phase_fps: Vec<String>,
    ) -> machine::Config {
        use std::io::IsTerminal;
        let opts = &self.opts;
        let mut backends = indexmap::IndexMap::new();
        for name in agent_names(flow) {
            if let Some(a) = agents.get(&name) {
                backends.insert(name.clone(), a.backend_name.clone());
            }
        }
        machine::Config {
            run_id: opts
                .run_id
                .clone()
                .unwrap_or_else(|| store::new_run_id(&flow.name)),
            settings: opts.settings.clone(),
            ask: opts.interactive
                && std::io::stdin().is_terminal()
                && std::io::stderr().is_terminal(),
            max_usd: opts
                .max_usd
                .or(flow.budget.as_ref().and_then(|b| b.value.max_usd)),
            max_tokens: opts
                .max_tokens
                .or(flow.budget.as_ref().and_then(|b| b.value.max_tokens)),
            max_calls: opts
                .max_calls
                .or(flow.budget.as_ref().and_then(|b| b.value.max_calls)),
            max_output: opts.max_output(),
            max_prompt: opts.max_prompt(),
            journaling,
            decisions: false,
            // The trace is built from the progress notes too.
            progress: opts.progress.is_some() || opts.telemetry.is_some(),
            replay: agents
                .values()
                .any(|a| a.backend_name.starts_with("replay")),
            backends,
            cwd,
            node_prefix: String::new(),
            prompt_prefix: String::new(),
            flow_stack: Vec::new(),
            depth: 0,
            generated: false,
            incremental: opts.incremental.unwrap_or(flow.incremental),
            lookups: opts.resume.is_some(),
            phase_fps: Arc::new(phase_fps),
            agent_defs: agents
                .iter()
                .map(|(name, a)| (name.clone(), agent_def(a)))
                .collect(),
            models: agents
                .iter()
                .filter_map(|(name, a)| Some((name.clone(), a.model.clone()?)))
                .collect(),
            parent_run_id: opts.resume.as_ref().map(|r| r.parent_run_id.clone()),
            spent_before: opts.resume.as_ref().and_then(|r| r.spent_before),
            rerun_warn: opts
                .resume
                .as_ref()
                .map(|r| r.rerun_warn.clone())
                .unwrap_or_default(),
            item_states: Arc::new(
                opts.resume
                    .as_ref()
                    .map(|r| r.items.clone())
                    .unwrap_or_default(),
            ),
            shard_items: None,
            approval_deadlines: Arc::new(
                opts.resume
                    .as_ref()
                    .map(|r| r.deadlines.clone())
                    .unwrap_or_default(),
            ),
            fork: opts
                .resume
                .as_ref()
                .and_then(|r| r.fork.as_ref())
                .map(|f| f.nodes.clone()),
        }
    }
}

/// What [`Interpreter::prepare`] gives.
pub(crate) struct Prepared {
    pub flow: Flow,
    pub args: Map,
    pub agents: HashMap<String, crate::agent::ResolvedAgent>,
    pub config: machine::Config,
    pub def: Option<crate::value::Value>,
    pub cwd: PathBuf,
}

/// The `agents:` key part of one agent: its definition as canonical JSON.
fn agent_def(a: &crate::agent::ResolvedAgent) -> String {
    let mut m = Map::default();
    m.insert("systemPrompt".into(), a.system_prompt.as_str().into());
    if let Some(model) = &a.model {
        m.insert("model".into(), model.as_str().into());
    }
    if let Some(t) = &a.thinking {
        m.insert("thinking".into(), t.as_str().into());
    }
    m.insert(
        "tools".into(),
        crate::value::Value::Array(a.tools.iter().map(|t| t.as_str().into()).collect()),
    );
    cache::key::canonical_json(&crate::value::Value::Object(m))
}

/// A loaded flow: the IR, its source, and the parsed document when there was text to parse.
type Loaded = (Flow, Source, Option<Box<crate::json::Node>>);

/// Read, lower and check a flow source; errors and bad arguments stop here.
fn load(
    source: FlowSource,
    invocation: &Invocation,
    cwd: Option<PathBuf>,
) -> Result<Loaded, RunError> {
    let (name, text, default_name) = match source {
        FlowSource::Checked {
            flow,
            source,
            document,
        } => return Ok((*flow, *source, document)),
        FlowSource::Flow(flow) => {
            let src = Source::new(flow.name.clone(), String::new());
            let diags = crate::check::check_flow(
                &flow,
                &CheckOptions {
                    args: Some(invocation),
                    ..CheckOptions::default()
                },
            );
            if diags.iter().any(Diagnostic::is_error) {
                return Err(RunError::Invalid {
                    source: Box::new(src),
                    diagnostics: diags,
                });
            }
            return Ok((*flow, src, None));
        }
        FlowSource::Path(p) => {
            let text = std::fs::read_to_string(&p)
                .map_err(|e| RunError::Io(format!("cannot read flow '{}': {e}", p.display())))?;
            let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
            (p.display().to_string(), text, stem)
        }
        FlowSource::Text { name, text } => (name.clone(), text, Some(name)),
    };
    let saved = crate::project::SavedFlows::new(&cwd.unwrap_or_else(|| PathBuf::from(".")));
    let opts = CheckOptions {
        args: Some(invocation),
        loader: Some(&saved),
        ..CheckOptions::default()
    };
    let checked = check_document(&text, &LowerOptions { default_name }, &opts);
    let src = Source::new(name, text);
    if checked.has_errors() || checked.flow.is_none() {
        return Err(RunError::Invalid {
            source: Box::new(src),
            diagnostics: checked.diagnostics,
        });
    }
    let flow = checked.flow.expect("checked above");
    Ok((flow, src, checked.document.map(Box::new)))
}

/// Every agent name a flow (and its inline defs) uses.
pub fn agent_names(flow: &Flow) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in &flow.phases {
        add_phase_agents(p, &mut out);
    }
    out
}

/// Every agent one phase uses (its own, branches', judges', an inline def's), each once.
pub fn phase_agent_names(p: &crate::flow::Phase) -> Vec<String> {
    let mut out = Vec::new();
    add_phase_agents(p, &mut out);
    out
}

/// One [`AgentUse`](crate::agent::AgentUse) per phase and agent it uses, in definition order:
/// the input of the run preflight. Linear in the flow's size.
pub fn agent_uses(flow: &Flow) -> Vec<crate::agent::AgentUse> {
    let mut out = Vec::new();
    for p in &flow.phases {
        for agent in phase_agent_names(p) {
            let span = agent_span(p, &agent);
            out.push(crate::agent::AgentUse {
                phase: p.id.clone(),
                agent,
                tools: p.tools.iter().map(|t| t.value.clone()).collect(),
                span,
            });
        }
    }
    out
}

/// Where phase `p` names `agent` (its `agent`, a branch's, `judgeAgent`, `score.judge.agent`).
fn agent_span(p: &crate::flow::Phase, agent: &str) -> Option<crate::source::Span> {
    let written = p.has("agent").then_some(&p.agent);
    let branches = p.branches().iter().filter_map(|b| b.agent.as_ref());
    written
        .into_iter()
        .chain(branches)
        .chain(p.judge_agent())
        .find(|f| f.value == agent)
        .map(|f| f.span)
}

fn add_phase_agents(p: &crate::flow::Phase, out: &mut Vec<String>) {
    let mut add = |a: &str| {
        if !out.iter().any(|x| x == a) {
            out.push(a.to_owned());
        }
    };
    let uses_agent = !matches!(
        p.ty(),
        crate::flow::PhaseType::Script
            | crate::flow::PhaseType::Approval
            | crate::flow::PhaseType::Flow
            | crate::flow::PhaseType::Expand
    );
    if uses_agent {
        add(&p.agent.value);
    }
    for Branch { agent, .. } in p.branches() {
        if let Some(a) = agent {
            add(&a.value);
        }
    }
    if let Some(a) = p.judge_agent() {
        add(&a.value);
    }
    if let Some(Def::Inline(child)) = p.def().map(|d| &d.value) {
        for a in agent_names(child) {
            add(&a);
        }
    }
}

fn resolve_agents(
    flow: &Flow,
    roster: &dyn Roster,
) -> Result<HashMap<String, crate::agent::ResolvedAgent>, RunError> {
    let mut out = HashMap::new();
    for name in agent_names(flow) {
        let resolved = roster.resolve(&name).map_err(RunError::NoBackend)?;
        resolved.backend.available().map_err(|e| {
            RunError::NoBackend(format!(
                "agent '{name}': backend '{}' is not usable: {e}",
                resolved.backend_name
            ))
        })?;
        out.insert(name, resolved);
    }
    Ok(out)
}
