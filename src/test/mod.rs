//! `tfc test` (SPEC §17): a flow's behaviour tested without spending a token. Each test runs
//! the real flow through the real run machine, on a virtual clock, with every agent call
//! answered by the test through one more backend of the agent seam; then its expectations
//! are checked against the run record.
//!
//! ```
//! use tfc::test::{TestCase, run_case, Outcome};
//!
//! let flow = r#"{"name": "demo", "phases": [
//!     {"id": "draft", "task": "Write about {args.topic}."},
//!     {"id": "check", "type": "gate", "dependsOn": ["draft"], "task": "Good? {steps.draft.output}"}
//! ]}"#;
//! let case = TestCase::parse(r#"{
//!     "name": "a good draft passes",
//!     "args": {"topic": "rust"},
//!     "answers": {"draft": "Rust is fast.", "check": "VERDICT: PASS"},
//!     "expect": {"status": "completed", "prompts": {"draft": {"contains": "rust"}}}
//! }"#).expect("a valid case");
//! let report = run_case(flow, &case, std::path::Path::new("."));
//! assert_eq!(report.outcome, Outcome::Passed);
//! ```
//!
//! Files: `model.rs` (the test file, read with spans), `pattern.rs` (node patterns and
//! specificity), `checks.rs` (the file checked against its flow), `answer.rs` (the answering
//! backend), `world.rs` (the machine on a virtual clock), `expect.rs` (expectations and
//! matchers), `report.rs` (text like `cargo test`, JSON lines, JUnit XML), `discover.rs`,
//! `coverage/` (`--coverage`: the flow's outcomes and the tests that reach them), `property/`
//! (`--property`: flows run with generated answers), `from_run.rs` (`--from-run`: a recorded
//! run made a test), `edit.rs` (span edits that keep a file's comments and layout:
//! `--update`, appended tests), `keep.rs` (`--keep-runs`).

mod answer;
mod checks;
pub mod coverage;
pub mod discover;
pub mod edit;
mod expect;
pub mod from_run;
mod keep;
mod model;
mod pattern;
pub mod property;
pub mod report;
mod world;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use answer::{Answering, CallLog};
pub use checks::expectation_fits;
pub use expect::{Failure, line_diff};
pub use model::{
    Answer, AnswerRule, Bound, Decided, Expect, ItemsExpect, Matcher, MatcherKind, Named,
    PHASE_KEYS, PhaseExpect, Reply, TestCase, TestFile,
};
pub use pattern::{Pattern, Segment, Suffix, best_match};

use crate::agent::{Roster, SingleBackend};
use crate::check::{CheckOptions, check_document};
use crate::diag::{Code, Diagnostic};
use crate::flow::{Flow, Invocation, LowerOptions};
use crate::run::{FlowSource, Interpreter, RunOptions, RunRecord, RunSettings};
use crate::source::Source;

/// The flow a test file names, read and checked.
#[derive(Clone, Debug)]
pub struct FlowUnderTest {
    /// Its text (for messages).
    pub source: Source,
    /// Its problems (spans into `source`).
    pub diagnostics: Vec<Diagnostic>,
    /// The lowered flow, when it has no errors.
    pub flow: Option<Flow>,
}

/// A test file, read and checked with its flow: nothing run yet.
#[derive(Clone, Debug)]
pub struct CheckedFile {
    /// The file's text.
    pub source: Source,
    /// What it says.
    pub file: TestFile,
    /// Its own problems (spans into `source`): JSON syntax, T codes.
    pub diagnostics: Vec<Diagnostic>,
    /// The flow it names, when that could be read.
    pub flow: Option<FlowUnderTest>,
}

impl CheckedFile {
    /// Why its tests cannot run, if they cannot: the file or its flow has errors (exit 2).
    pub fn invalid(&self) -> Option<String> {
        if self.diagnostics.iter().any(Diagnostic::is_error) {
            return Some("the test file has errors".into());
        }
        match &self.flow {
            None => Some("the flow could not be read".into()),
            Some(f) if f.flow.is_none() => Some(format!("the flow {} has errors", f.source.name)),
            Some(_) => None,
        }
    }
}

