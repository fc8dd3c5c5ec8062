//! `tfc show RUN [PHASE] [--limit N] [--format text|json]` (SPEC §11.4): one run — status,
//! reason, args, usage and a line per phase — or one phase of it: its prompt(s) from the
//! journal, output and json cut at `--limit` chars, warnings, items. `RUN` is a run id, a
//! unique prefix, or `last`. A run still going (or interrupted) is brought up to date from its
//! journal, which is ahead of the `run.json` snapshot. Exit codes: 0 found · 2 not found,
//! ambiguous or corrupt.

use std::path::{Path, PathBuf};

use clap::Args;

use super::runs::{
    Format, calls, cost, duration_of, field, flow_name, now_ms, num_field, one_line, str_field,
    tokens,
};
use super::{Exit, usage_error};
use tfc::project::project_root;
use tfc::run::runs::{self, RunEntry};
use tfc::run::summary::{ItemTally, calls_text, phase_record_calls};
use tfc::value::Value;

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A run id, a unique prefix of one, or `last`.
    #[arg(value_name = "RUN")]
    run: String,
    /// Show this phase: its prompts, output, json, warnings and items.
    #[arg(value_name = "PHASE")]
    phase: Option<String>,
    /// Cut texts (prompts, outputs) at this many characters.
    #[arg(long, value_name = "N", default_value_t = 4000)]
    limit: usize,
    /// `text`: for reading; `json`: the run record (or the phase's, with its prompts).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Same as `--format json`.
    #[arg(long)]
    json: bool,
    /// With `last`: the newest run of this flow (its name, or its file).
    #[arg(long, value_name = "FLOW")]
    flow: Option<String>,
}

/// `tfc show`.
pub fn run(a: ShowArgs) -> Exit {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = project_root(&cwd);
    let flow = a.flow.as_deref().map(|f| flow_name(f, &cwd));
    let mut entry = match runs::find(&root, &a.run, flow.as_deref()) {
        Ok(e) => e,
        Err(e) => return usage_error(e),
    };
    let skipped = runs::overlay_journal(&entry.dir, &mut entry.record);
    if skipped > 0 {
        sayln!(
            "warning: {skipped} unreadable line(s) in {} were skipped",
            entry.dir.join("journal.jsonl").display()
        );
    }
    // The journal may have ended the run since the snapshot.
    entry.status = runs::effective_status(&entry.dir, &entry.record);
    let json = a.json || a.format == Format::Json;
    match &a.phase {
        None if json => {
            let mut r = entry.record.clone().into_object().unwrap_or_default();
            r.shift_remove("def");
            r.insert("status".into(), Value::from(entry.status.as_str()));
            outln!("{}", Value::Object(r).to_pretty_json());
        }
        None => out!("{}", run_text(&entry, &cwd)),
        Some(id) => {
            let Some(phase) = field(&entry.record, "phases").and_then(|ps| field(ps, id)) else {
                let ids: Vec<&str> = field(&entry.record, "phases")
                    .and_then(Value::as_object)
                    .map(|ps| ps.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                return usage_error(format!(
                    "run '{}' has no phase '{id}'; its phases: {}",
                    entry.run_id,
                    ids.join(", ")
                ));
            };
            let prompts = runs::phase_prompts(&entry.dir, id);
            if json {
                let mut p = phase.clone().into_object().unwrap_or_default();
                p.insert("prompts".into(), Value::Array(prompts));
                outln!("{}", Value::Object(p).to_pretty_json());
            } else {
                out!("{}", phase_text(&entry, id, phase, &prompts, a.limit));
            }
        }
    }
    Exit::Ok
}

/// A phase's status as shown: `running` phases of an interrupted run were cut off.
fn phase_status<'a>(run_status: &str, phase: &'a Value) -> &'a str {
    match str_field(phase, "status").unwrap_or("?") {
        "running" if run_status == "interrupted" => "interrupted",
        s => s,
    }
}

