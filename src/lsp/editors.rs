//! Setting editors up for `tfc lsp` (`tfc init --editor`, SPEC §13.4, §15): each editor's own
//! project files associate flow files (`*.flow.json`, `.tfc/flows/**/*.json`,
//! `taskflows/**/*.json`) and test files (`*.test.json`) with the language server, merged into what is there without
//! dropping anything; a file already right is left alone, so a second run changes no byte.
//!
//! | editor | files | what |
//! |---|---|---|
//! | vscode | `.vscode/settings.json` | `files.associations` (flow files as JSONC), `json.schemas` (the schema below for flow files), `tfc.path` (this binary, for the extension in `editors/vscode/`) |
//! | | `.vscode/tfc-flow.schema.json` | the JSON Schema of flow files (`tfc schema`) |
//! | neovim | `.nvim.lua` | an autocmd starting `tfc lsp` for flow files (read when `exrc` is set; Neovim 0.10+) |
//! | helix | `.helix/languages.toml` | `[language-server.tfc]` and a `taskflow` language for flow files |
//!
//! `.vscode/settings.json` is JSONC: it is edited as text (members added after the last one,
//! with the file's own indentation), so comments and layout stay. `.nvim.lua` and
//! `.helix/languages.toml` hold tfc's lines between two marker comments, appended once and
//! replaced in place afterwards; the rest of the file stays as it was.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::json::{Kind, Node};
use crate::project::PlannedFile;
use crate::source::Span;

/// An editor `tfc init --editor` sets up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Editor {
    /// Visual Studio Code (with the extension in `editors/vscode/`).
    Vscode,
    /// Neovim 0.10+.
    Neovim,
    /// Helix.
    Helix,
}

impl Editor {
    /// Every editor, in the order of `--editor`'s help.
    pub const ALL: [Editor; 3] = [Editor::Vscode, Editor::Neovim, Editor::Helix];

    /// The editor's name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Editor::Vscode => "vscode",
            Editor::Neovim => "neovim",
            Editor::Helix => "helix",
        }
    }

    /// The editor named `s`.
    pub fn parse(s: &str) -> Option<Editor> {
        Editor::ALL.into_iter().find(|e| e.as_str() == s)
    }
}

/// Flow files (as globs relative to the project; SPEC §15): the flow schema applies to them.
pub const FLOW_GLOBS: [&str; 3] = ["*.flow.json", ".tfc/flows/**/*.json", "taskflows/**/*.json"];

/// Test files (SPEC §17): served by `tfc lsp` too, but not flows (no flow schema).
pub const TEST_GLOB: &str = "*.test.json";

/// Where editors attach `tfc lsp`: flow files and test files.
pub fn lsp_globs() -> impl Iterator<Item = &'static str> {
    FLOW_GLOBS.into_iter().chain([TEST_GLOB])
}

/// The schema file VS Code reads, relative to the project root.
const VSCODE_SCHEMA: &str = ".vscode/tfc-flow.schema.json";

/// Plan the set-up of `editor` for the project at `root`, running `exe lsp`.
pub fn setup(editor: Editor, root: &Path, exe: &Path) -> Result<Vec<PlannedFile>, String> {
    let command = exe.display().to_string();
    match editor {
        Editor::Vscode => {
            let mut schema = crate::flow::schema::schema().to_pretty_json();
            schema.push('\n');
            Ok(vec![
                whole_file(root.join(VSCODE_SCHEMA), schema)?,
                vscode_settings(&root.join(".vscode").join("settings.json"), &command)?,
            ])
        }
        Editor::Neovim => Ok(vec![marked_block(
            &root.join(".nvim.lua"),
            "--",
            &neovim_lua(&command),
            |_| Ok(()),
        )?]),
        Editor::Helix => {
            let path = root.join(".helix").join("languages.toml");
            Ok(vec![marked_block(
                &path,
                "#",
                &helix_toml(&command),
                |t| check_helix(t, &path),
            )?])
        }
    }
}

/// A file tfc owns whole: written when missing or different.
fn whole_file(path: PathBuf, content: String) -> Result<PlannedFile, String> {
    let exists = path.exists();
    let current = if exists {
        Some(
            std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?,
        )
    } else {
        None
    };
    Ok(PlannedFile {
        content: (current.as_deref() != Some(content.as_str())).then_some(content),
        path,
        exists,
    })
}

