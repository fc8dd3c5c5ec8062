//! `tfc test [PATH…]`: run flows' tests (`*.test.json`) without spending a token — a thin
//! layer over [`tfc::test`]: discover, check, run, print, exit 0/1/2. `--update` rewrites
//! plain-string `output`/`prompts` matchers to what the runs produced; `--from-run RUN`
//! writes a test made of a recorded run.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, ValueEnum};

use super::Color;
use super::{Exit, usage_error};
use tfc::diag::render::{render_file, to_json};
use tfc::run::runs;
use tfc::test::property::{self, PropertyOptions};
use tfc::test::{CheckedFile, TestOptions, coverage, edit, from_run, report};
use tfc::value::Value;

#[derive(Args, Debug)]
#[command(
    after_help = "Snapshots: --update rewrites each `output`, `phases.<id>.output` and \
`prompts` matcher written as a plain string to what the run produced, and nothing else in the \
file (comments and layout kept); matchers written as objects ({\"contains\": …}) are left alone.

From a real run: `tfc test --from-run RUN -o FILE` writes a test whose answers are the run's \
recorded calls (per node, in order; failures as {\"error\"}, timeouts as {\"timeout\": true}, \
scripts as {\"stdout\", \"exitCode\"} when the journal holds them), whose approvals and args are \
the run's, and whose expectations are its status, each phase's status and its final output. \
FILE is created (naming the flow relative to it) or the test is appended to its `tests`; \
without -o the new test file is printed."
)]
pub struct TestArgs {
    /// Test files, or directories to search for *.test.json (default: the project root).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Make a test of a recorded run (its id, a unique prefix, or `last`) instead of running
    /// tests.
    #[arg(long, value_name = "RUN", conflicts_with_all = ["paths", "update", "keep_runs", "filter", "junit"])]
    from_run: Option<String>,
    /// With --from-run: the test file to write (created, or the test appended to its
    /// `tests`); default: print a new test file.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        requires = "from_run"
    )]
    output: Option<PathBuf>,
    /// With --from-run: the test's name (default `run <runId>`).
    #[arg(long, value_name = "TEXT", requires = "from_run")]
    name: Option<String>,
    /// Rewrite the plain-string `output`/`prompts` matchers to what the runs produced
    /// (snapshot tests), then report the tests as they now stand.
    #[arg(long)]
    update: bool,
    /// Write each test's run to the run store (.tfc/runs), as `tfc run` does, for `tfc show`
    /// and `tfc report`; without it a test writes nothing.
    #[arg(long)]
    keep_runs: bool,
    /// Run only the tests whose name contains this text.
    #[arg(long, value_name = "TEXT")]
    filter: Option<String>,
    /// `text`: a line per test, then the failures and a summary; `json`: one object per test.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also write the results as JUnit XML to this file (for CI systems).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Tests run at once (default: the number of cores).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// A call no answer matches: `fail` the test, or `stub` (answered as in a dry run).
    #[arg(long, value_enum, default_value_t = Missing::Fail)]
    missing: Missing,
    /// Also report which of each flow's outcomes (each `when` true and false, gate verdict,
    /// loop ending, race winner, approval decision, …) the tests reached.
    #[arg(long)]
    coverage: bool,
    /// Run each flow N times with answers generated from its contracts, checking its
    /// invariants, instead of running the files' tests; a violation is shrunk and printed as
    /// a test case.
    #[arg(long, value_name = "N", conflicts_with_all = ["from_run", "update", "keep_runs", "filter", "junit", "coverage"])]
    property: Option<u64>,
    /// The seed of `--property` (default: random, printed): the same seed repeats the runs.
    #[arg(long, value_name = "S", requires = "property")]
    seed: Option<u64>,
    /// Colour in the diagnostics of invalid test files.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Missing {
    Fail,
    Stub,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// `tfc test`.
