//! The self-contained HTML report of a run (SPEC §11.5): one file, inline CSS and SVG, no
//! network (a Content-Security-Policy forbids every fetch), readable with scripts disabled; a
//! few lines of inline script only filter the phases and open or close their details.
//!
//! Sections: header (flow, run, parent, status and reason, args, wall time, calls, tokens, cost,
//! tfc version); the DAG (the `tfc graph --format svg` drawing coloured by status, with badges
//! for attempts, cache hits and gate verdicts); the timeline; the table of phases; one collapsed
//! `<details>` per phase with its prompts and output; the run's warnings. Every text that comes
//! from the flow, the model or the record is escaped; long texts are cut at [`TEXT_LIMIT`]
//! characters with a note.

use std::fmt::Write;

use super::dag::draw;
use super::events::{Events, read};
use super::layout::Orientation;
use super::svg::{Deco, esc, svg};
use super::timeline::{Row, duration, timeline};
use crate::flow::{LowerOptions, lower_source};
use crate::run::runs::parse_timestamp;
use crate::run::summary::{ItemTally, record_calls};
use crate::value::{Map, Value};

/// Prompts and outputs longer than this many characters are cut.
pub const TEXT_LIMIT: usize = 20_000;
/// Prompts shown per phase (a map may make thousands of calls).
const PROMPTS_SHOWN: usize = 50;

/// What a report is made of.
pub struct Input<'a> {
    /// `run.json`, parsed.
    pub record: &'a Value,
    /// `journal.jsonl` (may be empty, or end in a torn line).
    pub journal: &'a str,
    /// The status as `tfc runs` reports it (`interrupted` for a dead `running` run); `None` =
    /// the record's own.
    pub status: Option<&'a str>,
    /// Reads a file the record points to (`outputFile`, relative to the run's folder); at most
    /// a little more than [`TEXT_LIMIT`] characters are used.
    pub load: &'a dyn Fn(&str) -> Option<String>,
}