/// The current text of `path` ("" when missing).
fn read(path: &Path) -> Result<(String, bool), String> {
    if !path.exists() {
        return Ok((String::new(), false));
    }
    std::fs::read_to_string(path)
        .map(|t| (t, true))
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
}

// ---- VS Code -------------------------------------------------------------------------------

/// `globs` as VS Code matches them: a folder anywhere in the workspace.
fn vscode_globs<'a>(globs: impl Iterator<Item = &'a str>) -> impl Iterator<Item = String> {
    globs.map(|g| {
        if g.starts_with('*') {
            g.to_owned()
        } else {
            format!("**/{g}")
        }
    })
}

/// The `json.schemas` entry for flow files (test files are not flows: no schema for them).
fn schema_entry() -> Value {
    let file_match: Vec<String> = vscode_globs(FLOW_GLOBS.into_iter()).collect();
    json!({"fileMatch": file_match, "url": format!("./{VSCODE_SCHEMA}")})
}

/// `.vscode/settings.json` with flow files associated with JSONC, their schema and `tfc.path`.
fn vscode_settings(path: &Path, command: &str) -> Result<PlannedFile, String> {
    let (current, exists) = read(path)?;
    let by_hand = || {
        let mut want = serde_json::Map::new();
        want.insert("files.associations".into(), associations());
        want.insert("json.schemas".into(), json!([schema_entry()]));
        want.insert("tfc.path".into(), json!(command));
        serde_json::to_string_pretty(&Value::Object(want)).unwrap_or_default()
    };
    let mut text = if current.trim().is_empty() {
        "{}\n".to_owned()
    } else {
        current.clone()
    };
    // One edit at a time, each made on the text the previous one left: a missing member or
    // element per edit, until the setting has all it needs.
    for step in 0..3 {
        for _ in 0..=lsp_globs().count() {
            let parsed = crate::json::parse(&text);
            let root = match parsed.root {
                Some(r) if parsed.diagnostics.is_empty() && matches!(r.kind, Kind::Object(_)) => r,
                _ => {
                    return Err(format!(
                        "{} is not a JSON object tfc can read, so it will not rewrite it; \
                         merge this into it by hand:\n{}",
                        path.display(),
                        by_hand()
                    ));
                }
            };
            let edit = match step {
                0 => ensure_associations(&text, &root),
                1 => ensure_schema(&text, &root),
                _ => ensure_path(&text, &root, command),
            }
            .map_err(|what| {
                format!(
                    "{}: {what}; fix it by hand, then run again (or merge this by hand:\n{})",
                    path.display(),
                    by_hand()
                )
            })?;
            let Some((at, insert)) = edit else { break };
            text.replace_range(at.range(), &insert);
        }
    }
    if text != current && !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(PlannedFile {
        path: path.to_path_buf(),
        content: (text != current).then_some(text),
        exists,
    })
}

/// `files.associations` for flow and test files: JSONC (both may hold comments).
fn associations() -> Value {
    Value::Object(
        vscode_globs(lsp_globs())
            .map(|g| (g, json!("jsonc")))
            .collect(),
    )
}

type Edit = Option<(Span, String)>;

/// `files.associations`: every flow glob (a glob the user maps elsewhere is theirs).
fn ensure_associations(text: &str, root: &Node) -> Result<Edit, String> {
    let Some(node) = root.get("files.associations") else {
        return Ok(Some(add_member(
            text,
            root,
            "files.associations",
            &associations(),
        )));
    };
    let Kind::Object(members) = &node.kind else {
        return Err("\"files.associations\" is not an object".into());
    };
    let Value::Object(want) = associations() else {
        return Ok(None);
    };
    for (glob, lang) in &want {
        if !members.iter().any(|m| &m.key.value == glob) {
            return Ok(Some(add_member(text, node, glob, lang)));
        }
    }
    Ok(None)
}

/// `json.schemas`: an entry for the flow schema, unless one names its URL already.
fn ensure_schema(text: &str, root: &Node) -> Result<Edit, String> {
    let entry = schema_entry();
    let Some(node) = root.get("json.schemas") else {
        return Ok(Some(add_member(
            text,
            root,
            "json.schemas",
            &json!([entry]),
        )));
    };
    let Kind::Array(items) = &node.kind else {
        return Err("\"json.schemas\" is not an array".into());
    };
    let url = entry["url"].as_str().unwrap_or_default();
    let present = items.iter().any(|i| {
        i.get("url")
            .and_then(Node::as_str)
            .is_some_and(|s| s.value == url)
    });
    Ok((!present).then(|| add_element(text, node, &entry)))
}

