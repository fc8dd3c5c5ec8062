//! Any bytes through the whole `tfc check` front end: the JSON/JSONC reader, lowering with the
//! schema checks, every static check (plain, strict with known arguments), and the renderer.
//! No panic; every diagnostic span and label span lies inside the input on char boundaries.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tfc::check::{CheckOptions, check_source};
use tfc::diag::render::{render, to_json};
use tfc::flow::{Invocation, LowerOptions};
use tfc::source::{Source, Span};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        // Invalid UTF-8 stops at the reader: one E0001 inside the input.
        for diag in tfc::json::parse_bytes(data).diagnostics {
            let span = diag.span.expect("the UTF-8 error has a span");
            assert!(span.start <= span.end && span.end as usize <= data.len(), "{span:?}");
        }
        return;
    };
    let inside = |span: Span| {
        assert!(span.start <= span.end, "{span:?}");
        assert!(span.end as usize <= text.len(), "{span:?} past {}", text.len());
        assert!(text.is_char_boundary(span.start as usize), "{span:?}");
        assert!(text.is_char_boundary(span.end as usize), "{span:?}");
    };
    let lower = LowerOptions {
        default_name: Some("fuzz".into()),
    };
    // Known (if odd) invocation arguments turn on E0502/E0503/W0202/W0203/W0310.
    let inv = Invocation {
        pairs: vec![("pr".into(), "1".into()), ("codebase".into(), "/x".into())],
        ..Invocation::default()
    };
    let runs = [
        CheckOptions::default(),
        CheckOptions {
            strict: Some(true),
            args: Some(&inv),
            cwd: Some("/y".into()),
            ..CheckOptions::default()
        },
    ];
    let source = Source::new("fuzz.json", text);
    for opts in &runs {
        let checked = check_source(text, &lower, opts);
        for diag in &checked.diagnostics {
            if let Some(span) = diag.span {
                inside(span);
            }
            for label in &diag.labels {
                inside(label.span);
            }
            assert!(!diag.message.is_empty());
            let _ = render(diag, &source, false);
            let _ = to_json(diag, &source);
        }
    }
});