/// The report page.
pub fn html(input: &Input) -> String {
    let rec = input.record;
    let empty = Map::default();
    let phases = rec
        .as_object()
        .and_then(|o| o.get("phases"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let events = read(input.journal, &|p| phases.contains_key(p));
    let status = input
        .status
        .or_else(|| get_str(rec, "status"))
        .unwrap_or("unknown");
    let run_id = get_str(rec, "runId").unwrap_or("(unknown run)");
    let flow_name = get_str(rec, "flow").unwrap_or("(unknown flow)");

    let mut out = String::with_capacity(64 * 1024 + phases.len() * 3000);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; \
         script-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} · {} · tfc report</title>\n<style>{CSS}{}</style>\n</head>\n<body>\n",
        esc(flow_name),
        esc(run_id),
        super::svg::STYLE
    );
    header(&mut out, rec, status);

    // The DAG.
    out.push_str("<section id=\"dag\"><h2>Graph</h2>\n");
    let def_text = rec
        .as_object()
        .and_then(|o| o.get("def"))
        .map(Value::to_json);
    let lowered = def_text.as_deref().map(|t| {
        lower_source(
            t,
            &LowerOptions {
                default_name: Some(flow_name.to_owned()),
            },
        )
    });
    let flow = lowered.as_ref().and_then(|l| l.flow.as_ref());
    let mut dom_ids: std::collections::HashMap<String, String> = Default::default();
    match flow {
        Some(flow) => {
            let drawing = draw(flow, &[], Orientation::TopDown);
            for n in &drawing.nodes {
                dom_ids.insert(n.key.clone(), n.dom_id.clone());
            }
            let deco = |n: &super::dag::Node| node_deco(phases.get(&n.key), &n.dom_id, status);
            out.push_str("<div class=\"scroll\">");
            out.push_str(&svg(&drawing, &deco));
            out.push_str("</div>\n");
        }
        None => out.push_str(
            "<p class=\"none\">The record holds no readable flow definition (<code>def</code>), \
             so the graph cannot be drawn.</p>\n",
        ),
    }
    out.push_str("</section>\n");
    let dom = |key: &str| {
        dom_ids
            .get(key)
            .cloned()
            .unwrap_or_else(|| format!("x_{}", super::mermaid::node_id(key)))
    };

    // Filters (hidden until the script shows them).
    out.push_str(
        "<div id=\"filters\" hidden><input id=\"q\" type=\"search\" placeholder=\"filter phases\" \
         aria-label=\"filter phases\"> <select id=\"qs\" aria-label=\"status\"><option value=\"\">any status</option>\
         <option>done</option><option>failed</option><option>skipped</option><option>running</option>\
         <option>pending</option></select> <button id=\"open-all\" type=\"button\">open all</button> \
         <button id=\"close-all\" type=\"button\">close all</button></div>\n",
    );

    // The timeline.
    let run_start = get_str(rec, "startedAt").and_then(parse_timestamp);
    let times = |key: &str, p: &Value| {
        let j = events.times.get(key).copied().unwrap_or((None, None));
        let s = get_str(p, "startedAt").and_then(parse_timestamp).or(j.0);
        let e = get_str(p, "endedAt").and_then(parse_timestamp).or(j.1);
        (s, e)
    };
    let doms: Vec<String> = phases.keys().map(|k| dom(k)).collect();
    let statuses: Vec<&str> = phases
        .iter()
        .map(|(_, p)| phase_status(p, status))
        .collect();
    let rows: Vec<Row> = phases
        .iter()
        .enumerate()
        .map(|(i, (k, p))| {
            let (start, end) = times(k, p);
            Row {
                key: k,
                dom: &doms[i],
                status: statuses[i],
                start,
                end,
            }
        })
        .collect();
    let starts = rows.iter().filter_map(|r| r.start).chain(run_start);
    let t0 = starts.min().unwrap_or(0);
    let ends = rows
        .iter()
        .filter_map(|r| r.end.or(r.start))
        .chain(get_str(rec, "endedAt").and_then(parse_timestamp))
        .chain(events.calls.values().flatten().filter_map(|c| c.end_ms));
    let t1 = ends.max().unwrap_or(t0).max(t0);
    out.push_str("<section id=\"timeline\"><h2>Timeline</h2>\n");
    timeline(&mut out, &rows, &events, t0, t1);
    out.push_str("</section>\n");

    // The table.
    table(&mut out, phases, &doms, &statuses, &times);

    // The details.
    out.push_str("<section id=\"details\"><h2>Phases in detail</h2>\n");
    for (i, (k, p)) in phases.iter().enumerate() {
        details(&mut out, k, p, &doms[i], statuses[i], &events, input.load);
    }
    out.push_str("</section>\n");

    // Warnings.
    out.push_str("<section id=\"warnings\"><h2>Warnings</h2>\n");
    let warnings = rec
        .as_object()
        .and_then(|o| o.get("warnings"))
        .and_then(Value::as_array);
    let mut any = false;
    out.push_str("<ul>\n");
    for w in warnings.into_iter().flatten() {
        if let Some(w) = w.as_str() {
            any = true;
            let _ = writeln!(out, "<li>{}</li>", esc(w));
        }
    }
    if events.unreadable > 0 {
        any = true;
        let _ = writeln!(
            out,
            "<li>{} journal line(s) could not be read (a torn last line is what a crash leaves) and were skipped.</li>",
            events.unreadable
        );
    }
    out.push_str("</ul>\n");
    if !any {
        out.push_str("<p class=\"none\">None.</p>\n");
    }
    out.push_str("</section>\n");
    let _ = write!(
        out,
        "<footer>Generated by tfc {}. This file is self-contained: it loads nothing.</footer>\n\
         <script>{JS}</script>\n</body>\n</html>\n",
        esc(env!("CARGO_PKG_VERSION"))
    );
    out
}

