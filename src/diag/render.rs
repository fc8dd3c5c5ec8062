//! Rendering diagnostics: ariadne reports for people, a stable JSON object for tools.
//! This is the only module that uses ariadne.
//!
//! Text output is proportional to what is shown, not to the file: a report is drawn from an
//! `Excerpt` of the lines its labels touch (the file's line index is built once, in
//! [`Source`]); a line longer than [`LONG_LINE`] bytes is cut to windows around the label ends
//! with `…` in the gaps; and [`render_file`] shows at most [`MAX_SHOWN`] diagnostics of a file,
//! then a one-line summary of the rest (`--format json` keeps them all).

use std::ops::Range;

use super::{Diagnostic, Severity};
use crate::source::Source;
use ariadne::{Color, Config, IndexType, Label, Report, ReportKind};

/// Lines longer than this (bytes, without the newline) are cut around the labels.
pub const LONG_LINE: usize = 200;
/// Bytes kept on each side of a label's start and end on a cut line.
const CONTEXT: usize = 60;
/// At most this many diagnostics of one file are rendered as text.
pub const MAX_SHOWN: usize = 50;
/// Marks the text cut out of a long line.
const ELLIPSIS: &str = "…";

/// Render the diagnostics of one file, in order: at most [`MAX_SHOWN`] of them (errors take
/// the places first, so a flood of warnings never hides an error), then one line counting
/// the others.
pub fn render_file(diags: &[Diagnostic], source: &Source, color: bool) -> String {
    let errors = diags.iter().filter(|d| d.is_error()).count();
    let mut error_places = errors.min(MAX_SHOWN);
    let mut warning_places = MAX_SHOWN - error_places;
    let (mut more_errors, mut more_warnings) = (0usize, 0usize);
    let mut out = String::new();
    for d in diags {
        let (places, more) = if d.is_error() {
            (&mut error_places, &mut more_errors)
        } else {
            (&mut warning_places, &mut more_warnings)
        };
        if *places > 0 {
            *places -= 1;
            out.push_str(&render(d, source, color));
        } else {
            *more += 1;
        }
    }
    if more_errors + more_warnings > 0 {
        out.push_str(&more_line(more_errors, more_warnings, &source.name));
    }
    out
}

/// `… and 3950 more errors, 1 more warning in flow.json (…)`.
fn more_line(errors: usize, warnings: usize, name: &str) -> String {
    let plural = |n: usize, word: &str| format!("{n} more {word}{}", if n == 1 { "" } else { "s" });
    let mut parts = Vec::new();
    if errors > 0 {
        parts.push(plural(errors, "error"));
    }
    if warnings > 0 {
        parts.push(plural(warnings, "warning"));
    }
    format!(
        "{ELLIPSIS} and {} in {name} (not shown; `tfc check --format json` lists them all)\n",
        parts.join(", ")
    )
}

