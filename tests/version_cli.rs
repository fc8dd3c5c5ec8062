//! `tfc --version` names the commit it was built from (SPEC §19), and the build script that
//! records it falls back cleanly where there is no git history: a crate tarball carries
//! `.cargo_vcs_info.json`; a plain source tree gives the version alone.

mod common;

use std::path::Path;
use std::process::Command;

use common::{root, scratch, tfc};

#[allow(dead_code)] // the script's `main` is cargo's to call
#[path = "../build.rs"]
mod build_script;

use build_script::{Commit, find_commit, sha_of_vcs_info, version_line};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `(version, hash, date)` of a `tfc 0.1.0 (1a2b3c4d5e6f 2026-12-07)` line.
fn parse(line: &str, name: &str) -> (String, Option<String>, Option<String>) {
    let rest = line
        .strip_prefix(name)
        .and_then(|r| r.strip_prefix(' '))
        .unwrap_or_else(|| panic!("{line:?} does not start with {name:?}"));
    let Some((version, paren)) = rest.split_once(" (") else {
        return (rest.to_owned(), None, None);
    };
    let inner = paren.strip_suffix(')').expect("closing parenthesis");
    let mut words = inner.split(' ');
    let hash = words.next().map(str::to_owned);
    let date = words.next().map(str::to_owned);
    assert_eq!(words.next(), None, "{line:?}");
    (version.to_owned(), hash, date)
}

