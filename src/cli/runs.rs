//! `tfc runs [FLOW] [--status S] [--limit N] [--format text|json]`: the project's runs, newest
//! first (SPEC §11.4). Text: one line per run, `<runId>  <status>  <startedAt>  <duration>
//! <calls> call(s)  <tokens> tok  $<cost>|-  [<reason>]`; json: an array of `{runId, flow,
//! status, reason, parentRunId, startedAt, endedAt, usage}`. Also the formatting helpers
//! `tfc show` shares.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::{Exit, usage_error};
use tfc::project::project_root;
use tfc::run::runs::{self, RunEntry};
use tfc::value::Value;

#[derive(Args, Debug)]
pub struct RunsArgs {
    /// Only the runs of this flow (its name, or its file).
    #[arg(value_name = "FLOW")]
    flow: Option<String>,
    /// Only runs with this status: completed, failed, blocked, paused, running, interrupted.
    #[arg(long, value_name = "S")]
    status: Option<String>,
    /// At most this many runs (the newest).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// `text`: one line per run; `json`: an array of run summaries.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Output format of the run-management commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// `tfc runs`.
pub fn run(a: RunsArgs) -> Exit {
    if let Some(s) = &a.status
        && !runs::STATUSES.contains(&s.as_str())
    {
        return usage_error(format!(
            "--status '{s}' is not a run status; use one of {}",
            runs::STATUSES.join(", ")
        ));
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = project_root(&cwd);
    let flow = a.flow.as_deref().map(|f| flow_name(f, &cwd));
    let (list, corrupt) = runs::list_where(&root, flow.as_deref(), a.limit, |e| {
        a.status.as_deref().is_none_or(|s| e.status == s)
    });
    for c in &corrupt {
        sayln!("warning: {c}");
    }
    match a.format {
        Format::Json => {
            let items = list.iter().map(RunEntry::summary_json).collect();
            outln!("{}", Value::Array(items).to_pretty_json());
        }
        Format::Text => {
            if list.is_empty() && a.limit != Some(0) {
                sayln!(
                    "{}",
                    empty_note(&root, flow.as_deref(), a.status.as_deref())
                );
            }
            let now = now_ms();
            for e in &list {
                outln!("{}", text_line(e, now));
            }
        }
    }
    Exit::Ok
}

fn empty_note(root: &Path, flow: Option<&str>, status: Option<&str>) -> String {
    let what = match (flow, status) {
        (Some(f), Some(s)) => format!("no {s} runs of flow '{f}'"),
        (Some(f), None) => format!("no runs of flow '{f}'"),
        (None, Some(s)) => format!("no {s} runs"),
        (None, None) => "no runs yet".to_owned(),
    };
    format!(
        "{what} in {} (`tfc run FLOW` starts one)",
        runs::runs_dir(root).display()
    )
}

/// The flow name a `FLOW` argument means: a flow file's (or saved flow's) `name`, else its
/// default name; an argument that names no file is taken as a flow name.
pub(crate) fn flow_name(arg: &str, cwd: &Path) -> String {
    let Some((path, default_name)) = tfc::project::locate_flow(arg, cwd) else {
        return arg.to_owned();
    };
    std::fs::read(&path)
        .ok()
        .and_then(|bytes| {
            let v = tfc::json::parse_bytes(&bytes).root?.to_value();
            v.as_object()?.get("name")?.as_str().map(str::to_owned)
        })
        .unwrap_or(default_name)
}

fn text_line(e: &RunEntry, now: u64) -> String {
    let r = &e.record;
    let started = str_field(r, "startedAt").unwrap_or("-");
    let duration = duration_of(r, e.status == "running", now);
    let calls = calls(r);
    let usage = field(r, "usage");
    let mut line = format!(
        "{}  {}  {}  {}  {}  {} tok  {}",
        e.run_id,
        e.status,
        started,
        duration,
        tfc::run::summary::calls_text(calls),
        tokens(usage),
        cost(usage)
    );
    if let Some(reason) = str_field(r, "reason").filter(|s| !s.is_empty()) {
        line.push_str("  ");
        line.push_str(&one_line(reason));
    }
    if let Some((phase, at)) = e.next_deadline() {
        line.push_str(&format!("  ({phase} expires {at})"));
    }
    if let Some(l) = e.lineage() {
        line.push_str(&format!("  [{l}]"));
    }
    line
}

// ---- helpers shared with `tfc show` -------------------------------------------------------

pub(crate) fn field<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    v.as_object().and_then(|o| o.get(key))
}

pub(crate) fn str_field<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    field(v, key).and_then(Value::as_str)
}

pub(crate) fn num_field(v: &Value, key: &str) -> Option<f64> {
    match field(v, key) {
        Some(Value::Number(n)) => Some(*n),
        _ => None,
    }
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Wall time of a run or phase record: `endedAt - startedAt`; not ended and `live` (the run
/// is still going): until now; never started, or cut off: `-`.
pub(crate) fn duration_of(r: &Value, live: bool, now: u64) -> String {
    let t = |k| str_field(r, k).and_then(runs::parse_timestamp);
    match (t("startedAt"), t("endedAt")) {
        (Some(s), Some(e)) => duration(e.saturating_sub(s)),
        (Some(s), None) if live => duration(now.saturating_sub(s)),
        _ => "-".to_owned(),
    }
}

/// `850ms`, `12.3s`, `4m05s`, `2h03m`.
pub(crate) fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else if ms < 3_600_000 {
        format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1000)
    } else {
        format!("{}h{:02}m", ms / 3_600_000, (ms % 3_600_000) / 60_000)
    }
}

/// Agent calls of a run, as every summary counts them ([`tfc::run::summary`]; a
/// sub-flow's calls included).
pub(crate) fn calls(r: &Value) -> u64 {
    tfc::run::summary::record_calls(r)
}

/// Input + output tokens of a usage object.
pub(crate) fn tokens(usage: Option<&Value>) -> u64 {
    usage.map_or(0, |u| {
        ["input", "output"]
            .iter()
            .filter_map(|k| num_field(u, k))
            .map(|n| n.max(0.0) as u64)
            .sum()
    })
}

/// `$0.0410`, or `-` when the cost is unknown.
pub(crate) fn cost(usage: Option<&Value>) -> String {
    match usage.and_then(|u| num_field(u, "costUSD")) {
        Some(c) => format!("${c:.4}"),
        None => "-".to_owned(),
    }
}

/// Newlines shown as `⏎` so that a line stays one line.
pub(crate) fn one_line(s: &str) -> String {
    s.trim_end().replace('\n', " ⏎ ")
}