pub fn run(a: TestArgs) -> Exit {
    let started = Instant::now();
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    if let Some(run) = &a.from_run {
        return from_run(&a, run, &cwd);
    }
    let paths = if a.paths.is_empty() {
        vec![tfc::project::project_root(&cwd)]
    } else {
        a.paths.clone()
    };
    let files: Vec<PathBuf> = match tfc::test::discover::discover(&paths) {
        // Shown relative to the invocation directory when under it.
        Ok(f) => f
            .into_iter()
            .map(|p| p.strip_prefix(&cwd).map(PathBuf::from).unwrap_or(p))
            .collect(),
        Err(e) => return usage_error(e),
    };
    if files.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return usage_error(format!(
            "no test files (*.test.json) under {}",
            shown.join(", ")
        ));
    }
    if a.jobs == Some(0) {
        return usage_error("--jobs must be at least 1");
    }
    if a.property == Some(0) {
        return usage_error("--property must be at least 1");
    }
    let color = a.color.enabled();
    let check = |files: &[PathBuf]| -> Vec<CheckedFile> {
        files
            .iter()
            .map(|f| tfc::test::check_file(f, &cwd))
            .collect()
    };
    let checked = check(&files);
    for c in &checked {
        say!("{}", diagnostics_text(c, color));
    }
    if let Some(runs) = a.property {
        let opts = PropertyOptions {
            runs,
            seed: a.seed.unwrap_or_else(property::random_seed),
            cwd,
        };
        return properties(&checked, &opts, a.format, started);
    }
    let opts = TestOptions {
        filter: a.filter.clone(),
        cwd: cwd.clone(),
        missing_stub: a.missing == Missing::Stub,
        coverage: a.coverage,
        jobs: a.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        }),
        keep_runs: a.keep_runs.then(|| tfc::project::project_root(&cwd)),
    };
    let mut reports = tfc::test::run_files(checked, &opts);
    if a.update {
        match update(&files, &reports) {
            // Reported as they now stand (their runs are kept once, by the first pass).
            Ok(true) => {
                let opts = TestOptions {
                    keep_runs: None,
                    ..opts
                };
                reports = tfc::test::run_files(check(&files), &opts);
            }
            Ok(false) => {}
            Err(e) => {
                sayln!("error: {e}");
                return Exit::Usage;
            }
        }
    }
    let elapsed = started.elapsed();
    match a.format {
        Format::Text => out!("{}", report::text(&reports, elapsed)),
        Format::Json => out!("{}", report::json_lines(&reports)),
    }
    // Coverage informs; it never changes the exit code.
    if a.coverage {
        let all = tfc::test::coverage_of(&reports);
        match a.format {
            Format::Text => {
                for c in &all {
                    say!("{}", c.render_unreached(color));
                    out!("{}", coverage::text(std::slice::from_ref(c)));
                }
            }
            Format::Json => out!("{}", coverage::json_lines(&all)),
        }
    }
    if let Some(path) = &a.junit
        && let Err(e) = std::fs::write(path, report::junit(&reports, elapsed))
    {
        sayln!("error: cannot write {}: {e}", path.display());
        return Exit::Usage;
    }
    match report::exit_code(&reports) {
        0 => Exit::Ok,
        1 => Exit::Failure,
        _ => Exit::Usage,
    }
}

/// `tfc test --property N`: each file's flow run N times with generated answers.
fn properties(
    checked: &[CheckedFile],
    opts: &PropertyOptions,
    format: Format,
    started: Instant,
) -> Exit {
    let reports: Vec<property::PropertyReport> = checked
        .iter()
        .map(|c| property::run_file(c, opts))
        .collect();
    match format {
        Format::Text => out!("{}", property::text(&reports, opts, started.elapsed())),
        Format::Json => out!("{}", property::json_lines(&reports, opts)),
    }
    match property::exit_code(&reports) {
        0 => Exit::Ok,
        1 => Exit::Failure,
        _ => Exit::Usage,
    }
}

/// `--update`: each file's plain-string matchers set to what its tests' runs produced;
/// `Ok(true)` when some file changed.
fn update(files: &[PathBuf], reports: &[tfc::test::FileReport]) -> Result<bool, String> {
    let mut changed = false;
    for (path, r) in files.iter().zip(reports) {
        let text = &r.checked.source.text;
        let u = edit::update(text, r);
        for n in &u.notes {
            sayln!("note: {}: {n}", path.display());
        }
        if u.edits.is_empty() {
            continue;
        }
        let n = u.edits.len();
        std::fs::write(path, edit::apply(text, u.edits))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        sayln!(
            "updated {n} matcher{} in {}",
            if n == 1 { "" } else { "s" },
            path.display()
        );
        changed = true;
    }
    Ok(changed)
}

