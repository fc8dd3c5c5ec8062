//! Edits of a test file's text that keep everything else as written — comments, layout, key
//! order: a test appended to `tests` (`--from-run -o FILE`), and the plain-string `output` and
//! `prompts` matchers set to what the run produced (`--update`, SPEC §17 "Output"). Each edit
//! replaces one span the span-keeping reader recorded; new strings are written with JSON's
//! escapes.

use crate::json::{Kind, Node};
use crate::source::Span;
use crate::value::Value;

use super::model::{Matcher, MatcherKind, TestCase};
use super::{FileReport, TestReport};

/// `text` with each `(span, replacement)` applied (spans must not overlap; insertions at one
/// place land in the order given).
pub fn apply(text: &str, edits: Vec<(Span, String)>) -> String {
    let mut edits: Vec<(usize, (Span, String))> = edits.into_iter().enumerate().collect();
    edits.sort_by_key(|(i, (s, _))| std::cmp::Reverse((s.start, *i)));
    let mut out = text.to_owned();
    for (_, (span, new)) in edits {
        out.replace_range(span.start as usize..span.end as usize, &new);
    }
    out
}

/// A string as a JSON literal (quotes and escapes).
pub fn json_string(s: &str) -> String {
    Value::from(s).to_json()
}

/// How wide a line of a written test may grow before a container is broken over lines.
const WIDTH: usize = 90;

/// `value` (a test) as JSON for people, its lines after the first indented by `indent`: a
/// member per line, two spaces deeper per level, except that a container fitting on its line
/// stays on it (`"publish": {"reject": "not yet"}`).
fn pretty_at(value: &Value, indent: &str) -> String {
    let mut out = String::new();
    readable(value, indent, indent.len(), true, &mut out);
    out
}

/// `v` on one line, `, ` and `: ` between its parts.
fn inline(v: &Value) -> String {
    match v {
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", json_string(k), inline(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        scalar => scalar.to_json(),
    }
}

/// `v` written at column `used` of a line indented by `indent`; `broken`: over lines even if
/// it would fit.
fn readable(v: &Value, indent: &str, used: usize, broken: bool, out: &mut String) {
    let one = inline(v);
    let empty = match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => true,
    };
    if empty || (!broken && used + one.len() <= WIDTH) {
        out.push_str(&one);
        return;
    }
    let inner = format!("{indent}  ");
    let (open, close) = match v {
        Value::Array(_) => ('[', ']'),
        _ => ('{', '}'),
    };
    out.push(open);
    let mut first = true;
    let mut item = |key: Option<&str>, child: &Value, out: &mut String| {
        out.push_str(if first { "\n" } else { ",\n" });
        first = false;
        out.push_str(&inner);
        let mut used = inner.len();
        if let Some(k) = key {
            let k = json_string(k);
            used += k.len() + 2;
            out.push_str(&k);
            out.push_str(": ");
        }
        readable(child, &inner, used, false, out);
    };
    match v {
        Value::Array(items) => items.iter().for_each(|c| item(None, c, out)),
        Value::Object(m) => m.iter().for_each(|(k, c)| item(Some(k), c, out)),
        _ => {}
    }
    out.push('\n');
    out.push_str(indent);
    out.push(close);
}

/// A new test file naming `flow` with one test, `case`.
pub fn new_file(flow: &str, case: &Value) -> String {
    format!(
        "{{\n  \"flow\": {},\n  \"tests\": [\n    {}\n  ]\n}}\n",
        json_string(flow),
        pretty_at(case, "    ")
    )
}

/// The names of the tests a test file's text holds (for a unique new name).
pub fn test_names(text: &str) -> Vec<String> {
    let parsed = crate::json::parse(text);
    let Some(Kind::Array(items)) = parsed
        .root
        .as_ref()
        .and_then(|r| r.get("tests"))
        .map(|t| &t.kind)
    else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|t| {
            t.get("name")
                .and_then(Node::as_str)
                .map(|s| s.value.clone())
        })
        .collect()
}

/// `name`, or `name (2)`, `name (3)`… — the first that `taken` does not hold.
pub fn unique_name(name: &str, taken: &[String]) -> String {
    if !taken.iter().any(|t| t == name) {
        return name.to_owned();
    }
    (2..)
        .map(|n| format!("{name} ({n})"))
        .find(|n| !taken.contains(n))
        .expect("some number is free")
}

/// The whitespace that begins the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Past whitespace and `//` / `/* */` comments from `at`.
fn skip_blank(text: &str, mut at: usize) -> usize {
    loop {
        let rest = &text[at..];
        let trimmed = rest.trim_start();
        at += rest.len() - trimmed.len();
        if let Some(after) = trimmed.strip_prefix("//") {
            at += 2 + after.find('\n').unwrap_or(after.len());
        } else if let Some(after) = trimmed.strip_prefix("/*") {
            at += 2 + after.find("*/").map_or(after.len(), |i| i + 2);
        } else {
            return at;
        }
    }
}