#[test]
fn version_names_the_package_version_and_the_commit() {
    let out = tfc(&["--version"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.lines().count(), 1, "{out:?}");
    let (version, hash, date) = parse(out.stdout.trim_end(), "tfc");
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    // Built from a git checkout (a clone, as in CI, or a worktree): HEAD's hash and date.
    let root = root();
    let top = Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .current_dir(&root)
        .output();
    let in_git = top.is_ok_and(|o| {
        o.status.success()
            && Path::new(String::from_utf8_lossy(&o.stdout).trim())
                .canonicalize()
                .ok()
                == root.canonicalize().ok()
    });
    if in_git && std::env::var_os("TFC_BUILD_COMMIT").is_none() {
        let hash = hash.expect("a commit in the version");
        assert_eq!(hash.len(), 12, "{out:?}");
        let head = git(&root, &["rev-parse", "HEAD"]);
        // A clone with its own target folder (CI: `CI` is set) builds from HEAD. Work trees
        // sharing one target folder may run a binary whose build script ran in another work
        // tree (see build.rs): then it is at least a commit of this repository, with its date.
        let commit = if head.starts_with(&hash) || std::env::var_os("CI").is_some() {
            assert!(head.starts_with(&hash), "{hash} is not HEAD ({head})");
            head
        } else {
            git(
                &root,
                &["rev-parse", "--verify", &format!("{hash}^{{commit}}")],
            )
        };
        let day = git(&root, &["show", "-s", "--format=%cs", &commit]);
        assert_eq!(date.as_deref(), Some(day.as_str()), "{out:?}");
    } else if let Some(hash) = hash {
        assert!(
            hash.len() == 12 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
            "{out:?}"
        );
    }
    // `-V` and every command's `--version` say the same.
    assert_eq!(tfc(&["-V"]).stdout, out.stdout);
    let check = tfc(&["check", "--version"]);
    assert_eq!(check.code, 0, "{check:?}");
    assert_eq!(
        check.stdout.trim_end(),
        out.stdout.trim_end().replacen("tfc ", "tfc-check ", 1)
    );
}

#[test]
fn version_line_shortens_the_hash_and_adds_the_date_when_known() {
    let sha = "0123456789abcdef0123456789abcdef01234567".to_owned();
    let dated = Commit {
        sha: sha.clone(),
        date: Some("2026-12-07".into()),
    };
    assert_eq!(
        version_line("1.2.3", Some(&dated)),
        "1.2.3 (0123456789ab 2026-12-07)"
    );
    let bare = Commit { sha, date: None };
    assert_eq!(version_line("1.2.3", Some(&bare)), "1.2.3 (0123456789ab)");
    assert_eq!(version_line("1.2.3", None), "1.2.3");
}

#[test]
fn the_commit_of_a_crate_tarball_is_read_from_cargo_vcs_info() {
    // What `cargo package` writes.
    let text = "{\n  \"git\": {\n    \"sha1\": \"89ABcdef0123456789abcdef0123456789abcdef\",\n    \"dirty\": true\n  },\n  \"path_in_vcs\": \"\"\n}";
    assert_eq!(
        sha_of_vcs_info(text).as_deref(),
        Some("89abcdef0123456789abcdef0123456789abcdef")
    );
    for bad in [
        "",
        "{}",
        "{\"git\": {\"sha1\": 12}}",
        "{\"git\": {\"sha1\": \"not-hex\"}}",
        "{\"git\": {\"sha1\": \"abc",
    ] {
        assert_eq!(sha_of_vcs_info(bad), None, "{bad:?}");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join(".cargo_vcs_info.json"), text).expect("write");
    let found = find_commit(dir.path(), None);
    let commit = found.commit.expect("a commit");
    assert_eq!(commit.sha, "89abcdef0123456789abcdef0123456789abcdef");
    assert_eq!(commit.date, None);
    assert_eq!(found.watch, [dir.path().join(".cargo_vcs_info.json")]);
    // A packager's TFC_BUILD_COMMIT wins; a value that is no hash is ignored.
    let env = find_commit(dir.path(), Some(" 0123abcd0123 "));
    assert_eq!(env.commit.expect("env commit").sha, "0123abcd0123");
    let junk = find_commit(dir.path(), Some("yesterday"));
    assert_eq!(junk.commit.expect("vcs commit").sha, commit.sha);
}

#[test]
fn a_source_tree_without_history_gives_the_version_alone() {
    // Outside any repository (the system temp dir), and inside one that is not ours: a crate
    // unpacked into another project's ignored folder must not take that project's commit.
    let plain = tempfile::tempdir().expect("temp dir");
    let found = find_commit(plain.path(), None);
    assert_eq!(found.commit, None);
    assert!(found.watch.is_empty(), "{:?}", found.watch);

    let outer = scratch("version-outer-repo");
    git(&outer, &["init", "-q"]);
    std::fs::write(outer.join("README"), "outer\n").expect("write");
    git(&outer, &["add", "README"]);
    git(&outer, &["commit", "-q", "-m", "outer"]);
    let vendored = outer.join("vendor/tfc-cli");
    std::fs::create_dir_all(&vendored).expect("mkdir");
    assert_eq!(find_commit(&vendored, None).commit, None);
}

#[test]
fn a_git_checkout_gives_head_and_the_files_that_move_with_it() {
    let dir = scratch("version-git-checkout");
    git(&dir, &["init", "-q"]);
    std::fs::write(dir.join("a"), "a\n").expect("write");
    git(&dir, &["add", "a"]);
    git(&dir, &["commit", "-q", "-m", "first"]);
    let found = find_commit(&dir, None);
    let commit = found.commit.expect("a commit");
    assert_eq!(commit.sha, git(&dir, &["rev-parse", "HEAD"]));
    assert_eq!(
        commit.date.as_deref(),
        Some(git(&dir, &["show", "-s", "--format=%cs", "HEAD"]).as_str())
    );
    let git_dir = dir.join(".git");
    for f in ["HEAD", "logs/HEAD", "refs/heads/main"] {
        assert!(
            found
                .watch
                .iter()
                .any(|p| p.canonicalize().ok() == git_dir.join(f).canonicalize().ok()),
            "{f} not watched: {:?}",
            found.watch
        );
    }
    // A new commit is seen (cargo re-runs the script because HEAD's reflog changed).
    std::fs::write(dir.join("a"), "b\n").expect("write");
    git(&dir, &["commit", "-q", "-am", "second"]);
    let again = find_commit(&dir, None).commit.expect("a commit");
    assert_eq!(again.sha, git(&dir, &["rev-parse", "HEAD"]));
    assert_ne!(again.sha, commit.sha);
}
