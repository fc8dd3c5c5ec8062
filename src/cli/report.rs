//! `tfc report RUN [-o FILE]`: the self-contained HTML report of a run (SPEC §11.5), written to
//! `.tfc/runs/<flow>/<runId>/report.html` unless `-o` names another file (`-o -`: stdout).
//! `tfc run --report` writes the same file when its run ends.
//!
//! Exit codes: 0 written · 2 the run is not found, ambiguous or corrupt, or the file cannot be
//! written (the message says which).

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{Exit, usage_error};
use tfc::project::project_root;
use tfc::report::html::{Input, TEXT_LIMIT, html};
use tfc::run::runs;
use tfc::value::{Value, parse_json};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The run: its id, a unique prefix of it, or `last`.
    #[arg(value_name = "RUN")]
    run: String,
    /// Where to write the report (`-` for stdout); default: report.html in the run's folder.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

/// `tfc report`.
pub fn run(a: ReportArgs) -> Exit {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let root = project_root(&cwd);
    let entry = match runs::find(&root, &a.run, None) {
        Ok(e) => e,
        Err(e) => return usage_error(e),
    };
    let page = render(&entry.dir, &entry.record, Some(&entry.status));
    if a.output.as_deref() == Some(Path::new("-")) {
        out!("{page}");
        return Exit::Ok;
    }
    let path = a
        .output
        .map(|p| cwd.join(p))
        .unwrap_or_else(|| entry.dir.join("report.html"));
    match write(&path, &page) {
        Ok(()) => {
            sayln!(
                "report of run {} written to {}",
                entry.run_id,
                path.display()
            );
            Exit::Ok
        }
        Err(m) => usage_error(m),
    }
}

/// `tfc run --report`: write `report.html` beside the run's record. A problem is a warning:
/// the run's own exit code stands.
/// Returns the report's path when it was written.
pub fn after_run(run_json: &Path) -> Option<std::path::PathBuf> {
    let dir = run_json.parent().unwrap_or(Path::new("."));
    let record = match std::fs::read(run_json) {
        Ok(bytes) => match parse_json(&String::from_utf8_lossy(&bytes)) {
            Ok(v) => v,
            Err(e) => {
                sayln!(
                    "warning: no report: the run record {} is not valid JSON ({e}); try `tfc report` later",
                    run_json.display()
                );
                return None;
            }
        },
        Err(e) => {
            sayln!(
                "warning: no report: cannot read the run record {}: {e}",
                run_json.display()
            );
            return None;
        }
    };
    let path = dir.join("report.html");
    match write(&path, &render(dir, &record, None)) {
        Ok(()) => {
            sayln!("report: {}", path.display());
            Some(path)
        }
        Err(m) => {
            sayln!("warning: no report: {m}");
            None
        }
    }
}

/// The report of the run stored in `dir` with record `record`.
pub fn render(dir: &Path, record: &Value, status: Option<&str>) -> String {
    // A missing or unreadable journal leaves the report without prompts and call bars.
    let journal = std::fs::read(dir.join("journal.jsonl"))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let load = |rel: &str| read_start(&dir.join(rel));
    html(&Input {
        record,
        journal: &journal,
        status,
        load: &load,
    })
}

/// Write `page` to `path` through a temporary file beside it, so a reader never sees half a
/// report.
pub fn write(path: &Path, page: &str) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| {
        format!(
            "cannot write the report to {}: {e} (pass -o FILE to write it elsewhere)",
            path.display()
        )
    })?;
    std::fs::write(tmp.path(), page)
        .map_err(|e| format!("cannot write the report to {}: {e}", path.display()))?;
    // A temporary file is private (0600); the report is an ordinary file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path)
        .map_err(|e| format!("cannot write the report to {}: {}", path.display(), e.error))?;
    Ok(())
}

/// The beginning of a text file: enough characters for the report to show its cut.
fn read_start(path: &Path) -> Option<String> {
    let mut buf = Vec::new();
    let f = std::fs::File::open(path).ok()?;
    // 4 bytes per character at most, plus room for the report to count what it cut.
    f.take((TEXT_LIMIT as u64 + 1) * 4)
        .read_to_end(&mut buf)
        .ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}
