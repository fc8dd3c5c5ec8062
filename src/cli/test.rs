//! `tfc test [PATH…]`: run flows' tests (`*.test.json`) without spending a token — a thin
//! layer over [`tfc::test`]: discover, check, run, print, exit 0/1/2.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};

use super::Color;
use super::{Exit, usage_error};
use tfc::diag::render::{render_file, to_json};
use tfc::test::{CheckedFile, TestOptions, coverage, report};
use tfc::value::Value;

#[derive(Args, Debug)]
pub struct TestArgs {
    /// Test files, or directories to search for *.test.json (default: the project root).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
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
    let color = a.color.enabled();
    let checked: Vec<CheckedFile> = files
        .iter()
        .map(|f| tfc::test::check_file(f, &cwd))
        .collect();
    for c in &checked {
        say!("{}", diagnostics_text(c, color));
    }
    let opts = TestOptions {
        filter: a.filter.clone(),
        cwd,
        missing_stub: a.missing == Missing::Stub,
        coverage: a.coverage,
        jobs: a.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        }),
    };
    let reports = tfc::test::run_files(checked, &opts);
    let elapsed = started.elapsed();
    match a.format {
        Format::Text => out!("{}", report::text(&reports, elapsed)),
        Format::Json => out!("{}", report::json_lines(&reports)),
    }
    // Coverage informs; it never changes the exit code.
    if a.coverage {
        let all = coverage::tally(&reports);
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
