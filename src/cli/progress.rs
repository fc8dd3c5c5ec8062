//! Progress on stderr while a flow runs.
//!
//! On a terminal (with colour allowed): each phase that ends prints one permanent line (its
//! status, time, usage, items, loop iterations, gate verdict and rework rounds, its whole
//! error), and below them a live area lists the running phases with their elapsed time,
//! redrawn at least every 200 ms whether or not an event arrives, so a long agent call never
//! looks hung. Otherwise: one plain line per transition, greppable (`✓ id done …`,
//! `▶ id running [iteration 2/5]`, `warning: id: …`).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::say;
use tfc::run::machine::Facts;
use tfc::run::{ProgressNote, ProgressSink};

/// How often the live area is redrawn without events.
const TICK: Duration = Duration::from_millis(200);

/// The live view of this process, when one is drawn (for messages printed above it).
static LIVE: OnceLock<Arc<Mutex<Live>>> = OnceLock::new();

/// The progress display of one `tfc run` / `tfc resume`.
pub struct View {
    sink: ProgressSink,
    live: Option<(Arc<Mutex<Live>>, Arc<AtomicBool>)>,
}

impl View {
    /// Live when stderr is a terminal and colour is allowed, plain lines otherwise. `quiet`:
    /// no run-time warnings.
    pub fn start(color: bool, quiet: bool) -> View {
        if std::io::stderr().is_terminal() && color {
            let mut live = Live::new();
            // Approvals may prompt on this terminal: the live area keeps out of their way.
            live.prompts = std::io::stdin().is_terminal();
            let view = Arc::new(Mutex::new(live));
            let _ = LIVE.set(view.clone());
            let stop = Arc::new(AtomicBool::new(false));
            let (v, s) = (view.clone(), stop.clone());
            std::thread::spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    if let Ok(mut v) = v.lock()
                        && !v.closed
                        && v.rows.iter().any(|r| r.status == "running")
                    {
                        v.draw();
                    }
                }
            });
            let sink_view = view.clone();
            let sink = ProgressSink(Arc::new(move |n: &ProgressNote<'_>| {
                if let Ok(mut v) = sink_view.lock() {
                    if n.status == "warning" {
                        if !quiet {
                            v.message(&warning_line(n));
                        }
                    } else {
                        v.update(n);
                    }
                    v.draw();
                }
            }));
            View {
                sink,
                live: Some((view, stop)),
            }
        } else {
            let sink = ProgressSink(Arc::new(move |n: &ProgressNote<'_>| {
                // Item-by-item fan-out progress is for the live view; plain output keeps to
                // transitions (and a loop's iterations, a gate's verdicts and reworks).
                if n.status == "running" && n.facts.items.is_some() {
                    return;
                }
                if n.status == "warning" {
                    if !quiet {
                        sayln!("{}", warning_line(n));
                    }
                } else {
                    sayln!("{}", plain_line(n));
                }
            }));
            View { sink, live: None }
        }
    }

    /// The sink the run reports to.
    pub fn sink(&self) -> ProgressSink {
        self.sink.clone()
    }

    /// The run ended: stop redrawing and erase the live area (ended phases keep their lines).
    pub fn finish(&self) {
        if let Some((view, stop)) = &self.live {
            stop.store(true, Ordering::Relaxed);
            if let Ok(mut v) = view.lock() {
                v.draw();
                v.erase();
                v.closed = true;
            }
        }
    }
}

/// Print `text` (one or more lines) on stderr, above the live area when one is drawn.
pub fn message(text: &str) {
    if let Some(view) = LIVE.get()
        && let Ok(mut v) = view.lock()
        && !v.closed
    {
        v.message(text);
        v.draw();
        return;
    }
    sayln!("{text}");
}

/// `warning: <phase>: <text>`, continuation lines indented, nothing cut.
pub fn warning_line(n: &ProgressNote<'_>) -> String {
    format!(
        "warning: {}: {}",
        n.phase,
        indent(n.detail.unwrap_or("")).trim_end()
    )
}