/// `text` (a test file) with `case` appended to its `tests` array, written at the indentation
/// of the tests before it; `Err` says why it cannot be (not valid JSON, no object, `tests`
/// not an array).
pub fn append_case(text: &str, case: &Value) -> Result<String, String> {
    let parsed = crate::json::parse(text);
    if let Some(d) = parsed.diagnostics.iter().find(|d| d.is_error()) {
        return Err(format!("it is not valid JSON ({})", d.message));
    }
    let Some(root) = parsed.root else {
        return Err("it is empty".into());
    };
    let Kind::Object(members) = &root.kind else {
        return Err(format!(
            "it holds {} instead of a test file object",
            root.type_name()
        ));
    };
    let Some(tests) = members.iter().find(|m| m.key.value == "tests") else {
        // No `tests` yet: one is added after the last member (or inside `{}`).
        let outer = line_indent(text, root.span.start as usize).to_owned();
        let inner = format!("{outer}  ");
        let member = format!(
            "\"tests\": [\n{inner}  {}\n{inner}]",
            pretty_at(case, &format!("{inner}  "))
        );
        return Ok(match members.last() {
            Some(last) => after_item(text, last.value.span.end as usize, &inner, &member),
            None => {
                let at = root.span.start as usize + 1;
                apply(
                    text,
                    vec![(
                        Span::new(at as u32, at as u32),
                        format!("\n{inner}{member}\n{outer}"),
                    )],
                )
            }
        });
    };
    let Kind::Array(items) = &tests.value.kind else {
        return Err(format!(
            "its 'tests' is {} instead of an array",
            tests.value.type_name()
        ));
    };
    Ok(match items.last() {
        Some(last) => {
            let indent = line_indent(text, last.span.start as usize).to_owned();
            after_item(
                text,
                last.span.end as usize,
                &indent,
                &pretty_at(case, &indent),
            )
        }
        None => {
            let open = tests.value.span.start as usize + 1;
            let outer = line_indent(text, open).to_owned();
            let inner = format!("{outer}  ");
            let new = format!("\n{inner}{}\n{outer}", pretty_at(case, &inner));
            apply(text, vec![(Span::new(open as u32, open as u32), new)])
        }
    })
}

/// `text` with `item` added on a line of its own (at `indent`) after the list item or member
/// ending at `end`: the comma goes right after that item, the new one after a comment that
/// ends its line; a trailing comma after the last item stays, and the new item gets one.
fn after_item(text: &str, end: usize, indent: &str, item: &str) -> String {
    let next = skip_blank(text, end);
    let trailing = text[next..].starts_with(',');
    let mut edits = Vec::new();
    let from = if trailing {
        next + 1
    } else {
        edits.push((Span::new(end as u32, end as u32), ",".to_owned()));
        end
    };
    // After the comment that ends this line, if only that follows.
    let at = match text[from..].find('\n') {
        Some(i)
            if {
                let rest = text[from..from + i].trim();
                rest.is_empty() || rest.starts_with("//")
            } =>
        {
            from + i
        }
        _ => from,
    };
    let comma = if trailing { "," } else { "" };
    edits.push((
        Span::new(at as u32, at as u32),
        format!("\n{indent}{item}{comma}"),
    ));
    apply(text, edits)
}

/// What `--update` changes in one file.
#[derive(Clone, Debug, Default)]
pub struct Update {
    /// Each matcher's span and its new text.
    pub edits: Vec<(Span, String)>,
    /// Matchers left as they were, and why.
    pub notes: Vec<String>,
}

/// The `--update` edits of a file whose tests ran: every plain-string matcher of `output`,
/// `phases.<id>.output` and `prompts` set to what the test's run produced (a matcher written
/// as an object — `{"equals"}`, `{"contains"}`… — is never touched).
pub fn update(text: &str, report: &FileReport) -> Update {
    let mut u = Update::default();
    for t in &report.tests {
        let Some(case) = report.checked.file.tests.iter().find(|c| c.name == t.name) else {
            continue;
        };
        update_case(text, case, t, &mut u);
    }
    u
}

/// Is `m` written as a plain string (not `{"equals": …}`)?
fn plain<'m>(text: &str, m: &'m Matcher) -> Option<&'m str> {
    match &m.kind {
        MatcherKind::Equals(s) if text[m.span.start as usize..].starts_with('"') => Some(s),
        _ => None,
    }
}

