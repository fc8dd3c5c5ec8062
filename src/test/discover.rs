//! Finding test files: `*.test.json` under each path (SPEC §17), skipping `.tfc/`, `.git/`,
//! `target/` and `node_modules/`; a path that is a file is taken as it is.

use std::path::{Path, PathBuf};

/// Directories never searched.
const SKIPPED: &[&str] = &[".tfc", ".git", "target", "node_modules"];

/// Is this the name of a test file?
pub fn is_test_file(name: &str) -> bool {
    name.ends_with(".test.json") && name.len() > ".test.json".len()
}

/// The test files under `paths`, each once, sorted within each path; `Err` names a path that
/// does not exist.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_file() {
            if !out.contains(p) {
                out.push(p.clone());
            }
            continue;
        }
        if !p.is_dir() {
            return Err(format!("no such file or directory: {}", p.display()));
        }
        let mut found = Vec::new();
        walk(p, &is_test_file, &mut found);
        found.sort();
        for f in found {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    Ok(out)
}

/// The files under `root` that may hold a flow (`*.json`, `*.jsonc`; test files and the
/// skipped directories left out), sorted.
pub fn flow_files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let flow =
        |name: &str| (name.ends_with(".json") || name.ends_with(".jsonc")) && !is_test_file(name);
    walk(root, &flow, &mut found);
    found.sort();
    found
}

fn walk(dir: &Path, keep: &dyn Fn(&str) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(ty) = e.file_type() else {
            continue;
        };
        if ty.is_dir() {
            if !SKIPPED.contains(&name.as_str()) {
                walk(&e.path(), keep, out);
            }
        } else if ty.is_file() && keep(&name) {
            out.push(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_test_files_and_skips_build_and_vcs_directories() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for p in [
            "a.test.json",
            "sub/b.test.json",
            "sub/flow.json",
            ".tfc/c.test.json",
            ".git/d.test.json",
            "target/e.test.json",
            "node_modules/x/f.test.json",
            ".test.json",
        ] {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "{}").unwrap();
        }
        let found = discover(&[root.to_path_buf()]).unwrap();
        let rel: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(rel, ["a.test.json", "sub/b.test.json"]);
        // A file given by name is taken, once.
        let f = root.join("sub/flow.json");
        assert_eq!(discover(&[f.clone(), f.clone()]).unwrap(), [f]);
        assert!(discover(&[root.join("nope")]).unwrap_err().contains("nope"));
    }
}