/// Lines after the first indented by two spaces (a multi-line error under its phase line).
fn indent(text: &str) -> String {
    text.replace('\n', "\n  ")
}

fn mark(status: &str) -> &'static str {
    match status {
        "running" => "▶",
        "done" => "✓",
        "failed" => "✗",
        "skipped" => "–",
        _ => "…",
    }
}

fn usage(attempts: u32, tokens: u64, cost: Option<f64>) -> String {
    let mut s = format!("{attempts} call{}", if attempts == 1 { "" } else { "s" });
    if tokens > 0 {
        s.push_str(&format!(", {tokens} tokens"));
    }
    if let Some(c) = cost {
        s.push_str(&format!(", ${c:.4}"));
    }
    s
}

/// What the facts of a phase say, joined by ` · `: `3/10 items` (an ended phase: how its
/// items ended, `2/3 items, 1 aborted`, as [`tfc::run::summary::ItemTally`] says), `iteration 2/5`,
/// `3/5 iterations, stopped: until`, `BLOCK: <reason>`, `PASS`, `rework 1/3`. `running`:
/// the phase has not ended (items are drawn as a bar by the live view, not listed here).
fn facts_text(f: &Facts, running: bool, with_items: bool) -> String {
    let mut parts = Vec::new();
    if with_items {
        match (&f.tally, f.items) {
            (Some(tally), _) => parts.push(tally.text()),
            (None, Some((ended, total))) => parts.push(format!("{ended}/{total} items")),
            (None, None) => {}
        }
    }
    if let Some((i, max)) = f.iteration {
        match f.stop {
            Some(stop) if !running => parts.push(format!(
                "{i}/{max} iteration{}, stopped: {stop}",
                if max == 1 { "" } else { "s" }
            )),
            _ => parts.push(format!("iteration {i}/{max}")),
        }
    }
    match (f.verdict, &f.reason) {
        (Some("block"), Some(r)) => parts.push(format!("BLOCK: {}", one_line(r))),
        (Some("block"), None) => parts.push("BLOCK".to_owned()),
        (Some(_), _) => parts.push("PASS".to_owned()),
        (None, _) => {}
    }
    if let Some((round, max)) = f.rework {
        parts.push(format!("rework {round}/{max}"));
    }
    parts.join(" · ")
}

/// Whitespace runs (newlines included) as one space.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `✓ audit done (4 calls, 1200 tokens) [3/5 iterations, stopped: until]: detail`.
pub fn plain_line(n: &ProgressNote<'_>) -> String {
    let mut line = format!("{} {} {}", mark(n.status), n.phase, n.status);
    let running = n.status == "running";
    if !running && n.status != "skipped" && (n.attempts > 1 || n.tokens > 0) {
        line.push_str(&format!(" ({})", usage(n.attempts, n.tokens, n.cost_usd)));
    }
    let facts = facts_text(n.facts, running, !running);
    if !facts.is_empty() {
        line.push_str(&format!(" [{facts}]"));
    }
    if let Some(d) = n.detail {
        line.push_str(": ");
        if n.status == "failed" {
            // The whole error: a contract violation's reasons are on the lines after the first.
            line.push_str(indent(d).trim_end());
        } else {
            line.push_str(d.lines().next().unwrap_or(""));
        }
    }
    line
}

struct Row {
    phase: String,
    status: String,
    started: Instant,
    ended: Option<Instant>,
    attempts: u32,
    tokens: u64,
    cost: Option<f64>,
    detail: Option<String>,
    facts: Facts,
    /// Its permanent line is printed (it ended).
    printed: bool,
}

struct Live {
    began: Instant,
    rows: Vec<Row>,
    /// Lines of the live area on screen now.
    drawn: usize,
    closed: bool,
    /// Approvals may ask on the terminal: while one runs, no live area is drawn.
    prompts: bool,
}

impl Live {
    fn new() -> Live {
        Live {
            began: Instant::now(),
            rows: Vec::new(),
            drawn: 0,
            closed: false,
            prompts: false,
        }
    }

