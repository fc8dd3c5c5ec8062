//! The slow front-end target: like `check`, then every diagnostic is rendered as text (ariadne)
//! and as JSON. Rendering must not panic, must not produce an empty report, and the JSON form
//! must carry the diagnostic's code. A diagnostic the strict check repeats from the plain one
//! is rendered once.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tfc::check::check_source;
use tfc::diag::render::{render, to_json};
use tfc::source::Source;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (inv, lower) = tfc_fuzz::check_setup();
    let source = Source::new("fuzz.json", text);
    // Rendering is a function of the diagnostic and the source: a diagnostic the strict run
    // repeats from the plain one (most of them) is rendered once.
    let mut rendered_already = Vec::new();
    for opts in &tfc_fuzz::check_options(&inv)[..2] {
        let checked = check_source(text, &lower, opts);
        for diag in &checked.diagnostics {
            if rendered_already.contains(diag) {
                continue;
            }
            let rendered = render(diag, &source, false);
            assert!(!rendered.is_empty());
            let json = to_json(diag, &source);
            let code = json
                .as_object()
                .and_then(|o| o.get("code"))
                .and_then(|c| c.as_str());
            assert_eq!(code, Some(diag.code.as_str()));
        }
        if rendered_already.is_empty() {
            rendered_already = checked.diagnostics;
        }
    }
});
