//! `run.json` read without a value tree of its phases: each phase's members go straight into
//! its record (a 10,000-phase record is mostly phases). Every value is checked by the strict
//! parser or, for a plain string, by the same rules; anything this reader does not take as
//! it comes (a phase id or `phases` given twice, a phase that is not an object) gives `None`,
//! and the caller reads the text the general way.

use crate::agent::Usage;
use crate::flow::PhaseType;
use crate::run::record::{PhaseMembers, PhaseRecord, usage_member};
use crate::value::{Map, Value, parse_json, parse_json_prefix};

/// One phase as `run.json` holds it.
pub(crate) struct StoredPhase {
    /// Its id.
    pub id: String,
    /// Its record (an output kept in a file is empty here).
    pub record: PhaseRecord,
    /// `outputFile`, when a string.
    pub output_file: Option<String>,
    /// `jsonFile`, when a string.
    pub json_file: Option<String>,
}

/// A run record's text: its members other than `phases`, and its phases that are records.
pub(crate) struct RunText {
    /// The members, `phases` left out.
    pub members: Map,
    /// The phases, in order (a member that is not a phase record is left out).
    pub phases: Vec<StoredPhase>,
}

/// Read `text` (a JSON object); `None` when it is not one this reader takes whole.
pub(crate) fn run_text(text: &str) -> Option<RunText> {
    let mut s = Scanner {
        b: text.as_bytes(),
        text,
        pos: 0,
    };
    let mut out = RunText {
        members: Map::default(),
        phases: Vec::new(),
    };
    let mut seen_phases = false;
    s.object(|s, key| {
        if key == "phases" {
            if std::mem::replace(&mut seen_phases, true) {
                return None;
            }
            out.phases = s.phases()?;
        } else {
            let v = s.value()?;
            out.members.insert(key.to_owned(), v);
        }
        Some(())
    })?;
    s.ws();
    (s.pos == s.b.len()).then_some(out)
}