    fn update(&mut self, n: &ProgressNote<'_>) {
        let row = match self.rows.iter().position(|r| r.phase == n.phase) {
            Some(i) => &mut self.rows[i],
            None => {
                self.rows.push(Row {
                    phase: n.phase.to_owned(),
                    status: String::new(),
                    started: Instant::now(),
                    ended: None,
                    attempts: 0,
                    tokens: 0,
                    cost: None,
                    detail: None,
                    facts: Facts::default(),
                    printed: false,
                });
                self.rows.last_mut().expect("just pushed")
            }
        };
        if row.status != "running" && n.status == "running" && row.printed {
            // Started again (a gate's rework re-runs it): a new line when it ends.
            row.printed = false;
            row.ended = None;
            row.started = Instant::now();
        }
        row.status = n.status.to_owned();
        if n.status != "running" {
            row.ended.get_or_insert_with(Instant::now);
            row.detail = n.detail.map(str::to_owned);
            row.facts = n.facts.clone();
        } else {
            // A running note tells only what changed: items, or the kind's own facts.
            row.facts.approval |= n.facts.approval;
            if n.facts.items.is_some() {
                row.facts.items = n.facts.items;
            }
            if n.facts.iteration.is_some() || n.facts.verdict.is_some() || n.facts.rework.is_some()
            {
                row.facts = Facts {
                    items: row.facts.items,
                    ..n.facts.clone()
                };
            }
        }
        row.attempts = row.attempts.max(n.attempts);
        row.tokens = row.tokens.max(n.tokens);
        row.cost = n.cost_usd.or(row.cost);
    }

    /// Erase the live area (the cursor goes back to where it began).
    fn erase(&mut self) {
        if self.drawn > 0 {
            say(format!("\x1b[{}A\x1b[J", self.drawn));
            self.drawn = 0;
        }
    }

    /// Print `text` above the live area: the area is erased, the text written where it
    /// began, and the next draw puts the area back below it.
    fn message(&mut self, text: &str) {
        self.erase();
        say(format!("{text}\n"));
    }

    fn draw(&mut self) {
        let (width, height) = size();
        let mut out = String::new();
        // Ended phases: their lines stay.
        for r in self
            .rows
            .iter_mut()
            .filter(|r| !r.printed && r.status != "running")
        {
            r.printed = true;
            out.push_str(&ended_line(r, width));
        }
        let running: Vec<&Row> = self.rows.iter().filter(|r| r.status == "running").collect();
        let asking = self.prompts && running.iter().any(|r| r.facts.approval);
        let mut lines = 0;
        if !running.is_empty() && !asking {
            let room = height.saturating_sub(2).max(1);
            for r in running.iter().take(room) {
                out.push_str(&cut(&running_line(r), width));
                out.push('\n');
                lines += 1;
            }
            if running.len() > room {
                out.push_str(&cut(
                    &format!("  … and {} more running", running.len() - room),
                    width,
                ));
                out.push('\n');
                lines += 1;
            }
            let ended = self.rows.iter().filter(|r| r.status != "running").count();
            let (calls, tokens) = totals(&self.rows);
            let footer = cut(
                &format!(
                    "── {:.1}s · {} running · {ended} ended · {calls} call{} · {tokens} tokens",
                    self.began.elapsed().as_secs_f64(),
                    running.len(),
                    if calls == 1 { "" } else { "s" },
                ),
                width,
            );
            out.push_str(&format!("\x1b[2m{footer}\x1b[0m"));
            out.push('\n');
            lines += 1;
        }
        if out.is_empty() && self.drawn == 0 {
            // Nothing to erase or print (an approval prompt may be waiting for its answer).
            return;
        }
        let up = if self.drawn > 0 {
            format!("\x1b[{}A", self.drawn)
        } else {
            String::new()
        };
        self.drawn = lines;
        say(format!("{up}\x1b[J{out}"));
    }
}

/// The terminal's (columns, rows); 100×40 when unknown.
fn size() -> (usize, usize) {
    match terminal_size::terminal_size_of(std::io::stderr()) {
        Some((w, h)) if w.0 > 0 && h.0 > 0 => (w.0 as usize, h.0 as usize),
        _ => (100, 40),
    }
}

