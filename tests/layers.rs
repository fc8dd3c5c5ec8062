//! The pipeline's stages point one way, and no folder's files import each other in a circle
//! (the binary's `cli/` included: sibling files there form no cycle either).
//!
//! The stages, lowest first: `value` (JSON values with JS semantics) → `source` (text and
//! spans) → `diag` (diagnostics) → `json` (the span-keeping reader) → `syntax` (lexing and
//! parsing) → `compile` (ASTs to ops) → `eval` (running ops) → `flow` (the IR) → `plan` (call counts) → `check` →
//! `project` (saved flows, config places) → `process` (the supervisor) → `agent` → `run` (the
//! machine and its driver) → `test` (`tfc test` over run) → `lsp` (the language server over
//! check, project and test) → `report` → `mcp` (the MCP server over all of them). A stage may use lower stages only, never a higher one.
//! Within one stage folder, the files form no import cycle; a parent module declaring its
//! children (`mod x;`) is not an import, but a child using an item of its parent is, so a
//! parent that re-exports a child and a child that uses the parent's items form a cycle.
//! One edge is exempt: a parent naming a type of its own descendant (`pub use gate::Gate`,
//! `Gate(gate::Gate)`), which a recursive IR needs (see `names_a_child_type`); a parent
//! calling a child's function or re-exporting it still counts.
//!
//! The test reads `src/**/*.rs` with comments and literals blanked out, resolves every
//! `use` tree and every `crate::`/`super::`/`self::` path (and paths through child modules)
//! to the file that defines the module, and checks both rules. Test modules count for the
//! second rule; for the first, a unit test (`mod tests`) may drive its stage through a higher
//! one (a lowering test that runs the whole check), as an end-to-end test would.
//!
//! A third rule keeps each source file small enough to read: none is over `MAX_SOURCE_BYTES`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The stages, lowest first.
const STAGES: &[&str] = &[
    "value",
    "source",
    "diag",
    "json",
    "syntax",
    "compile",
    "eval",
    "flow",
    "plan",
    "check",
    "project",
    "process",
    "agent",
    "telemetry",
    "run",
    "test",
    "lsp",
    "report",
    "mcp",
    "temporal",
];

/// Folders whose files still import each other in a circle (a `mod.rs` that holds types its
/// children use and also re-exports or calls those children, and unit tests that drive the
/// folder through its `mod.rs`). The within-folder rule skips them until they are untangled;
/// remove a folder from this list when its cycles are gone.
const CYCLES_PENDING: &[&str] = &[];

/// One source file: its module path (`["eval", "condition"]`; the binary's files under
/// [`BIN`]: `["<bin>", "cli", "init"]`) and its code with comments, strings and chars blanked
/// (newlines kept, so line numbers stay right).
struct File {
    path: String,
    module: Vec<String>,
    code: String,
}

/// The first module segment of the binary's files (`main.rs` and `cli/`): they are another
/// crate, whose `crate::` is `main.rs`, and no stage.
const BIN: &str = "<bin>";

/// One reference from a file to another file.
#[derive(Clone, Debug)]
struct Edge {
    from: usize,
    to: usize,
    line: usize,
    text: String,
    /// Made inside a `mod tests` of the file.
    test: bool,
}

/// The crate's `src/` folder.
fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read src")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file under `src/` (`main.rs` and `cli/` are the binary's, under
/// [`BIN`]).
fn module_of(rel: &Path) -> Vec<String> {
    if rel == Path::new("main.rs") {
        return vec![BIN.to_owned()];
    }
    if rel.starts_with("cli") {
        let mut m = vec![BIN.to_owned()];
        m.extend(module_of_lib(rel));
        return m;
    }
    module_of_lib(rel)
}

/// The module path of a library file under `src/`.
fn module_of_lib(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    match last.as_str() {
        "mod.rs" | "lib.rs" => {}
        name => parts.push(name.trim_end_matches(".rs").to_owned()),
    }
    parts
}

