//! Fingerprints (SPEC §10.5): strings naming what a cross-run phase depends on outside its
//! prompt — `git:<ref>`, `glob:<pat>`, `glob!:<pat>`, `file:<path>`, `env:<NAME>` — each
//! resolved to a string (sentinels for what cannot be read), joined by U+0000, sha256, 16 hex
//! digits. This is I/O: the driver resolves them, and the digest reaches the machine as an
//! input.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, UNIX_EPOCH};

use super::key::{hash_parts, sha256_hex};

/// Files larger than this are not hashed (`<skip>`).
pub const MAX_HASHED: u64 = 10 * 1024 * 1024;
/// At most this many glob matches count.
pub const MAX_MATCHES: usize = 5000;
/// How long `git rev-parse` may take.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(5);

/// The digest of `specs`, resolved in `cwd`.
pub fn digest(specs: &[String], cwd: &Path) -> String {
    let resolved: Vec<String> = specs.iter().map(|s| resolve(s, cwd)).collect();
    hash_parts(&resolved)
}

/// One fingerprint, resolved to the string that enters the digest.
pub fn resolve(spec: &str, cwd: &Path) -> String {
    if let Some(r) = spec.strip_prefix("git:") {
        return format!("git:{r}={}", git(r, cwd));
    }
    if let Some(p) = spec.strip_prefix("glob!:") {
        let list: Vec<String> = matches(p, cwd)
            .into_iter()
            .map(|(rel, path)| format!("{rel}:{}", file_hash(&path)))
            .collect();
        return format!("glob!:{p}={}", list.join("\n"));
    }
    if let Some(p) = spec.strip_prefix("glob:") {
        let list: Vec<String> = matches(p, cwd)
            .into_iter()
            .map(|(rel, path)| {
                let (size, mtime) = std::fs::metadata(&path)
                    .map(|m| {
                        let t = m
                            .modified()
                            .ok()
                            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                            .map_or(0, |d| d.as_nanos());
                        (m.len(), t)
                    })
                    .unwrap_or((0, 0));
                format!("{rel}:{size}:{mtime}")
            })
            .collect();
        return format!("glob:{p}={}", list.join("\n"));
    }
    if let Some(p) = spec.strip_prefix("file:") {
        return format!("file:{p}={}", file_hash(&cwd.join(p)));
    }
    if let Some(n) = spec.strip_prefix("env:") {
        let v = std::env::var(n).unwrap_or_else(|_| "<unset>".to_owned());
        return format!("env:{n}={v}");
    }
    // `check` rejects other forms; the text itself still distinguishes them.
    spec.to_owned()
}

/// A file's content sha256, `<missing>`, or `<skip>` over 10 MB.
fn file_hash(path: &Path) -> String {
    let Ok(meta) = std::fs::metadata(path) else {
        return "<missing>".to_owned();
    };
    if !meta.is_file() {
        return "<missing>".to_owned();
    }
    if meta.len() > MAX_HASHED {
        return "<skip>".to_owned();
    }
    let mut bytes = Vec::new();
    match std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut bytes)) {
        Ok(_) => sha256_hex(&bytes),
        Err(_) => "<missing>".to_owned(),
    }
}

/// `git rev-parse <ref>` in `cwd`: the commit, or `<no-git>`, `<timeout>`, `<invalid-ref>`.
fn git(reference: &str, cwd: &Path) -> String {
    let child = std::process::Command::new("git")
        .args([
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            reference,
        ])
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return "<no-git>".to_owned();
    };
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut out = String::new();
                if let Some(mut s) = child.stdout.take() {
                    let _ = s.read_to_string(&mut out);
                }
                if status.success() {
                    return out.trim().to_owned();
                }
                // Outside a repository rev-parse fails too: tell the two apart.
                let inside = std::process::Command::new("git")
                    .args(["rev-parse", "--git-dir"])
                    .current_dir(cwd)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                return if inside { "<invalid-ref>" } else { "<no-git>" }.to_owned();
            }
            Ok(None) if start.elapsed() >= GIT_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return "<timeout>".to_owned();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => return "<no-git>".to_owned(),
        }
    }
}

/// The commit checked out in `cwd` (`git rev-parse HEAD`, 5 s at most), when there is one.
pub fn head_commit(cwd: &Path) -> Option<String> {
    let c = git("HEAD", cwd);
    (!c.starts_with('<') && !c.is_empty()).then_some(c)
}

/// Files under `cwd` matching `pattern` (`*`, `?`, `**`), sorted, at most [`MAX_MATCHES`]:
/// relative path (with `/`) and full path. `.git` and `.tfc` are not searched.
pub fn matches(pattern: &str, cwd: &Path) -> Vec<(String, PathBuf)> {
    let Some(re) = glob_regex(pattern) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut dirs = vec![(cwd.to_path_buf(), String::new())];
    let mut visited = 0usize;
    while let Some((dir, rel)) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            visited += 1;
            if visited > 200_000 {
                break;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            let r = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                if name != ".git" && name != ".tfc" {
                    dirs.push((e.path(), r));
                }
            } else if re.is_match(&r) {
                out.push((r, e.path()));
            }
        }
    }
    out.sort();
    out.truncate(MAX_MATCHES);
    out
}

fn glob_regex(pattern: &str) -> Option<regex::Regex> {
    let p = pattern.strip_prefix("./").unwrap_or(pattern);
    let mut re = String::from("^");
    let chars: Vec<char> = p.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' if chars.get(i + 1) == Some(&'*') => {
                if chars.get(i + 2) == Some(&'/') {
                    re.push_str("(?:.*/)?");
                    i += 3;
                } else {
                    re.push_str(".*");
                    i += 2;
                }
                continue;
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    re.push('$');
    regex::Regex::new(&re).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinels_and_changes() {
        let dir = tempfile::tempdir().expect("temp");
        let d = dir.path();
        assert_eq!(resolve("file:a.txt", d), "file:a.txt=<missing>");
        std::fs::write(d.join("a.txt"), "one").expect("write");
        let one = digest(&["file:a.txt".into()], d);
        std::fs::write(d.join("a.txt"), "two").expect("write");
        assert_ne!(digest(&["file:a.txt".into()], d), one);
        assert_eq!(
            resolve("env:TFC_SURELY_UNSET_VAR", d),
            "env:TFC_SURELY_UNSET_VAR=<unset>"
        );
        std::fs::create_dir_all(d.join("src/x")).expect("mkdir");
        std::fs::write(d.join("src/x/b.rs"), "b").expect("write");
        std::fs::write(d.join("src/c.rs"), "c").expect("write");
        let found: Vec<String> = matches("src/**/*.rs", d).into_iter().map(|m| m.0).collect();
        assert_eq!(found, vec!["src/c.rs", "src/x/b.rs"]);
        let found: Vec<String> = matches("src/*.rs", d).into_iter().map(|m| m.0).collect();
        assert_eq!(found, vec!["src/c.rs"]);
        let before = digest(&["glob!:src/**/*.rs".into()], d);
        std::fs::write(d.join("src/c.rs"), "changed").expect("write");
        assert_ne!(digest(&["glob!:src/**/*.rs".into()], d), before);
        let git = resolve("git:HEAD", d);
        assert!(
            git == "git:HEAD=<no-git>" || git.starts_with("git:HEAD="),
            "{git}"
        );
    }
}
