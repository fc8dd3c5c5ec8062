//! Reports of test runs (SPEC §17): text like `cargo test` (a line per test, then each
//! failure's unmet expectations with expected vs actual, then the summary line), JSON lines
//! (one object per test) and JUnit XML.

use std::fmt::Write;
use std::time::Duration;

use crate::value::{Map, Value};

use super::{FileReport, Outcome, TestReport};

/// How many tests passed, failed and could not run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Could not run.
    pub errors: usize,
}

impl Counts {
    /// The counts over every test of `reports`.
    pub fn of(reports: &[FileReport]) -> Counts {
        let mut c = Counts::default();
        for t in reports.iter().flat_map(|r| &r.tests) {
            match t.outcome {
                Outcome::Passed => c.passed += 1,
                Outcome::Failed(_) => c.failed += 1,
                Outcome::Error(_) => c.errors += 1,
            }
        }
        c
    }
}

/// The exit code: 2 when a test file or its flow is invalid (or a test could not run), else
/// 1 when a test failed, else 0.
pub fn exit_code(reports: &[FileReport]) -> u8 {
    let c = Counts::of(reports);
    if c.errors > 0 || reports.iter().any(|r| r.checked.invalid().is_some()) {
        2
    } else if c.failed > 0 {
        1
    } else {
        0
    }
}

/// The summary line: `test result: FAILED. 11 passed; 1 failed; 0 errors; finished in 0.21s`.
pub fn summary_line(reports: &[FileReport], elapsed: Duration) -> String {
    let c = Counts::of(reports);
    let word = if c.failed + c.errors == 0 && exit_code(reports) == 0 {
        "ok"
    } else {
        "FAILED"
    };
    format!(
        "test result: {word}. {} passed; {} failed; {} errors; finished in {:.2}s",
        c.passed,
        c.failed,
        c.errors,
        elapsed.as_secs_f64()
    )
}

/// The text report (stdout): per file a header and a line per test, then the failures, then
/// the summary line.
pub fn text(reports: &[FileReport], elapsed: Duration) -> String {
    let mut out = String::new();
    for r in reports {
        let n = r.tests.len();
        let _ = writeln!(
            out,
            "\nrunning {n} test{} from {}",
            if n == 1 { "" } else { "s" },
            r.checked.source.name
        );
        for t in &r.tests {
            let _ = writeln!(out, "test {} ... {}", t.name, t.outcome.word());
        }
    }
    let bad: Vec<(&FileReport, &TestReport)> = reports
        .iter()
        .flat_map(|r| r.tests.iter().map(move |t| (r, t)))
        .filter(|(_, t)| t.outcome != Outcome::Passed)
        .collect();
    if !bad.is_empty() {
        out.push_str("\nfailures:\n");
        for (r, t) in &bad {
            let _ = writeln!(out, "\n---- {} ({}) ----", t.name, r.checked.source.name);
            out.push_str(&details(t));
        }
        out.push_str("\nfailures:\n");
        for (_, t) in &bad {
            let _ = writeln!(out, "    {}", t.name);
        }
    }
    let _ = writeln!(out, "\n{}", summary_line(reports, elapsed));
    out
}

/// What went wrong in one test: each unmet expectation, or the error.
pub fn details(t: &TestReport) -> String {
    let mut out = String::new();
    match &t.outcome {
        Outcome::Passed => {}
        Outcome::Error(e) => {
            let _ = writeln!(out, "error: {e}");
        }
        Outcome::Failed(failures) => {
            for f in failures {
                let _ = writeln!(out, "{}", f.what);
                let _ = writeln!(out, "    expected: {}", f.expected);
                let _ = writeln!(out, "    actual:   {}", f.actual);
                if let Some(d) = &f.diff {
                    out.push_str("    diff (- expected, + actual):\n");
                    for l in d.lines() {
                        let _ = writeln!(out, "      {l}");
                    }
                }
            }
            if let Some(r) = &t.record {
                let _ = writeln!(
                    out,
                    "(run: {}{})",
                    r.status.as_str(),
                    r.reason
                        .as_deref()
                        .map(|x| format!(", {}", x.lines().next().unwrap_or("")))
                        .unwrap_or_default()
                );
            }
        }
    }
    out
}

