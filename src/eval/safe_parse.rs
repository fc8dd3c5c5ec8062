//! safeParse: recover a JSON value from model output (SPEC §5.1).
//!
//! Four stages, each linear in the input length:
//! 1. the JS-trimmed text as a whole;
//! 2. fenced code blocks, ```` ```json ```` ones first;
//! 3. a balanced-bracket scan, trying top-level `[…]`/`{…}` spans in order;
//! 4. nothing found: warn when the text looks like an array followed by a stray top-level key.
//!
//! All JSON goes through the strict [`parse_json`]. Every byte of the input is handed to it at
//! most once per stage (stage 2 bodies are disjoint, stage 3 candidates are disjoint), and a
//! failed parse costs at most the length of what it was given, so the whole is O(n).

use memchr::{memchr, memchr2, memchr3};

use crate::value::{Value, find_byte, parse_json};
use crate::value::{is_js_whitespace, js_trim};

/// The stage-4 warning, byte-exact (SPEC §5.1).
pub(crate) const STRAY_KEY_WARNING: &str = "safeParse: input looks like a JSON array followed by a stray top-level key (pattern: [{...}], \"key\": ...). This is not valid JSON. Hint: put extra data as array members (e.g. {\"id\":\"D-001\",\"status\":\"deferred\",...}) or split into a separate phase.";

/// The result of [`safe_parse`]: the value found, if any, and a diagnostic for the consuming
/// phase (the stray-key anti-pattern warning of stage 4).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The JSON value recovered from the text, if any.
    pub value: Option<Value>,
    /// The stray-key warning, when the value was found beside the anti-pattern.
    pub warning: Option<&'static str>,
}

impl Parsed {
    fn found(value: Value) -> Parsed {
        Parsed {
            value: Some(value),
            warning: None,
        }
    }

    fn nothing(warn: bool) -> Parsed {
        Parsed {
            value: None,
            warning: warn.then_some(STRAY_KEY_WARNING),
        }
    }
}

/// Recovers JSON from `text` (SPEC §5.1): the first stage that yields a value wins.
pub fn safe_parse(text: &str) -> Parsed {
    let t = js_trim(text);
    if t.is_empty() {
        return Parsed::nothing(false);
    }
    if let Ok(value) = parse_json(t) {
        return Parsed::found(value);
    }
    if let Some(value) = from_fences(t) {
        return Parsed::found(value);
    }
    // Stages 3 and 4 both need a bracket: one pass rules out prose without any.
    if memchr3(b'[', b'{', b']', t.as_bytes()).is_none() {
        return Parsed::nothing(false);
    }
    match from_balanced_scan(t) {
        Scan::Found(value) => Parsed::found(value),
        Scan::Vetoed => Parsed::nothing(true),
        Scan::Nothing => Parsed::nothing(has_stray_key(t)),
    }
}

// ---------------------------------------------------------------------------------------------
// Stage 2: fenced code blocks.

/// One match of ```` ```([^\n`]*)\r?\n([\s\S]*?)``` ````.
#[derive(Debug, PartialEq)]
struct Fence<'a> {
    /// The info string as captured (group 1, possibly ending in `\r`).
    info: &'a str,
    /// The body as captured (group 2), untrimmed.
    body: &'a str,
}

impl Fence<'_> {
    /// Whether the info string, JS-trimmed and lowercased, is exactly `json`.
    fn is_json(&self) -> bool {
        js_trim(self.info).to_lowercase() == "json"
    }
}

/// Stage 2: the JS-trimmed bodies of `json` fences in order, then of the other fences in
/// order; the first that parses.
fn from_fences(t: &str) -> Option<Value> {
    let fences = fences(t);
    let (json, other): (Vec<&Fence>, Vec<&Fence>) = fences.iter().partition(|f| f.is_json());
    json.into_iter()
        .chain(other)
        .find_map(|f| parse_json(js_trim(f.body)).ok())
}

/// All non-overlapping, leftmost-first matches of the fence pattern, in order.
///
/// Linear: the info string cannot contain a backtick, so a failed header skips past itself;
/// and when no closing ```` ``` ```` follows a header, no later match can exist either.
fn fences(t: &str) -> Vec<Fence<'_>> {
    let bytes = t.as_bytes();
    let mut fences = Vec::new();
    let mut from = 0;
    while let Some(open) = find_backticks(bytes, from) {
        let info_start = open + 3;
        let Some(info_end) = bytes
            .get(info_start..)
            .and_then(|rest| memchr2(b'\n', b'`', rest))
            .map(|n| info_start + n)
        else {
            break;
        };
        if bytes[info_end] == b'`' {
            // `[^\n`]*` stopped at a backtick: no match starts here.
            from = open + 1;
            continue;
        }
        let body_start = info_end + 1;
        let Some(close) = find_backticks(bytes, body_start) else {
            break;
        };
        fences.push(Fence {
            info: &t[info_start..info_end],
            body: &t[body_start..close],
        });
        from = close + 3;
    }
    fences
}

