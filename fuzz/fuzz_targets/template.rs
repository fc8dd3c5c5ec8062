//! Any text through the template parser and renderer: no panic, pieces tile the input, the
//! placeholders are exactly the matches of SPEC §4.2's regex
//! `\{([a-zA-Z0-9_-]+(?:\.[a-zA-Z0-9_-]+)*)\}` (scanned left to right, like `String.replace` with
//! the `g` flag), and a render against an empty scope is the identity (nothing resolves).
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use regex::Regex;
use tfc::compile::Template;
use tfc::eval::Bindings;
use tfc::syntax::template::{Piece, parse_template};

static PLACEHOLDER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\{([a-zA-Z0-9_-]+(?:\.[a-zA-Z0-9_-]+)*)\}").unwrap());

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let ast = parse_template(&text);
    let mut at = 0u32;
    let mut placeholders = Vec::new();
    for piece in &ast.pieces {
        let span = match piece {
            Piece::Text(s) => *s,
            Piece::Placeholder(s, _) => {
                placeholders.push(s.range());
                *s
            }
        };
        assert_eq!(span.start, at, "pieces must tile the input");
        assert!(span.end as usize <= text.len());
        assert!(
            text.is_char_boundary(span.start as usize) && text.is_char_boundary(span.end as usize)
        );
        at = span.end;
    }
    assert_eq!(at as usize, text.len());
    let expected: Vec<_> = PLACEHOLDER.find_iter(&text).map(|m| m.range()).collect();
    assert_eq!(
        placeholders, expected,
        "placeholders differ from the SPEC regex"
    );
    let rendered = Template::compile(&text, &ast).render(&Bindings::default());
    assert_eq!(rendered.text, text);
});
