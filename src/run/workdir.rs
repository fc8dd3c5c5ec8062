//! A phase's working directory (SPEC §3.1 `cwd`): where its agents and scripts run.
//!
//! - none: the invocation directory;
//! - a literal path, or one whole `{args.X}` of a relative-path arg: that directory, relative
//!   to the invocation directory; it must exist (else the phase fails, saying which one);
//! - `temp`: a fresh temporary directory, removed when the phase ends;
//! - `dedicated`: `.tfc/work/<runId>/<phaseId>/` under the project root, created and kept;
//! - `worktree`: a detached git worktree of the invocation directory's repository (at its
//!   `HEAD`) in `.tfc/worktrees/<runId>/<phaseId>/`, kept (**tfc:** like `dedicated`, so the
//!   agent's changes survive the run; `git worktree remove` discards it).
//!
//! When `temp`, `dedicated` or `worktree` cannot be created, the phase runs in the
//! invocation directory with a warning. A pure `--dry-run` starts no process, so it creates
//! nothing and checks no directory (agents are not called; scripts are listed).

use std::path::{Path, PathBuf};

use super::ctx::Shared;
use super::store::sanitize;
use crate::flow::{Cwd, Phase, PhaseType};
use crate::value::Value;
use crate::value::js_trim;

/// A prepared working directory; a temporary one is removed when this is dropped.
#[derive(Debug)]
pub struct WorkDir {
    path: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl WorkDir {
    fn at(path: PathBuf) -> WorkDir {
        WorkDir { path, _temp: None }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// What preparing a phase's directory gave: the directory and a warning, or why the phase
/// cannot run.
pub type Prepared = Result<(WorkDir, Option<String>), String>;

/// Prepare phase `phase`'s working directory.
pub async fn prepare(sh: &Shared, phase: &Phase) -> Prepared {
    let invocation = || WorkDir::at(sh.cwd.clone());
    let Some(cwd) = &phase.cwd else {
        return Ok((invocation(), None));
    };
    // Only processes care where they start: a pure dry run starts none.
    let real = !sh.opts.dry_run || (sh.opts.dry_run_scripts && phase.ty() == PhaseType::Script);
    let fallback = |what: &str, e: String| {
        Ok((
            invocation(),
            Some(format!(
                "cwd \"{what}\": {e}; running in the invocation directory {}",
                sh.cwd.display()
            )),
        ))
    };
    match &cwd.value {
        Cwd::Path(p) if p.is_empty() => Ok((invocation(), None)),
        Cwd::Path(p) => existing(sh, p, &format!("\"{p}\""), real).map(|d| (d, None)),
        Cwd::Arg(name) => {
            let value = match sh.args.as_ref() {
                Value::Object(m) => m.get(name.as_str()),
                _ => None,
            };
            match value {
                Some(Value::String(s)) if !js_trim(s).is_empty() => {
                    existing(sh, s, &format!("{{args.{name}}} = \"{s}\""), real).map(|d| (d, None))
                }
                Some(v) => Err(format!(
                    "working directory {{args.{name}}} is not a path (found {}); pass {name}=<relative path>",
                    v.to_json()
                )),
                None => Err(format!(
                    "working directory {{args.{name}}} has no value; pass {name}=<relative path>"
                )),
            }
        }
        _ if !real => Ok((invocation(), None)),
        Cwd::Temp => {
            let prefix = format!("tfc-{}-", sanitize(&phase.id));
            match tempfile::Builder::new().prefix(&prefix).tempdir() {
                Ok(t) => Ok((
                    WorkDir {
                        path: t.path().to_path_buf(),
                        _temp: Some(t),
                    },
                    None,
                )),
                Err(e) => fallback("temp", format!("cannot create a temporary directory: {e}")),
            }
        }
        Cwd::Dedicated => {
            let dir = phase_dir(sh, "work", phase);
            match std::fs::create_dir_all(&dir) {
                Ok(()) => Ok((WorkDir::at(dir), None)),
                Err(e) => fallback("dedicated", format!("cannot create {}: {e}", dir.display())),
            }
        }
        Cwd::Worktree => {
            let dir = phase_dir(sh, "worktrees", phase);
            match worktree(&sh.cwd, &dir).await {
                Ok(()) => Ok((WorkDir::at(dir), None)),
                Err(e) => fallback("worktree", e),
            }
        }
    }
}

/// A directory the flow names, relative to the invocation directory: it must exist.
fn existing(sh: &Shared, path: &str, shown: &str, real: bool) -> Result<WorkDir, String> {
    let dir = sh.cwd.join(path);
    if real && !dir.is_dir() {
        let what = if dir.exists() {
            "is not a directory"
        } else {
            "does not exist"
        };
        return Err(format!(
            "working directory {shown} {what}: {} (paths are relative to the invocation directory {}; create it or correct 'cwd')",
            dir.display(),
            sh.cwd.display()
        ));
    }
    Ok(WorkDir::at(dir))
}

/// A parallel branch's literal `cwd` (relative to the invocation directory), checked like a
/// phase's.
pub fn branch(sh: &Shared, phase: &Phase, index: usize, path: &str) -> Result<PathBuf, String> {
    let real = !sh.opts.dry_run;
    existing(sh, path, &format!("of branch {index} \"{path}\""), real)
        .map(|d| d.path)
        .map_err(|e| format!("{}: {e}", phase.id))
}

/// `<project root>/.tfc/<kind>/<runId>/<phaseId>`.
fn phase_dir(sh: &Shared, kind: &str, phase: &Phase) -> PathBuf {
    let root = sh
        .opts
        .project_root
        .clone()
        .unwrap_or_else(|| sh.cwd.clone());
    root.join(".tfc")
        .join(kind)
        .join(sanitize(&sh.run_id))
        .join(sanitize(&phase.id))
}

/// `git worktree add --detach DIR` in the repository of `repo`; an existing worktree there
/// (a gate's rework running the phase again) is reused.
async fn worktree(repo: &Path, dir: &Path) -> Result<(), String> {
    if dir.join(".git").exists() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let out = smol::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["worktree", "add", "--detach"])
        .arg(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = js_trim(&stderr).lines().next().unwrap_or("").to_owned();
    Err(format!("git worktree add failed: {first}"))
}