/// Blank out comments, string, byte-string, raw-string and char literals.
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let blank = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend(bytes.iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }));
    };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n);
            blank(&mut out, &b[i..end]);
            i = end;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let (mut depth, mut j) = (0usize, i);
            while j < b.len() {
                if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                    depth += 1;
                    j += 2;
                } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &b[i..j]);
            i = j;
        } else if !ident_before && (c == b'r' || (c == b'b' && b.get(i + 1) == Some(&b'r'))) && {
            let s = if c == b'r' { i + 1 } else { i + 2 };
            let hashes = b[s..].iter().take_while(|&&h| h == b'#').count();
            b.get(s + hashes) == Some(&b'"')
        } {
            let s = if c == b'r' { i + 1 } else { i + 2 };
            let hashes = b[s..].iter().take_while(|&&h| h == b'#').count();
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = s + hashes + 1;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |n| body + n + close.len());
            blank(&mut out, &b[i..end]);
            i = end;
        } else if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            blank(&mut out, &b[i..end]);
            i = end;
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|n| i + 2 + n + 1)
            } else {
                let ch = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 2 + ch)
            };
            match end {
                Some(end) => {
                    blank(&mut out, &b[i..end]);
                    i = end;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8")
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Colons,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Other(char),
}

/// Tokens with their line numbers.
fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = code.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\n' => line += 1,
            c if c.is_whitespace() => {}
            c if c.is_alphanumeric() || c == '_' => {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if d.is_alphanumeric() || d == '_' {
                        end = j + d.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                let word = code[i..end].trim_start_matches("r#");
                out.push((Tok::Ident(word.to_owned()), line));
            }
            ':' if chars.peek().is_some_and(|&(_, d)| d == ':') => {
                chars.next();
                out.push((Tok::Colons, line));
            }
            '{' => out.push((Tok::Open, line)),
            '}' => out.push((Tok::Close, line)),
            ',' => out.push((Tok::Comma, line)),
            ';' => out.push((Tok::Semi, line)),
            '*' => out.push((Tok::Star, line)),
            c => out.push((Tok::Other(c), line)),
        }
    }
    out
}

/// Expand a `use` tree starting at `toks[*at]` into full paths (a glob keeps its prefix).
fn use_tree(toks: &[(Tok, usize)], at: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(*at).map(|t| &t.0) {
            Some(Tok::Ident(w)) if w == "as" => {
                *at += 2;
                out.push(path);
                return;
            }
            Some(Tok::Ident(w)) => {
                path.push(w.clone());
                *at += 1;
                if toks.get(*at).map(|t| &t.0) == Some(&Tok::Colons) {
                    *at += 1;
                } else if !matches!(toks.get(*at).map(|t| &t.0), Some(Tok::Ident(w)) if w == "as") {
                    out.push(path);
                    return;
                }
            }
            Some(Tok::Star) => {
                *at += 1;
                out.push(path);
                return;
            }
            Some(Tok::Open) => {
                *at += 1;
                loop {
                    match toks.get(*at).map(|t| &t.0) {
                        Some(Tok::Close) => {
                            *at += 1;
                            return;
                        }
                        Some(Tok::Comma) => *at += 1,
                        None => return,
                        _ => use_tree(toks, at, &path, out),
                    }
                }
            }
            _ => {
                out.push(path);
                return;
            }
        }
    }
}

/// Every module path a file refers to, as written (before resolution), with the line, and
/// the inline module (`mod tests { … }`) it is written in.
fn references(code: &str) -> Vec<(Vec<String>, Vec<String>, usize)> {
    let toks = tokens(code);
    let mut out = Vec::new();
    // Inline modules: (name, brace depth inside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let ident = |i: usize| match toks.get(i).map(|t| &t.0) {
        Some(Tok::Ident(w)) => Some(w.as_str()),
        _ => None,
    };
    while i < toks.len() {
        let (tok, line) = (&toks[i].0, toks[i].1);
        let after_colons = i > 0 && toks[i - 1].0 == Tok::Colons;
        match tok {
            Tok::Open => depth += 1,
            Tok::Close => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Ident(w) if w == "mod" => {
                if let Some(name) = ident(i + 1)
                    && toks.get(i + 2).map(|t| &t.0) == Some(&Tok::Open)
                {
                    inline.push((name.to_owned(), depth + 1));
                }
            }
            Tok::Ident(w) if w == "use" && !after_colons => {
                let scope: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
                let mut at = i + 1;
                if toks.get(at).map(|t| &t.0) == Some(&Tok::Colons) {
                    at += 1;
                }
                let mut paths = Vec::new();
                use_tree(&toks, &mut at, &[], &mut paths);
                for p in paths {
                    out.push((p, scope.clone(), line));
                }
                while at < toks.len() && toks[at].0 != Tok::Semi {
                    at += 1;
                }
                i = at;
                continue;
            }
            Tok::Ident(w)
                if !after_colons && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Colons) =>
            {
                let mut path = vec![w.clone()];
                let mut j = i + 1;
                while toks.get(j).map(|t| &t.0) == Some(&Tok::Colons)
                    && let Some(next) = ident(j + 1)
                {
                    path.push(next.to_owned());
                    j += 2;
                }
                let scope: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
                out.push((path, scope, line));
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Resolve `path`, written in module `here`, to an absolute module path; `None` for paths
/// that leave the crate (other crates, `std`, types' associated items).
fn resolve(
    path: &[String],
    here: &[String],
    modules: &BTreeMap<Vec<String>, usize>,
) -> Option<Vec<String>> {
    let mut abs: Vec<String>;
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            // The binary's `crate::` is `main.rs`.
            abs = here
                .first()
                .filter(|m| *m == BIN)
                .map_or_else(Vec::new, |m| vec![m.clone()]);
            rest = &path[1..];
        }
        Some("self") => {
            abs = here.to_vec();
            rest = &path[1..];
        }
        Some("super") => {
            abs = here.to_vec();
            while rest.first().map(String::as_str) == Some("super") {
                abs.pop()?;
                rest = &rest[1..];
            }
        }
        Some(first) => {
            // A path through a child module of the file's own module.
            let mut child = here.to_vec();
            child.push(first.to_owned());
            if !modules.contains_key(&child) {
                return None;
            }
            abs = here.to_vec();
        }
        None => return None,
    }
    abs.extend(rest.iter().cloned());
    Some(abs)
}