fn update_case(text: &str, case: &TestCase, t: &TestReport, u: &mut Update) {
    let Some(record) = &t.record else {
        return;
    };
    let mut set = |m: &Matcher, actual: &str| {
        if plain(text, m).is_some_and(|s| s != actual) {
            u.edits.push((m.span, json_string(actual)));
        }
    };
    if let Some(m) = &case.expect.output {
        set(m, &record.final_output);
    }
    for p in &case.expect.phases {
        if let (Some(m), Some(rec)) = (&p.value.output, record.phases.get(&p.name)) {
            set(m, &rec.output);
        }
    }
    for p in &case.expect.prompts {
        let (pattern, m) = &p.value;
        if plain(text, m).is_none() {
            continue;
        }
        let mut prompts: Vec<&str> = t
            .calls
            .iter()
            .filter(|c| pattern.matches(&c.node))
            .map(|c| c.prompt.as_str())
            .collect();
        prompts.dedup();
        match prompts.as_slice() {
            [one] => set(m, one),
            [] => u.notes.push(format!(
                "{}: prompts.{} left as it is: no call of it was made",
                t.name, p.name
            )),
            _ => u.notes.push(format!(
                "{}: prompts.{} left as it is: its calls had {} different prompts (one string cannot match them all)",
                t.name,
                p.name,
                prompts.len()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(name: &str) -> Value {
        crate::value::parse_json(&format!(r#"{{"name": "{name}", "answers": {{"*": "x"}}}}"#))
            .unwrap()
    }

    #[test]
    fn a_new_file_names_its_flow_and_holds_the_test() {
        let text = new_file("flows/ship.json", &case("t"));
        assert_eq!(
            text,
            "{\n  \"flow\": \"flows/ship.json\",\n  \"tests\": [\n    {\n      \"name\": \"t\",\n      \"answers\": {\"*\": \"x\"}\n    }\n  ]\n}\n"
        );
        assert_eq!(test_names(&text), ["t"]);
    }

    #[test]
    fn appending_keeps_comments_and_layout() {
        let text = "// the ship flow's tests\n{\n  \"flow\": \"ship.json\", /* here */\n  \"tests\": [\n    {\"name\": \"a\"} // first\n  ]\n}\n";
        let out = append_case(text, &case("b")).unwrap();
        assert_eq!(
            out,
            "// the ship flow's tests\n{\n  \"flow\": \"ship.json\", /* here */\n  \"tests\": [\n    {\"name\": \"a\"}, // first\n    {\n      \"name\": \"b\",\n      \"answers\": {\"*\": \"x\"}\n    }\n  ]\n}\n"
        );
        assert_eq!(test_names(&out), ["a", "b"]);
        // A trailing comma stays one.
        let out = append_case(
            "{\"flow\": \"f\", \"tests\": [\n  {\"name\": \"a\"},\n]}",
            &case("b"),
        )
        .unwrap();
        assert_eq!(test_names(&out), ["a", "b"]);
        assert!(!out.contains(",,"), "{out}");
        // All on one line.
        let out = append_case(
            "{\"flow\": \"f\", \"tests\": [{\"name\": \"a\"}]}",
            &case("b"),
        )
        .unwrap();
        assert_eq!(test_names(&out), ["a", "b"]);
        // An empty array, and no array at all.
        let out = append_case("{\"flow\": \"f\", \"tests\": []}", &case("b")).unwrap();
        assert_eq!(test_names(&out), ["b"]);
        let out = append_case("{\"flow\": \"f\" // the flow\n}", &case("b")).unwrap();
        assert_eq!(test_names(&out), ["b"]);
        assert!(out.contains("// the flow"), "{out}");
        assert!(append_case("{\"tests\": 3}", &case("b")).is_err());
        assert!(append_case("[1", &case("b")).is_err());
    }

    #[test]
    fn long_containers_break_over_lines_and_short_ones_stay_on_theirs() {
        let long = "x".repeat(80);
        let v = crate::value::parse_json(&format!(
            r#"{{"name": "t", "expect": {{"phases": {{"a": {{"status": "done"}}}}, "output": "{long}"}}}}"#
        ))
        .unwrap();
        assert_eq!(
            pretty_at(&v, "  "),
            format!(
                "{{\n    \"name\": \"t\",\n    \"expect\": {{\n      \"phases\": {{\"a\": {{\"status\": \"done\"}}}},\n      \"output\": \"{long}\"\n    }}\n  }}"
            )
        );
        assert_eq!(pretty_at(&Value::Object(Default::default()), ""), "{}");
    }

    #[test]
    fn names_are_made_unique() {
        let taken = vec!["run a".to_owned(), "run a (2)".to_owned()];
        assert_eq!(unique_name("run a", &taken), "run a (3)");
        assert_eq!(unique_name("run b", &taken), "run b");
    }

    #[test]
    fn span_edits_keep_everything_else() {
        let text = "{ // c1\n  \"output\": \"old\", /* c2 */ \"x\": 1\n}";
        let start = text.find("\"old\"").unwrap() as u32;
        let out = apply(
            text,
            vec![(
                Span::new(start, start + 5),
                json_string("new \"quoted\"\n\\ line"),
            )],
        );
        assert_eq!(
            out,
            "{ // c1\n  \"output\": \"new \\\"quoted\\\"\\n\\\\ line\", /* c2 */ \"x\": 1\n}"
        );
        assert_eq!(
            crate::json::parse(&out)
                .root
                .unwrap()
                .get("output")
                .unwrap()
                .as_str()
                .unwrap()
                .value,
            "new \"quoted\"\n\\ line"
        );
    }
}