/// How one test ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every expectation held.
    Passed,
    /// Some did not (or a call had no answer).
    Failed(Vec<Failure>),
    /// The test could not run (its file or flow is invalid, bad arguments, an internal error).
    Error(String),
}

impl Outcome {
    /// `ok`, `FAILED`, `error`: the word of its line.
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Passed => "ok",
            Outcome::Failed(_) => "FAILED",
            Outcome::Error(_) => "error",
        }
    }
}

/// The result of one test.
#[derive(Clone, Debug)]
pub struct TestReport {
    /// Its name.
    pub name: String,
    /// How it ended.
    pub outcome: Outcome,
    /// How long it took (wall time).
    pub duration: Duration,
    /// The run's record, when it ran.
    pub record: Option<Box<RunRecord>>,
    /// The calls the run made.
    pub calls: Vec<CallLog>,
    /// The flow's outcomes the run reached, sorted (recorded with [`TestOptions::coverage`]
    /// only; empty otherwise).
    pub hits: Vec<coverage::Hit>,
}

/// The results of one test file.
#[derive(Clone, Debug)]
pub struct FileReport {
    /// The file, checked.
    pub checked: CheckedFile,
    /// Its tests' results, in file order (those `--filter` kept).
    pub tests: Vec<TestReport>,
}

/// What a test run is told.
#[derive(Clone, Debug, Default)]
pub struct TestOptions {
    /// Run only tests whose name contains this.
    pub filter: Option<String>,
    /// The invocation directory: saved flows are found from it, scripts run in it.
    pub cwd: PathBuf,
    /// Tests run at once (at least 1).
    pub jobs: usize,
    /// `--missing=stub`: a call no answer matches is answered like `--dry-run` answers it,
    /// instead of failing the test.
    pub missing_stub: bool,
    /// `--coverage`: record the outcomes each test reaches ([`TestReport::hits`]).
    pub coverage: bool,
    /// `--keep-runs`: each test's run is written to the run store under this project root,
    /// as a normal run is (`tfc show`, `tfc report` open it); `None`: nothing is written.
    pub keep_runs: Option<PathBuf>,
}

impl TestCase {
    /// One test from its JSON text (an element of a file's `tests`); `Err`: its problems.
    pub fn parse(text: &str) -> Result<TestCase, Vec<Diagnostic>> {
        let parsed = crate::json::parse(text);
        let mut reader = model::Reader::default();
        let case = parsed.root.as_ref().and_then(|r| reader.test(r));
        let mut diags = parsed.diagnostics;
        diags.extend(reader.diags);
        match case {
            Some(c) if !diags.iter().any(Diagnostic::is_error) => Ok(c),
            _ => Err(diags),
        }
    }
}

/// Read and check the test file at `path` and the flow it names (saved flows are found from
/// `cwd`). Never fails: an unreadable file is a diagnostic-free report whose flow is `None`
/// and whose first diagnostic says why.
pub fn check_file(path: &Path, cwd: &Path) -> CheckedFile {
    let text = match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => text,
            // Not UTF-8: E0001 at the first bad byte, over the lossy text.
            Err(e) => {
                let diagnostics = crate::json::parse_bytes(e.as_bytes()).diagnostics;
                let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
                return CheckedFile {
                    source: Source::new(path.display().to_string(), text),
                    file: TestFile::default(),
                    diagnostics,
                    flow: None,
                };
            }
        },
        Err(e) => {
            return CheckedFile {
                source: Source::new(path.display().to_string(), String::new()),
                file: TestFile::default(),
                diagnostics: vec![Diagnostic::new(
                    Code::TestFlowNotFound,
                    format!("cannot read test file '{}': {e}", path.display()),
                )],
                flow: None,
            };
        }
    };
    check_text(path, text, cwd)
}

/// [`check_file`] of text already read (`path` names it and places its relative flow).
pub fn check_text(path: &Path, text: String, cwd: &Path) -> CheckedFile {
    check_text_with(path, text, cwd, &|_| None)
}

