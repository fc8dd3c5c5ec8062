//! Progress on stderr while a flow runs: on a terminal, a live table of the DAG (status,
//! elapsed time, calls, tokens and cost per phase, fan-out bars), redrawn in place; otherwise
//! one plain line per phase transition.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::say;
use tfc::run::{ProgressNote, ProgressSink};

/// The sink for `tfc run`: live when stderr is a terminal (and colour is allowed), plain
/// lines otherwise.
pub fn sink(color: bool) -> ProgressSink {
    if std::io::stderr().is_terminal() && color {
        let view = Arc::new(Mutex::new(Live::default()));
        ProgressSink(Arc::new(move |n: &ProgressNote<'_>| {
            if let Ok(mut v) = view.lock() {
                if n.status == "warning" {
                    v.message(&warning_line(n));
                } else {
                    v.update(n);
                }
                v.draw();
            }
        }))
    } else {
        ProgressSink(Arc::new(|n: &ProgressNote<'_>| {
            // Fan-out progress is for the live view; plain output keeps to transitions.
            if n.status == "running" && n.detail.is_some() {
                return;
            }
            if n.status == "warning" {
                sayln!("{}", warning_line(n));
            } else {
                sayln!("{}", plain_line(n));
            }
        }))
    }
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

/// `✓ audit done (4 calls, 1200 tokens): detail`.
pub fn plain_line(n: &ProgressNote<'_>) -> String {
    let mut line = format!("{} {} {}", mark(n.status), n.phase, n.status);
    if n.status != "running" && n.status != "skipped" && (n.attempts > 1 || n.tokens > 0) {
        line.push_str(&format!(" ({})", usage(n.attempts, n.tokens, n.cost_usd)));
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
    /// (done, total) items of a fan-out.
    items: Option<(usize, usize)>,
}

#[derive(Default)]
struct Live {
    rows: Vec<Row>,
    drawn: usize,
}

impl Live {
    fn update(&mut self, n: &ProgressNote<'_>) {
        let items = n.detail.and_then(parse_items);
        let row = match self.rows.iter_mut().position(|r| r.phase == n.phase) {
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
                    items: None,
                });
                self.rows.last_mut().expect("just pushed")
            }
        };
        row.status = n.status.to_owned();
        if n.status != "running" {
            row.ended.get_or_insert_with(Instant::now);
            row.detail = n.detail.map(|d| d.lines().next().unwrap_or("").to_owned());
        }
        if items.is_some() {
            row.items = items;
        }
        row.attempts = row.attempts.max(n.attempts);
        row.tokens = row.tokens.max(n.tokens);
        row.cost = n.cost_usd.or(row.cost);
    }

    /// Print `text` above the table: the table is erased, the text written where it began,
    /// and the next draw puts the table back below it.
    fn message(&mut self, text: &str) {
        let mut out = String::new();
        if self.drawn > 0 {
            out.push_str(&format!("\x1b[{}A", self.drawn));
        }
        out.push_str("\x1b[J");
        out.push_str(text);
        out.push('\n');
        self.drawn = 0;
        say(out);
    }

    fn draw(&mut self) {
        let width = 28;
        let mut out = String::new();
        if self.drawn > 0 {
            out.push_str(&format!("\x1b[{}A", self.drawn));
        }
        for r in &self.rows {
            let elapsed = r
                .ended
                .unwrap_or_else(Instant::now)
                .duration_since(r.started);
            let mut line = format!(
                "\x1b[2K{} {:<width$} {:>7.1}s",
                mark(&r.status),
                r.phase,
                elapsed.as_secs_f64()
            );
            if let Some((done, total)) = r.items.filter(|_| r.status == "running") {
                let filled = (done * 20).checked_div(total).unwrap_or(0);
                line.push_str(&format!(
                    "  [{}{}] {done}/{total}",
                    "#".repeat(filled),
                    ".".repeat(20 - filled)
                ));
            }
            if r.attempts > 0 && r.status != "running" {
                line.push_str(&format!("  {}", usage(r.attempts, r.tokens, r.cost)));
            }
            if let Some(d) = &r.detail {
                let short: String = d.chars().take(60).collect();
                line.push_str(&format!("  {short}"));
            }
            out.push_str(&line);
            out.push('\n');
        }
        self.drawn = self.rows.len();
        say(out);
    }
}

/// `3/10 items` → (3, 10).
fn parse_items(detail: &str) -> Option<(usize, usize)> {
    let rest = detail.strip_suffix(" items")?;
    let (a, b) = rest.split_once('/')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines() {
        let n = ProgressNote {
            phase: "audit",
            status: "done",
            detail: None,
            attempts: 4,
            tokens: 1200,
            cost_usd: Some(0.0123),
        };
        assert_eq!(
            plain_line(&n),
            "✓ audit done (4 calls, 1200 tokens, $0.0123)"
        );
        let n = ProgressNote {
            phase: "b",
            status: "skipped",
            detail: Some("Upstream dependency not satisfied"),
            attempts: 0,
            tokens: 0,
            cost_usd: None,
        };
        assert_eq!(
            plain_line(&n),
            "– b skipped: Upstream dependency not satisfied"
        );
        let n = ProgressNote {
            phase: "score",
            status: "failed",
            detail: Some("Output contract violated:\n- $.a: required key is missing\n"),
            attempts: 1,
            tokens: 0,
            cost_usd: None,
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
        assert_eq!(parse_items("3/10 items"), Some((3, 10)));
        assert_eq!(parse_items("boom"), None);
    }
}