/// The header: what ran, how it ended, what it cost.
fn header(out: &mut String, rec: &Value, status: &str) {
    let s = |k: &str| get_str(rec, k);
    let _ = writeln!(
        out,
        "<header><h1>{} <span class=\"pill st-{st}\">{st}</span></h1>\n<dl class=\"meta\">",
        esc(s("flow").unwrap_or("(unknown flow)")),
        st = esc(status)
    );
    let mut item = |name: &str, html: String| {
        let _ = writeln!(out, "<dt>{name}</dt><dd>{html}</dd>");
    };
    item(
        "run",
        format!("<code>{}</code>", esc(s("runId").unwrap_or("-"))),
    );
    if let Some(p) = s("parentRunId") {
        item("parent", format!("<code>{}</code>", esc(p)));
    }
    if let Some(l) = crate::run::runs::lineage(rec) {
        item("lineage", esc(&l));
    }
    // An exported run: its trace id, and a link to it when `[telemetry] trace_url` is set.
    if let Some(t) = s("traceId") {
        let link = s("traceUrl")
            .filter(|u| u.starts_with("https://") || u.starts_with("http://"))
            .map(|u| format!(" <a class=\"trace\" href=\"{}\">open the trace</a>", esc(u)))
            .unwrap_or_default();
        item("trace", format!("<code>{}</code>{link}", esc(t)));
    }
    let reason = s("reason")
        .map(|r| format!(" — {}", esc(r)))
        .unwrap_or_default();
    item("status", format!("{}{reason}", esc(status)));
    let args = rec
        .as_object()
        .and_then(|o| o.get("args"))
        .map(|a| cut_text(&a.to_json()).0.to_owned())
        .unwrap_or_default();
    item("args", format!("<code>{}</code>", esc(&args)));
    let (start, end) = (
        s("startedAt").and_then(parse_timestamp),
        s("endedAt").and_then(parse_timestamp),
    );
    let wall = match (start, end) {
        (Some(a), Some(b)) => duration(b.saturating_sub(a) as f64),
        _ => "-".into(),
    };
    item(
        "time",
        format!(
            "{} → {} ({wall})",
            esc(s("startedAt").unwrap_or("-")),
            esc(s("endedAt").unwrap_or("-"))
        ),
    );
    let usage = rec.as_object().and_then(|o| o.get("usage"));
    // Agent calls as every summary counts them (the end line of `tfc run`, `tfc runs`).
    let calls = record_calls(rec);
    item("calls", calls.to_string());
    let u = |k: &str| usage.and_then(|u| get_num(u, k)).unwrap_or(0.0);
    item(
        "tokens",
        format!(
            "{} in · {} out · {} cache read · {} cache write",
            int(u("input")),
            int(u("output")),
            int(u("cacheRead")),
            int(u("cacheWrite"))
        ),
    );
    item("cost", cost(usage));
    if let Some(before) = rec.as_object().and_then(|o| o.get("spentBefore"))
        && before.as_object().is_some()
    {
        item("spent before", cost(Some(before)));
    }
    item("tfc", esc(s("tfcVersion").unwrap_or("-")));
    out.push_str("</dl></header>\n");
}

/// A phase's start and end (epoch ms) from its record, else from the journal.
type TimesOf<'a> = dyn Fn(&str, &Value) -> (Option<u64>, Option<u64>) + 'a;