/// The file defining the longest module prefix of `abs`.
fn file_of(abs: &[String], modules: &BTreeMap<Vec<String>, usize>) -> Option<usize> {
    (0..=abs.len())
        .rev()
        .find_map(|n| modules.get(&abs[..n]).copied())
}

fn load() -> (Vec<File>, Vec<Edge>) {
    let src = src_dir();
    let mut paths = Vec::new();
    rs_files(&src, &mut paths);
    let mut files = Vec::new();
    for p in paths {
        let rel = p.strip_prefix(&src).expect("under src").to_path_buf();
        let text = std::fs::read_to_string(&p).expect("read source");
        files.push(File {
            path: format!("src/{}", rel.display()),
            module: module_of(&rel),
            code: strip(&text),
        });
    }
    let modules: BTreeMap<Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.module.clone(), i))
        .collect();
    let mut edges = Vec::new();
    for (from, f) in files.iter().enumerate() {
        for (path, inline, line) in references(&f.code) {
            let mut here = f.module.clone();
            here.extend(inline.iter().cloned());
            let Some(abs) = resolve(&path, &here, &modules) else {
                continue;
            };
            let Some(to) = file_of(&abs, &modules) else {
                continue;
            };
            if to != from {
                edges.push(Edge {
                    from,
                    to,
                    line,
                    text: path.join("::"),
                    // An inline `mod tests { … }`, or a `mod tests;` in a file of its own.
                    test: inline.first().is_some_and(|m| m == "tests")
                        || (inline.is_empty() && f.module.last().is_some_and(|m| m == "tests")),
                });
            }
        }
    }
    (files, edges)
}

/// The stage a file belongs to (its top-level module), if it is one.
fn stage(f: &File) -> Option<usize> {
    let top = f.module.first()?;
    STAGES.iter().position(|s| s == top)
}

#[test]
fn stages_point_one_way() {
    let (files, edges) = load();
    let mut bad = String::new();
    for e in &edges {
        let (from, to) = (&files[e.from], &files[e.to]);
        let Some(s) = stage(from) else { continue };
        if from.module.first() == to.module.first() || e.test {
            continue;
        }
        match stage(to) {
            Some(t) if t < s => {}
            _ => {
                let _ = writeln!(
                    bad,
                    "{}:{}: stage `{}` uses `{}` (in `{}`)",
                    from.path,
                    e.line,
                    STAGES[s],
                    e.text,
                    to.module.first().map_or("the crate root", String::as_str)
                );
            }
        }
    }
    assert!(
        bad.is_empty(),
        "stages must only use lower stages ({}):\n{bad}",
        STAGES.join(" → ")
    );
}

/// The largest a source file may be; one that grows past it should be split by concern.
const MAX_SOURCE_BYTES: u64 = 40 * 1024;

