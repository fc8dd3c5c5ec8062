//! Build script: records the commit `tfc --version` prints (SPEC §19) in `TFC_VERSION`, e.g.
//! `0.1.0 (1a2b3c4d5e6f 2026-12-07)`. The commit comes from, in order:
//!
//! 1. `TFC_BUILD_COMMIT`, for packagers building from a source tree without its history;
//! 2. `.cargo_vcs_info.json`, which `cargo package` writes into a published crate (and so into
//!    what `cargo install tfc-cli` and `cargo binstall`'s fallback build);
//! 3. git, when this crate is the top level of a git work tree (a clone, a worktree; not a
//!    crate unpacked inside some other project's repository, whose commit is not ours).
//!
//! With none of them (a tarball without `.git`, no `git` on `PATH`) the version is the
//! package version alone. The functions are plain so `tests/version_cli.rs` can test them.
//!
//! Cargo re-runs this script when a watched file changes, not when the same package is built
//! from another copy of its source into the same target folder (two work trees sharing one):
//! there the binary keeps the commit of the copy that ran the script last, until HEAD moves.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The commit a build is made from: the full hash and, from git, the commit date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub sha: String,
    pub date: Option<String>,
}

/// Where a commit was found, with the files whose change must re-run this script.
#[derive(Debug, Default)]
pub struct Found {
    pub commit: Option<Commit>,
    pub watch: Vec<PathBuf>,
}

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=TFC_BUILD_COMMIT");
    let env_commit = std::env::var("TFC_BUILD_COMMIT").ok();
    let found = find_commit(&dir, env_commit.as_deref());
    for path in &found.watch {
        println!("cargo::rerun-if-changed={}", path.display());
    }
    let version = std::env::var("CARGO_PKG_VERSION").expect("CARGO_PKG_VERSION");
    println!(
        "cargo::rustc-env=TFC_VERSION={}",
        version_line(&version, found.commit.as_ref())
    );
}

/// `0.1.0 (1a2b3c4d5e6f 2026-12-07)`, `0.1.0 (1a2b3c4d5e6f)` or `0.1.0`.
pub fn version_line(version: &str, commit: Option<&Commit>) -> String {
    match commit {
        None => version.to_owned(),
        Some(c) => {
            let short: String = c.sha.chars().take(12).collect();
            match &c.date {
                Some(date) => format!("{version} ({short} {date})"),
                None => format!("{version} ({short})"),
            }
        }
    }
}

/// The commit of the crate at `dir` (see the module doc for the order).
pub fn find_commit(dir: &Path, env_commit: Option<&str>) -> Found {
    if let Some(sha) = env_commit.map(str::trim).filter(|s| is_hash(s)) {
        return Found {
            commit: Some(Commit {
                sha: sha.to_ascii_lowercase(),
                date: None,
            }),
            watch: Vec::new(),
        };
    }
    let vcs_info = dir.join(".cargo_vcs_info.json");
    if let Ok(text) = std::fs::read_to_string(&vcs_info) {
        return Found {
            commit: sha_of_vcs_info(&text).map(|sha| Commit { sha, date: None }),
            watch: vec![vcs_info],
        };
    }
    from_git(dir).unwrap_or_default()
}

/// The `git.sha1` of a `.cargo_vcs_info.json` (`{"git": {"sha1": "…"}, "path_in_vcs": ""}`),
/// read without a JSON library: the first string after the key.
pub fn sha_of_vcs_info(text: &str) -> Option<String> {
    let after = &text[text.find("\"sha1\"")? + "\"sha1\"".len()..];
    let after = after.trim_start().strip_prefix(':')?.trim_start();
    let value = after.strip_prefix('"')?;
    let sha = &value[..value.find('"')?];
    is_hash(sha).then(|| sha.to_ascii_lowercase())
}

/// A full or abbreviated commit hash: 7 to 64 hex digits.
fn is_hash(s: &str) -> bool {
    (7..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The HEAD commit when `dir` is the top of a git work tree, and the files that move with
/// HEAD: `HEAD` itself, its reflog (appended to by every commit and checkout of this work
/// tree), the branch it points to, `packed-refs`. Not the whole `refs/` folder: work trees
/// share it, and a commit on another branch must not rebuild this one.
fn from_git(dir: &Path) -> Option<Found> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let dirs = git(&[
        "rev-parse",
        "--show-toplevel",
        "--absolute-git-dir",
        "--git-common-dir",
    ])?;
    let mut lines = dirs.lines();
    let (top, git_dir, common) = (lines.next()?, lines.next()?, lines.next()?);
    if !same_dir(Path::new(top), dir) {
        return None;
    }
    let git_dir = PathBuf::from(git_dir);
    let common = if Path::new(common).is_absolute() {
        PathBuf::from(common)
    } else {
        dir.join(common)
    };
    let shown = git(&["show", "-s", "--format=%H %cs", "HEAD"])?;
    let mut words = shown.split_whitespace();
    let sha = words.next().filter(|s| is_hash(s))?.to_ascii_lowercase();
    let date = words.next().map(str::to_owned);
    let head = git_dir.join("HEAD");
    let mut watch = vec![head.clone(), git_dir.join("logs/HEAD")];
    if let Some(branch) = std::fs::read_to_string(&head)
        .ok()
        .and_then(|h| h.strip_prefix("ref: ").map(|r| r.trim().to_owned()))
    {
        watch.push(common.join(branch));
    }
    watch.push(common.join("packed-refs"));
    // A missing file would re-run this script on every build: watch only what exists.
    watch.retain(|p| p.exists());
    Some(Found {
        commit: Some(Commit { sha, date }),
        watch,
    })
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