/// `tfc.path`: this binary.
fn ensure_path(text: &str, root: &Node, command: &str) -> Result<Edit, String> {
    let want = json!(command);
    match root.get("tfc.path") {
        None => Ok(Some(add_member(text, root, "tfc.path", &want))),
        Some(n) if n.as_str().is_some_and(|s| s.value == command) => Ok(None),
        Some(n) => Ok(Some((n.span, want.to_string()))),
    }
}

/// The indentation of the line holding `at` (its leading spaces and tabs).
fn indent_of(text: &str, at: usize) -> &str {
    let start = text[..at].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let line = &text[start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Does the item at `at` start its own line?
fn starts_line(text: &str, at: usize) -> bool {
    let start = text[..at].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    text[start..at].chars().all(|c| c == ' ' || c == '\t')
}

/// The document's indentation unit: the first indented line's indentation, else two spaces.
fn unit_of(text: &str) -> &str {
    text.lines()
        .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
        .find(|i| !i.is_empty())
        .unwrap_or("  ")
}

fn eol_of(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

/// `value` as pretty JSON with the document's unit, every line after the first at `indent`.
fn render(text: &str, value: &Value, indent: &str) -> String {
    use serde::Serialize;
    let unit = unit_of(text);
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    let _ = value.serialize(&mut ser);
    let s = String::from_utf8(out).unwrap_or_default();
    s.replace('\n', &format!("{}{indent}", eol_of(text)))
}

/// The edit adding an item (a member's `"key": value`, or an element, made by `item` for a
/// given indentation) to `container`, whose last item spans `last` (start, end): after it,
/// on a line of its own with its indentation when it starts its line, else on its line.
fn add_item(
    text: &str,
    container: &Node,
    last: Option<(usize, usize)>,
    item: impl Fn(&str) -> String,
) -> (Span, String) {
    let eol = eol_of(text);
    match last {
        Some((start, end)) => {
            let indent = indent_of(text, start);
            let lead = if starts_line(text, start) {
                format!("{eol}{indent}")
            } else {
                " ".to_owned()
            };
            // A trailing comma (JSONC) is kept; the item goes after it.
            let rest = &text[end..];
            let ws = rest.len() - rest.trim_start().len();
            let (at, comma) = if rest[ws..].starts_with(',') {
                (end + ws + 1, "")
            } else {
                (end, ",")
            };
            (
                Span::new(at as u32, at as u32),
                format!("{comma}{lead}{}", item(indent)),
            )
        }
        None => {
            let outer = indent_of(text, container.span.start as usize);
            let inner = format!("{outer}{}", unit_of(text));
            let at = container.span.start + 1;
            (
                Span::new(at, at),
                format!("{eol}{inner}{}{eol}{outer}", item(&inner)),
            )
        }
    }
}

fn add_member(text: &str, object: &Node, key: &str, value: &Value) -> (Span, String) {
    let last = match &object.kind {
        Kind::Object(m) => m
            .last()
            .map(|m| (m.key.span.start as usize, m.value.span.end as usize)),
        _ => None,
    };
    add_item(text, object, last, |indent| {
        format!("{}: {}", json!(key), render(text, value, indent))
    })
}

fn add_element(text: &str, array: &Node, value: &Value) -> (Span, String) {
    let last = match &array.kind {
        Kind::Array(a) => a
            .last()
            .map(|n| (n.span.start as usize, n.span.end as usize)),
        _ => None,
    };
    add_item(text, array, last, |indent| render(text, value, indent))
}

// ---- Neovim and Helix: a marked block --------------------------------------------------------

const BEGIN: &str = ">>> tfc lsp (written by `tfc init --editor`; edits inside are replaced) >>>";
const END: &str = "<<< tfc lsp <<<";

/// `block` between marker comments (`comment` + marker) in the file at `path`: appended when
/// the markers are not there, the lines between them replaced when they are. `check` vets
/// the whole new text.
fn marked_block(
    path: &Path,
    comment: &str,
    block: &str,
    check: impl Fn(&str) -> Result<(), String>,
) -> Result<PlannedFile, String> {
    let (current, exists) = read(path)?;
    let begin = format!("{comment} {BEGIN}");
    let end = format!("{comment} {END}");
    let eol = eol_of(&current);
    let body: String = block.lines().map(|l| format!("{l}{eol}")).collect();
    let whole = format!("{begin}{eol}{body}{end}{eol}");
    let lines: Vec<&str> = current.split_inclusive('\n').collect();
    let b = lines.iter().position(|l| l.trim_end() == begin);
    let e = b.and_then(|b| {
        lines[b..]
            .iter()
            .position(|l| l.trim_end() == end)
            .map(|i| b + i)
    });
    let text = match (b, e) {
        (Some(b), Some(e)) => {
            let mut t: String = lines[..b].concat();
            t.push_str(&whole);
            t.push_str(&lines[e + 1..].concat());
            t
        }
        (Some(_), None) => {
            return Err(format!(
                "{} has the line '{begin}' but not '{end}'; restore or remove tfc's block, then \
                 run again",
                path.display()
            ));
        }
        _ => {
            let mut t = current.clone();
            if !t.is_empty() && !t.ends_with('\n') {
                t.push_str(eol);
            }
            if !t.is_empty() {
                t.push_str(eol);
            }
            t.push_str(&whole);
            t
        }
    };
    check(&text)?;
    Ok(PlannedFile {
        path: path.to_path_buf(),
        content: (text != current).then_some(text),
        exists,
    })
}

/// A Lua string literal.
fn lua_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The Neovim set-up: `tfc lsp` for flow and test files, opened or new, rooted at the project.
pub fn neovim_lua(command: &str) -> String {
    format!(
        r#"-- tfc lsp for flow and test files (Neovim 0.10+: vim.fs.root). Neovim reads this file when
-- 'exrc' is set (vim.o.exrc = true in init.lua) and you trusted it (:trust).
vim.api.nvim_create_autocmd({{ "BufReadPost", "BufNewFile" }}, {{
  pattern = {{ "*.flow.json", "*/.tfc/flows/*.json", "*/taskflows/*.json", "*.test.json" }},
  callback = function(args)
    local file = vim.api.nvim_buf_get_name(args.buf)
    vim.lsp.start({{
      name = "tfc",
      cmd = {{ {cmd}, "lsp" }},
      root_dir = vim.fs.root(args.buf, {{ ".tfc", ".git" }}) or vim.fs.dirname(file),
    }}, {{ bufnr = args.buf }})
  end,
}})"#,
        cmd = lua_string(command)
    )
}

/// The Helix set-up: the server and a `taskflow` language for flow and test files.
fn helix_toml(command: &str) -> String {
    let quoted = toml::Value::String(command.to_owned()).to_string();
    let globs: Vec<String> = lsp_globs()
        .map(|g| format!("{{ glob = \"{g}\" }}"))
        .collect();
    format!(
        "[language-server.tfc]\ncommand = {quoted}\nargs = [\"lsp\"]\n\n[[language]]\n\
         name = \"taskflow\"\nscope = \"source.taskflow\"\nfile-types = [{}]\n\
         roots = [\".tfc\"]\ngrammar = \"json\"\n\
         language-servers = [\"tfc\"]",
        globs.join(", ")
    )
}

/// The new `languages.toml` is valid TOML with one `tfc` server and one `taskflow` language
/// (a user's own definitions of either outside tfc's block would clash).
fn check_helix(text: &str, path: &Path) -> Result<(), String> {
    let table: toml::Table = text.parse().map_err(|e| {
        format!(
            "{} would not be valid TOML with tfc's block ({e}); it may define \
             [language-server.tfc] already: remove that, or keep yours and skip --editor helix",
            path.display()
        )
    })?;
    let taskflow = table
        .get("language")
        .and_then(toml::Value::as_array)
        .map_or(0, |l| {
            l.iter()
                .filter(|l| l.get("name").and_then(toml::Value::as_str) == Some("taskflow"))
                .count()
        });
    if taskflow > 1 {
        return Err(format!(
            "{} defines a language named taskflow besides tfc's block; remove one, then run \
             again",
            path.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(current: &str) -> Result<Option<String>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, current).unwrap();
        vscode_settings(&path, "/opt/tfc").map(|f| f.content)
    }

    #[test]
    fn vscode_settings_merge_into_jsonc() {
        let current = "{\n\t// mine\n\t\"editor.tabSize\": 8,\n\t\"files.associations\": {\"*.x\": \"c\"},\n\t\"json.schemas\": [\n\t\t{\"fileMatch\": [\"a.json\"], \"url\": \"./a.schema.json\"},\n\t],\n}\n";
        let merged = settings(current).unwrap().expect("changed");
        let parsed = crate::json::parse(&merged);
        assert!(parsed.diagnostics.is_empty(), "{merged}");
        let root = parsed.root.unwrap();
        assert!(
            merged.contains("\t// mine\n\t\"editor.tabSize\": 8,"),
            "{merged}"
        );
        let assoc = root.get("files.associations").unwrap();
        assert_eq!(assoc.get("*.x").unwrap().as_str().unwrap().value, "c");
        assert_eq!(
            assoc.get("*.flow.json").unwrap().as_str().unwrap().value,
            "jsonc"
        );
        let Kind::Array(schemas) = &root.get("json.schemas").unwrap().kind else {
            panic!()
        };
        assert_eq!(schemas.len(), 2);
        assert!(
            merged.contains("\n\t\t{\n\t\t\t\"fileMatch\": [\n\t\t\t\t\"*.flow.json\","),
            "{merged}"
        );
        assert!(
            merged.ends_with("\t\"tfc.path\": \"/opt/tfc\"\n}\n"),
            "{merged}"
        );
        // Merged again: nothing to do (a missing last line break is not worth a write).
        assert_eq!(settings(&merged).unwrap(), None);
        assert_eq!(settings(merged.trim_end()).unwrap(), None);
        // A different tfc.path is replaced; the rest kept.
        let moved = merged.replace("/opt/tfc", "/old/tfc");
        assert_eq!(settings(&moved).unwrap().unwrap(), merged);
    }

    #[test]
    fn vscode_settings_from_nothing_and_refusals() {
        for empty in ["", "{}", "  \n"] {
            let t = settings(empty).unwrap().unwrap();
            let v: Value = serde_json::from_str(&t).unwrap();
            assert_eq!(v["tfc.path"], "/opt/tfc");
            assert_eq!(
                v["json.schemas"][0]["url"],
                "./.vscode/tfc-flow.schema.json"
            );
            assert_eq!(settings(&t).unwrap(), None, "{t}");
        }
        for bad in ["[1]", "{\"a\": ", "{\"json.schemas\": {}}"] {
            let e = settings(bad).unwrap_err();
            assert!(e.contains("by hand"), "{e}");
        }
    }

    #[test]
    fn marked_blocks_are_appended_once_and_replaced_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("languages.toml");
        std::fs::write(&path, "[editor]\nline-number = \"relative\"").unwrap();
        let check = |t: &str| check_helix(t, &path);
        let f = marked_block(&path, "#", &helix_toml("/opt/tfc"), check).unwrap();
        let first = f.content.unwrap();
        assert!(first.starts_with("[editor]\nline-number = \"relative\"\n\n# >>> tfc lsp"));
        std::fs::write(&path, &first).unwrap();
        let again = marked_block(&path, "#", &helix_toml("/opt/tfc"), check).unwrap();
        assert!(again.content.is_none());
        let moved = marked_block(&path, "#", &helix_toml("/new/tfc"), check)
            .unwrap()
            .content
            .unwrap();
        assert_eq!(moved, first.replace("/opt/tfc", "/new/tfc"));
        // A user's own [language-server.tfc] clashes: refused, nothing written.
        std::fs::write(&path, "[language-server.tfc]\ncommand = \"x\"\n").unwrap();
        let e = marked_block(&path, "#", &helix_toml("/opt/tfc"), check).unwrap_err();
        assert!(e.contains("[language-server.tfc]"), "{e}");
    }

    #[test]
    fn lua_strings_escape() {
        assert_eq!(lua_string(r#"C:\tfc "x""#), r#""C:\\tfc \"x\"""#);
        assert!(neovim_lua("/opt/tfc").contains(r#"cmd = { "/opt/tfc", "lsp" }"#));
    }
}
