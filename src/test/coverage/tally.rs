//! The coverage report: the hits of every test of a flow merged (all test files naming the
//! same flow count together), as a table, as JSON, and as a diagnostic per unreached outcome.

use std::fmt::Write;
use std::path::PathBuf;

use crate::diag::render::{MAX_SHOWN, render, span_json};
use crate::diag::{Code, Diagnostic};
use crate::source::Source;
use crate::value::{Map, Value};

use super::super::FileReport;
use super::{Kind, Point, outcomes};

/// One outcome and the tests that reached it.
#[derive(Clone, Debug)]
pub struct Row {
    /// The outcome.
    pub point: Point,
    /// The tests that reached it, in file and test order.
    pub tests: Vec<String>,
}

/// The coverage of one flow over all its tests.
#[derive(Clone, Debug)]
pub struct Coverage {
    /// The flow file (spans of the outcomes point into it).
    pub source: Source,
    /// The tests counted.
    pub tests: usize,
    /// Every outcome of the flow, in flow order.
    pub rows: Vec<Row>,
}

impl Coverage {
    /// Outcomes reached by some test.
    pub fn reached(&self) -> usize {
        self.rows.iter().filter(|r| !r.tests.is_empty()).count()
    }

    /// Outcomes in all.
    pub fn total(&self) -> usize {
        self.rows.len()
    }

    /// `outcomes 14/18 (78%)`: the percentage is rounded, but never up to 100 while an
    /// outcome is unreached.
    pub fn count_line(&self) -> String {
        let (reached, total) = (self.reached(), self.total());
        if total == 0 {
            return "outcomes 0/0 (nothing to cover)".into();
        }
        let mut percent = (reached as f64 * 100.0 / total as f64).round() as usize;
        if reached < total {
            percent = percent.min(99);
        }
        format!("outcomes {reached}/{total} ({percent}%)")
    }

    /// A warning for each outcome no test reaches, at its place in the flow file.
    pub fn unreached(&self) -> Vec<Diagnostic> {
        self.rows
            .iter()
            .filter(|r| r.tests.is_empty())
            .map(|r| {
                let p = &r.point;
                Diagnostic::new(
                    Code::TestOutcomeNotReached,
                    format!(
                        "no test reaches outcome '{}' (phase '{}': {})",
                        p.id, p.phase, p.label
                    ),
                )
                .at(p.span)
                .with_label(format!("{}: reached by no test", p.label))
                .phase(&p.phase)
                .help(hint(p.kind()))
            })
            .collect()
    }

    /// [`Coverage::unreached`] drawn like `tfc check` draws warnings: at most
    /// [`MAX_SHOWN`] of them, then a line counting the rest.
    pub fn render_unreached(&self, color: bool) -> String {
        let diags = self.unreached();
        let mut out = String::new();
        for d in diags.iter().take(MAX_SHOWN) {
            out.push_str(&render(d, &self.source, color));
        }
        if diags.len() > MAX_SHOWN {
            let _ = writeln!(
                out,
                "… and {} more unreached outcomes of {} (not shown; `tfc test --coverage --format json` lists them all)",
                diags.len() - MAX_SHOWN,
                self.source.name
            );
        }
        out
    }

    /// The JSON object: `{"flow", "tests", "reached", "total", "outcomes": [{"id", "kind",
    /// "phase", "label", "span", "hits"}]}`.
    pub fn to_value(&self) -> Value {
        let mut o = Map::default();
        o.insert("flow".into(), Value::from(self.source.name.as_str()));
        o.insert("tests".into(), Value::Number(self.tests as f64));
        o.insert("reached".into(), Value::Number(self.reached() as f64));
        o.insert("total".into(), Value::Number(self.total() as f64));
        let list = self
            .rows
            .iter()
            .map(|r| {
                let p = &r.point;
                let mut m = Map::default();
                m.insert("id".into(), Value::from(p.id.as_str()));
                m.insert("kind".into(), Value::from(p.kind().as_str()));
                m.insert("phase".into(), Value::from(p.phase.as_str()));
                m.insert("label".into(), Value::from(p.label.as_str()));
                m.insert("span".into(), span_json(p.span, &self.source));
                let hits = r.tests.iter().map(|t| Value::from(t.as_str())).collect();
                m.insert("hits".into(), Value::Array(hits));
                Value::Object(m)
            })
            .collect();
        o.insert("outcomes".into(), Value::Array(list));
        Value::Object(o)
    }
}