/// Render one diagnostic as an ariadne report (byte-indexed). A label in another file (a
/// saved sub-flow's declaration) is drawn under that file's own header, after this file's.
pub fn render(diag: &Diagnostic, source: &Source, color: bool) -> String {
    let name = source.name.as_str();
    if diag.span.is_none() && diag.labels.is_empty() {
        return render_unplaced(diag, name, color);
    }
    let kind = match diag.severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
    };
    let primary = match diag.severity {
        Severity::Error => Color::Red,
        Severity::Warning => Color::Yellow,
    };
    // The files drawn: this one first, then each other file in the order its labels come.
    let mut files: Vec<Drawn<'_>> = vec![Drawn::new(source)];
    if let Some(span) = diag.span {
        let text = diag.label.as_deref().unwrap_or(diag.code.name());
        files[0].add(span.range(), text, primary);
    }
    for label in &diag.labels {
        let at = match &label.file {
            None => 0,
            Some(other) => match files.iter().position(|f| f.source.name == other.name) {
                Some(i) => i,
                None => {
                    files.push(Drawn::new(other));
                    files.len() - 1
                }
            },
        };
        files[at].add(label.span.range(), &label.message, Color::Blue);
    }
    // Without a primary span (or labels here) the report is placed at the first label.
    let (home, at) = match diag.span {
        Some(s) => (0, files[0].clamp(s.range())),
        None => match files.iter().position(|f| !f.labels.is_empty()) {
            Some(i) => (i, files[i].labels[0].0.clone()),
            None => (0, 0..0),
        },
    };
    let excerpts: Vec<Excerpt> = files.iter().map(Drawn::excerpt).collect();
    let home_name = files[home].source.name.clone();
    let mut report = Report::build(kind, (home_name, excerpts[home].map_range(&at)))
        .with_config(
            Config::default()
                .with_index_type(IndexType::Byte)
                .with_color(color),
        )
        .with_code(diag.code.as_str())
        .with_message(&diag.message);
    for (file, excerpt) in files.iter().zip(&excerpts) {
        for (range, text, color) in &file.labels {
            report = report.with_label(
                Label::new((file.source.name.clone(), excerpt.map_range(range)))
                    .with_message(text)
                    .with_color(*color),
            );
        }
    }
    if let Some(help) = &diag.help {
        report = report.with_help(help);
    }
    let mut out = Vec::new();
    let cache = ariadne::sources(
        files
            .iter()
            .zip(&excerpts)
            .map(|(f, e)| (f.source.name.clone(), e.text.clone())),
    );
    if report.finish().write(cache, &mut out).is_err() {
        return format!(
            "{}[{}]: {}\n",
            diag.severity.as_str(),
            diag.code.as_str(),
            diag.message
        );
    }
    let mut rendered = String::from_utf8_lossy(&out).into_owned();
    // Each file's header shows a location counted in the excerpt (and, for a file other than
    // the report's own, in chars read as bytes): write the file's own line and column.
    for (i, file) in files.iter().enumerate() {
        let first = if i == home {
            Some(at.start)
        } else {
            file.labels.iter().map(|(r, _, _)| r.start).min()
        };
        let Some(first) = first else { continue };
        let (line, column) = file.source.line_col(first as u32);
        let head = format!("─[ {}:", file.source.name);
        let Some(from) = rendered.find(&head).map(|h| h + head.len()) else {
            continue;
        };
        // Only when ariadne placed it on the same line (a span at the very end of the file is
        // shown on the last line, as ariadne has it).
        let Some(len) = rendered[from..].find(" ]") else {
            continue;
        };
        if rendered[from..from + len]
            .split_once(':')
            .is_some_and(|(l, _)| l == line.to_string())
        {
            rendered.replace_range(from..from + len, &format!("{line}:{column}"));
        }
    }
    rendered
}

/// One file of a report and its labels, in file order (ariadne starts a new source group
/// whenever a label lies above the previous one, which repeats the file header with a wrong
/// location).
struct Drawn<'a> {
    source: &'a Source,
    labels: Vec<(Range<usize>, &'a str, Color)>,
}