/// [`check_text`], where `open` gives the text of a file that is newer than the disk's (an
/// editor's unsaved buffer): the flow the test file names is read from it when it has one.
pub fn check_text_with(
    path: &Path,
    text: String,
    cwd: &Path,
    open: &dyn Fn(&Path) -> Option<String>,
) -> CheckedFile {
    check_with(path.display().to_string(), text, |named, diagnostics| {
        load_flow(path, named, cwd, open, diagnostics)
    })
}

/// Tests given as text (a test file's `tests` array, `[{"name": …}, …]`) of a flow given as
/// text too — nothing read from disk but the saved flows its sub-flows use (found from
/// `cwd`): MCP's inline tests. `name` names the tests in reports, `flow_name` the flow when
/// its document has no `name`.
pub fn check_inline(
    name: &str,
    tests: &str,
    flow: Source,
    flow_name: &str,
    cwd: &Path,
) -> CheckedFile {
    let flow_ref = crate::value::Value::from(flow.name.as_str()).to_json();
    let text = format!("{{\"flow\": {flow_ref}, \"tests\": {tests}}}");
    check_with(name.to_owned(), text, |_, _| {
        let saved = crate::project::SavedFlows::new(cwd);
        let opts = CheckOptions {
            loader: Some(&saved),
            cwd: Some(cwd.to_path_buf()),
            ..CheckOptions::default()
        };
        let lower = LowerOptions {
            default_name: Some(flow_name.to_owned()),
        };
        let checked = check_document(&flow.text, &lower, &opts);
        let lowered = if checked.has_errors() {
            None
        } else {
            checked.flow
        };
        Some(FlowUnderTest {
            source: flow,
            diagnostics: checked.diagnostics,
            flow: lowered,
        })
    })
}

/// A test file's text checked, with its flow found by `load` (given the file's `flow`).
fn check_with(
    name: String,
    text: String,
    load: impl FnOnce(&Named<()>, &mut Vec<Diagnostic>) -> Option<FlowUnderTest>,
) -> CheckedFile {
    let source = Source::new(name, text);
    let parsed = crate::json::parse(&source.text);
    let mut diagnostics = parsed.diagnostics;
    let mut reader = model::Reader::default();
    let file = parsed
        .root
        .as_ref()
        .map(|r| reader.file(r))
        .unwrap_or_default();
    diagnostics.extend(reader.diags);
    let flow = file.flow.as_ref().and_then(|f| load(f, &mut diagnostics));
    if let Some(FlowUnderTest {
        flow: Some(flow), ..
    }) = &flow
    {
        diagnostics.extend(checks::check(&file, flow));
    }
    diagnostics.sort_by_key(|d| d.span.map(|s| s.start));
    CheckedFile {
        source,
        file,
        diagnostics,
        flow,
    }
}

/// The flow `named` by the test file at `path`: a file relative to it, or a saved flow (the
/// text `open` has for it first).
fn load_flow(
    path: &Path,
    named: &Named<()>,
    cwd: &Path,
    open: &dyn Fn(&Path) -> Option<String>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<FlowUnderTest> {
    let beside = path.parent().unwrap_or(Path::new(".")).join(&named.name);
    let saved = crate::project::SavedFlows::new(cwd);
    let found = if let Some(t) = open(&beside) {
        Some((beside.clone(), t))
    } else if beside.is_file() {
        std::fs::read_to_string(&beside)
            .ok()
            .map(|t| (beside.clone(), t))
    } else {
        crate::check::FlowLoader::load(&saved, &named.name)
            .ok()
            .map(|(p, t)| match open(&p) {
                Some(newer) => (p, newer),
                None => (p, t),
            })
    };
    let Some((flow_path, text)) = found else {
        diagnostics.push(
            Diagnostic::new(
                Code::TestFlowNotFound,
                format!("no flow '{}': no such file next to this test file, and no saved flow of that name", named.name),
            )
            .at(named.span)
            .with_label("not found")
            .help("write the flow file's path relative to this test file, or a saved flow's name (`tfc list`)"),
        );
        return None;
    };
    let stem = flow_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned());
    let opts = CheckOptions {
        loader: Some(&saved),
        cwd: Some(cwd.to_path_buf()),
        ..CheckOptions::default()
    };
    let checked = check_document(&text, &LowerOptions { default_name: stem }, &opts);
    let source = Source::new(flow_path.display().to_string(), text);
    let flow = if checked.has_errors() {
        None
    } else {
        checked.flow
    };
    Some(FlowUnderTest {
        source,
        diagnostics: checked.diagnostics,
        flow,
    })
}