/// `text` cut to `width - 1` chars (`…` marks a cut), so no line wraps.
fn cut(text: &str, width: usize) -> String {
    let max = width.saturating_sub(1).max(20);
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(max - 1).collect();
    s.push('…');
    s
}

fn elapsed(r: &Row) -> f64 {
    r.ended
        .unwrap_or_else(Instant::now)
        .duration_since(r.started)
        .as_secs_f64()
}

/// `▶ audit        12.3s  [####......] 3/10  iteration 2/5  2 calls`.
fn running_line(r: &Row) -> String {
    let mut line = format!("{} {:<24} {:>7.1}s", mark("running"), r.phase, elapsed(r));
    if let Some((done, total)) = r.facts.items {
        let filled = (done * 20).checked_div(total).unwrap_or(0).min(20);
        line.push_str(&format!(
            "  [{}{}] {done}/{total}",
            "#".repeat(filled),
            ".".repeat(20 - filled)
        ));
    }
    let facts = facts_text(&r.facts, true, false);
    if !facts.is_empty() {
        line.push_str(&format!("  {facts}"));
    }
    if r.attempts > 0 {
        line.push_str(&format!("  {}", usage(r.attempts, r.tokens, r.cost)));
    }
    line
}

/// The calls and tokens of the run so far, summed over its rows: an ended sub-flow phase's
/// row counts its child's phases (as its record does), so the rows under it are left out.
fn totals(rows: &[Row]) -> (u32, u64) {
    let ended: std::collections::HashSet<&str> = rows
        .iter()
        .filter(|r| r.status != "running")
        .map(|r| r.phase.as_str())
        .collect();
    let counted = |r: &&Row| {
        let p = r.phase.as_str();
        !p.match_indices('/').any(|(k, _)| ended.contains(&p[..k]))
    };
    rows.iter().filter(counted).fold((0, 0), |(c, t), r| {
        (c.saturating_add(r.attempts), t.saturating_add(r.tokens))
    })
}