/// The table of phases.
fn table(out: &mut String, phases: &Map, doms: &[String], statuses: &[&str], times: &TimesOf) {
    out.push_str(
        "<section id=\"phases\"><h2>Phases</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th>phase</th><th>status</th>\
         <th>type</th><th>agent / model</th><th>attempts</th><th>duration</th><th>tokens in/out</th>\
         <th>cost</th><th>cache</th><th>skip reason / error</th></tr></thead>\n<tbody>\n",
    );
    for (i, (k, p)) in phases.iter().enumerate() {
        let (s, e) = times(k, p);
        let dur = match (s, e) {
            (Some(s), Some(e)) => duration(e.saturating_sub(s) as f64),
            _ => "-".into(),
        };
        let agent = match (get_str(p, "agent"), get_str(p, "model")) {
            (Some(a), Some(m)) => format!("{} / {}", esc(a), esc(m)),
            (Some(a), None) => esc(a),
            (None, Some(m)) => format!("/ {}", esc(m)),
            (None, None) => String::new(),
        };
        let usage = p.as_object().and_then(|o| o.get("usage"));
        let tok = |k: &str| usage.and_then(|u| get_num(u, k)).unwrap_or(0.0);
        let why = get_str(p, "error")
            .or_else(|| get_str(p, "skipReason"))
            .map(|t| esc(&super::dag::cut(t, 300)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<tr data-row=\"{k}\" data-status=\"{st}\"><td><a href=\"#ph-{dom}\">{k}</a></td>\
             <td><span class=\"pill st-{st}\">{st}</span></td><td>{ty}</td><td>{agent}</td><td class=\"r\">{att}</td>\
             <td class=\"r\">{dur}</td><td class=\"r\">{i} / {o}</td><td class=\"r\">{cost}</td><td>{cache}</td><td>{why}</td></tr>",
            k = esc(k),
            dom = esc(&doms[i]),
            st = esc(statuses[i]),
            ty = esc(get_str(p, "type").unwrap_or("")),
            att = int(get_num(p, "attempts").unwrap_or(0.0)),
            i = int(tok("input")),
            o = int(tok("output")),
            cost = cost(usage),
            cache = esc(get_str(p, "cacheHit").unwrap_or("")),
        );
    }
    out.push_str("</tbody></table></div></section>\n");
}

/// One phase's collapsed details: prompts from the journal, output, error, warnings, items.
fn details(
    out: &mut String,
    key: &str,
    p: &Value,
    dom: &str,
    status: &str,
    events: &Events,
    load: &dyn Fn(&str) -> Option<String>,
) {
    let attempts = int(get_num(p, "attempts").unwrap_or(0.0));
    let _ = writeln!(
        out,
        "<details class=\"ph\" id=\"ph-{}\" data-row=\"{k}\" data-status=\"{st}\"><summary><b>{k}</b> \
         <span class=\"pill st-{st}\">{st}</span> {} · {attempts} attempt(s)</summary>",
        esc(dom),
        esc(get_str(p, "type").unwrap_or("phase")),
        k = esc(key),
        st = esc(status),
    );
    if let Some(e) = get_str(p, "error") {
        let _ = writeln!(out, "<p class=\"err\">Error: {}</p>", esc(e));
    }
    if let Some(r) = get_str(p, "skipReason") {
        let _ = writeln!(out, "<p>Skipped: {}</p>", esc(r));
    }
    if let Some(g) = p.as_object().and_then(|o| o.get("gate")) {
        let verdict = get_str(g, "verdict").unwrap_or("?");
        let reason = get_str(g, "reason")
            .map(|r| format!(" — {}", esc(r)))
            .unwrap_or_default();
        let _ = writeln!(out, "<p>Gate verdict: <b>{}</b>{reason}</p>", esc(verdict));
    }
    if let Some(a) = p.as_object().and_then(|o| o.get("approval")) {
        let decision = get_str(a, "decision").unwrap_or("?");
        let by = get_str(a, "source")
            .map(|s| format!(" ({})", esc(s)))
            .unwrap_or_default();
        let note = get_str(a, "note")
            .map(|n| format!(" — {}", esc(n)))
            .unwrap_or_default();
        // SPEC §8.8: the deadline an approval carries (while pending: when it expires).
        let deadline = get_str(a, "expiresAt")
            .map(|t| format!(" · deadline <time>{}</time>", esc(t)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<p>Approval: <b>{}</b>{by}{note}{deadline}</p>",
            esc(decision)
        );
    }
    let calls = events.calls.get(key).map_or(&[][..], Vec::as_slice);
    if calls.is_empty() {
        out.push_str("<p class=\"none\">No agent call in the journal.</p>\n");
    }
    for c in calls.iter().take(PROMPTS_SHOWN) {
        let how = if c.ok {
            String::new()
        } else {
            format!(
                " — failed{}",
                c.error
                    .as_deref()
                    .map(|e| format!(": {}", esc(&super::dag::cut(e, 300))))
                    .unwrap_or_default()
            )
        };
        let _ = writeln!(
            out,
            "<h4>Prompt · {} · attempt {}{}{how}</h4>",
            esc(&c.node),
            c.attempt,
            if c.backend.is_empty() {
                String::new()
            } else {
                format!(" · {}", esc(&c.backend))
            }
        );
        match &c.prompt {
            Some(text) => pre(out, text),
            None => out.push_str("<p class=\"none\">The journal did not keep this prompt.</p>\n"),
        }
    }
    if calls.len() > PROMPTS_SHOWN {
        let _ = writeln!(
            out,
            "<p class=\"note\">… and {} more calls (see <code>tfc show</code>).</p>",
            calls.len() - PROMPTS_SHOWN
        );
    }
    out.push_str("<h4>Output</h4>\n");
    let output = get_str(p, "output").unwrap_or("");
    let file = get_str(p, "outputFile").filter(|f| safe_relative(f));
    match file.and_then(|f| load(f).map(|t| (f, t))) {
        Some((f, text)) if output.is_empty() => {
            let _ = writeln!(out, "<p class=\"note\">From <code>{}</code>.</p>", esc(f));
            pre(out, &text);
        }
        _ if output.is_empty() => out.push_str("<p class=\"none\">(no output)</p>\n"),
        _ => pre(out, output),
    }
    let warnings = p
        .as_object()
        .and_then(|o| o.get("warnings"))
        .and_then(Value::as_array);
    if let Some(ws) = warnings.filter(|w| !w.is_empty()) {
        out.push_str("<h4>Warnings</h4><ul>");
        for w in ws.iter().filter_map(Value::as_str) {
            let _ = write!(out, "<li>{}</li>", esc(w));
        }
        out.push_str("</ul>\n");
    }
    if let Some(items) = p
        .as_object()
        .and_then(|o| o.get("items"))
        .and_then(Value::as_array)
    {
        let failed: Vec<String> = items
            .iter()
            .filter(|i| get_str(i, "status") != Some("done"))
            .map(|i| {
                format!(
                    "#{} {}{}",
                    int(get_num(i, "index").unwrap_or(0.0)),
                    get_str(i, "status").unwrap_or("?"),
                    get_str(i, "error")
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default()
                )
            })
            .collect();
        let tally = ItemTally::count(
            items
                .iter()
                .map(|i| (get_str(i, "status").unwrap_or(""), get_str(i, "error"))),
        );
        let _ = write!(out, "<p>Items: {}", tally.text());
        if !failed.is_empty() {
            let _ = write!(
                out,
                ", not done: {}",
                esc(&super::dag::cut(&failed.join("; "), 2000))
            );
        }
        out.push_str("</p>\n");
    }
    out.push_str("</details>\n");
}

/// A `<pre>` block, cut at [`TEXT_LIMIT`] characters with a note.
fn pre(out: &mut String, text: &str) {
    let (shown, more) = cut_text(text);
    let _ = write!(out, "<pre>{}</pre>", esc(shown));
    if more > 0 {
        let _ = write!(
            out,
            "<p class=\"note\">[… {more} more characters not shown; the whole text is in the run's files]</p>"
        );
    }
    out.push('\n');
}

/// The first [`TEXT_LIMIT`] characters and how many were left out.
fn cut_text(text: &str) -> (&str, usize) {
    match text.char_indices().nth(TEXT_LIMIT) {
        Some((at, _)) => (&text[..at], text[at..].chars().count()),
        None => (text, 0),
    }
}

/// A path inside the run's folder: relative, no `..`.
fn safe_relative(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('/')
        && !p.starts_with('\\')
        && !p.contains(':')
        && p.split(['/', '\\']).all(|c| c != "..")
}

/// The badges, classes and tooltip of a DAG node from its phase record.
fn node_deco(p: Option<&Value>, dom: &str, run_status: &str) -> Deco {
    let mut d = Deco {
        href: Some(format!("#ph-{dom}")),
        ..Deco::default()
    };
    let Some(p) = p else {
        return d;
    };
    let st = phase_status(p, run_status);
    d.classes.push(format!("st-{st}"));
    d.notes.push(format!("status: {st}"));
    let attempts = get_num(p, "attempts").unwrap_or(0.0);
    if attempts > 1.0 {
        d.badges.push(format!("×{}", int(attempts)));
    }
    if let Some(c) = get_str(p, "cacheHit") {
        d.badges.push("cached".into());
        d.notes.push(format!("cache hit: {c}"));
    }
    if let Some(v) = p
        .as_object()
        .and_then(|o| o.get("gate"))
        .and_then(|g| get_str(g, "verdict"))
    {
        d.badges.push(super::dag::cut(v, 12));
    }
    if let Some(e) = get_str(p, "error") {
        d.notes.push(format!("error: {}", super::dag::cut(e, 200)));
    }
    if let Some(r) = get_str(p, "skipReason") {
        d.notes
            .push(format!("skipped: {}", super::dag::cut(r, 200)));
    }
    d
}

/// A phase's status as shown: `running` phases of an interrupted run count as not started.
fn phase_status<'a>(p: &'a Value, run_status: &str) -> &'a str {
    match get_str(p, "status") {
        Some("running") if run_status == "interrupted" => "pending",
        Some(s @ ("pending" | "running" | "done" | "failed" | "skipped")) => s,
        _ => "pending",
    }
}