fn run_text(e: &RunEntry, cwd: &Path) -> String {
    let r = &e.record;
    let mut t = format!("run {}\n", e.run_id);
    let mut line = |k: &str, v: &str| t.push_str(&format!("{:<9} {v}\n", format!("{k}:")));
    line("flow", str_field(r, "flow").unwrap_or(&e.flow));
    line("status", &e.status);
    if let Some(reason) = str_field(r, "reason").filter(|s| !s.is_empty()) {
        line("reason", &one_line(reason));
    }
    if let Some(l) = tfc::run::runs::lineage(r) {
        line("parent", &l);
    }
    line("started", str_field(r, "startedAt").unwrap_or("-"));
    let now = now_ms();
    line(
        "ended",
        &match str_field(r, "endedAt") {
            Some(end) => format!("{end}  ({})", duration_of(r, false, now)),
            None => "-".to_owned(),
        },
    );
    if let Some(args) = field(r, "args").filter(|a| a.as_object().is_some_and(|o| !o.is_empty())) {
        line("args", &args.to_json());
    }
    let usage = field(r, "usage");
    line(
        "usage",
        &format!(
            "{}  {} tok  {}",
            calls_text(calls(r)),
            tokens(usage),
            cost(usage)
        ),
    );
    if let Some(spent) = field(r, "spentBefore").filter(|v| v.as_object().is_some()) {
        line(
            "before",
            &format!(
                "{} tok  {} (resumed runs)",
                tokens(Some(spent)),
                cost(Some(spent))
            ),
        );
    }
    let record = e.dir.join("run.json");
    let shown = record.strip_prefix(cwd).unwrap_or(&record);
    line("record", &shown.display().to_string());
    let Some(phases) = field(r, "phases").and_then(Value::as_object) else {
        return t;
    };
    t.push_str("phases:\n");
    let now = now_ms();
    let rows: Vec<[String; 4]> = phases
        .iter()
        .map(|(id, p)| {
            [
                id.clone(),
                phase_status(&e.status, p).to_owned(),
                calls_text(phase_record_calls(p)),
                duration_of(p, e.status == "running", now),
            ]
        })
        .collect();
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2, w3) = (width(0), width(1), width(2), width(3));
    for (row, p) in rows.iter().zip(phases.values()) {
        let usage = field(p, "usage");
        let mut l = format!(
            "  {:<w0$}  {:<w1$}  {:<w2$}  {:>w3$}  {} tok  {}",
            row[0],
            row[1],
            row[2],
            row[3],
            tokens(usage),
            cost(usage),
        );
        if let Some(hit) = str_field(p, "cacheHit") {
            l.push_str(&format!("  cache {hit}"));
        }
        if let Some(a) =
            field(p, "approval").filter(|a| str_field(a, "decision") == Some("pending"))
            && let Some(at) = str_field(a, "expiresAt")
        {
            l.push_str(&format!("  expires {at}"));
        }
        if let Some(s) = str_field(p, "skipReason") {
            l.push_str(&format!("  skipped: {}", one_line(s)));
        }
        if let Some(err) = str_field(p, "error") {
            l.push_str(&format!("  error: {}", one_line(err)));
        }
        t.push_str(l.trim_end());
        t.push('\n');
    }
    t
}

/// `text` cut at `limit` chars, with `[… N more chars]` when cut.
fn cut(text: &str, limit: usize) -> String {
    let total = text.chars().count();
    if total <= limit {
        let mut s = text.to_owned();
        if !s.ends_with('\n') {
            s.push('\n');
        }
        return s;
    }
    let mut s: String = text.chars().take(limit).collect();
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(&format!("[… {} more chars]\n", total - limit));
    s
}

fn heading(t: &mut String, title: &str) {
    t.push_str(&format!("── {title} ──\n"));
}

/// A stored text of the phase: inline, or in the file `file_key` names (relative to the run).
fn stored(dir: &Path, p: &Value, key: &str, file_key: &str) -> Option<String> {
    if let Some(f) = str_field(p, file_key) {
        return Some(
            std::fs::read_to_string(dir.join(f))
                .unwrap_or_else(|e| format!("(cannot read {}: {e})", dir.join(f).display())),
        );
    }
    match field(p, key)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        v => Some(v.to_pretty_json()),
    }
}

