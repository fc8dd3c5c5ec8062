//! A phase's working directory (SPEC §3.1 `cwd`), prepared by the driver when the machine
//! asks ([`DirSpec`]), and the pre-read of context files (§3.16).
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
//! invocation directory with a warning. A pure `--dry-run` starts no process, so the machine
//! asks for nothing to be created or checked.

use std::path::{Path, PathBuf};

use super::machine::DirSpec;
use super::store::sanitize;
use crate::value::js_trim;

/// A prepared working directory; a temporary one is removed when this is dropped.
#[derive(Debug)]
pub(crate) struct WorkDir {
    path: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl WorkDir {
    fn at(path: PathBuf) -> WorkDir {
        WorkDir { path, _temp: None }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Keep the directory past this value (a driver that removes it itself later): its path,
    /// and whether it is a temporary one to remove when its phase ends.
    #[cfg_attr(not(feature = "temporal"), allow(dead_code))]
    pub(crate) fn keep(self) -> (PathBuf, bool) {
        match self._temp {
            Some(t) => (t.keep(), true),
            None => (self.path, false),
        }
    }
}

/// What preparing a phase's directory gave: the directory and a warning, or why the phase
/// cannot run.
pub(crate) type Prepared = Result<(WorkDir, Option<String>), String>;

/// Prepare a working directory; `base` is the invocation directory.
pub(crate) async fn prepare(
    dir: &DirSpec,
    base: &Path,
    phase: &str,
    run_id: &str,
    project_root: Option<&Path>,
) -> Prepared {
    let invocation = || WorkDir::at(base.to_path_buf());
    let fallback = |what: &str, e: String| {
        Ok((
            invocation(),
            Some(format!(
                "cwd \"{what}\": {e}; running in the invocation directory {}",
                base.display()
            )),
        ))
    };
    let phase_dir = |kind: &str| {
        project_root
            .unwrap_or(base)
            .join(".tfc")
            .join(kind)
            .join(sanitize(run_id))
            .join(sanitize(phase))
    };
    match dir {
        DirSpec::Existing { path, shown } => {
            existing(base, path, shown, true).map(|d| (WorkDir::at(d), None))
        }
        DirSpec::Temp => {
            let prefix = format!("tfc-{}-", sanitize(phase));
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
        DirSpec::Dedicated => {
            let dir = phase_dir("work");
            match std::fs::create_dir_all(&dir) {
                Ok(()) => Ok((WorkDir::at(dir), None)),
                Err(e) => fallback("dedicated", format!("cannot create {}: {e}", dir.display())),
            }
        }
        DirSpec::Worktree => {
            let dir = phase_dir("worktrees");
            match worktree(base, &dir).await {
                Ok(()) => Ok((WorkDir::at(dir), None)),
                Err(e) => fallback("worktree", e),
            }
        }
    }
}

/// A directory the flow names, relative to the invocation directory `base`: it must exist
/// (when `real`).
pub(crate) fn existing(
    base: &Path,
    path: &str,
    shown: &str,
    real: bool,
) -> Result<PathBuf, String> {
    let dir = base.join(path);
    if real && !dir.is_dir() {
        let what = if dir.exists() {
            "is not a directory"
        } else {
            "does not exist"
        };
        return Err(format!(
            "working directory {shown} {what}: {} (paths are relative to the invocation directory {}; create it or correct 'cwd')",
            dir.display(),
            base.display()
        ));
    }
    Ok(dir)
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

/// How many of `paths` the pre-read prefix `text` ([`read_context`]'s) holds a block of: the
/// files actually read (missing, unreadable, oversized ones and directories have none; a
/// block cut off by the total limit does not count either).
pub(crate) fn context_files_read(paths: &[String], text: &str) -> usize {
    let mut at = 0;
    let mut read = 0;
    for p in paths {
        let header = format!("## File: {p}\n\n```");
        if let Some(k) = text.get(at..).and_then(|rest| rest.find(&header)) {
            read += 1;
            at += k + header.len();
        }
    }
    read
}

/// The pre-read context files of a phase (SPEC §3.16), as one prompt prefix: each file (at
/// most 10 MiB, cut at `limit` characters) in a fenced block, 200 000 characters in all.
pub(crate) fn read_context(cwd: &Path, paths: &[String], limit: usize) -> String {
    const TOTAL: usize = 200_000;
    let mut blocks: Vec<String> = Vec::new();
    for p in paths {
        let full = cwd.join(p);
        let Ok(meta) = std::fs::metadata(&full) else {
            continue;
        };
        if !meta.is_file() || meta.len() > 10 * 1024 * 1024 {
            continue;
        }
        let Ok(bytes) = std::fs::read(&full) else {
            continue;
        };
        let content = String::from_utf8_lossy(&bytes);
        let ext = Path::new(p)
            .extension()
            .and_then(|e| e.to_str())
            .filter(|e| !e.is_empty())
            .unwrap_or("txt");
        let total_chars = content.chars().count();
        let mut block = format!("## File: {p}\n\n```{ext}\n");
        if total_chars > limit {
            block.extend(content.chars().take(limit));
            block.push_str(&format!("\n... [truncated {} chars]", total_chars - limit));
        } else {
            block.push_str(&content);
        }
        block.push_str("\n```");
        blocks.push(block);
    }
    if blocks.is_empty() {
        return String::new();
    }
    let mut out = blocks.join("\n\n");
    out.push_str("\n\n");
    if out.chars().count() > TOTAL {
        out = out.chars().take(TOTAL).collect();
    }
    out
}