#[test]
fn no_source_file_is_over_40_kb() {
    let mut paths = Vec::new();
    rs_files(&src_dir(), &mut paths);
    assert!(paths.len() > 50, "read the whole source tree");
    let big: Vec<String> = paths
        .iter()
        .filter_map(|p| {
            let len = std::fs::metadata(p).expect("metadata").len();
            (len > MAX_SOURCE_BYTES).then(|| format!("{} ({len} bytes)", p.display()))
        })
        .collect();
    assert!(
        big.is_empty(),
        "split these source files (limit {MAX_SOURCE_BYTES} bytes):\n{}",
        big.join("\n")
    );
}

/// Strongly connected components of a directed graph with more than one node (Tarjan).
fn cycles(n: usize, succ: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct T<'a> {
        succ: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T<'_>, v: usize) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in t.succ[v].iter() {
            match t.index[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on[w] = false;
                scc.push(w);
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        succ,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.out
}

/// Whether `e` is a parent module naming a type of one of its own descendants
/// (`pub use kinds::Gate;`, `kind: kinds::Gate`). That is the one edge the within-folder rule
/// lets close a circle: a recursive IR (a `flow` phase holds a `Flow`, whose phases hold kind
/// structs defined in the parent's child files) cannot be written without it. Calling a child's
/// function, using its constant or re-exporting its function still counts. A type is told by its
/// spelling: the last path segment starts upper-case and has a lower-case letter (`Gate`, not
/// `ALL`).
fn names_a_child_type(e: &Edge, from: &File, to: &File) -> bool {
    let descendant = to.module.len() > from.module.len() && to.module.starts_with(&from.module);
    let last = e.text.rsplit("::").next().unwrap_or_default();
    let type_name = last.starts_with(|c: char| c.is_ascii_uppercase())
        && last.chars().any(|c| c.is_ascii_lowercase());
    descendant && type_name
}

#[test]
fn no_cycles_between_the_files_of_a_stage() {
    let (files, edges) = load();
    let mut succ = vec![BTreeSet::new(); files.len()];
    for e in &edges {
        let (from, to) = (&files[e.from], &files[e.to]);
        let pending = from
            .module
            .first()
            .is_some_and(|m| CYCLES_PENDING.contains(&m.as_str()));
        if stage(from).is_some()
            && !pending
            && from.module.first() == to.module.first()
            && !names_a_child_type(e, from, to)
        {
            succ[e.from].insert(e.to);
        }
    }
    let mut bad = String::new();
    for scc in cycles(files.len(), &succ) {
        let _ = writeln!(bad, "cycle:");
        for e in &edges {
            if scc.contains(&e.from)
                && scc.contains(&e.to)
                && succ[e.from].contains(&e.to)
                && !names_a_child_type(e, &files[e.from], &files[e.to])
            {
                let _ = writeln!(
                    bad,
                    "  {}:{}: uses `{}` ({})",
                    files[e.from].path, e.line, e.text, files[e.to].path
                );
            }
        }
    }
    assert!(
        bad.is_empty(),
        "import cycles inside a stage folder:\n{bad}"
    );
}

/// Whether two files are siblings: files of one folder (`cli/init.rs` and `cli/mcp.rs`), the
/// folder's `mod.rs` (their parent) not included.
fn siblings(a: &File, b: &File) -> bool {
    let file = |f: &File| !f.path.ends_with("/mod.rs") && !f.path.ends_with("lib.rs");
    a.module.len() == b.module.len()
        && a.module.len() >= 2
        && a.module[..a.module.len() - 1] == b.module[..b.module.len() - 1]
        && file(a)
        && file(b)
}

/// The rule for every folder, the binary's (`cli/`) included: sibling files never import
/// each other in a circle (one of them, or a leaf both use, owns what they share).
#[test]
fn no_cycles_between_sibling_files() {
    let (files, edges) = load();
    let mut succ = vec![BTreeSet::new(); files.len()];
    for e in &edges {
        if siblings(&files[e.from], &files[e.to]) {
            succ[e.from].insert(e.to);
        }
    }
    let mut bad = String::new();
    for scc in cycles(files.len(), &succ) {
        let _ = writeln!(bad, "cycle:");
        for e in &edges {
            if scc.contains(&e.from) && scc.contains(&e.to) && succ[e.from].contains(&e.to) {
                let _ = writeln!(
                    bad,
                    "  {}:{}: uses `{}` ({})",
                    files[e.from].path, e.line, e.text, files[e.to].path
                );
            }
        }
    }
    assert!(
        bad.is_empty(),
        "import cycles between the files of a folder:\n{bad}"
    );
}

/// The binary's files are read as a crate of their own: `super::` and a child's name resolve
/// inside it, `tfc::` leaves it, and `cli/init.rs` and `cli/mcp.rs` are siblings.
#[test]
fn the_binary_is_read_too() {
    let (files, edges) = load();
    let find = |p: &str| {
        files
            .iter()
            .position(|f| f.path == p)
            .unwrap_or_else(|| panic!("{p} read"))
    };
    let (main, cli, init, mcp) = (
        find("src/main.rs"),
        find("src/cli/mod.rs"),
        find("src/cli/init.rs"),
        find("src/cli/mcp.rs"),
    );
    assert!(edges.iter().any(|e| e.from == main && e.to == cli));
    assert!(edges.iter().any(|e| e.from == init && e.to == cli));
    assert!(siblings(&files[init], &files[mcp]));
    assert!(!siblings(&files[init], &files[cli]));
    assert!(stage(&files[init]).is_none());
    let modules: BTreeMap<Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.module.clone(), i))
        .collect();
    let s = |p: &str| p.split("::").map(str::to_owned).collect::<Vec<_>>();
    let here = &files[init].module;
    let abs = resolve(&s("crate::cli::mcp::run"), here, &modules).unwrap();
    assert_eq!(file_of(&abs, &modules), Some(mcp));
    assert_eq!(resolve(&s("tfc::run::Interpreter"), here, &modules), None);
}

