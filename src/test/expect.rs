//! Expectations (SPEC §17): each `expect` key checked against the run record and the calls
//! the answering backend saw; every unmet one is a [`Failure`] with expected vs actual.

use crate::run::{PhaseRecord, RunRecord};
use crate::value::Value;

use super::answer::CallLog;
use super::model::{Bound, Expect, ItemsExpect, Matcher, MatcherKind, Named, PhaseExpect};

/// One unmet expectation.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// Which expectation (`status`, `phases.gate.verdict`, `prompts.deep`).
    pub what: String,
    /// What it wanted.
    pub expected: String,
    /// What the run gave.
    pub actual: String,
    /// A line diff of expected and actual text, when both are text worth diffing.
    pub diff: Option<String>,
}

impl Matcher {
    /// Does `text` satisfy the matcher?
    pub fn matches(&self, text: &str) -> bool {
        match &self.kind {
            MatcherKind::Equals(s) => text == s,
            MatcherKind::Contains(s) => text.contains(s.as_str()),
            MatcherKind::Regex(r) => r.is_match(text),
            MatcherKind::Json(v) => {
                crate::eval::safe_parse::safe_parse(text).value.as_ref() == Some(v)
            }
            MatcherKind::Schema(c) => crate::run::contract::check_output(c, text).is_ok(),
            MatcherKind::Not(m) => !m.matches(text),
        }
    }

    /// What the matcher wants, as a reader would say it.
    pub fn describe(&self) -> String {
        match &self.kind {
            MatcherKind::Equals(s) => quote(s),
            MatcherKind::Contains(s) => format!("contains {}", quote(s)),
            MatcherKind::Regex(r) => format!("matches /{}/", r.as_str()),
            MatcherKind::Json(v) => format!("JSON equal to {}", v.to_json()),
            MatcherKind::Schema(_) => "JSON satisfying the schema".to_owned(),
            MatcherKind::Not(m) => format!("not {}", m.describe()),
        }
    }

    /// Check `text`; the failure named `what` if it does not match.
    fn check(&self, what: &str, text: &str, out: &mut Vec<Failure>) {
        if self.matches(text) {
            return;
        }
        let mut actual = quote(text);
        if let MatcherKind::Schema(c) = &self.kind
            && let Err(v) = crate::run::contract::check_output(c, text)
        {
            actual = format!("{actual} ({})", v.join("; "));
        }
        let diff = match &self.kind {
            MatcherKind::Equals(s) => Some(line_diff(s, text)),
            _ => None,
        };
        out.push(Failure {
            what: what.to_owned(),
            expected: self.describe(),
            actual,
            diff,
        });
    }
}

/// A text as a JSON string literal (escapes shown), cut after 2000 characters.
fn quote(s: &str) -> String {
    const LIMIT: usize = 2000;
    match s.char_indices().nth(LIMIT) {
        None => Value::from(s).to_json(),
        Some((at, _)) => format!(
            "{}… ({} more bytes)",
            Value::from(&s[..at]).to_json(),
            s.len() - at
        ),
    }
}

impl Bound {
    fn holds(&self, n: f64) -> bool {
        self.min.is_none_or(|m| n >= m) && self.max.is_none_or(|m| n <= m)
    }

    fn describe(&self) -> String {
        let f = crate::value::format_number;
        match (self.min, self.max) {
            (Some(a), Some(b)) if a == b => f(a),
            (Some(a), Some(b)) => format!("from {} to {}", f(a), f(b)),
            (Some(a), None) => format!("at least {}", f(a)),
            (None, Some(b)) => format!("at most {}", f(b)),
            (None, None) => "any number".to_owned(),
        }
    }

    fn check(&self, what: &str, n: f64, out: &mut Vec<Failure>) {
        if !self.holds(n) {
            out.push(Failure {
                what: what.to_owned(),
                expected: self.describe(),
                actual: crate::value::format_number(n),
                diff: None,
            });
        }
    }
}