/// One JSON object per test, one per line: `{"file", "name", "result", "failures"?,
/// "error"?, "status"?}` (no timing: the same run prints the same bytes).
pub fn json_lines(reports: &[FileReport]) -> String {
    let mut out = String::new();
    for o in json_objects(reports) {
        out.push_str(&o.to_json());
        out.push('\n');
    }
    out
}

/// The objects of [`json_lines`], in order (MCP's `tfc_test` returns them as they are).
pub fn json_objects(reports: &[FileReport]) -> Vec<Value> {
    let mut out = Vec::new();
    for r in reports {
        for t in &r.tests {
            out.push(json_object(r, t));
        }
    }
    out
}

/// One test's object.
fn json_object(r: &FileReport, t: &TestReport) -> Value {
    let mut o = Map::default();
    o.insert("file".into(), Value::from(r.checked.source.name.as_str()));
    o.insert("name".into(), Value::from(t.name.as_str()));
    let result = match t.outcome {
        Outcome::Passed => "ok",
        Outcome::Failed(_) => "failed",
        Outcome::Error(_) => "error",
    };
    o.insert("result".into(), Value::from(result));
    if let Some(rec) = &t.record {
        o.insert("status".into(), Value::from(rec.status.as_str()));
    }
    match &t.outcome {
        Outcome::Failed(fs) => {
            let list = fs
                .iter()
                .map(|f| {
                    let mut m = Map::default();
                    m.insert("expectation".into(), Value::from(f.what.as_str()));
                    m.insert("expected".into(), Value::from(f.expected.as_str()));
                    m.insert("actual".into(), Value::from(f.actual.as_str()));
                    if let Some(d) = &f.diff {
                        m.insert("diff".into(), Value::from(d.as_str()));
                    }
                    Value::Object(m)
                })
                .collect();
            o.insert("failures".into(), Value::Array(list));
        }
        Outcome::Error(e) => {
            o.insert("error".into(), Value::from(e.as_str()));
        }
        Outcome::Passed => {}
    }
    Value::Object(o)
}

/// Text safe inside XML: `&<>"'` escaped, characters XML 1.0 cannot hold dropped.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: `testsuites` > a `testsuite` per file > a `testcase` per test, with a
/// `failure` (unmet expectations) or an `error` (could not run).
pub fn junit(reports: &[FileReport], elapsed: Duration) -> String {
    let c = Counts::of(reports);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"tfc test\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3}\">",
        c.passed + c.failed + c.errors,
        c.failed,
        c.errors,
        elapsed.as_secs_f64()
    );
    for r in reports {
        let fc = Counts::of(std::slice::from_ref(r));
        let time: f64 = r.tests.iter().map(|t| t.duration.as_secs_f64()).sum();
        let name = xml(&r.checked.source.name);
        let _ = writeln!(
            out,
            "  <testsuite name=\"{name}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{time:.3}\">",
            r.tests.len(),
            fc.failed,
            fc.errors
        );
        for t in &r.tests {
            let _ = write!(
                out,
                "    <testcase name=\"{}\" classname=\"{name}\" time=\"{:.3}\"",
                xml(&t.name),
                t.duration.as_secs_f64()
            );
            match &t.outcome {
                Outcome::Passed => out.push_str("/>\n"),
                Outcome::Failed(fs) => {
                    let message = match fs.as_slice() {
                        [one] => format!("{}: expected {}", one.what, one.expected),
                        many => format!("{} expectations not met", many.len()),
                    };
                    let _ = writeln!(
                        out,
                        ">\n      <failure message=\"{}\" type=\"expectation\">{}</failure>\n    </testcase>",
                        xml(&message),
                        xml(&details(t))
                    );
                }
                Outcome::Error(e) => {
                    let _ = writeln!(
                        out,
                        ">\n      <error message=\"{}\" type=\"error\">{}</error>\n    </testcase>",
                        xml(e.lines().next().unwrap_or("")),
                        xml(e)
                    );
                }
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_and_drops_what_xml_cannot_hold() {
        assert_eq!(xml("a<b>&\"c'\u{1}\n"), "a&lt;b&gt;&amp;&quot;c&apos;\n");
    }
}