/// The checker itself: literals and comments do not count, `use` trees and `super` resolve.
#[test]
fn the_checker_sees_what_it_should() {
    let code = strip(
        "use crate::{a::B, c::{d, e::F}};\n// crate::x::y\nlet s = \"crate::z::w\"; let c = '\"';\n\
         fn f<'a>() { super::g::h(); }\nmod tests { use super::*; }\n",
    );
    let refs: Vec<(String, usize)> = references(&code)
        .into_iter()
        .map(|(p, inline, line)| (format!("{}@{}", p.join("::"), inline.join("::")), line))
        .collect();
    assert_eq!(
        refs,
        [
            ("crate::a::B@".to_owned(), 1),
            ("crate::c::d@".to_owned(), 1),
            ("crate::c::e::F@".to_owned(), 1),
            ("super::g::h@".to_owned(), 4),
            ("super@tests".to_owned(), 5),
        ]
    );
    let modules: BTreeMap<Vec<String>, usize> = [
        (vec![], 0),
        (vec!["m".to_owned()], 1),
        (vec!["m".to_owned(), "k".to_owned()], 2),
    ]
    .into_iter()
    .collect();
    let here = ["m".to_owned(), "k".to_owned()];
    let s = |p: &str| p.split("::").map(str::to_owned).collect::<Vec<_>>();
    let abs = resolve(&s("super::X"), &here, &modules).unwrap();
    assert_eq!(file_of(&abs, &modules), Some(1));
    let abs = resolve(&s("k::Y"), &here[..1], &modules).unwrap();
    assert_eq!(file_of(&abs, &modules), Some(2));
    assert_eq!(resolve(&s("std::fmt"), &here, &modules), None);
    assert_eq!(
        cycles(3, &[[1].into(), [2].into(), [0].into()]),
        [vec![0, 1, 2]]
    );
}

/// The exemption: a parent naming a descendant's type, and nothing else.
#[test]
fn only_a_parent_naming_a_child_type_is_exempt() {
    let file = |m: &[&str]| File {
        path: String::new(),
        module: m.iter().map(|s| (*s).to_owned()).collect(),
        code: String::new(),
    };
    let edge = |text: &str| Edge {
        from: 0,
        to: 1,
        line: 1,
        text: text.to_owned(),
        test: false,
    };
    let parent = file(&["flow", "kinds"]);
    let child = file(&["flow", "kinds", "gate"]);
    let sibling = file(&["flow", "lower"]);
    assert!(names_a_child_type(&edge("gate::Gate"), &parent, &child));
    assert!(names_a_child_type(
        &edge("gate::ScoreJudge"),
        &parent,
        &child
    ));
    // A function, a constant, the other direction, a sibling: all count.
    assert!(!names_a_child_type(&edge("gate::lower"), &parent, &child));
    assert!(!names_a_child_type(&edge("gate::FIELDS"), &parent, &child));
    assert!(!names_a_child_type(&edge("super::Phase"), &child, &parent));
    assert!(!names_a_child_type(
        &edge("lower::Lowerer"),
        &parent,
        &sibling
    ));
}