/// The byte index of the first ```` ``` ```` at or after `from`.
fn find_backticks(bytes: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let i = find_from(bytes, from, b'`')?;
        if bytes.get(i..i + 3) == Some(b"```") {
            return Some(i);
        }
        from = i + 1;
    }
}

// ---------------------------------------------------------------------------------------------
// Stage 3: balanced-bracket scan.

enum Scan {
    Found(Value),
    /// The first candidate that parsed is an array followed by a stray key holding more data.
    Vetoed,
    Nothing,
}

/// Stage 3: the first top-level balanced span that parses, unless the stray-key veto applies.
fn from_balanced_scan(t: &str) -> Scan {
    for (open, close) in top_level_spans(t.as_bytes()) {
        let Some(candidate) = t.get(open..=close) else {
            continue;
        };
        if let Ok(value) = parse_json(candidate) {
            return if is_vetoed(t, close) {
                Scan::Vetoed
            } else {
                Scan::Found(value)
            };
        }
    }
    Scan::Nothing
}

/// The veto: the candidate ends with `]` at `close`, the text from there matches
/// `^\][\s\},]*"[^"\n]+"\s*:`, and another `]` occurs later in `t`.
fn is_vetoed(t: &str, close: usize) -> bool {
    t.as_bytes().get(close) == Some(&b']')
        && stray_key_at(t, close)
        && find_from(t.as_bytes(), close + 1, b']').is_some()
}

/// The balanced spans `(open, close)` (byte positions of the brackets) that are not nested in
/// another span, in order. These are the stage-3 candidates: every other span lies inside one
/// of them, which is tried first (and either wins or, failing, rules out what it contains).
///
/// One pass with a stack of opener positions. Outside brackets only `[`/`{` matter. Inside,
/// `"` opens a string (backslash escapes the next byte) in which brackets are ignored; a closer
/// matching the top pops it and records a span; a mismatched closer empties the stack. Openers
/// left at the end get no span. Spans are laminar (nested or disjoint), so recording a span
/// drops the previously recorded ones it encloses — those opened after it.
fn top_level_spans(t: &[u8]) -> Vec<(usize, usize)> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if stack.is_empty() {
            let Some(open) = memchr2(b'[', b'{', &t[i..]).map(|n| i + n) else {
                break;
            };
            stack.push(open);
            i = open + 1;
            continue;
        }
        let Some(at) = find_byte(t, i, is_bracket_or_quote) else {
            break;
        };
        i = at;
        match t[i] {
            b'"' => {
                i = string_end(t, i + 1);
                continue;
            }
            b'[' | b'{' => stack.push(i),
            closer @ (b']' | b'}') => match stack.pop() {
                Some(open) if t[open] == opener_of(closer) => {
                    while spans.last().is_some_and(|&(o, _)| o > open) {
                        spans.pop();
                    }
                    spans.push((open, i));
                }
                _ => stack.clear(),
            },
            _ => {}
        }
        i += 1;
    }
    spans
}

/// `[`, `]`, `{`, `}` or `"`. (`[`/`]` are `{`/`}` with bit 0x20 clear; branch-free so that
/// [`find_byte`] vectorizes.)
fn is_bracket_or_quote(b: u8) -> bool {
    let folded = b | 0x20;
    (folded == b'{') | (folded == b'}') | (b == b'"')
}

fn opener_of(closer: u8) -> u8 {
    if closer == b']' { b'[' } else { b'{' }
}

/// The index just past the `"` closing a string whose contents start at `from` (a backslash
/// escapes the next byte), or the end of input when it is unterminated.
fn string_end(t: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(at) = t.get(i..).and_then(|rest| memchr2(b'"', b'\\', rest)) {
        let at = i + at;
        if t[at] == b'"' {
            return at + 1;
        }
        i = at + 2;
    }
    t.len()
}

// ---------------------------------------------------------------------------------------------
// Stage 4: the stray-key anti-pattern.

/// Whether `\][\s\},]*"[^"\n]+"\s*:` matches anywhere in `t`.
///
/// Linear overall: the `[\s\},]*` runs after different `]`s are disjoint (`]` is not in the
/// class), and so are the key runs (each starts after a different `"` and stops at the next).
fn has_stray_key(t: &str) -> bool {
    memchr::memchr_iter(b']', t.as_bytes()).any(|i| stray_key_at(t, i))
}