/// The permanent line of an ended phase; a failed phase's whole error follows, one line of
/// it per line, each cut to the terminal's width.
fn ended_line(r: &Row, width: usize) -> String {
    let mut head = format!(
        "{} {} {} {:.1}s",
        mark(&r.status),
        r.phase,
        r.status,
        elapsed(r)
    );
    if r.status != "skipped" && (r.attempts > 0 || r.tokens > 0) {
        head.push_str(&format!(" ({})", usage(r.attempts, r.tokens, r.cost)));
    }
    let facts = facts_text(&r.facts, false, true);
    if !facts.is_empty() {
        head.push_str(&format!(" [{facts}]"));
    }
    let mut out = String::new();
    match r.detail.as_deref().map(str::trim_end) {
        Some(d) if r.status == "failed" && d.contains('\n') => {
            out.push_str(&cut(&head, width));
            out.push('\n');
            for l in d.lines() {
                out.push_str(&cut(&format!("    {l}"), width));
                out.push('\n');
            }
        }
        Some(d) => {
            head.push_str(": ");
            head.push_str(d.lines().next().unwrap_or(""));
            out.push_str(&cut(&head, width));
            out.push('\n');
        }
        None => {
            out.push_str(&cut(&head, width));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note<'a>(phase: &'a str, status: &'a str, facts: &'a Facts) -> ProgressNote<'a> {
        ProgressNote {
            phase,
            status,
            detail: None,
            attempts: 0,
            tokens: 0,
            cost_usd: None,
            facts,
        }
    }

    #[test]
    fn plain_lines() {
        let none = Facts::default();
        let n = ProgressNote {
            attempts: 4,
            tokens: 1200,
            cost_usd: Some(0.0123),
            ..note("audit", "done", &none)
        };
        assert_eq!(
            plain_line(&n),
            "✓ audit done (4 calls, 1200 tokens, $0.0123)"
        );
        let n = ProgressNote {
            detail: Some("Upstream dependency not satisfied"),
            ..note("b", "skipped", &none)
        };
        assert_eq!(
            plain_line(&n),
            "– b skipped: Upstream dependency not satisfied"
        );
        let n = ProgressNote {
            detail: Some("Output contract violated:\n- $.a: required key is missing\n"),
            attempts: 1,
            ..note("score", "failed", &none)
        };
        assert_eq!(
            plain_line(&n),
            "✗ score failed: Output contract violated:\n  - $.a: required key is missing"
        );
        let n = ProgressNote {
            status: "warning",
            ..n
        };
        assert_eq!(
            warning_line(&n),
            "warning: score: Output contract violated:\n  - $.a: required key is missing"
        );
    }

    #[test]
    fn facts_in_plain_lines() {
        let looping = Facts {
            iteration: Some((2, 5)),
            ..Facts::default()
        };
        assert_eq!(
            plain_line(&note("fix", "running", &looping)),
            "▶ fix running [iteration 2/5]"
        );
        let stopped = Facts {
            iteration: Some((3, 5)),
            stop: Some("converged"),
            ..Facts::default()
        };
        assert_eq!(
            plain_line(&note("fix", "done", &stopped)),
            "✓ fix done [3/5 iterations, stopped: converged]"
        );
        let blocked = Facts {
            verdict: Some("block"),
            reason: Some("tests\nfail".into()),
            rework: Some((1, 3)),
            ..Facts::default()
        };
        assert_eq!(
            plain_line(&note("review", "running", &blocked)),
            "▶ review running [BLOCK: tests fail · rework 1/3]"
        );
        let items = Facts {
            items: Some((10, 10)),
            ..Facts::default()
        };
        assert_eq!(
            plain_line(&note("each", "done", &items)),
            "✓ each done [10/10 items]"
        );
        // An aborted item is not one of the items done.
        let aborted = Facts {
            items: Some((3, 3)),
            tally: Some(tfc::run::summary::ItemTally {
                total: 3,
                done: 2,
                aborted: 1,
                ..Default::default()
            }),
            ..Facts::default()
        };
        assert_eq!(
            plain_line(&note("each", "failed", &aborted)),
            "✗ each failed [2/3 items, 1 aborted]"
        );
    }

    #[test]
    fn live_rows_cut_and_show_whole_errors() {
        let facts = Facts {
            items: Some((3, 10)),
            ..Facts::default()
        };
        let mut live = Live::new();
        live.update(&ProgressNote {
            detail: Some("3/10 items"),
            ..note("each", "running", &facts)
        });
        let line = running_line(&live.rows[0]);
        assert!(line.contains("[######..............] 3/10"), "{line}");
        let none = Facts::default();
        live.update(&ProgressNote {
            detail: Some("first\nsecond line\nthird"),
            attempts: 1,
            ..note("each", "failed", &none)
        });
        let text = ended_line(&live.rows[0], 30);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[1], "    first");
        assert_eq!(lines[3], "    third");
        assert!(lines.iter().all(|l| l.chars().count() <= 29), "{text}");
        assert_eq!(cut(&"x".repeat(50), 30).chars().count(), 29);
    }

    #[test]
    fn an_ended_sub_flow_counts_its_child_phases_once() {
        let none = Facts::default();
        let mut live = Live::new();
        let tell = |live: &mut Live, phase: &str, status: &str, attempts: u32, tokens: u64| {
            live.update(&ProgressNote {
                attempts,
                tokens,
                ..note(phase, status, &none)
            });
        };
        tell(&mut live, "a", "done", 1, 10);
        tell(&mut live, "sub", "running", 0, 0);
        tell(&mut live, "sub/x", "done", 1, 20);
        tell(&mut live, "sub/y", "running", 1, 5);
        // While the sub-flow runs, its phases count.
        assert_eq!(totals(&live.rows), (3, 35));
        tell(&mut live, "sub/y", "done", 1, 30);
        // Ended, its row carries its child's calls and tokens: they count once.
        tell(&mut live, "sub", "done", 2, 50);
        assert_eq!(totals(&live.rows), (3, 60));
    }
}
