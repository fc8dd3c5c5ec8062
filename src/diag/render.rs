//! Rendering diagnostics: ariadne reports for people, a stable JSON object for tools.
//! This is the only module that uses ariadne.

use super::{Diagnostic, Severity};
use crate::source::Source;
use ariadne::{Color, Config, IndexType, Label, Report, ReportKind};

/// Render one diagnostic as an ariadne report (byte-indexed).
pub fn render(diag: &Diagnostic, source: &Source, color: bool) -> String {
    let name = source.name.as_str();
    if diag.span.is_none() && diag.labels.is_empty() {
        return render_unplaced(diag, name, color);
    }
    let span = diag.span.unwrap_or_default();
    // Inside the text and on char boundaries (ariadne slices lines at these offsets).
    let clamp = |r: std::ops::Range<usize>| {
        let text = source.text.as_str();
        let mut start = r.start.min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = r.end.clamp(start, text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        start..end
    };
    let kind = match diag.severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
    };
    let primary = match diag.severity {
        Severity::Error => Color::Red,
        Severity::Warning => Color::Yellow,
    };
    let mut report = Report::build(kind, (name, clamp(span.range())))
        .with_config(
            Config::default()
                .with_index_type(IndexType::Byte)
                .with_color(color),
        )
        .with_code(diag.code.as_str())
        .with_message(&diag.message);
    // ariadne starts a new source group whenever a label lies above the previous one, which
    // repeats the file header with a wrong location: add every label in file order.
    let mut labels: Vec<(std::ops::Range<usize>, &str, Color)> = Vec::new();
    if diag.span.is_some() {
        let text = diag.label.as_deref().unwrap_or(diag.code.name());
        labels.push((clamp(span.range()), text, primary));
    }
    for label in &diag.labels {
        labels.push((clamp(label.span.range()), &label.message, Color::Blue));
    }
    labels.sort_by_key(|(r, _, _)| (r.start, r.end));
    for (range, text, color) in labels {
        report = report.with_label(
            Label::new((name, range))
                .with_message(text)
                .with_color(color),
        );
    }
    if let Some(help) = &diag.help {
        report = report.with_help(help);
    }
    let mut out = Vec::new();
    let cache = (name, ariadne::Source::from(source.text.as_str()));
    if report.finish().write(cache, &mut out).is_err() {
        return format!(
            "{}[{}]: {}\n",
            diag.severity.as_str(),
            diag.code.as_str(),
            diag.message
        );
    }
    String::from_utf8_lossy(&out).into_owned()
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
        let (line, column) = source.line_col(span.start);
        let mut s = Map::default();
        s.insert("start".into(), Value::Number(span.start as f64));
        s.insert("end".into(), Value::Number(span.end as f64));
        s.insert("line".into(), Value::Number(line as f64));
        s.insert("column".into(), Value::Number(column as f64));
        o.insert("span".into(), Value::Object(s));
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
