//! `tfc list [--format text|json]`: the saved flows (SPEC §10.1, §11.4) — the project's
//! `.tfc/flows/<name>.json`, then the user's `$XDG_CONFIG_HOME/tfc/flows/<name>.json` — with
//! their scope, description and arguments (types, defaults). A user flow shadowed by a
//! project flow of the same name is listed as such. A file that cannot be read is listed with
//! the problem and a warning.

use std::path::{Path, PathBuf};

use clap::Args;

use super::Exit;
use super::runs::{Format, field, one_line, str_field};
use tfc::project::{project_root, user_config_dir};
use tfc::value::{Map, Value};

#[derive(Args, Debug)]
pub struct ListArgs {
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// One saved flow.
struct Saved {
    name: String,
    scope: &'static str,
    path: PathBuf,
    /// The flow document, or why it cannot be read.
    doc: Result<Value, String>,
    shadowed: bool,
}

/// `tfc list`.
pub fn run(a: ListArgs) -> Exit {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut dirs = vec![("project", project_root(&cwd).join(".tfc").join("flows"))];
    if let Some(u) = user_config_dir() {
        dirs.push(("user", u.join("flows")));
    }
    let mut flows: Vec<Saved> = Vec::new();
    for (scope, dir) in &dirs {
        for (name, path) in flow_files(dir) {
            let shadowed = flows.iter().any(|f| f.name == name);
            let shown = path.strip_prefix(&cwd).unwrap_or(&path).to_path_buf();
            let doc = read(&shown);
            if let Err(e) = &doc {
                sayln!("warning: saved flow {}: {e}", shown.display());
            }
            flows.push(Saved {
                name,
                scope,
                path,
                doc,
                shadowed,
            });
        }
    }
    match a.format {
        Format::Json => {
            let items = flows.iter().map(json_of).collect();
            outln!("{}", Value::Array(items).to_pretty_json());
        }
        Format::Text => {
            if flows.is_empty() {
                let places: Vec<String> =
                    dirs.iter().map(|(_, d)| d.display().to_string()).collect();
                sayln!(
                    "no saved flows (a flow saved as <name>.json in {} runs as `tfc run <name>`)",
                    places.join(" or ")
                );
            }
            let w = flows.iter().map(|f| f.name.len()).max().unwrap_or(0);
            for f in &flows {
                out!("{}", text_of(f, w));
            }
        }
    }
    Exit::Ok
}

/// `<name>.json` files of `dir` with valid saved-flow names, sorted by name.
fn flow_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = rd
        .filter_map(Result::ok)
        .filter_map(|e| {
            let file = e.file_name().into_string().ok()?;
            let name = file.strip_suffix(".json")?.to_owned();
            let valid = !name.is_empty()
                && !name.contains("..")
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
            (valid && e.path().is_file()).then(|| (name, e.path()))
        })
        .collect();
    out.sort();
    out
}

fn read(path: &Path) -> Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot be read: {e}"))?;
    let parsed = tfc::json::parse_bytes(&bytes);
    if let Some(d) = parsed.diagnostics.iter().find(|d| d.is_error()) {
        return Err(format!(
            "is not valid JSON ({}); `tfc check {}` shows where",
            d.message,
            path.display()
        ));
    }
    match parsed.root.map(|n| n.to_value()) {
        Some(v @ Value::Object(_)) => Ok(v),
        _ => Err("is not a flow (a JSON object)".into()),
    }
}

/// `{name, type?, default?, required?, description?}` per declared arg.
fn args_of(doc: &Value) -> Vec<(String, Value)> {
    field(doc, "args")
        .and_then(Value::as_object)
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

fn arg_text(name: &str, spec: &Value) -> String {
    let mut parts = Vec::new();
    parts.push(str_field(spec, "type").unwrap_or("string").to_owned());
    if let Some(values) = field(spec, "values").and_then(Value::as_array) {
        let vs: Vec<String> = values.iter().map(Value::to_json).collect();
        parts[0] = format!("enum {}", vs.join("|"));
    }
    match field(spec, "default") {
        Some(d) => parts.push(format!("default {}", d.to_json())),
        None if matches!(field(spec, "required"), Some(Value::Bool(true))) => {
            parts.push("required".into());
        }
        None => {}
    }
    let mut s = format!("{name} ({})", parts.join(", "));
    if let Some(desc) = str_field(spec, "description") {
        s.push_str(&format!(": {}", one_line(desc)));
    }
    s
}

fn text_of(f: &Saved, w: usize) -> String {
    let scope = if f.shadowed {
        format!("{} (shadowed by the project's)", f.scope)
    } else {
        f.scope.to_owned()
    };
    let mut t = format!("{:<w$}  {scope}", f.name);
    match &f.doc {
        Ok(doc) => {
            if let Some(d) = str_field(doc, "description") {
                t.push_str(&format!("  {}", one_line(d)));
            }
            t.push('\n');
            for (name, spec) in args_of(doc) {
                t.push_str(&format!("{:w$}    {}\n", "", arg_text(&name, &spec)));
            }
        }
        Err(e) => t.push_str(&format!("  (invalid: {e})\n")),
    }
    t
}

fn json_of(f: &Saved) -> Value {
    let mut o = Map::default();
    o.insert("name".into(), Value::from(f.name.as_str()));
    o.insert("scope".into(), Value::from(f.scope));
    o.insert("path".into(), Value::from(f.path.display().to_string()));
    o.insert("shadowed".into(), Value::Bool(f.shadowed));
    match &f.doc {
        Ok(doc) => {
            o.insert(
                "description".into(),
                field(doc, "description").cloned().unwrap_or_default(),
            );
            let args = args_of(doc)
                .into_iter()
                .map(|(name, spec)| {
                    let mut a = Map::default();
                    a.insert("name".into(), Value::from(name));
                    for k in ["type", "default", "required", "description", "values"] {
                        if let Some(v) = field(&spec, k) {
                            a.insert(k.into(), v.clone());
                        }
                    }
                    Value::Object(a)
                })
                .collect();
            o.insert("args".into(), Value::Array(args));
        }
        Err(e) => {
            o.insert("error".into(), Value::from(e.as_str()));
        }
    }
    Value::Object(o)
}
