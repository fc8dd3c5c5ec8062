//! Reading model replies: gate verdicts (SPEC §3.5), tournament winners (§3.10), and whether a
//! failure is transient (§8.4).

use std::sync::OnceLock;

use regex::Regex;

use crate::eval::safe_parse::safe_parse;
use crate::value::Value;
use crate::value::js_trim;

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("static pattern"))
}

/// A gate's decision.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub pass: bool,
    pub reason: Option<String>,
}

pub const UNPARSEABLE_VERDICT: &str = "unparseable gate verdict (fail-closed)";

/// The verdict of a gate reply: JSON `continue`, then `pass`, then `verdict`; else the last
/// `VERDICT: …` line; else block (fail-closed).
pub fn gate_verdict(reply: &str) -> Verdict {
    if let Some(Value::Object(o)) = &safe_parse(reply).value {
        let reason = o
            .get("reason")
            .and_then(Value::as_str)
            .map(js_trim)
            .filter(|r| !r.is_empty())
            .map(str::to_owned);
        if let Some(Value::Bool(b)) = o.get("continue") {
            return Verdict { pass: *b, reason };
        }
        if let Some(Value::Bool(b)) = o.get("pass") {
            return Verdict { pass: *b, reason };
        }
        if let Some(Value::String(v)) = o.get("verdict") {
            static BLOCKING: OnceLock<Regex> = OnceLock::new();
            let block = re(&BLOCKING, r"(?i)block|fail|stop|reject|halt").is_match(v);
            return Verdict {
                pass: !block,
                reason,
            };
        }
    }
    static LINE: OnceLock<Regex> = OnceLock::new();
    let line = re(
        &LINE,
        r"(?i)VERDICT\s*[:=]\s*(?:[*_~`]+\s*)?(PASS|BLOCK|FAIL|STOP|OK|REJECT|HALT)(?:\s*[*_~`]+)?",
    );
    match line.captures_iter(reply).last() {
        Some(c) => {
            let word = c[1].to_ascii_uppercase();
            Verdict {
                pass: word == "PASS" || word == "OK",
                reason: None,
            }
        }
        None => Verdict {
            pass: false,
            reason: Some(UNPARSEABLE_VERDICT.to_owned()),
        },
    }
}

/// Does a gate task as written already ask for a verdict line (`VERDICT:` / `VERDICT=`)?
pub fn asks_for_verdict(task: &str) -> bool {
    static ASKS: OnceLock<Regex> = OnceLock::new();
    re(&ASKS, r"(?i)VERDICT\s*[:=]").is_match(task)
}

/// The suffix appended to gate prompts that do not ask for a verdict themselves.
pub const GATE_SUFFIX: &str = "\n\n--- Required output format ---\nEnd your response with exactly one line in this exact form (no Markdown, no bold, no extra words):\nVERDICT: PASS\nor\nVERDICT: BLOCK";

/// The 1-based winner a judge picked, clamped to `1..=n`; `None` when it names none.
pub fn judge_winner(reply: &str, n: usize) -> Option<usize> {
    let clamp = |w: f64| (w.round().max(1.0) as usize).min(n.max(1));
    if let Some(Value::Object(o)) = &safe_parse(reply).value {
        for key in ["winner", "best", "choice"] {
            match o.get(key) {
                Some(Value::Number(w)) if w.is_finite() => return Some(clamp(*w)),
                Some(Value::String(s)) => {
                    let w = crate::value::js_number_value(s);
                    if w.is_finite() {
                        return Some(clamp(w));
                    }
                }
                _ => {}
            }
        }
    }
    static WINNER: OnceLock<Regex> = OnceLock::new();
    let line = re(
        &WINNER,
        r"(?i)WINNER\s*[:=]\s*(?:[*_~`]+\s*)?#?(\d+)(?:\s*[*_~`]+)?",
    );
    let c = line.captures_iter(reply).last()?;
    let w: f64 = c[1].parse().unwrap_or(1.0);
    Some(clamp(w))
}

/// Is this failure text a transient provider error worth retrying?
pub fn is_transient(text: &str) -> bool {
    static TRANSIENT: OnceLock<Regex> = OnceLock::new();
    re(
        &TRANSIENT,
        r"(?i)rate[_\s-]?limit|too[ \t\n\r]+many[ \t\n\r]+requests|overloaded|\b429\b|\b503\b|\b502\b|\b504\b|service[ \t\n\r]+unavailable|temporarily[ \t\n\r]+unavailable|timeout|timed?[ \t\n\r]+out|econnreset|etimedout|socket[ \t\n\r]+hang[ \t\n\r]*up",
    )
    .is_match(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(
            gate_verdict("Looks good.\nVERDICT: PASS"),
            Verdict {
                pass: true,
                reason: None
            }
        );
        assert!(!gate_verdict("VERDICT: PASS\n...\nverdict = **block**").pass);
        assert!(gate_verdict("VERDICT:`OK`").pass);
        assert!(!gate_verdict("VERDICT: FAIL").pass);
        assert_eq!(
            gate_verdict(r#"{"verdict":"reject","reason":" x "}"#),
            Verdict {
                pass: false,
                reason: Some("x".into())
            }
        );
        assert!(gate_verdict(r#"{"continue": true, "pass": false}"#).pass);
        assert!(!gate_verdict(r#"{"pass": false}"#).pass);
        assert_eq!(
            gate_verdict("no idea").reason.as_deref(),
            Some(UNPARSEABLE_VERDICT)
        );
        assert!(asks_for_verdict("end with verdict = PASS"));
        assert!(!asks_for_verdict("give a verdict"));
    }

    #[test]
    fn winners() {
        assert_eq!(judge_winner("… WINNER: 2", 3), Some(2));
        assert_eq!(judge_winner("WINNER: **#3**\nWINNER: 9", 3), Some(3));
        assert_eq!(judge_winner(r#"{"best": "2"}"#, 3), Some(2));
        assert_eq!(judge_winner(r#"{"winner": 0}"#, 3), Some(1));
        assert_eq!(judge_winner("none", 3), None);
    }

    #[test]
    fn transient_errors() {
        for t in [
            "HTTP 429: slow down",
            "Rate-limit reached",
            "too many\nrequests",
            "socket hang up",
            "ETIMEDOUT",
            "503 Service Unavailable",
            "request timed out",
        ] {
            assert!(is_transient(t), "{t}");
        }
        for t in ["HTTP 400: bad request", "syntax error", "code 4290"] {
            assert!(!is_transient(t), "{t}");
        }
    }
}
