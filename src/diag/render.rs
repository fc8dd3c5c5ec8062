//! Rendering diagnostics: ariadne reports for people, a stable JSON object for tools.
//! This is the only module that uses ariadne.

use super::{Diagnostic, Severity};
use crate::source::Source;
use ariadne::{Color, Config, IndexType, Label, Report, ReportKind};

/// Render one diagnostic as an ariadne report (byte-indexed).
pub fn render(diag: &Diagnostic, source: &Source, color: bool) -> String {
    let name = source.name.as_str();
    let span = diag.span.unwrap_or_default();
    let clamp = |r: std::ops::Range<usize>| {
        let len = source.text.len();
        r.start.min(len)..r.end.min(len)
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
    if diag.span.is_some() {
        report = report.with_label(
            Label::new((name, clamp(span.range())))
                .with_message(diag.label.as_deref().unwrap_or(diag.code.name()))
                .with_color(primary),
        );
    }
    for label in &diag.labels {
        report = report.with_label(
            Label::new((name, clamp(label.span.range())))
                .with_message(&label.message)
                .with_color(Color::Blue),
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
