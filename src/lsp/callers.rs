//! The callers of a saved flow: phases that run it (`"use": "<name>"`) and pass its arguments
//! in `with`. Renaming an argument of a saved flow renames those `with` keys in the open
//! documents; files on disk are only counted (a rename edits what the editor has open).
//!
//! Callers are read from the JSON text alone (any object with `use` naming the flow and a
//! `with` object, inline `def`s included), so a caller that does not check clean is still
//! found; the walk keeps its own stack, so a deep document is a long loop, not a deep one.

use std::path::{Path, PathBuf};

use crate::json::{Kind, Node};
use crate::project::SavedFlows;
use crate::source::Span;

/// The name under which the file at `path` is a saved flow of `saved` (its stem, when it sits
/// in one of the saved-flow folders), if it is one.
pub fn saved_name(saved: &SavedFlows, path: &Path) -> Option<String> {
    let dir = path.parent()?;
    let name = path.file_stem()?.to_str()?;
    if path.extension()? != "json" || !SavedFlows::valid_name(name) {
        return None;
    }
    saved
        .places()
        .any(|(_, d)| same_file(d, dir))
        .then(|| name.to_owned())
}

/// Does `use: name`, seen from a document whose saved flows are `saved`, run the file at
/// `path`? (The first candidate that exists, or the first at all when none does yet.)
pub fn resolves_to(saved: &SavedFlows, name: &str, path: &Path) -> bool {
    let candidates = saved.candidates(name);
    let target = candidates
        .iter()
        .find(|c| c.is_file())
        .or(candidates.first());
    target.is_some_and(|t| same_file(t, path))
}

fn same_file(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    a == b || canon(a) == canon(b)
}

/// The insides of the `with` keys named `arg` of every phase in `text` that uses the saved
/// flow `flow`.
pub fn with_keys(text: &str, flow: &str, arg: &str) -> Vec<Span> {
    let Some(root) = crate::json::parse(text).root else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut todo: Vec<&Node> = vec![&root];
    while let Some(node) = todo.pop() {
        match &node.kind {
            Kind::Array(items) => todo.extend(items),
            Kind::Object(members) => {
                let uses = node
                    .get("use")
                    .is_some_and(|u| matches!(&u.kind, Kind::String(s) if s.value == flow));
                if uses
                    && let Some(Node {
                        kind: Kind::Object(with),
                        ..
                    }) = node.get("with")
                {
                    for m in with.iter().filter(|m| m.key.value == arg) {
                        out.push(super::analysis::inner(text, m.key.span));
                    }
                }
                todo.extend(members.iter().map(|m| &m.value));
            }
            _ => {}
        }
    }
    out.sort_by_key(|s| s.start);
    out
}

/// Folders never searched for flow files.
const SKIPPED: [&str; 4] = ["node_modules", "target", "vendor", "dist"];

/// At most this many directory entries are read when looking for callers on disk.
const MAX_ENTRIES: usize = 50_000;

/// Is the file at `rel` (relative to the project root) a flow file as editors attach them
/// (`*.flow.json`, `.tfc/flows/**/*.json`, `taskflows/**/*.json`)?
fn is_flow_file(rel: &Path) -> bool {
    let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".flow.json") {
        return true;
    }
    if !name.ends_with(".json") {
        return false;
    }
    let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
    parts.windows(2).any(|w| w == [".tfc", "flows"]) || parts.contains(&"taskflows")
}

/// The flow files under `root` (hidden folders left out but `.tfc`; `node_modules`, `target`
/// and the like too) that pass `arg` to the saved flow `flow`, `open` ones left out.
pub fn on_disk(root: &Path, open: &[PathBuf], flow: &str, arg: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            seen += 1;
            if seen > MAX_ENTRIES {
                return found;
            }
            let path = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Ok(ty) = e.file_type() else { continue };
            if ty.is_dir() {
                let hidden = name.starts_with('.') && name != ".tfc";
                if !hidden && !SKIPPED.contains(&name.as_ref()) {
                    dirs.push(path);
                }
                continue;
            }
            let rel = path.strip_prefix(root).unwrap_or(&path);
            if !ty.is_file() || !is_flow_file(rel) || open.iter().any(|o| same_file(o, &path)) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if text.contains(flow) && text.contains(arg) && !with_keys(&text, flow, arg).is_empty()
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_keys_of_every_caller() {
        let text = r#"{"phases": [
  {"id": "a", "type": "flow", "use": "review", "with": {"repo": "x", "other": 1}},
  {"id": "b", "type": "flow", "use": "lint", "with": {"repo": "y"}},
  {"id": "c", "type": "flow", "def": {"phases": [
    {"id": "d", "type": "flow", "use": "review", "with": {"r\u0065po": 2}}]}}
]}"#;
        let keys: Vec<&str> = with_keys(text, "review", "repo")
            .into_iter()
            .map(|s| &text[s.range()])
            .collect();
        assert_eq!(keys, ["repo", "r\\u0065po"]);
        assert!(with_keys("{not json", "review", "repo").is_empty());
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(with_keys(&deep, "review", "repo").is_empty());
    }

    #[test]
    fn flow_files_as_editors_attach_them() {
        for yes in ["a.flow.json", ".tfc/flows/x.json", "sub/taskflows/y/z.json"] {
            assert!(is_flow_file(Path::new(yes)), "{yes}");
        }
        for no in ["package.json", "a.flow.json.bak", "flows/x.json"] {
            assert!(!is_flow_file(Path::new(no)), "{no}");
        }
    }
}