fn get_str<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.as_object()?.get(k)?.as_str()
}

fn get_num(v: &Value, k: &str) -> Option<f64> {
    match v.as_object()?.get(k)? {
        Value::Number(n) if n.is_finite() => Some(*n),
        _ => None,
    }
}

/// `$0.0410`, or `-` when unknown.
fn cost(usage: Option<&Value>) -> String {
    match usage.and_then(|u| get_num(u, "costUSD")) {
        Some(c) => format!("${c:.4}"),
        None => "-".into(),
    }
}

/// A count with thousands separators.
fn int(v: f64) -> String {
    let n = v.max(0.0).round() as u64;
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The page's style (the DAG's own style is appended).
const CSS: &str = "\
:root{color-scheme:light}\
body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:0 auto;padding:16px 24px;max-width:1400px;color:#123;background:#fff;font-size:14px}\
h1{font-size:22px;margin:4px 0 12px}h2{font-size:17px;margin:28px 0 10px;border-bottom:1px solid #dde;padding-bottom:4px}h4{margin:12px 0 4px;font-size:13px}\
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:3px 14px;margin:0}dl.meta dt{color:#667}dl.meta dd{margin:0}\
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}\
pre{background:#f6f7f9;border:1px solid #e3e5ea;padding:8px;white-space:pre-wrap;word-break:break-word;max-height:480px;overflow:auto;margin:4px 0}\
.scroll{overflow:auto;max-width:100%}\
.pill{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;background:#eee;color:#333;vertical-align:middle}\
.pill.st-done,.pill.st-completed{background:#dcf5dc;color:#145214}.pill.st-failed{background:#fbd5d5;color:#8a0000}\
.pill.st-skipped{background:#eee;color:#666}.pill.st-running{background:#dbe9ff;color:#123f8a}\
.pill.st-paused,.pill.st-interrupted,.pill.st-blocked{background:#fff1c9;color:#6b4d00}\
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #eceef2;padding:3px 8px;text-align:left;vertical-align:top}\
th{background:#f6f7f9;position:sticky;top:0}td.r{text-align:right;white-space:nowrap}\
.tl{font-size:12px}.tlr{display:flex;align-items:center;min-height:16px}.tlr .lb{width:240px;box-sizing:border-box;flex:none;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;padding-right:8px}\
.tlr.sub .lb{padding-left:16px;color:#667}.tlr .tr{position:relative;flex:1;height:14px;border-left:1px solid #dde}\
.tlr.ax .tr{height:16px;border-left:none}.tick{position:absolute;top:0;color:#889;font-size:11px;white-space:nowrap}\
.bar{position:absolute;top:2px;height:10px;min-width:2px;border-radius:2px;background:#9ab}\
.bar.st-done{background:#4a9a4a}.bar.st-failed{background:#c33}.bar.st-skipped{background:#bbb}.bar.st-running,.bar.st-pending{background:#5b8bd9}\
.bar.call{height:8px;top:3px;opacity:.75}\
details.ph{border:1px solid #e3e5ea;border-radius:4px;margin:4px 0;padding:2px 10px}details.ph[open]{padding-bottom:8px}\
details.ph summary{cursor:pointer;padding:3px 0}\
.none,.note{color:#778}.err{color:#a00}\
#filters{margin:18px 0 0;position:sticky;top:0;background:#fff;padding:6px 0;z-index:1}\
footer{margin:32px 0 8px;color:#889;font-size:12px}";