impl<'a> Drawn<'a> {
    fn new(source: &'a Source) -> Drawn<'a> {
        Drawn {
            source,
            labels: Vec::new(),
        }
    }

    /// Inside the text and on char boundaries (ariadne slices lines at these offsets).
    fn clamp(&self, r: Range<usize>) -> Range<usize> {
        let text = self.source.text.as_str();
        let start = floor_boundary(text, r.start.min(text.len()));
        let end = ceil_boundary(text, r.end.clamp(start, text.len()));
        start..end
    }

    fn add(&mut self, r: Range<usize>, text: &'a str, color: Color) {
        let r = self.clamp(r);
        let at = self
            .labels
            .partition_point(|(l, _, _)| (l.start, l.end) <= (r.start, r.end));
        self.labels.insert(at, (r, text, color));
    }

    fn excerpt(&self) -> Excerpt {
        let ranges: Vec<Range<usize>> = self.labels.iter().map(|(r, _, _)| r.clone()).collect();
        Excerpt::new(self.source, &ranges)
    }
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// The lines a report shows, from the first line any label touches to the last, each line
/// longer than [`LONG_LINE`] cut to windows of [`CONTEXT`] bytes around the label ends on it
/// (a long line without label ends, inside a multi-line label, keeps only its start). Offsets
/// are mapped from the file into the excerpt through the kept pieces. The lines above are
/// empty (ariadne 0.6 numbers margin lines from the start of its source text).
struct Excerpt {
    text: String,
    /// The kept pieces of the file, in order: (file offset, excerpt offset, length).
    pieces: Vec<(usize, usize, usize)>,
}

impl Excerpt {
    fn new(source: &Source, ranges: &[Range<usize>]) -> Excerpt {
        let text = source.text.as_str();
        let last_byte = |r: &Range<usize>| r.end.saturating_sub(1).max(r.start);
        let first_line = ranges
            .iter()
            .map(|r| source.line_index(r.start))
            .min()
            .unwrap_or(0);
        let last_line = ranges
            .iter()
            .map(|r| source.line_index(last_byte(r)))
            .max()
            .unwrap_or(first_line);
        let mut ex = Excerpt {
            text: "\n".repeat(first_line),
            pieces: Vec::new(),
        };
        for line in first_line..=last_line {
            let whole = source.line_range(line);
            let end = if text[whole.clone()].ends_with('\n') {
                whole.end - 1
            } else {
                whole.end
            };
            if end - whole.start <= LONG_LINE {
                ex.keep(text, whole);
                continue;
            }
            let mut windows: Vec<Range<usize>> = ranges
                .iter()
                .flat_map(|r| [r.start, r.end])
                .filter(|p| (whole.start..=end).contains(p))
                .map(|p| p.saturating_sub(CONTEXT).max(whole.start)..(p + CONTEXT).min(end))
                .collect();
            if windows.is_empty() {
                windows.push(whole.start..whole.start + 2 * CONTEXT);
            }
            windows.sort_by_key(|w| w.start);
            let mut merged: Vec<Range<usize>> = Vec::new();
            for w in windows {
                let w = floor_boundary(text, w.start)..ceil_boundary(text, w.end);
                match merged.last_mut() {
                    // A gap no wider than the marker is kept rather than replaced.
                    Some(m) if w.start <= m.end + ELLIPSIS.len() => m.end = m.end.max(w.end),
                    _ => merged.push(w),
                }
            }
            let mut at = whole.start;
            for w in merged {
                if w.start > at {
                    ex.text.push_str(ELLIPSIS);
                }
                at = w.end;
                ex.keep(text, w);
            }
            if at < end {
                ex.text.push_str(ELLIPSIS);
            }
            ex.keep(text, end..whole.end);
        }
        ex
    }

    fn keep(&mut self, text: &str, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        self.pieces
            .push((range.start, self.text.len(), range.end - range.start));
        self.text.push_str(&text[range]);
    }

    /// A file offset in the excerpt; one in a cut gap lands at the end of the piece before it.
    fn map(&self, offset: usize) -> usize {
        let i = self.pieces.partition_point(|p| p.0 <= offset);
        match i.checked_sub(1).map(|i| self.pieces[i]) {
            Some((from, to, len)) => to + (offset - from).min(len),
            None => self.pieces.first().map_or(0, |p| p.1),
        }
    }

    fn map_range(&self, r: &Range<usize>) -> Range<usize> {
        let start = self.map(r.start);
        start..self.map(r.end).max(start)
    }
}

/// A diagnostic about the file as a whole (ariadne would drop its help line): the header,
/// the file, and the help, in the same frame as located reports.
fn render_unplaced(diag: &Diagnostic, name: &str, color: bool) -> String {
    let (kind, paint) = match diag.severity {
        Severity::Error => ("Error", "\x1b[31m"),
        Severity::Warning => ("Warning", "\x1b[33m"),
    };
    let (on, off) = if color { (paint, "\x1b[0m") } else { ("", "") };
    let mut out = format!(
        "{on}[{}] {kind}:{off} {}\n   ╭─[ {name} ]\n",
        diag.code.as_str(),
        diag.message
    );
    if let Some(help) = &diag.help {
        out.push_str(&format!("   │\n   │ Help: {help}\n"));
    }
    out.push_str("───╯\n");
    out
}

/// A span as JSON: `{start, end, line, column}` (byte offsets, 1-based line and column).
pub fn span_json(span: crate::source::Span, source: &Source) -> crate::value::Value {
    use crate::value::{Map, Value};
    let (line, column) = source.line_col(span.start);
    let mut s = Map::default();
    s.insert("start".into(), Value::Number(span.start as f64));
    s.insert("end".into(), Value::Number(span.end as f64));
    s.insert("line".into(), Value::Number(line as f64));
    s.insert("column".into(), Value::Number(column as f64));
    Value::Object(s)
}

/// The stable JSON form of a diagnostic (SPEC §7.1): byte offsets and 1-based line/column.
pub fn to_json(diag: &Diagnostic, source: &Source) -> crate::value::Value {
    use crate::value::{Map, Value};
    let mut o = Map::default();
    o.insert("severity".into(), Value::from(diag.severity.as_str()));
    o.insert("code".into(), Value::from(diag.code.as_str()));
    o.insert("name".into(), Value::from(diag.code.name()));
    o.insert("message".into(), Value::from(diag.message.as_str()));
    o.insert("file".into(), Value::from(source.name.as_str()));
    if let Some(phase) = &diag.phase {
        o.insert("phase".into(), Value::from(phase.as_str()));
    }
    if let Some(span) = diag.span {
        o.insert("span".into(), span_json(span, source));
    }
    if !diag.labels.is_empty() {
        let labels = diag
            .labels
            .iter()
            .map(|l| {
                let mut m = Map::default();
                m.insert("start".into(), Value::Number(l.span.start as f64));
                m.insert("end".into(), Value::Number(l.span.end as f64));
                m.insert("message".into(), Value::from(l.message.as_str()));
                if let Some(file) = &l.file {
                    m.insert("file".into(), Value::from(file.name.as_str()));
                }
                Value::Object(m)
            })
            .collect();
        o.insert("labels".into(), Value::Array(labels));
    }
    if let Some(help) = &diag.help {
        o.insert("help".into(), Value::from(help.as_str()));
    }
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::{Code, Diagnostic};
    use crate::source::Span;

    #[test]
    fn labels_above_the_primary_share_one_header() {
        let source = Source::new("f.json", "line one\nline two\nline three\n");
        let d = Diagnostic::new(Code::OpposingGuards, "m")
            .at(Span::new(18, 28))
            .label(Span::new(0, 4), "earlier");
        let text = render(&d, &source, false);
        assert_eq!(text.matches("f.json").count(), 1, "{text}");
        assert!(text.find("earlier").unwrap() < text.find("opposing-guards").unwrap());
    }

    #[test]
    fn unplaced_diagnostics_keep_their_help() {
        let source = Source::new("f.json", "{}");
        let d = Diagnostic::new(Code::CwdMismatch, "somewhere else").help("run it there");
        assert_eq!(
            render(&d, &source, false),
            "[W0310] Warning: somewhere else\n   ╭─[ f.json ]\n   │\n   │ Help: run it there\n───╯\n"
        );
    }

    /// One line of `n` filler bytes with `"key"` at byte `at`.
    fn long_line(n: usize, at: usize) -> String {
        let mut line = "x".repeat(n);
        line.replace_range(at..at + 5, "\"key\"");
        line
    }

    #[test]
    fn long_lines_are_cut_around_the_labels() {
        let text = format!("{{\n{}\n}}\n", long_line(40_000, 20_000));
        let source = Source::new("f.json", text);
        let at = 2 + 20_000;
        let d = Diagnostic::new(Code::UnknownField, "unknown field 'key'")
            .at(Span::new(at as u32, at as u32 + 5))
            .label(Span::new(2, 3), "line start")
            .label(Span::new(39_000, 39_001), "far right");
        let text = render(&d, &source, false);
        assert!(text.len() < 4_000, "{} bytes:\n{text}", text.len());
        // The file's line and column, not the excerpt's.
        assert!(text.contains("f.json:2:20001 ]"), "{text}");
        let shown = text.lines().find(|l| l.contains("\"key\"")).unwrap();
        assert_eq!(shown.matches('…').count(), 3, "{shown}");
        for label in ["unknown-field", "line start", "far right"] {
            assert!(text.contains(label), "{label}: {text}");
        }
        // The underline sits under the key: same char column in the drawn line and the mark.
        let key_col = shown.chars().position(|c| c == '"').unwrap();
        let marks = text.lines().find(|l| l.contains('┬')).unwrap();
        assert!(
            marks
                .chars()
                .nth(key_col)
                .is_some_and(|c| c == '─' || c == '┬'),
            "{text}"
        );
    }

    #[test]
    fn short_lines_are_shown_whole_with_their_numbers() {
        let text = "{\n  \"a\": 1,\n  \"b\": 2\n}\n";
        let source = Source::new("f.json", text);
        let d = Diagnostic::new(Code::UnknownField, "m")
            .at(Span::new(14, 17))
            .label(Span::new(4, 7), "first");
        let text = render(&d, &source, false);
        assert!(!text.contains('…'), "{text}");
        assert!(text.contains("f.json:3:3 ]"), "{text}");
        assert!(text.contains(" 2 │   \"a\": 1,"), "{text}");
        assert!(text.contains(" 3 │   \"b\": 2"), "{text}");
    }

    #[test]
    fn at_most_max_shown_per_file_errors_first() {
        let source = Source::new("f.json", "{}\n");
        let warn = Diagnostic::new(Code::DeadEnd, "w").at(Span::new(0, 1));
        let err = Diagnostic::new(Code::UnknownField, "e").at(Span::new(1, 2));
        let mut diags = vec![warn.clone(); MAX_SHOWN];
        diags.extend(vec![err; 3]);
        diags.push(warn);
        let text = render_file(&diags, &source, false);
        assert_eq!(text.matches("[E0003]").count(), 3);
        assert_eq!(text.matches("[W0101]").count(), MAX_SHOWN - 3);
        assert!(
            text.ends_with("… and 4 more warnings in f.json (not shown; `tfc check --format json` lists them all)\n"),
            "{text}"
        );
        let few = render_file(&diags[..2], &source, false);
        assert!(!few.contains("more"), "{few}");
    }

    #[test]
    fn any_spans_on_long_multibyte_lines_render_with_the_files_location() {
        let line = "ab é 漢字 ".repeat(40);
        let text = format!("{{\n{line}\n  short\n{line}{line}\n}}");
        let source = Source::new("f.json", text.as_str());
        let mut seed = 7u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..300 {
            let len = text.len() + 4;
            let (a, b) = (next(len), next(len));
            let (c, d) = (next(len), next(len));
            let diag = Diagnostic::new(Code::UnknownField, "m")
                .at(Span::new(a.min(b) as u32, a.max(b) as u32))
                .label(Span::new(c.min(d) as u32, c.max(d) as u32), "other");
            let out = render(&diag, &source, false);
            let start = a.min(b).min(text.len());
            let mut at = start;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let (l, col) = source.line_col(at as u32);
            assert!(
                out.contains(&format!("f.json:{l}:{col} ]")),
                "{a}..{b}:\n{out}"
            );
            assert!(out.lines().all(|l| l.chars().count() < 1200), "{out}");
        }
    }

    /// A label in another file (a saved sub-flow's declaration) is drawn under that file's
    /// header, at that file's line and column, after this file's labels; JSON names its file.
    #[test]
    fn labels_in_another_file_are_drawn_under_its_own_header() {
        let source = Source::new("parent.json", "{\n  \"with\": {\"v\": \"abc\"}\n}\n");
        let long = format!("{{\n  \"args\": {{{}\"v\": {{}}}}\n}}\n", " ".repeat(400));
        let at = long.find("\"v\"").unwrap() as u32;
        let child = std::sync::Arc::new(Source::new(".tfc/flows/child.json", long.as_str()));
        let d = Diagnostic::new(Code::InvalidArgValue, "bad value")
            .at(Span::new(17, 22))
            .label_in(child.clone(), Span::new(at, at + 3), "declared here");
        let text = render(&d, &source, false);
        let parent_at = text.find("╭─[ parent.json:2:16 ]").expect(&text);
        let child_at = text
            .find(&format!("├─[ .tfc/flows/child.json:2:{} ]", at - 1))
            .expect(&text);
        assert!(parent_at < child_at, "{text}");
        let declared = text.find("declared here").unwrap();
        assert!(declared > child_at, "{text}");
        // The child's long line is cut around its label, not drawn whole.
        assert!(text.lines().all(|l| l.chars().count() < 300), "{text}");
        let json = to_json(&d, &source).to_json();
        assert!(
            json.contains(r#""message":"declared here","file":".tfc/flows/child.json""#),
            "{json}"
        );
        // Only labels in another file carry `file`.
        let here = Diagnostic::new(Code::InvalidArgValue, "m")
            .at(Span::new(17, 22))
            .label(Span::new(4, 10), "here");
        assert!(
            !to_json(&here, &source)
                .to_json()
                .contains(r#""file":".tfc"#)
        );
    }

    #[test]
    fn spans_off_char_boundaries_do_not_panic() {
        let source = Source::new("f.json", "\"é\"");
        let d = Diagnostic::new(Code::JsonSyntax, "m")
            .at(Span::new(2, 3))
            .label(Span::new(1, 2), "x")
            .label(Span::new(9, 12), "past the end");
        let text = render(&d, &source, false);
        assert!(text.contains("E0001"), "{text}");
    }
}