/// Run one in-memory case against flow text. The flow is checked first, then the case
/// against it (as a test file is); errors of either make the test an error.
pub fn run_case(flow_text: &str, case: &TestCase, cwd: &Path) -> TestReport {
    let checked = check_document(
        flow_text,
        &LowerOptions::default(),
        &CheckOptions::default(),
    );
    match checked.flow {
        Some(flow) if !checked.has_errors() => {
            let file = TestFile {
                flow: None,
                tests: vec![case.clone()],
                invariants: None,
            };
            let errors: Vec<String> = checks::check(&file, &flow)
                .into_iter()
                .filter(Diagnostic::is_error)
                .map(|d| format!("[{}] {}", d.code.as_str(), d.message))
                .collect();
            if !errors.is_empty() {
                return TestReport {
                    name: case.name.clone(),
                    outcome: Outcome::Error(format!("the test has errors: {}", errors.join("; "))),
                    duration: Duration::ZERO,
                    record: None,
                    calls: Vec::new(),
                    hits: Vec::new(),
                };
            }
            run_checked(&flow, &Source::new("flow", flow_text.to_owned()), case, cwd)
        }
        _ => {
            let errors: Vec<String> = checked
                .diagnostics
                .iter()
                .filter(|d| d.is_error())
                .map(|d| format!("[{}] {}", d.code.as_str(), d.message))
                .collect();
            TestReport {
                name: case.name.clone(),
                outcome: Outcome::Error(format!("the flow has errors: {}", errors.join("; "))),
                duration: Duration::ZERO,
                record: None,
                calls: Vec::new(),
                hits: Vec::new(),
            }
        }
    }
}

/// Run one case against a checked flow.
pub fn run_checked(flow: &Flow, source: &Source, case: &TestCase, cwd: &Path) -> TestReport {
    run_checked_with(flow, source, case, cwd, false)
}

/// [`run_checked`]; with `missing_stub`, calls no answer matches get the dry-run stub.
pub fn run_checked_with(
    flow: &Flow,
    source: &Source,
    case: &TestCase,
    cwd: &Path,
    missing_stub: bool,
) -> TestReport {
    let opts = TestOptions {
        cwd: cwd.to_path_buf(),
        missing_stub,
        ..TestOptions::default()
    };
    run_checked_opts(flow, source, case, &opts)
}

/// [`run_checked`] as `opts` say (`cwd`, `missing_stub`, `coverage`, `keep_runs`; not
/// `filter`, `jobs`).
pub fn run_checked_opts(
    flow: &Flow,
    source: &Source,
    case: &TestCase,
    opts: &TestOptions,
) -> TestReport {
    run_watched(flow, source, case, opts, false).0
}

/// [`run_checked_opts`]; with `conditions` (`--property`), the `condition` events that name
/// undefined operands (`unresolved`) come back beside the report.
pub(crate) fn run_watched(
    flow: &Flow,
    source: &Source,
    case: &TestCase,
    opts: &TestOptions,
    conditions: bool,
) -> (TestReport, Vec<crate::value::Value>) {
    let started = Instant::now();
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        execute(flow, source, case, opts, conditions)
    }));
    let mut hits = Vec::new();
    let mut observed = Vec::new();
    let (outcome, record, calls) = match ran {
        Ok(Ok(Executed {
            record,
            calls,
            hits: reached,
            conditions,
        })) => {
            hits = reached;
            observed = conditions;
            let mut failures: Vec<Failure> = calls
                .iter()
                .filter(|c| !c.answered)
                .map(|c| Failure {
                    what: format!("answers: {}", c.node),
                    expected: "an answer for every call".into(),
                    actual: format!(
                        "no answer for node '{}' (agent '{}'): {}",
                        c.node,
                        c.agent,
                        c.prompt.lines().next().unwrap_or("")
                    ),
                    diff: None,
                })
                .collect();
            failures.extend(expect::evaluate(&case.expect, &record, &calls));
            let outcome = if failures.is_empty() {
                Outcome::Passed
            } else {
                Outcome::Failed(failures)
            };
            (outcome, Some(Box::new(record)), calls)
        }
        Ok(Err(e)) => (Outcome::Error(e), None, Vec::new()),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "a panic".into());
            (
                Outcome::Error(format!("internal error: {msg}")),
                None,
                Vec::new(),
            )
        }
    };
    let report = TestReport {
        name: case.name.clone(),
        outcome,
        duration: started.elapsed(),
        record,
        calls,
        hits,
    };
    (report, observed)
}

