//! The flow tools: the flow argument (`path`, `name` or `flow`), `tfc_check`, `tfc_graph`,
//! `tfc_flows` and `tfc_save`, all over the library's check, lowering and report stages.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value, json};

use super::call::{Args, ToolError, ToolOutput};
use crate::check::{CheckOptions, Checked, check_source};
use crate::diag::render::{render_file, to_json};
use crate::flow::{Invocation, LowerOptions};
use crate::project::SavedFlows;
use crate::report::dag::draw;
use crate::report::dot::dot;
use crate::report::layout::Orientation;
use crate::report::svg::{check_deco, svg};
use crate::report::{Direction, mermaid};

/// The drawings `tfc_graph` makes (as `tfc graph --format`).
pub const GRAPH_FORMATS: [&str; 3] = ["mermaid", "svg", "dot"];
use crate::source::Source;

/// A flow named by a tool's arguments, read.
pub struct FlowInput {
    /// The text, named for messages (the file, or `flow` for a document argument).
    pub source: Source,
    /// The flow's default name (file stem, saved name, or `flow`).
    pub default_name: String,
    /// The file it came from; `None` for a `flow` document.
    pub file: Option<PathBuf>,
}

/// Read the flow named by exactly one of `path`, `name` and `flow`.
pub fn flow_input(args: &mut Args, root: &Path) -> Result<FlowInput, ToolError> {
    let path = args.opt_str("path")?;
    let name = args.opt_str("name")?;
    let doc = flow_doc(args)?;
    match (path, name, doc) {
        (Some(p), None, None) => {
            let file = inside_root(&p, root).map_err(|e| ToolError::arg("path", e))?;
            let stem = file
                .file_stem()
                .map_or_else(|| "flow".into(), |s| s.to_string_lossy().into_owned());
            let text = read_utf8(&file).map_err(|e| ToolError::arg("path", e))?;
            Ok(FlowInput {
                source: Source::new(file.display().to_string(), text),
                default_name: stem,
                file: Some(file),
            })
        }
        (None, Some(n), None) => {
            let file = saved_flow(&n, root)?;
            let text = read_utf8(&file).map_err(|e| ToolError::arg("name", e))?;
            Ok(FlowInput {
                source: Source::new(file.display().to_string(), text),
                default_name: n,
                file: Some(file),
            })
        }
        (None, None, Some(text)) => Ok(FlowInput {
            source: Source::new("flow", text),
            default_name: "flow".into(),
            file: None,
        }),
        (None, None, None) => Err(ToolError::new(
            "name the flow with one argument: 'path' (a file under the root), 'name' (a saved \
             flow) or 'flow' (the document as a JSON object)",
        )),
        _ => Err(ToolError::new(
            "pass exactly one of 'path', 'name' and 'flow', not several",
        )),
    }
}

/// The `flow` argument as document text: an object (written out as JSON), or — what many
/// hosts send for an object argument — a string holding the document's JSON text, taken as
/// written (JSONC like a flow file: comments and trailing commas allowed; a syntax error is
/// then a check diagnostic with its position in that text). A string that is no document
/// (it does not begin with `{` after whitespace and comments: a path, a name, an array) is an
/// argument error that says what to pass instead.
fn flow_doc(args: &mut Args) -> Result<Option<String>, ToolError> {
    match args.take("flow") {
        None => Ok(None),
        Some(Value::Object(doc)) => Ok(Some(
            serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default(),
        )),
        Some(Value::String(text)) if begins_an_object(&text) => Ok(Some(text)),
        Some(Value::String(_)) => Err(ToolError::arg(
            "flow",
            "a string here must hold the flow document's JSON text (an object, '{…}'); name a \
             flow file with 'path' or a saved flow with 'name' instead",
        )),
        Some(other) => Err(ToolError::arg(
            "flow",
            format!(
                "expected the flow document (a JSON object, or its JSON text), found {}",
                super::call::type_name(&other)
            ),
        )),
    }
}

/// Whether `text`, after whitespace, a byte-order mark and `//` or `/* */` comments, begins
/// with `{`.
fn begins_an_object(text: &str) -> bool {
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, r)| r);
        } else {
            return rest.starts_with('{');
        }
    }
}

/// A saved flow's file, project first, then the user's.
fn saved_flow(name: &str, root: &Path) -> Result<PathBuf, ToolError> {
    if !crate::project::SavedFlows::valid_name(name) {
        return Err(ToolError::arg(
            "name",
            format!(
                "'{name}' is not a saved-flow name: use letters, digits, '.', '_' and '-' (no '..')"
            ),
        ));
    }
    let candidates = SavedFlows::new(root).candidates(name);
    candidates
        .iter()
        .find(|c| c.is_file())
        .cloned()
        .ok_or_else(|| {
            let places: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
            ToolError::arg(
                "name",
                format!(
                    "no saved flow named '{name}' (looked for {}); list them with tfc_flows",
                    places.join(", ")
                ),
            )
        })
}