/// The only script: filter rows and details by text and status; open or close all details;
/// open the details a link (from the DAG, the timeline or the table) jumps to.
const JS: &str = "(function(){\
var q=document.getElementById('q'),s=document.getElementById('qs');\
var rows=document.querySelectorAll('[data-row]');\
function f(){var t=q.value.toLowerCase(),st=s.value;\
for(var i=0;i<rows.length;i++){var r=rows[i];\
var ok=(!st||r.getAttribute('data-status')===st)&&(!t||r.getAttribute('data-row').toLowerCase().indexOf(t)>=0);\
r.style.display=ok?'':'none';}}\
q.addEventListener('input',f);s.addEventListener('change',f);\
function all(o){var d=document.querySelectorAll('details.ph');for(var i=0;i<d.length;i++){d[i].open=o;}}\
document.getElementById('open-all').addEventListener('click',function(){all(true);});\
document.getElementById('close-all').addEventListener('click',function(){all(false);});\
function reveal(){var h=location.hash.slice(1),d=h&&document.getElementById(h);if(d&&d.tagName==='DETAILS'){d.open=true;}}\
window.addEventListener('hashchange',reveal);reveal();\
document.getElementById('filters').hidden=false;\
document.documentElement.setAttribute('data-ready','1');\
})();";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_counts() {
        assert_eq!(duration(850.0), "850 ms");
        assert_eq!(duration(12_340.0), "12.3 s");
        assert_eq!(duration(185_000.0), "3 min 05 s");
        assert_eq!(duration(7_440_000.0), "2 h 04 min");
        assert_eq!(int(1234567.0), "1,234,567");
        assert_eq!(int(12.0), "12");
    }

    #[test]
    fn long_texts_are_cut_with_the_count() {
        let text = "é".repeat(TEXT_LIMIT + 5);
        let (shown, more) = cut_text(&text);
        assert_eq!((shown.chars().count(), more), (TEXT_LIMIT, 5));
        let mut out = String::new();
        pre(&mut out, &text);
        assert!(
            out.contains("[… 5 more characters not shown"),
            "{}",
            &out[out.len() - 200..]
        );
    }

    #[test]
    fn a_record_without_def_or_journal_still_reports() {
        let rec = crate::value::parse_json(
            r#"{"runId": "r-1", "flow": "f", "status": "failed", "reason": "boom <x>",
                "phases": {"a": {"status": "failed", "error": "bad <thing>", "attempts": 1,
                                 "outputFile": "../../etc/passwd"}}}"#,
        )
        .expect("json");
        let read = std::cell::Cell::new(0);
        let load = |_: &str| {
            read.set(read.get() + 1);
            Some("secret".to_owned())
        };
        let page = html(&Input {
            record: &rec,
            journal: "",
            status: None,
            load: &load,
        });
        assert!(page.contains("no readable flow definition"));
        assert!(page.contains("<dd>failed — boom &lt;x&gt;</dd>"));
        assert!(page.contains("Error: bad &lt;thing&gt;"));
        assert!(page.contains("No phase has started."));
        assert!(page.contains("<tr data-row=\"a\" data-status=\"failed\">"));
        assert_eq!(read.get(), 0, "a path out of the run folder is never read");
        assert!(!page.contains("secret"));
    }

    #[test]
    fn an_approval_shows_its_decision_and_deadline() {
        let rec = crate::value::parse_json(
            r#"{"runId": "r-1", "flow": "f", "status": "paused",
                "phases": {"ship": {"status": "pending", "type": "approval", "attempts": 0,
                  "approval": {"decision": "pending", "expiresAt": "2026-12-07T12:00:00.000Z"}},
                           "gate": {"status": "done", "type": "approval", "attempts": 0,
                  "approval": {"decision": "reject", "source": "timeout", "note": "no <decision>"}}}}"#,
        )
        .expect("json");
        let page = html(&Input {
            record: &rec,
            journal: "",
            status: None,
            load: &|_: &str| None,
        });
        assert!(
            page.contains(
                "<p>Approval: <b>pending</b> · deadline <time>2026-12-07T12:00:00.000Z</time></p>"
            ),
            "{page}"
        );
        assert!(page.contains("<p>Approval: <b>reject</b> (timeout) — no &lt;decision&gt;</p>"));
    }

    #[test]
    fn an_exported_run_shows_its_trace_and_a_safe_link() {
        let page = |extra: &str| {
            let rec = crate::value::parse_json(&format!(
                r#"{{"runId": "r-1", "flow": "f", "status": "completed",
                    "traceId": "4bf92f3577b34da6a3ce929d0e0e4736"{extra}}}"#
            ))
            .expect("json");
            html(&Input {
                record: &rec,
                journal: "",
                status: None,
                load: &|_: &str| None,
            })
        };
        let linked = page(
            r#", "traceUrl": "http://localhost:16686/trace/4bf92f3577b34da6a3ce929d0e0e4736?a=1&b=2""#,
        );
        assert!(linked.contains("<dt>trace</dt><dd><code>4bf92f3577b34da6a3ce929d0e0e4736</code>"));
        assert!(linked.contains(
            r#"<a class="trace" href="http://localhost:16686/trace/4bf92f3577b34da6a3ce929d0e0e4736?a=1&amp;b=2">open the trace</a>"#
        ));
        let unsafe_link = page(r#", "traceUrl": "javascript:alert(1)""#);
        assert!(unsafe_link.contains("<dt>trace</dt>"));
        assert!(!unsafe_link.contains("javascript:"));
    }

    #[test]
    fn only_paths_inside_the_run_are_read() {
        assert!(safe_relative("outputs/phases/a.txt"));
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "C:\\x", "a\\..\\b"] {
            assert!(!safe_relative(bad), "{bad}");
        }
    }
}
