//! `tfc list [--format text|json]`: the saved flows (SPEC §10.1, §11.4) — the project's
//! `.tfc/flows/<name>.json`, then the user's `$XDG_CONFIG_HOME/tfc/flows/<name>.json` — with
//! their scope, description and arguments (types, defaults). A user flow shadowed by a
//! project flow of the same name is listed as such. A file that cannot be read is listed with
//! the problem and a warning.

use std::path::PathBuf;

use clap::Args;

use super::Exit;
use super::runs::{Format, field, one_line, str_field};
use tfc::project::{SavedFlow, SavedFlows};
use tfc::value::Value;

#[derive(Args, Debug)]
pub struct ListArgs {
    /// `text`: one line per flow; `json`: an array of saved flows.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// `tfc list`.
pub fn run(a: ListArgs) -> Exit {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let saved = SavedFlows::new(&cwd);
    let flows = saved.list(|p| p.strip_prefix(&cwd).unwrap_or(p).to_path_buf());
    for f in &flows {
        if let Err(e) = &f.doc {
            let shown = f.path.strip_prefix(&cwd).unwrap_or(&f.path);
            sayln!("warning: saved flow {}: {e}", shown.display());
        }
    }
    match a.format {
        Format::Json => {
            let items = flows.iter().map(SavedFlow::to_json).collect();
            outln!("{}", Value::Array(items).to_pretty_json());
        }
        Format::Text => {
            if flows.is_empty() {
                let places: Vec<String> = saved
                    .places()
                    .map(|(_, d)| d.display().to_string())
                    .collect();
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

fn text_of(f: &SavedFlow, w: usize) -> String {
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
            for (name, spec) in f.args() {
                t.push_str(&format!("{:w$}    {}\n", "", arg_text(&name, &spec)));
            }
        }
        Err(e) => t.push_str(&format!("  (invalid: {e})\n")),
    }
    t
}