/// `--from-run RUN`: a test made of a recorded run, appended to `-o FILE`, written to it as
/// a new test file, or printed.
fn from_run(a: &TestArgs, run: &str, cwd: &Path) -> Exit {
    let root = tfc::project::project_root(cwd);
    let entry = match runs::find(&root, run, None) {
        Ok(e) => e,
        Err(e) => return usage_error(e),
    };
    let status = runs::effective_status(&entry.dir, &entry.record);
    if status == "running" || status == "interrupted" {
        return usage_error(format!(
            "run '{}' is {status}: a test is made of a run that ended (completed, failed, blocked or paused){}",
            entry.run_id,
            if status == "interrupted" {
                "; resume it with `tfc resume` first"
            } else {
                "; wait for it to end"
            }
        ));
    }
    let mut made = from_run::case_from_run(&entry.dir, &entry.record, a.name.as_deref());
    for n in &made.notes {
        sayln!("note: {n}");
    }
    let existing = a
        .output
        .as_ref()
        .filter(|f| f.exists())
        .map(|f| (f, std::fs::read_to_string(f)));
    let (text, what) = match existing {
        Some((file, Err(e))) => {
            return usage_error(format!("cannot read {}: {e}", file.display()));
        }
        Some((file, Ok(text))) => {
            // The file must test the run's flow.
            let checked = tfc::test::check_text(file, text.clone(), cwd);
            if let Some(flow) = checked.flow.as_ref().and_then(|f| f.flow.as_ref())
                && flow.name != made.flow
            {
                return usage_error(format!(
                    "{} tests the flow '{}', and run '{}' is of the flow '{}': write the test to another file",
                    file.display(),
                    flow.name,
                    entry.run_id,
                    made.flow
                ));
            }
            rename_unique(&mut made.case, &edit::test_names(&text));
            match edit::append_case(&text, &made.case) {
                Ok(t) => (t, "appended to"),
                Err(e) => {
                    return usage_error(format!("cannot add a test to {}: {e}", file.display()));
                }
            }
        }
        None => {
            let located = made
                .def
                .as_ref()
                .and_then(|d| from_run::locate_flow(d, &made.flow, &root));
            let located = match located {
                Some(l) => l,
                None => match from_run::flow_by_name(&made.flow, &root) {
                    Some(l) => {
                        sayln!(
                            "warning: no flow file under {} holds the definition run '{}' used (was the flow edited since?); the test names the flow '{}' as it is now",
                            root.display(),
                            entry.run_id,
                            made.flow
                        );
                        l
                    }
                    None => {
                        return usage_error(format!(
                            "cannot find the flow of run '{}': no file under {} holds its definition, and none is named {}.json; restore the flow file, or append the test to a test file of that flow with -o FILE",
                            entry.run_id,
                            root.display(),
                            made.flow
                        ));
                    }
                },
            };
            let base = a
                .output
                .as_ref()
                .and_then(|f| f.parent())
                .map_or_else(|| cwd.to_path_buf(), Path::to_path_buf);
            let flow = match located {
                Ok(path) => from_run::relative_path(&base, &path),
                Err(saved) => saved,
            };
            (edit::new_file(&flow, &made.case), "written to")
        }
    };
    let name = made
        .case
        .as_object()
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    match &a.output {
        Some(file) => {
            if let Err(e) = std::fs::write(file, text) {
                return usage_error(format!("cannot write {}: {e}", file.display()));
            }
            sayln!("test '{name}' {what} {}", file.display());
        }
        None => out!("{text}"),
    }
    Exit::Ok
}

/// The case's name made unique among `taken` (a duplicate name is an error, T0010).
fn rename_unique(case: &mut Value, taken: &[String]) {
    if let Value::Object(c) = case
        && let Some(name) = c.get("name").and_then(Value::as_str)
    {
        let unique = edit::unique_name(name, taken);
        c.insert("name".into(), Value::from(unique));
    }
}

/// The problems of a test file and of its flow, drawn like `tfc check` draws them (errors of
/// the flow only: its warnings are `tfc check`'s to show).
fn diagnostics_text(c: &CheckedFile, color: bool) -> String {
    let mut out = render_file(&c.diagnostics, &c.source, color);
    if let Some(f) = &c.flow
        && f.flow.is_none()
    {
        let errors: Vec<_> = f
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .cloned()
            .collect();
        out.push_str(&render_file(&errors, &f.source, color));
    }
    out
}

/// `tfc check` of a test file: its problems and its flow's, as text (on stderr) or JSON
/// values; returns (errors, warnings).
pub fn check_test_file(
    path: &std::path::Path,
    cwd: &std::path::Path,
    color: bool,
    json: Option<&mut Vec<Value>>,
) -> (usize, usize) {
    let c = tfc::test::check_file(path, cwd);
    let mut diags: Vec<(&tfc::diag::Diagnostic, &tfc::source::Source)> =
        c.diagnostics.iter().map(|d| (d, &c.source)).collect();
    if let Some(f) = &c.flow {
        diags.extend(f.diagnostics.iter().map(|d| (d, &f.source)));
    }
    let errors = diags.iter().filter(|(d, _)| d.is_error()).count();
    let warnings = diags.len() - errors;
    match json {
        Some(out) => out.extend(diags.iter().map(|(d, s)| to_json(d, s))),
        None => {
            say!("{}", render_file(&c.diagnostics, &c.source, color));
            if let Some(f) = &c.flow {
                say!("{}", render_file(&f.diagnostics, &f.source, color));
            }
        }
    }
    (errors, warnings)
}