fn phase_text(e: &RunEntry, id: &str, p: &Value, prompts: &[Value], limit: usize) -> String {
    let mut t = format!("phase {id}  (run {})\n", e.run_id);
    let mut line = |k: &str, v: &str| t.push_str(&format!("{:<9} {v}\n", format!("{k}:")));
    let mut kind = str_field(p, "type").unwrap_or("agent").to_owned();
    if let Some(agent) = str_field(p, "agent") {
        kind.push_str(&format!("  agent {agent}"));
    }
    if let Some(model) = str_field(p, "model") {
        kind.push_str(&format!("  model {model}"));
    }
    line("type", &kind);
    line("status", phase_status(&e.status, p));
    let usage = field(p, "usage");
    let mut stats = format!(
        "{}  {}  {} tok  {}",
        calls_text(phase_record_calls(p)),
        duration_of(p, e.status == "running", now_ms()),
        tokens(usage),
        cost(usage)
    );
    if let Some(hit) = str_field(p, "cacheHit") {
        stats.push_str(&format!("  cache {hit}"));
    }
    line("usage", &stats);
    if let Some(s) = str_field(p, "skipReason") {
        line("skipped", &one_line(s));
    }
    if let Some(err) = str_field(p, "error") {
        line("error", &one_line(err));
    }
    for key in ["gate", "approval", "loop", "tournament"] {
        if let Some(v) = field(p, key) {
            line(key, &v.to_json());
        }
    }
    let flags: Vec<&str> = ["timedOut", "budgetTruncated", "sideEffect", "optional"]
        .into_iter()
        .filter(|k| matches!(field(p, k), Some(Value::Bool(true))))
        .collect();
    if !flags.is_empty() {
        line("flags", &flags.join(", "));
    }
    if let Some(d) = str_field(p, "defError") {
        line("defError", &one_line(d));
    }
    if let Some(sub) = field(p, "subRun") {
        let phases = field(sub, "phases")
            .and_then(Value::as_object)
            .map_or(0, |o| o.len());
        line(
            "sub-run",
            &format!(
                "{} ({phases} phases; `--format json` shows its record)",
                str_field(sub, "status").unwrap_or("?")
            ),
        );
    }
    for call in prompts {
        let node = str_field(call, "node").unwrap_or(id);
        let attempt = num_field(call, "attempt").unwrap_or(1.0);
        heading(&mut t, &format!("prompt {node} (attempt {attempt})"));
        t.push_str(&cut(str_field(call, "prompt").unwrap_or(""), limit));
    }
    if prompts.is_empty()
        && num_field(p, "attempts").unwrap_or(0.0) > 0.0
        && str_field(p, "type") != Some("script")
    {
        heading(&mut t, "prompt");
        t.push_str("(no agent calls of this phase in the journal)\n");
    }
    if let Some(out) = stored(&e.dir, p, "output", "outputFile").filter(|s| !s.is_empty()) {
        heading(&mut t, "output");
        t.push_str(&cut(&out, limit));
    }
    if let Some(json) = stored(&e.dir, p, "json", "jsonFile") {
        heading(&mut t, "json");
        t.push_str(&cut(&json, limit));
    }
    if let Some(ws) = field(p, "warnings")
        .and_then(Value::as_array)
        .filter(|w| !w.is_empty())
    {
        heading(&mut t, "warnings");
        for w in ws {
            t.push_str(&format!("- {}\n", one_line(w.as_str().unwrap_or(""))));
        }
    }
    if let Some(items) = field(p, "items").and_then(Value::as_array) {
        heading(&mut t, "items");
        let tally = ItemTally::count(
            items
                .iter()
                .map(|i| (str_field(i, "status").unwrap_or(""), str_field(i, "error"))),
        );
        t.push_str(&tally.text());
        t.push('\n');
        for item in items {
            let index = num_field(item, "index").unwrap_or(0.0);
            let mut l = format!("#{index} {}", str_field(item, "status").unwrap_or("?"));
            if let Some(err) = str_field(item, "error") {
                l.push_str(&format!(": {}", one_line(err)));
            }
            t.push_str(&l);
            t.push('\n');
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_count_chars() {
        use super::super::runs::duration;
        assert_eq!(cut("héllo", 10), "héllo\n");
        assert_eq!(cut("héllo", 2), "hé\n[… 3 more chars]\n");
        assert_eq!(duration(999), "999ms");
        assert_eq!(duration(12_345), "12.3s");
        assert_eq!(duration(245_000), "4m05s");
        assert_eq!(duration(7_380_000), "2h03m");
    }
}