/// What one run leaves.
struct Executed {
    record: RunRecord,
    calls: Vec<CallLog>,
    /// The outcomes reached (`TestOptions::coverage`).
    hits: Vec<coverage::Hit>,
    /// The `condition` events naming undefined operands (when asked for).
    conditions: Vec<crate::value::Value>,
}

/// The run itself: the interpreter prepares it (arguments, agents, configuration) as for
/// `tfc run`, the test driver drives it.
fn execute(
    flow: &Flow,
    source: &Source,
    case: &TestCase,
    opts: &TestOptions,
    conditions: bool,
) -> Result<Executed, String> {
    let (cwd, missing_stub) = (opts.cwd.as_path(), opts.missing_stub);
    let invocation = Invocation {
        json: case.args.clone(),
        ..Invocation::default()
    };
    // The flow was checked without arguments: the test's are checked now, as `tfc run`
    // checks its invocation's (E0502–E0504).
    if !flow.args.is_empty() || !case.args.is_empty() {
        let saved = crate::project::SavedFlows::new(cwd);
        let opts = CheckOptions {
            args: Some(&invocation),
            loader: Some(&saved),
            cwd: Some(cwd.to_path_buf()),
            ..CheckOptions::default()
        };
        let errors: Vec<String> = crate::check::check_flow(flow, &opts)
            .into_iter()
            .filter(Diagnostic::is_error)
            .map(|d| format!("[{}] {}", d.code.as_str(), d.message))
            .collect();
        if !errors.is_empty() {
            return Err(format!("bad arguments: {}", errors.join("; ")));
        }
    }
    let mut answering = Answering::new(case.answers.clone());
    if missing_stub {
        answering = answering.stubbing(flow);
    }
    let answering = Arc::new(answering);
    let roster: Arc<dyn Roster> = Arc::new(SingleBackend::new("test", answering.clone()));
    let mut settings = RunSettings::default();
    for a in &case.approvals {
        match &a.value {
            Decided::Approve => settings.approve.push(a.name.clone()),
            Decided::Reject(note) => {
                settings.reject.push(a.name.clone());
                // Each rejection keeps its own note.
                if let Some(note) = note {
                    settings.reject_notes.insert(a.name.clone(), note.clone());
                }
            }
        }
    }
    let keep = opts.keep_runs.as_ref();
    let run_opts = RunOptions {
        settings,
        interactive: false,
        cwd: Some(cwd.to_path_buf()),
        run_id: Some(match keep {
            Some(_) => crate::run::store::new_run_id(&flow.name),
            None => format!("test-{}", flow.name),
        }),
        ..RunOptions::default()
    };
    let interpreter = Interpreter::new(roster.clone()).options(run_opts);
    let source = FlowSource::Checked {
        flow: Box::new(flow.clone()),
        source: Box::new(source.clone()),
        document: None,
    };
    // A kept run journals as a stored one does; else no store, no journal, and coverage and
    // properties read the machine's decision lines as they go by.
    let mut prepared = interpreter
        .prepare(source, invocation, keep.is_some())
        .map_err(|e| e.to_string())?;
    prepared.config.decisions = opts.coverage || conditions;
    let keep = keep.map(|root| keep::Keep::new(root.clone(), prepared.def.clone(), cwd));
    let machine =
        crate::run::machine::Machine::new(Arc::new(prepared.flow), prepared.args, prepared.config);
    let mut w = world::World {
        agents: prepared.agents,
        roster,
        answering: &answering,
        project_root: None,
        coverage: opts.coverage.then(|| coverage::Recorder::new(flow)),
        unresolved_conditions: conditions.then(Vec::new),
        keep,
    };
    let mut record = world::drive(machine, &mut w)?;
    if case.hooks {
        run_hook(flow, &mut record, cwd);
    }
    let hits = w.coverage.map(|c| c.finish(&record)).unwrap_or_default();
    let conditions = w.unresolved_conditions.take().unwrap_or_default();
    Ok(Executed {
        record,
        calls: answering.calls(),
        hits,
        conditions,
    })
}

