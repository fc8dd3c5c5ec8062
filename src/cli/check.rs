//! `tfc check FLOW…`: every static problem of each flow, rendered with spans (SPEC §7).

use clap::{Args, ValueEnum};

use super::{Color, Exit, usage_error};
use tfc::check::{CheckOptions, check_source};
use tfc::diag::render::{render_file, to_json};
use tfc::flow::{Invocation, LowerOptions, split_pair};
use tfc::project::SavedFlows;
use tfc::source::Source;
use tfc::value::{Map, Value};

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Flow files (or saved-flow names) to check; test files (*.test.json) with their flow.
    #[arg(required = true, value_name = "FLOW")]
    flows: Vec<String>,
    /// Report interpolation warnings as errors (overrides the flow's strictInterpolation).
    #[arg(long, overrides_with = "no_strict")]
    strict: bool,
    /// Do not report interpolation warnings as errors.
    #[arg(long = "no-strict")]
    no_strict: bool,
    /// Check against this invocation argument (repeatable): NAME=VALUE.
    #[arg(long = "arg", value_name = "K=V")]
    arg: Vec<String>,
    /// Check against these invocation arguments (a JSON object).
    #[arg(long = "args", value_name = "JSON")]
    args_json: Option<String>,
    /// Do not report this warning: a code (W0102) or a name (gate-sole-path); repeatable.
    #[arg(long, value_name = "CODE")]
    allow: Vec<String>,
    /// `text`: the diagnostics drawn on stderr; `json`: a report on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also report each placeholder's inferred type: a `types` list in the JSON report
    /// (span, path, type), or one line per placeholder on stdout in text format.
    #[arg(long)]
    types: bool,
    /// Colour in text output.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// `tfc check`.
pub fn run(a: CheckArgs) -> Exit {
    let invocation = match invocation(&a) {
        Ok(inv) => inv,
        Err(m) => return usage_error(m),
    };
    let allow = match allowed(&a.allow) {
        Ok(codes) => codes,
        Err(m) => return usage_error(m),
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let saved = SavedFlows::new(&cwd);
    let opts = CheckOptions {
        strict: if a.strict {
            Some(true)
        } else if a.no_strict {
            Some(false)
        } else {
            None
        },
        args: invocation.as_ref(),
        loader: Some(&saved),
        cwd: Some(cwd.clone()),
        allow,
    };
    let color = a.color.enabled();
    let mut json_diags = Vec::new();
    let mut json_types = Vec::new();
    let (mut errors, mut warnings, mut unreadable) = (0usize, 0usize, 0usize);
    for flow in &a.flows {
        // A test file (`*.test.json`) is checked with the flow it names.
        if tfc::test::discover::is_test_file(flow) && std::path::Path::new(flow).is_file() {
            let json = (a.format == Format::Json).then_some(&mut json_diags);
            let (e, w) =
                super::test::check_test_file(std::path::Path::new(flow), &cwd, color, json);
            errors += e;
            warnings += w;
            continue;
        }
        let read = match tfc::project::locate_flow(flow, &cwd) {
            Some((path, stem)) => match std::fs::read(&path) {
                Ok(bytes) => Ok((path, stem, bytes)),
                Err(e) => Err((
                    path.display().to_string(),
                    e.to_string(),
                    UNREADABLE.to_owned(),
                )),
            },
            // Why the path itself cannot be read, as the OS says it (without opening it: a
            // pipe would block).
            None => Err(match std::fs::metadata(flow) {
                Err(e) => (
                    flow.clone(),
                    e.to_string(),
                    match e.kind() {
                        std::io::ErrorKind::NotFound => MISSING,
                        _ => UNREADABLE,
                    }
                    .to_owned(),
                ),
                Ok(m) if m.is_dir() => (
                    flow.clone(),
                    "it is a directory".to_owned(),
                    format!(
                        "name a flow file in it, e.g. {}/flow.json",
                        flow.trim_end_matches('/')
                    ),
                ),
                Ok(_) => (
                    flow.clone(),
                    "not a regular file".to_owned(),
                    UNREADABLE.to_owned(),
                ),
            }),
        };
        let (path, stem, bytes) = match read {
            Ok(found) => found,
            Err((name, reason, help)) => {
                unreadable += 1;
                let d = cannot_read(&name, &reason, &help);
                let source = Source::new(name, String::new());
                match a.format {
                    Format::Text => say!("{}", render_file(&[d], &source, color)),
                    Format::Json => json_diags.push(to_json(&d, &source)),
                }
                continue;
            }
        };
        // Valid UTF-8 (the usual case) becomes the source text without a copy; otherwise
        // the bytes are kept for the byte-level parse and the text is the lossy copy.
        let (text, bytes) = match String::from_utf8(bytes) {
            Ok(text) => (text, None),
            Err(e) => {
                let bytes = e.into_bytes();
                (String::from_utf8_lossy(&bytes).into_owned(), Some(bytes))
            }
        };
        let source = Source::new(path.display().to_string(), text);
        let checked = match &bytes {
            None => check_source(
                &source.text,
                &LowerOptions {
                    default_name: Some(stem),
                },
                &opts,
            ),
            Some(bytes) => tfc::check::Checked {
                flow: None,
                diagnostics: tfc::json::parse_bytes(bytes).diagnostics,
                document: None,
            },
        };
        let mut checked = checked;
        if let Some(flow) = &checked.flow {
            undefined_agents(flow, &cwd, &opts.allow, &mut checked.diagnostics);
        }
        let types = match (&checked.flow, a.types) {
            (Some(flow), true) => tfc::check::types::placeholder_types(flow, Some(&saved)),
            _ => Vec::new(),
        };
        let file_errors = checked.diagnostics.iter().filter(|d| d.is_error()).count();
        errors += file_errors;
        warnings += checked.diagnostics.len() - file_errors;
        match a.format {
            Format::Text => {
                say!("{}", render_file(&checked.diagnostics, &source, color));
                for t in &types {
                    let (line, column) = source.line_col(t.span.start);
                    outln!("{}:{line}:{column}: {{{}}}: {}", source.name, t.path, t.ty);
                }
            }
            Format::Json => {
                json_diags.extend(checked.diagnostics.iter().map(|d| to_json(d, &source)));
                json_types.extend(types.iter().map(|t| {
                    let mut v = t.to_json(&source);
                    if let Value::Object(o) = &mut v {
                        o.insert("file".into(), Value::from(source.name.as_str()));
                    }
                    v
                }));
            }
        }
    }
    match a.format {
        Format::Text => {
            let files = a.flows.len();
            if unreadable < files {
                sayln!("{}", summary(errors, warnings, files, unreadable));
            }
        }
        Format::Json => {
            let mut o = Map::default();
            o.insert("ok".into(), Value::Bool(errors == 0 && unreadable == 0));
            o.insert("diagnostics".into(), Value::Array(json_diags));
            if a.types {
                o.insert("types".into(), Value::Array(json_types));
            }
            outln!("{}", Value::Object(o).to_json());
        }
    }
    if unreadable > 0 {
        Exit::Usage
    } else if errors > 0 {
        Exit::Failure
    } else {
        Exit::Ok
    }
}

/// E0000's help for a path that names nothing (no file, no saved flow).
const MISSING: &str =
    "no such file, and no saved flow of that name: check the path, or save the flow in .tfc/flows/";
/// E0000's help for a file the OS refuses to read.
const UNREADABLE: &str = "check the path and that the file is readable";

/// E0000: a flow file that cannot be read, with the OS's reason (SPEC §7.5).
fn cannot_read(name: &str, reason: &str, help: &str) -> tfc::diag::Diagnostic {
    tfc::diag::Diagnostic::new(
        tfc::diag::Code::CannotRead,
        format!("cannot read flow '{name}': {reason}"),
    )
    .help(help)
}

/// The last line of a text report: `ok: 0 errors, 1 warning in 2 files`.
fn summary(errors: usize, warnings: usize, files: usize, unreadable: usize) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let status = if errors > 0 || unreadable > 0 {
        "failed"
    } else {
        "ok"
    };
    let mut line = format!(
        "{status}: {}, {} in {}",
        plural(errors, "error"),
        plural(warnings, "warning"),
        plural(files, "file")
    );
    if unreadable > 0 {
        line.push_str(&format!(" ({unreadable} could not be read)"));
    }
    line
}