/// The index of the first `needle` at or after `from`.
fn find_from(bytes: &[u8], from: usize, needle: u8) -> Option<usize> {
    memchr(needle, bytes.get(from..)?).map(|n| from + n)
}

/// Whether `^\][\s\},]*"[^"\n]+"\s*:` matches at byte `at`. `\s` is JavaScript's whitespace
/// (the JS-trim set).
fn stray_key_at(t: &str, at: usize) -> bool {
    let Some(rest) = t.get(at..).and_then(|r| r.strip_prefix(']')) else {
        return false;
    };
    let rest = rest.trim_start_matches(|c| is_js_whitespace(c) || c == '}' || c == ',');
    let Some(key_and_rest) = rest.strip_prefix('"') else {
        return false;
    };
    match key_and_rest.find(['"', '\n']) {
        Some(n) if n > 0 && key_and_rest.as_bytes()[n] == b'"' => key_and_rest[n + 1..]
            .trim_start_matches(is_js_whitespace)
            .starts_with(':'),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Value {
        match parse_json(text) {
            Ok(v) => v,
            Err(e) => panic!("bad test JSON {text:?}: {e}"),
        }
    }

    /// `text` yields `expected` (JSON) without a warning.
    #[track_caller]
    fn yields(text: &str, expected: &str) {
        assert_eq!(safe_parse(text), Parsed::found(json(expected)), "{text:?}");
    }

    /// `text` yields nothing, with or without the stray-key warning.
    #[track_caller]
    fn yields_nothing(text: &str, warn: bool) {
        assert_eq!(safe_parse(text), Parsed::nothing(warn), "{text:?}");
    }

    #[test]
    fn spec_examples() {
        yields("The result is {\"a\":1} as shown.", r#"{"a":1}"#);
        yields("see [1] and [2]", "[1]");
        yields("{a} then [1,2]", "[1,2]");
        yields("text { \"a\": \"}\" } more", r#"{"a":"}"}"#);
        yields_nothing("x [1, 2 y", false);
        yields_nothing("{\"a\":[1], \"b\": }", true);
        yields_nothing("[{\"id\":1}],\n\"deferred\": [...]", true);
        yields("[1] \"key\": 2", "[1]");
        for text in [".5", "+1", "0x10", "NaN", "'a'"] {
            yields_nothing(text, false);
        }
        assert_eq!(
            safe_parse("1e400").value,
            Some(Value::Number(f64::INFINITY))
        );
        yields("\u{200b}{\"a\":1}", r#"{"a":1}"#);
    }

    /// The four stages of the seed's "Working with JSON".
    #[test]
    fn seed_stages() {
        yields(
            r#"{"severity": "high", "reason": "missing auth check"}"#,
            r#"{"severity": "high", "reason": "missing auth check"}"#,
        );
        let fenced = "Here is the analysis:\n\n```typescript\nconst x = compute();\n```\n\n\
                      ```json\n{\"severity\": \"high\", \"reason\": \"...\"}\n```\n";
        yields(fenced, r#"{"severity": "high", "reason": "..."}"#);
        yields(
            "After review I found: {\"severity\": \"high\"} — please fix.",
            r#"{"severity": "high"}"#,
        );
        let stray = "[\n  {\"id\": \"D-001\", \"status\": \"open\"}\n],\n\"deferred\": [\n  \
                     {\"id\": \"D-002\", \"status\": \"deferred\"}\n]";
        yields_nothing(stray, true);
    }

    #[test]
    fn stage1_whole_text() {
        yields_nothing("", false);
        yields_nothing(" \u{feff}\u{a0}\n\u{3000}", false);
        yields("null", "null");
        yields(" \"s\" ", "\"s\"");
        yields("\u{feff} 42\u{2028}", "42");
        yields("\u{a0}[1,2]\u{a0}", "[1,2]");
        yields("true", "true");
    }

    #[test]
    fn stage2_fences() {
        yields("```\n[1]\n```", "[1]");
        yields("x ```js\n[1]\n``` y ```JSON \r\n[2]\n``` z", "[2]");
        yields("```json\n{oops}\n```\n```text\n[3]\n```", "[3]");
        yields("```json\r\n  {\"a\": 1}\u{a0}\n```", r#"{"a":1}"#);
        yields("````json\n[4]\n````", "[4]");
        // Fence bodies are tried before the balanced scan: `[0]` in prose loses.
        yields("[0] then ```\n[5]\n```", "[5]");
        // Unterminated fence: the balanced scan takes over.
        yields("```json\n[6]", "[6]");
    }

    #[test]
    fn fence_matching_is_leftmost_non_overlapping() {
        let f = fences("```a\n```json\n[1]\n```");
        assert_eq!(
            f,
            [Fence {
                info: "a",
                body: ""
            }]
        );
        let f = fences("``` Json \r\nbody``` ```x`\n``````\nb2```");
        assert_eq!(
            f,
            [
                Fence {
                    info: " Json \r",
                    body: "body"
                },
                Fence {
                    info: "",
                    body: "b2"
                }
            ]
        );
        assert!(f[0].is_json());
        assert!(fences("``` no newline").is_empty());
        assert!(fences("```\nno close").is_empty());
        assert!(fences("``").is_empty());
    }

    #[test]
    fn stage3_balanced_scan() {
        // Inside brackets, strings hide brackets.
        yields("see [\"]\", 1] ok", r#"["]", 1]"#);
        // Prose quotes at depth 0 are ignored: the quoted `[` opens the span.
        yields("he said \"[\" then [\"]\", 1]", r#"[" then ["]"#);
        yields("{\"a\": \"\\\"}\"} tail", r#"{"a":"\"}"}"#);
        // A mismatched closer empties the stack; the inner span survives.
        yields("{ [1] ] then", "[1]");
        yields("[ {\"a\":1} } ] x", r#"{"a":1}"#);
        // Parentheses are not brackets.
        yields_nothing("[ {\"a\":1} ) ] x", false);
        // A closer at depth 0 is ignored.
        yields("] } [2]", "[2]");
        // Unclosed outer opener: the inner span is top-level.
        yields("{ \"k\": [1,2] and more", "[1,2]");
        // A failed top-level candidate rules out what it contains.
        yields_nothing("{ [1] oops }", false);
        yields("{ [1] oops } {\"b\":2}", r#"{"b":2}"#);
        yields_nothing("[\"unterminated ]", false);
        // No bracket at all: nothing, whatever else the prose holds.
        yields_nothing("no brackets: \"k\": 1 } ) ``` ```\n\"k\"", false);
        yields("only one: ```\n``` \"k\": 1 {\"a\": 2}", r#"{"a":2}"#);
    }

    #[test]
    fn stage3_veto_and_stage4_warning() {
        // The first candidate that parses is vetoed: nothing else is tried.
        yields_nothing("{bad} [1], \"k\": [2]", true);
        yields_nothing("[1]\u{a0}\"k\"\u{3000}: [2]", true);
        yields_nothing("[{\"a\":1}]}, \"k\" : 1 ]", true);
        // No `]` later: no veto, no warning.
        yields("[1], \"k\": {\"a\": 2}", "[1]");
        // The key must be one line and non-empty, followed by a colon.
        yields("[1], \"\": [2]", "[1]");
        yields("[1], \"k\nk\": [2]", "[1]");
        yields("[1], \"k\" [2]", "[1]");
        yields("[1] x \"k\": [2]", "[1]");
        // Stage 4 looks anywhere, even where stage 3 never got.
        yields_nothing("oops ], \"k\": 1", true);
        yields_nothing("oops ] \"k\" 1", false);
    }

    #[test]
    fn stray_key_pattern() {
        assert!(stray_key_at("]\"k\":", 0));
        assert!(stray_key_at("x] ,}\t\"a b]\" \n:", 1));
        assert!(!stray_key_at("]\"k\"", 0));
        assert!(!stray_key_at("] x \"k\":", 0));
        assert!(!stray_key_at("[\"k\":", 0));
        assert!(!stray_key_at("]\u{85}\"k\":", 0));
        assert!(has_stray_key("a ] b ]\"k\":"));
        assert!(!has_stray_key("]\"k\"]\"\"]:"));
    }

    #[test]
    fn spans_are_top_level_and_ordered() {
        let t = b"a {x [1] y} [2 {3}] ] { [4] [5";
        assert_eq!(top_level_spans(t), [(2, 10), (12, 18), (24, 26)]);
        assert_eq!(top_level_spans(b"{ [1] ]"), [(2, 4)]);
        assert_eq!(top_level_spans(b"\"[1]\" [\"]"), [(1, 3)]);
        assert!(top_level_spans(b"[ \"x ] \\\" ]").is_empty());
        assert_eq!(top_level_spans(b"[ \"x \\\" ]\" ]"), [(0, 11)]);
    }

    /// Adversarial inputs stay linear: a quadratic stage would not finish in test time.
    #[test]
    fn adversarial_inputs_are_linear() {
        let n = 200_000;
        let inputs = [
            "[".repeat(n),
            "{".repeat(n),
            "[x] ".repeat(n / 4),
            format!("[{}", "[x] ".repeat(n / 4)),
            "```\n".repeat(n / 4),
            "```a`".repeat(n / 5),
            "]\"".repeat(n / 2),
            "] \"k\" ".repeat(n / 6),
            format!("{}x", "[1,".repeat(n / 3)),
            format!("{}{}", "{\"a\":[".repeat(n / 6), "] x".repeat(n / 6)),
            format!("[{}", "\"\\".repeat(n / 2)),
            format!("]\"{}", "x]".repeat(n / 2)),
            format!("```{}", "a".repeat(n)),
            format!("```\n{}", "``x".repeat(n / 3)),
            "[1,1,1,x] ".repeat(n / 10),
            "], ".repeat(n / 3),
        ];
        for text in &inputs {
            let _ = safe_parse(text);
        }
    }

    #[test]
    fn deep_nesting() {
        let depth = 10_000;
        let text = format!("here: {}{} done", "[".repeat(depth), "]".repeat(depth));
        assert!(safe_parse(&text).value.is_some());
        let _ = safe_parse(&"[".repeat(1_000_000));
        let _ = safe_parse(&format!("x {}", "{\"a\":[".repeat(200_000)));
    }

    /// Every stage on million-deep text, on a 256 KiB stack: the whole text, a fence body,
    /// a balanced span in prose; and coerceArray of the result.
    #[test]
    fn million_deep_answers_on_a_small_stack() {
        use crate::eval::coerce::coerce_array;
        use crate::value::fixtures::{DEPTH, small_stack};
        small_stack(|| {
            let deep = format!("{}{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
            for text in [
                deep.clone(),
                format!("Here:\n```json\n{deep}\n```\n"),
                format!("The answer is {deep}, as requested."),
            ] {
                let parsed = safe_parse(&text);
                let value = parsed.value.expect("found");
                let items = coerce_array(&value).expect("an array");
                assert_eq!(items.len(), 1);
                assert_eq!(Value::Array(items.clone()).to_json(), deep);
            }
            let wrapped = format!("{{\"items\": {deep}}}");
            let value = safe_parse(&wrapped).value.expect("found");
            assert_eq!(coerce_array(&value).map(Vec::len), Some(1));
        });
    }

    mod props {
        use super::*;
        use crate::value::strategies::arb_value;
        use proptest::prelude::*;

        /// Text rich in the characters the stages look at.
        fn tricky_text() -> impl Strategy<Value = String> {
            r#"([\[\]{}",:`\\ \n\r]|```|```json\n|\]\s*"k"\s*:|[a-z0-9]|\u{a0}|\u{200b}){0,60}"#
        }

        proptest! {
            #[test]
            fn pretty_json_is_recovered(v in arb_value()) {
                let text = v.to_pretty_json();
                prop_assert_eq!(safe_parse(&text), Parsed::found(v), "{}", text);
            }

            #[test]
            fn fenced_json_is_recovered(v in arb_value(), lang in "(json|JSON| Json\r|)") {
                let text = format!("Here:\n```{}\n{}\n```\nDone.", lang, v.to_pretty_json());
                prop_assert_eq!(safe_parse(&text), Parsed::found(v), "{}", text);
            }

            /// Containers inside prose without brackets are found by the balanced scan.
            #[test]
            fn embedded_containers_are_recovered(v in arb_value()) {
                if matches!(v, Value::Array(_) | Value::Object(_)) {
                    let text = format!("The result is {} as shown.", v.to_json());
                    prop_assert_eq!(safe_parse(&text), Parsed::found(v), "{}", text);
                }
            }

            #[test]
            fn never_panics(text in any::<String>()) {
                let parsed = safe_parse(&text);
                prop_assert!(parsed.value.is_none() || parsed.warning.is_none());
            }

            #[test]
            fn never_panics_on_tricky_text(text in tricky_text()) {
                let parsed = safe_parse(&text);
                prop_assert!(parsed.value.is_none() || parsed.warning.is_none());
            }

            /// Candidates are ordered, disjoint and bracket-matched, so stage 3 hands each byte
            /// to the parser at most once.
            #[test]
            fn spans_are_disjoint_and_matched(text in tricky_text()) {
                let t = text.as_bytes();
                let spans = top_level_spans(t);
                for w in spans.windows(2) {
                    prop_assert!(w[0].1 < w[1].0);
                }
                for &(open, close) in &spans {
                    prop_assert!(open < close);
                    prop_assert_eq!(t[open], opener_of(t[close]));
                }
            }
        }
    }
}
