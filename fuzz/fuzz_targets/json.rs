//! Any bytes through the span-keeping JSON/JSONC reader: no panic; every diagnostic span and
//! every node span inside the input and on char boundaries; children inside their parents; each
//! string's decoded text maps back inside its literal; `to_value` works on whatever was read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tfc::json::{Kind, Node, Str, parse_bytes};
use tfc::source::Span;

fuzz_target!(|data: &[u8]| {
    let parsed = parse_bytes(data);
    let text = std::str::from_utf8(data).ok();
    let inside = |span: Span| {
        assert!(
            span.start <= span.end && span.end as usize <= data.len(),
            "{span:?}"
        );
        if let Some(text) = text {
            assert!(text.is_char_boundary(span.start as usize), "{span:?}");
            assert!(text.is_char_boundary(span.end as usize), "{span:?}");
        }
    };
    for diag in &parsed.diagnostics {
        inside(diag.span.expect("every JSON diagnostic has a span"));
        for label in &diag.labels {
            inside(label.span);
        }
    }
    if text.is_none() {
        assert!(parsed.root.is_none(), "invalid UTF-8 gives no tree");
    }
    let check_str = |s: &Str| {
        inside(s.span);
        let full = s.file_span(0..s.value.len());
        inside(full);
        assert!(
            s.span.start <= full.start && full.end <= s.span.end,
            "{full:?} {:?}",
            s.span
        );
    };
    let mut stack: Vec<&Node> = parsed.root.iter().collect();
    while let Some(node) = stack.pop() {
        inside(node.span);
        let within = |child: Span| {
            assert!(node.span.start <= child.start && child.end <= node.span.end);
        };
        match &node.kind {
            Kind::String(s) => check_str(s),
            Kind::Array(items) => {
                for item in items {
                    within(item.span);
                    stack.push(item);
                }
            }
            Kind::Object(members) => {
                for member in members {
                    check_str(&member.key);
                    within(member.key.span);
                    within(member.value.span);
                    stack.push(&member.value);
                }
            }
            Kind::Null | Kind::Bool(_) | Kind::Number(_) => {}
        }
    }
    if let Some(root) = &parsed.root {
        let _ = root.to_value();
    }
});