/// The warnings named by `--allow` (shared with `tfc run`): a usage error for a name that is
/// not a warning, with a did-you-mean, and for an error code.
pub fn allowed(names: &[String]) -> Result<Vec<tfc::diag::Code>, String> {
    names
        .iter()
        .map(|n| {
            tfc::diag::allowable(n).map_err(|e| format!("--allow {n}: {}; {}", e.message, e.help))
        })
        .collect()
}

/// W0701, as `tfc run` would report it with the backends the configuration chooses (not
/// auto-detection or command-line overrides, which only a run knows): added in span order,
/// unless allowed (`--allow`, the flow's `lint.allow`). A configuration that does not load is
/// `tfc run`'s to report.
fn undefined_agents(
    flow: &tfc::flow::Flow,
    cwd: &std::path::Path,
    allow: &[tfc::diag::Code],
    diagnostics: &mut Vec<tfc::diag::Diagnostic>,
) {
    use tfc::diag::Code;
    if allow.contains(&Code::UndefinedAgent) || flow.lint_allow.contains(&Code::UndefinedAgent) {
        return;
    }
    let uses = tfc::run::agent_uses(flow);
    if uses.iter().all(|u| u.agent == "default") {
        return;
    }
    let Ok((roster, _)) = tfc::agent::ConfigRoster::load(
        cwd,
        flow.agent_scope,
        tfc::agent::RosterOptions::default(),
        std::sync::Arc::new(tfc::agent::ProcessBackends),
    ) else {
        return;
    };
    let found = tfc::agent::undefined_agents(|agent| roster.resolve_configured(agent), &uses);
    if found.is_empty() {
        return;
    }
    diagnostics.extend(found);
    diagnostics.sort_by_key(|d| (d.span.map_or(0, |s| s.start), d.span.map_or(0, |s| s.end)));
}

fn invocation(a: &CheckArgs) -> Result<Option<Invocation>, String> {
    if a.arg.is_empty() && a.args_json.is_none() {
        return Ok(None);
    }
    let mut inv = Invocation::default();
    if let Some(text) = &a.args_json {
        inv.json = super::input::args_object(text)?;
    }
    for pair in &a.arg {
        inv.pairs.push(
            split_pair(pair).ok_or_else(|| format!("--arg expects NAME=VALUE, found '{pair}'"))?,
        );
    }
    Ok(Some(inv))
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn summary_lines() {
        assert_eq!(summary(0, 0, 1, 0), "ok: 0 errors, 0 warnings in 1 file");
        assert_eq!(summary(1, 1, 2, 0), "failed: 1 error, 1 warning in 2 files");
        assert_eq!(
            summary(0, 0, 2, 1),
            "failed: 0 errors, 0 warnings in 2 files (1 could not be read)"
        );
    }
}