/// How to reach an outcome of this kind.
fn hint(kind: Kind) -> &'static str {
    match kind {
        Kind::When => "add a test whose answers make this condition come out the other way",
        Kind::Gate => "add a test whose answer gives the gate this verdict",
        Kind::OnBlock => {
            "add a test whose gate answers block this many times (an array answers successive rounds)"
        }
        Kind::Loop => "add a test whose iteration answers (`id@1`, `id@*`) end the loop this way",
        Kind::Retry => {
            "add a test whose first answer for this phase is an error, e.g. [{\"error\": \"overloaded\"}, \"…\"]"
        }
        Kind::Join => "add a test in which this dependency is the one that lets the phase start",
        Kind::Race => {
            "add a test in which this branch is the first to succeed (answer the others with errors)"
        }
        Kind::Approval => {
            "add a test with this decision in \"approvals\" (no entry leaves it pending)"
        }
        Kind::Optional => "add a test whose answer makes this phase fail, e.g. {\"error\": \"…\"}",
    }
}

/// The coverage of every flow the reports' tests ran, in the order the flows first appear.
/// Test files naming the same flow file merge; files whose flow could not be checked are left
/// out (their tests did not run).
pub fn tally(reports: &[FileReport]) -> Vec<Coverage> {
    let mut out: Vec<(PathBuf, Coverage)> = Vec::new();
    for r in reports {
        let Some(fut) = &r.checked.flow else { continue };
        let Some(flow) = &fut.flow else { continue };
        let key = std::fs::canonicalize(&fut.source.name)
            .unwrap_or_else(|_| PathBuf::from(&fut.source.name));
        let at = match out.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                let rows = outcomes(flow)
                    .into_iter()
                    .map(|point| Row {
                        point,
                        tests: Vec::new(),
                    })
                    .collect();
                out.push((
                    key,
                    Coverage {
                        source: fut.source.clone(),
                        tests: 0,
                        rows,
                    },
                ));
                out.len() - 1
            }
        };
        let c = &mut out[at].1;
        for t in &r.tests {
            c.tests += 1;
            for row in &mut c.rows {
                if t.hits.binary_search(&row.point.hit).is_ok() {
                    row.tests.push(t.name.clone());
                }
            }
        }
    }
    out.into_iter().map(|(_, c)| c).collect()
}

/// The text report: per flow a table (outcome, tests that reached it) and the count line.
pub fn text(all: &[Coverage]) -> String {
    let mut out = String::new();
    for c in all {
        let n = c.tests;
        let _ = writeln!(
            out,
            "\ncoverage of {} ({n} test{})",
            c.source.name,
            if n == 1 { "" } else { "s" }
        );
        let names: Vec<String> = c
            .rows
            .iter()
            .map(|r| format!("{}: {}", r.point.phase, r.point.label))
            .collect();
        let width = names
            .iter()
            .map(|n| n.chars().count())
            .max()
            .unwrap_or(0)
            .max("outcome".len());
        if !c.rows.is_empty() {
            let _ = writeln!(out, "  {:width$}  tests", "outcome");
        }
        for (row, name) in c.rows.iter().zip(&names) {
            let tests = if row.tests.is_empty() {
                "not reached".to_owned()
            } else {
                row.tests.join(", ")
            };
            let _ = writeln!(out, "  {name:width$}  {tests}");
        }
        let _ = writeln!(out, "{}", c.count_line());
    }
    out
}

/// One JSON object per flow, one per line (see [`Coverage::to_value`]).
pub fn json_lines(all: &[Coverage]) -> String {
    let mut out = String::new();
    for c in all {
        let mut o = Map::default();
        o.insert("coverage".into(), c.to_value());
        out.push_str(&Value::Object(o).to_json());
        out.push('\n');
    }
    out
}