/// `p` (relative to `root`, or absolute) as an existing file inside `root`, symlinks
/// resolved; a path that leaves the root is refused.
pub fn inside_root(p: &str, root: &Path) -> Result<PathBuf, String> {
    let joined = root.join(p);
    // Refuse `..` that climbs out before touching the file system, so the message is the
    // same whether or not the target exists.
    let mut depth = 0i64;
    for c in Path::new(p).components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
        if depth < 0 && Path::new(p).is_relative() {
            return Err(format!(
                "'{p}' is outside the root {}; pass a path inside it",
                root.display()
            ));
        }
    }
    let real = joined
        .canonicalize()
        .map_err(|e| format!("cannot read '{p}' (under {}): {e}", root.display()))?;
    let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    if !real.starts_with(&real_root) {
        return Err(format!(
            "'{p}' is outside the root {}; pass a path inside it",
            root.display()
        ));
    }
    if !real.is_file() {
        return Err(format!("'{p}' is not a file"));
    }
    Ok(real)
}

fn read_utf8(file: &Path) -> Result<String, String> {
    let bytes =
        std::fs::read(file).map_err(|e| format!("cannot read '{}': {e}", file.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "'{}' is not valid UTF-8 (invalid byte at offset {})",
            file.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Check a flow with the tool's `args` and `strict`, as `tfc check` and `tfc run` do.
pub fn check(
    input: &FlowInput,
    root: &Path,
    args: Option<&Map<String, Value>>,
    strict: Option<bool>,
) -> Checked {
    let saved = SavedFlows::new(root);
    let invocation = args.map(|a| Invocation {
        json: crate::value::Value::from(&Value::Object(a.clone()))
            .into_object()
            .unwrap_or_default(),
        ..Invocation::default()
    });
    check_source(
        &input.source.text,
        &LowerOptions {
            default_name: Some(input.default_name.clone()),
        },
        &CheckOptions {
            strict,
            args: invocation.as_ref(),
            loader: Some(&saved),
            cwd: Some(root.to_path_buf()),
            ..CheckOptions::default()
        },
    )
}

/// A library value as a protocol value.
pub fn to_wire(v: &crate::value::Value) -> Value {
    serde_json::from_str(&v.to_json()).unwrap_or(Value::Null)
}

/// `{ok, diagnostics}` of a check, as `tfc check --format json`, and its text rendering.
pub fn check_report(checked: &Checked, source: &Source) -> (Value, String) {
    let diagnostics: Vec<Value> = checked
        .diagnostics
        .iter()
        .map(|d| to_wire(&to_json(d, source)))
        .collect();
    let errors = checked.diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = checked.diagnostics.len() - errors;
    let mut text = render_file(&checked.diagnostics, source, false);
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    text.push_str(&format!(
        "{}: {}, {}",
        if errors == 0 { "ok" } else { "failed" },
        plural(errors, "error"),
        plural(warnings, "warning")
    ));
    (json!({"ok": errors == 0, "diagnostics": diagnostics}), text)
}

/// `tfc_check`.
pub fn tool_check(mut args: Args, root: &Path) -> Result<ToolOutput, ToolError> {
    let input = flow_input(&mut args, root)?;
    let flow_args = args.opt_object("args")?;
    let strict = args.opt_bool("strict")?;
    args.finish(&["path", "name", "flow", "args", "strict"])?;
    let checked = check(&input, root, flow_args.as_ref(), strict);
    let (structured, text) = check_report(&checked, &input.source);
    Ok(ToolOutput::new(structured, text))
}

/// `tfc_graph`.
pub fn tool_graph(mut args: Args, root: &Path) -> Result<ToolOutput, ToolError> {
    let input = flow_input(&mut args, root)?;
    let format = args.opt_str("format")?.unwrap_or_else(|| "mermaid".into());
    let (direction, orientation) = match args.opt_str("direction")?.as_deref() {
        None | Some("td") => (Direction::TopDown, Orientation::TopDown),
        Some("lr") => (Direction::LeftRight, Orientation::LeftRight),
        Some(other) => {
            return Err(ToolError::arg(
                "direction",
                format!("'{other}' is not td or lr"),
            ));
        }
    };
    args.finish(&["path", "name", "flow", "format", "direction"])?;
    if !GRAPH_FORMATS.contains(&format.as_str()) {
        return Err(ToolError::arg(
            "format",
            format!("'{format}' is not one of {}", GRAPH_FORMATS.join(", ")),
        ));
    }
    let checked = check(&input, root, None, None);
    let (report, rendered) = check_report(&checked, &input.source);
    let Some(flow) = &checked.flow else {
        return Err(ToolError {
            message: format!("the flow cannot be drawn: it does not parse\n{rendered}"),
            detail: Some(report),
        });
    };
    let chart = match format.as_str() {
        "svg" => svg(&draw(flow, &checked.diagnostics, orientation), &check_deco),
        "dot" => dot(flow, &checked.diagnostics, orientation),
        _ => mermaid(flow, &checked.diagnostics, direction),
    };
    let structured = json!({
        "format": format,
        "text": chart,
        "ok": report["ok"],
        "diagnostics": report["diagnostics"],
    });
    let mut out = ToolOutput::new(structured, chart.clone());
    if format == "svg" {
        use b64::encode;
        out.extra
            .push(json!({"type": "image", "mimeType": "image/svg+xml",
                              "data": encode(chart.as_bytes())}));
    }
    Ok(out)
}

/// `tfc_flows`: the saved flows, project first, as `tfc list`.
pub fn tool_flows(args: Args, root: &Path) -> Result<ToolOutput, ToolError> {
    args.finish(&[])?;
    let saved = crate::project::SavedFlows::at_root(root).list(Path::to_path_buf);
    let lines: Vec<String> = saved
        .iter()
        .map(|f| {
            format!(
                "{} ({}{}){}",
                f.name,
                f.scope,
                if f.shadowed { ", shadowed" } else { "" },
                f.description()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default()
            )
        })
        .collect();
    let flows: Vec<Value> = saved.iter().map(|f| to_wire(&f.to_json())).collect();
    let text = if lines.is_empty() {
        "no saved flows (save one with tfc_save)".to_owned()
    } else {
        lines.join("\n")
    };
    Ok(ToolOutput::new(json!({"flows": flows}), text))
}

/// `tfc_save`: check the flow, then write it as a saved flow.
pub fn tool_save(mut args: Args, root: &Path) -> Result<ToolOutput, ToolError> {
    let name = args.str("name")?;
    let doc = flow_doc(&mut args)?.ok_or_else(|| {
        ToolError::arg(
            "flow",
            "required, and missing (the flow document as a JSON object)",
        )
    })?;
    let scope = args.opt_str("scope")?.unwrap_or_else(|| "project".into());
    args.finish(&["name", "flow", "scope"])?;
    if !crate::project::SavedFlows::valid_name(&name) {
        return Err(ToolError::arg(
            "name",
            format!(
                "'{name}' is not a saved-flow name: use letters, digits, '.', '_' and '-' (no '..')"
            ),
        ));
    }
    let dir = match scope.as_str() {
        "project" => root.join(".tfc").join("flows"),
        "user" => crate::project::user_config_dir()
            .ok_or_else(|| ToolError::arg("scope", "no user configuration folder (HOME is unset)"))?
            .join("flows"),
        other => {
            return Err(ToolError::arg(
                "scope",
                format!("'{other}' is not project or user"),
            ));
        }
    };
    let mut text = doc;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let input = FlowInput {
        source: Source::new(format!("{name}.json"), text),
        default_name: name.clone(),
        file: None,
    };
    let checked = check(&input, root, None, None);
    let (report, rendered) = check_report(&checked, &input.source);
    if checked.has_errors() {
        return Err(ToolError {
            message: format!("not saved: the flow has errors\n{rendered}"),
            detail: Some(report),
        });
    }
    let file = dir.join(format!("{name}.json"));
    let replaced = file.is_file();
    std::fs::create_dir_all(&dir)
        .and_then(|()| write_atomic(&file, &input.source.text))
        .map_err(|e| ToolError::new(format!("cannot write '{}': {e}", file.display())))?;
    let text = format!(
        "saved '{name}' to {}{}\n{rendered}",
        file.display(),
        if replaced { " (replaced)" } else { "" }
    );
    Ok(ToolOutput::new(
        json!({"name": name, "scope": scope, "path": file.display().to_string(),
               "replaced": replaced, "diagnostics": report["diagnostics"]}),
        text,
    ))
}

/// Standard base64 (RFC 4648, padded) for image content: small enough not to need a crate.
mod b64 {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    pub fn encode(bytes: &[u8]) -> String {
        let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
        for chunk in bytes.chunks(3) {
            let b = [
                chunk[0],
                chunk.get(1).copied().unwrap_or(0),
                chunk.get(2).copied().unwrap_or(0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
                } else {
                    out.push('=');
                }
            }
        }
        out
    }
}

/// Write through a temporary file in the same folder, then rename.
fn write_atomic(file: &Path, text: &str) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_stay_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("r");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/f.json"), "{}").unwrap();
        std::fs::write(dir.path().join("out.json"), "{}").unwrap();
        assert!(inside_root("sub/f.json", &root).is_ok());
        assert!(inside_root("sub/../sub/f.json", &root).is_ok());
        let e = inside_root("../out.json", &root).unwrap_err();
        assert!(e.contains("outside the root"), "{e}");
        let abs = dir.path().join("out.json");
        let e = inside_root(abs.to_str().unwrap(), &root).unwrap_err();
        assert!(e.contains("outside the root"), "{e}");
        let e = inside_root("missing.json", &root).unwrap_err();
        assert!(e.contains("cannot read"), "{e}");
    }

    #[test]
    fn base64_matches_rfc_4648() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(b64::encode(plain.as_bytes()), coded);
        }
    }

    #[test]
    fn saved_flow_names() {
        assert!(crate::project::SavedFlows::valid_name("release-check_2.v1"));
        for bad in ["", "a/b", "..", "a..b", "x y", "é"] {
            assert!(!crate::project::SavedFlows::valid_name(bad), "{bad}");
        }
    }
}