struct Scanner<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.b.get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// The string at `pos` (its quotes included) and whether it has no escape and no control
    /// character; `pos` after it.
    fn string(&mut self) -> Option<(&'a str, bool)> {
        if self.b.get(self.pos) != Some(&b'"') {
            return None;
        }
        let start = self.pos;
        let mut i = start + 1;
        let mut plain = true;
        // Most strings (keys, states, ids) are short: one pass over them.
        let short = (i + 32).min(self.b.len());
        while i < short {
            match self.b[i] {
                b'"' => {
                    self.pos = i + 1;
                    return Some((&self.text[start..self.pos], plain));
                }
                b'\\' => {
                    plain = false;
                    i += 2;
                }
                c => {
                    plain &= c >= 0x20;
                    i += 1;
                }
            }
        }
        loop {
            let n = memchr::memchr2(b'"', b'\\', self.b.get(i..)?)?;
            if self.b[i + n] == b'"' {
                self.pos = i + n + 1;
                break;
            }
            plain = false;
            i += n + 2;
        }
        let raw = &self.text[start..self.pos];
        // A control character is refused by the parser: let it refuse.
        if plain && raw.bytes().any(|c| c < 0x20) {
            plain = false;
        }
        Some((raw, plain))
    }

    /// A list of strings at `pos` (`None`, `pos` unmoved, when it is not one).
    fn strings(&mut self) -> Option<Vec<String>> {
        let at = self.pos;
        let list = (|| {
            if !self.eat(b'[') {
                return None;
            }
            let mut out = Vec::new();
            if self.eat(b']') {
                return Some(out);
            }
            loop {
                self.ws();
                out.push(self.text()?.into_owned());
                self.ws();
                match self.b.get(self.pos)? {
                    b',' => self.pos += 1,
                    b']' => {
                        self.pos += 1;
                        return Some(out);
                    }
                    _ => return None,
                }
            }
        })();
        if list.is_none() {
            self.pos = at;
        }
        list
    }

    /// A number, `true`, `false` or `null` as the parser reads it, when it is one of the
    /// plain spellings (an integer of at most 15 digits); `pos` unmoved otherwise.
    fn scalar(&mut self) -> Option<Value> {
        let rest = &self.b[self.pos..];
        let (v, n) = match rest.first()? {
            b't' if rest.starts_with(b"true") => (Value::Bool(true), 4),
            b'f' if rest.starts_with(b"false") => (Value::Bool(false), 5),
            b'n' if rest.starts_with(b"null") => (Value::Null, 4),
            b'0'..=b'9' => {
                let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
                if n > 15 || (n > 1 && rest[0] == b'0') {
                    return None;
                }
                let x = rest[..n]
                    .iter()
                    .fold(0u64, |x, d| x * 10 + u64::from(d - b'0'));
                (Value::Number(x as f64), n)
            }
            _ => return None,
        };
        // Only where the value ends (`1.5`, `truex` are the parser's to read or refuse).
        match rest.get(n) {
            None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') => {
                self.pos += n;
                Some(v)
            }
            _ => None,
        }
    }

    /// A string's contents: borrowed when plain, else parsed.
    fn text(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        let (raw, plain) = self.string()?;
        if plain {
            return Some(std::borrow::Cow::Borrowed(&raw[1..raw.len() - 1]));
        }
        let v = parse_json(raw).ok()?;
        Some(std::borrow::Cow::Owned(v.as_str()?.to_owned()))
    }

    /// The value at `pos`, parsed in one pass (its end is where the parser stops).
    fn value(&mut self) -> Option<Value> {
        self.ws();
        if let Some(v) = self.scalar() {
            return Some(v);
        }
        let (v, len) = parse_json_prefix(&self.text[self.pos..]).ok()?;
        self.pos += len;
        Some(v)
    }

    /// Call `f` with each member's key, at its value (which `f` consumes).
    fn object(&mut self, mut f: impl FnMut(&mut Self, &str) -> Option<()>) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            self.ws();
            let key = self.text()?;
            if !self.eat(b':') {
                return None;
            }
            self.ws();
            f(self, &key)?;
            self.ws();
            match self.b.get(self.pos)? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The `phases` object.
    fn phases(&mut self) -> Option<Vec<StoredPhase>> {
        let mut out = Vec::new();
        let mut ids = std::collections::HashSet::new();
        self.object(|s, id| {
            if !ids.insert(id.to_owned()) {
                return None;
            }
            let (record, output_file, json_file) = s.phase()?;
            if let Some(record) = record {
                out.push(StoredPhase {
                    id: id.to_owned(),
                    record,
                    output_file,
                    json_file,
                });
            }
            Some(())
        })?;
        Some(out)
    }

    /// One phase: its record (`None` when it is not one), `outputFile` and `jsonFile`.
    #[allow(clippy::type_complexity)]
    fn phase(&mut self) -> Option<(Option<PhaseRecord>, Option<String>, Option<String>)> {
        self.ws();
        if self.b.get(self.pos) != Some(&b'{') {
            return None;
        }
        let mut r = PhaseMembers::new(PhaseType::Agent, 0);
        let (mut output_file, mut json_file) = (None, None);
        self.object(|s, key| {
            let file = match key {
                "outputFile" => Some(&mut output_file),
                "jsonFile" => Some(&mut json_file),
                _ => None,
            };
            if s.b.get(s.pos) == Some(&b'"') {
                let t = s.text()?;
                if let Some(f) = file {
                    *f = Some(t.clone().into_owned());
                }
                if !r.text(key, &t) {
                    r.member(key, &Value::String(t.into_owned()));
                }
                return Some(());
            }
            if key == "usage" && s.b.get(s.pos) == Some(&b'{') {
                let mut u = Usage::default();
                s.object(|s, k| {
                    usage_member(&mut u, k, &s.value()?);
                    Some(())
                })?;
                r.usage(u);
                return Some(());
            }
            if let Some(f) = file {
                *f = None;
            }
            if matches!(key, "warnings" | "reads")
                && s.b.get(s.pos) == Some(&b'[')
                && let Some(list) = s.strings()
            {
                r.strings(key, list);
                return Some(());
            }
            let v = s.value()?;
            r.member(key, &v);
            Some(())
        })?;
        Some((r.finish(), output_file, json_file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the general reader makes of the text's phases.
    fn general(text: &str) -> Vec<(String, PhaseRecord)> {
        let Ok(Value::Object(ref m)) = parse_json(text) else {
            panic!("not an object");
        };
        let Some(Value::Object(ps)) = m.get("phases") else {
            return Vec::new();
        };
        ps.iter()
            .filter_map(|(k, v)| Some((k.clone(), PhaseRecord::from_value(v, PhaseType::Agent)?)))
            .collect()
    }

    fn fast(text: &str) -> Option<Vec<(String, PhaseRecord)>> {
        Some(
            run_text(text)?
                .phases
                .into_iter()
                .map(|p| (p.id, p.record))
                .collect(),
        )
    }

    #[test]
    fn phases_read_as_the_general_reader_reads_them() {
        let text = r#" {"runId": "r", "def": {"phases": [{"id": "a"}]},
            "phases": {
              "a": {"status": "done", "output": "x\"y\u00e9", "warnings": ["w"], "attempts": 2,
                    "reads": ["b", 3], "usage": {"input": 5, "costUSD": 0.25, "turns": -1},
                    "startedAt": "t", "endedAt": null, "type": "map", "model": "m",
                    "inputHash": "h", "cacheHit": "run-only", "sideEffect": true,
                    "items": [{"index": 0, "status": "done", "inputHash": "k"}],
                    "gate": {"verdict": "block", "reason": "no"}, "json": "j",
                    "loop": {"iterations": 2, "stop": "until", "failures": [{"iteration": 1, "error": "e"}]},
                    "subRun": {"runId": "s", "status": "completed", "phases": {"i": {"status": "done"}}},
                    "promptStats": {"chars": 10, "estTokens": 3}, "extra": [1, {"a": "]"}],
                    "optional": false, "timedOut": true, "budgetTruncated": null},
              "n": {"status": "done", "attempts": 1.5, "usage": {"input": 12345678901234567,
                    "output": 1e3, "cacheRead": 0, "turns": 7 }, "warnings": ["a\nb", "c"],
                    "reads": ["x", 1], "startedAt" : "\u0074" , "output": "a long output that runs past its first 32 bytes \" and on"},
              "b": {"status": "nope"},
              "c": {"status": "failed", "error": "bad", "status": "skipped", "usage": 7,
                    "outputFile": "outputs/phases/c.txt", "output": 1}
            }} "#;
        let got = fast(text).expect("read");
        assert_eq!(got, general(text));
        assert_eq!(got.len(), 3);
        let rt = run_text(text).expect("read");
        assert_eq!(
            rt.phases[2].output_file.as_deref(),
            Some("outputs/phases/c.txt")
        );
        assert_eq!(rt.members.get("runId").and_then(Value::as_str), Some("r"));
        assert!(!rt.members.contains_key("phases"));
    }

    #[test]
    fn what_it_does_not_take_whole_is_left_to_the_general_reader() {
        for text in [
            r#"{"phases": {"a": {"status": "done"}, "a": {"status": "done"}}}"#,
            r#"{"phases": {}, "phases": {}}"#,
            r#"{"phases": {"a": 1}}"#,
            r#"{"phases": {"a": {"status": "done", "attempts": tru}}}"#,
            r#"{"phases": {"a": {"status": "done", "attempts": truex}}}"#,
            r#"{"phases": {"a": {"status": "done", "attempts": 01}}}"#,
            r#"{"phases": {"a": {"status": "done", "reads": ["a",]}}}"#,
            "{\"phases\": {\"a\": {\"output\": \"a string past its first 32 bytes with a \u{1}\"}}}",
            "{\"phases\": {\"a\": {\"status\": \"do\u{1}ne\"}}}",
            r#"{"phases": {"a": {"status": "done"}}} x"#,
            r#"{"phases": {"a": {"status": "done"]}}"#,
            r#"{"runId": "r""#,
            r#"[1]"#,
        ] {
            assert!(run_text(text).is_none(), "{text}");
        }
    }
}
