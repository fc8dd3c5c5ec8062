//! The fast front-end target: any bytes through the whole `tfc check` front end — the JSON/JSONC
//! reader, lowering with the schema checks, every static check (plain, and strict with known
//! arguments) — without rendering (`check_render` renders). No panic; every diagnostic span and
//! label span lies inside the input on char boundaries; every message is non-empty; a small
//! input checked twice gives the same diagnostics (the checker is deterministic).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tfc::check::check_source;
use tfc::source::Span;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        // Invalid UTF-8 stops at the reader: one E0001 inside the input.
        for diag in tfc::json::parse_bytes(data).diagnostics {
            let span = diag.span.expect("the UTF-8 error has a span");
            assert!(
                span.start <= span.end && span.end as usize <= data.len(),
                "{span:?}"
            );
        }
        return;
    };
    let inside = |span: Span| {
        assert!(span.start <= span.end, "{span:?}");
        assert!(
            span.end as usize <= text.len(),
            "{span:?} past {}",
            text.len()
        );
        assert!(text.is_char_boundary(span.start as usize), "{span:?}");
        assert!(text.is_char_boundary(span.end as usize), "{span:?}");
    };
    let (inv, lower) = tfc_fuzz::check_setup();
    let options = tfc_fuzz::check_options(&inv);
    // The determinism re-check (the third run) only on small inputs, to keep the target fast.
    let runs = &options[..if data.len() <= 4096 { 3 } else { 2 }];
    let mut first = Vec::new();
    for (i, opts) in runs.iter().enumerate() {
        let checked = check_source(text, &lower, opts);
        let mut codes = Vec::new();
        for diag in &checked.diagnostics {
            if let Some(span) = diag.span {
                inside(span);
            }
            for label in &diag.labels {
                inside(label.span);
            }
            assert!(!diag.message.is_empty());
            codes.push((diag.code.as_str(), diag.span));
        }
        if i == 0 {
            first = codes;
        } else if i == 2 {
            assert_eq!(first, codes, "checking the same input twice differs");
        }
    }
});