/// Check every expectation of `e` against a finished run.
pub fn evaluate(e: &Expect, record: &RunRecord, calls: &[CallLog]) -> Vec<Failure> {
    let mut out = Vec::new();
    let mut fail = |what: &str, expected: String, actual: String| {
        out.push(Failure {
            what: what.to_owned(),
            expected,
            actual,
            diff: None,
        })
    };
    if let Some(s) = &e.status
        && record.status.as_str() != s.name
    {
        let reason = record
            .reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        fail(
            "status",
            s.name.clone(),
            format!("{}{reason}", record.status.as_str()),
        );
    }
    let status_of = |id: &str| record.phases.get(id).map(|p| p.status.as_str());
    /// An id list, and the statuses that meet it.
    type IdList<'a> = (&'a str, &'a [Named<()>], &'a [&'a str]);
    let lists: [IdList<'_>; 4] = [
        ("ran", &e.ran, &["done"]),
        ("skipped", &e.skipped, &["skipped"]),
        ("failed", &e.failed, &["failed"]),
        ("notRun", &e.not_run, &["pending", "running"]),
    ];
    for (key, ids, wanted) in lists {
        for id in ids {
            let actual = status_of(&id.name);
            let holds = match actual {
                Some(s) => wanted.contains(&s),
                None => key == "notRun",
            };
            if !holds {
                fail(
                    &format!("{key}: {}", id.name),
                    wanted.join(" or "),
                    actual.unwrap_or("absent").to_owned(),
                );
            }
        }
    }
    for p in &e.phases {
        match record.phases.get(&p.name) {
            Some(r) => phase(&p.name, &p.value, r, &mut out),
            None => out.push(Failure {
                what: format!("phases.{}", p.name),
                expected: "a phase of the run".into(),
                actual: "absent".into(),
                diff: None,
            }),
        }
    }
    if let Some(m) = &e.output {
        m.check("output", &record.final_output, &mut out);
    }
    if let Some((want, _)) = &e.output_phase
        && record.output_phase != *want
    {
        let show = |o: &Option<String>| o.clone().unwrap_or_else(|| "null".into());
        out.push(Failure {
            what: "outputPhase".into(),
            expected: show(want),
            actual: show(&record.output_phase),
            diff: None,
        });
    }
    for p in &e.prompts {
        let (pattern, matcher) = &p.value;
        let matched: Vec<&CallLog> = calls.iter().filter(|c| pattern.matches(&c.node)).collect();
        if matched.is_empty() {
            out.push(Failure {
                what: format!("prompts.{}", p.name),
                expected: format!("a call of '{}' whose prompt {}", p.name, matcher.describe()),
                actual: "no such call was made".into(),
                diff: None,
            });
        }
        for c in matched {
            matcher.check(
                &format!("prompts.{} ({})", p.name, c.node),
                &c.prompt,
                &mut out,
            );
        }
    }
    if let Some(b) = &e.calls {
        b.check("calls", calls.len() as f64, &mut out);
    }
    if let Some(b) = &e.tokens {
        b.check("tokens", record.usage.billable_tokens() as f64, &mut out);
    }
    if let Some(b) = &e.cost_usd {
        b.check("costUSD", record.usage.cost_usd.unwrap_or(0.0), &mut out);
    }
    for m in &e.warnings {
        if !record.warnings.iter().any(|w| m.matches(w)) {
            out.push(Failure {
                what: "warnings".into(),
                expected: format!("a warning that {}", m.describe()),
                actual: if record.warnings.is_empty() {
                    "no warnings".into()
                } else {
                    record
                        .warnings
                        .iter()
                        .map(|w| quote(w))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
                diff: None,
            });
        }
    }
    out
}

/// The expectations on one phase's record.
fn phase(id: &str, e: &PhaseExpect, r: &PhaseRecord, out: &mut Vec<Failure>) {
    let at = |k: &str| format!("phases.{id}.{k}");
    let mut fail = |k: &str, expected: String, actual: String| {
        out.push(Failure {
            what: at(k),
            expected,
            actual,
            diff: None,
        })
    };
    if let Some((s, _)) = &e.status
        && r.status.as_str() != s
    {
        let why = r
            .error
            .as_deref()
            .or(r.skip_reason.as_deref())
            .map(|w| format!(" ({})", first_line(w)))
            .unwrap_or_default();
        fail("status", s.clone(), format!("{}{why}", r.status.as_str()));
    }
    if let Some((v, _)) = &e.json
        && r.json.as_ref() != Some(v)
    {
        fail(
            "json",
            v.to_json(),
            r.json.as_ref().map_or("none".into(), Value::to_json),
        );
    }
    if let Some((v, _)) = &e.verdict {
        let actual = r.gate.as_ref().map(|g| g.verdict);
        if actual != Some(v.as_str()) {
            fail("verdict", v.clone(), actual.unwrap_or("none").to_owned());
        }
    }
    let f = crate::value::format_number;
    if let Some((n, _)) = e.iterations {
        let actual = r.loop_info.as_ref().map(|l| l.iterations);
        if actual.map(f64::from) != Some(n) {
            fail(
                "iterations",
                f(n),
                actual.map_or("none".into(), |a| a.to_string()),
            );
        }
    }
    if let Some((n, _)) = e.attempts
        && f64::from(r.attempts) != n
    {
        fail("attempts", f(n), r.attempts.to_string());
    }
    if let Some((items, _)) = &e.items {
        let actual: Vec<&str> = r
            .items
            .as_ref()
            .map(|i| i.iter().map(|i| i.status.as_str()).collect())
            .unwrap_or_default();
        match items {
            ItemsExpect::Count(n) if actual.len() as f64 != *n => {
                fail("items", f(*n), actual.len().to_string())
            }
            ItemsExpect::Statuses(s) if *s != actual => {
                fail("items", format!("{s:?}"), format!("{actual:?}"))
            }
            _ => {}
        }
    }
    if let Some((b, _)) = e.cache_hit
        && r.cache_hit.is_some() != b
    {
        fail("cacheHit", b.to_string(), r.cache_hit.is_some().to_string());
    }
    if let Some(m) = &e.output {
        m.check(&at("output"), &r.output, out);
    }
    if let Some(m) = &e.skip_reason {
        match &r.skip_reason {
            Some(s) => m.check(&at("skipReason"), s, out),
            None => out.push(Failure {
                what: at("skipReason"),
                expected: m.describe(),
                actual: format!("none (the phase is {})", r.status.as_str()),
                diff: None,
            }),
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// A line diff of `expected` and `actual`: `-` lines only expected, `+` only actual, ` `
/// both (longest common subsequence; texts over 2000 lines are shown whole instead).
pub fn line_diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    let mut out = String::new();
    if a.len() > 2000 || b.len() > 2000 {
        for l in &a {
            out.push_str(&format!("-{l}\n"));
        }
        for l in &b {
            out.push_str(&format!("+{l}\n"));
        }
        return out;
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let w = b.len() + 1;
    let mut lcs = vec![0u32; (a.len() + 1) * w];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i * w + j] = if a[i] == b[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push_str(&format!(" {}\n", a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
            out.push_str(&format!("-{}\n", a[i]));
            i += 1;
        } else {
            out.push_str(&format!("+{}\n", b[j]));
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test::model::Reader;

    fn matcher(json: &str) -> Matcher {
        let node = crate::json::parse(json).root.unwrap();
        let mut r = Reader::default();
        let m = r.matcher(&node);
        assert!(r.diags.is_empty(), "{:?}", r.diags);
        m.unwrap()
    }

    #[test]
    fn each_matcher() {
        let cases = [
            (r#""abc""#, "abc", true),
            (r#""abc""#, "abcd", false),
            (r#"{"equals": "x"}"#, "x", true),
            (r#"{"contains": "b"}"#, "abc", true),
            (r#"{"contains": "z"}"#, "abc", false),
            (r#"{"regex": "^a.c$"}"#, "abc", true),
            (r#"{"regex": "^b"}"#, "abc", false),
            (
                r#"{"json": {"a": [1, 2]}}"#,
                "Here: ```json\n{\"a\":[1,2]}\n```",
                true,
            ),
            (r#"{"json": {"a": [1, 2]}}"#, r#"{"a":[2,1]}"#, false),
            (r#"{"json": 1}"#, "not json", false),
            (
                r#"{"schema": {"type": "object", "required": ["risk"]}}"#,
                r#"{"risk": "low"}"#,
                true,
            ),
            (
                r#"{"schema": {"required": ["risk"]}}"#,
                r#"{"x": 1}"#,
                false,
            ),
            (r#"{"not": {"contains": "z"}}"#, "abc", true),
            (r#"{"not": "abc"}"#, "abc", false),
        ];
        for (m, text, want) in cases {
            assert_eq!(matcher(m).matches(text), want, "{m} on {text:?}");
        }
        assert_eq!(
            matcher(r#"{"not": {"contains": "z"}}"#).describe(),
            "not contains \"z\""
        );
    }

    #[test]
    fn bounds() {
        let b = |min, max| Bound {
            min,
            max,
            span: Default::default(),
        };
        assert!(b(Some(2.0), Some(2.0)).holds(2.0));
        assert!(!b(Some(2.0), Some(2.0)).holds(3.0));
        assert!(b(None, Some(5.0)).holds(0.0));
        assert!(!b(Some(1.0), None).holds(0.0));
        assert_eq!(b(Some(1.0), Some(4.0)).describe(), "from 1 to 4");
    }

    #[test]
    fn line_diffs_mark_what_changed() {
        assert_eq!(line_diff("a\nb\nc", "a\nx\nc"), " a\n-b\n+x\n c\n");
        assert_eq!(line_diff("a", "a\nb"), " a\n+b\n");
        assert_eq!(line_diff("", "x"), "+x\n");
    }
}