/// The coverage of the flows `reports` tested (`--coverage`): files whose flow could not be
/// checked are left out (their tests did not run); files naming the same flow merge.
pub fn coverage_of(reports: &[FileReport]) -> Vec<coverage::Coverage> {
    coverage::tally(reports.iter().filter_map(|r| {
        let fut = r.checked.flow.as_ref()?;
        Some(coverage::Tested {
            source: &fut.source,
            flow: fut.flow.as_ref()?,
            tests: r
                .tests
                .iter()
                .map(|t| (t.name.as_str(), t.hits.as_slice()))
                .collect(),
        })
    }))
}

/// `"hooks": true`: the flow's hook of the run's ending runs for real, as in `tfc run` (the
/// test keeps no run directory: `{run.dir}` is empty). A hook that did not succeed adds its
/// warning to the record's, where `expect.warnings` sees it.
fn run_hook(flow: &Flow, record: &mut RunRecord, cwd: &Path) {
    let Some(call) = crate::run::hooks::prepare(flow, record, None, cwd) else {
        return;
    };
    let ran = smol::block_on(crate::run::hooks::run(
        &call,
        crate::process::Cancel::never(),
    ));
    if let Some(w) = ran.warning() {
        record.warnings.push(w);
    }
}

/// Run the tests of `files` (those `opts.filter` keeps) on `opts.jobs` threads; reports in
/// file and test order whatever the scheduling. The tests of a file that cannot run are
/// errors.
pub fn run_files(files: Vec<CheckedFile>, opts: &TestOptions) -> Vec<FileReport> {
    let keep = |c: &TestCase| opts.filter.as_deref().is_none_or(|f| c.name.contains(f));
    // Every test to run: (file, case).
    let mut work: Vec<(usize, usize)> = Vec::new();
    let mut reports: Vec<FileReport> = Vec::with_capacity(files.len());
    for (fi, f) in files.iter().enumerate() {
        let invalid = f.invalid();
        let mut tests = Vec::new();
        for (ci, case) in f.file.tests.iter().enumerate() {
            if !keep(case) {
                continue;
            }
            match &invalid {
                Some(why) => tests.push(TestReport {
                    name: case.name.clone(),
                    outcome: Outcome::Error(why.clone()),
                    duration: Duration::ZERO,
                    record: None,
                    calls: Vec::new(),
                    hits: Vec::new(),
                }),
                None => work.push((fi, ci)),
            }
        }
        reports.push(FileReport {
            checked: f.clone(),
            tests,
        });
    }
    let results: Vec<std::sync::Mutex<Option<TestReport>>> =
        work.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let jobs = opts.jobs.max(1).min(work.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(fi, ci)) = work.get(k) else {
                        break;
                    };
                    let f = &files[fi];
                    let fut = f.flow.as_ref().expect("valid files have a flow");
                    let flow = fut.flow.as_ref().expect("valid files have a flow");
                    let r = run_checked_opts(flow, &fut.source, &f.file.tests[ci], opts);
                    *results[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                }
            });
        }
    });
    for (k, (fi, _)) in work.iter().enumerate() {
        let r = results[k]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .expect("every test ran");
        reports[*fi].tests.push(r);
    }
    // A file's tests are either all errors (pushed above) or all run (in `work` order): each
    // file's list is in file order.
    reports
}

#[cfg(test)]
mod tests;
