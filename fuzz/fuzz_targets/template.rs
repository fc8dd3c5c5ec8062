//! Any text through the template parser and renderer: no panic, pieces tile the input, and a
//! render against an empty scope is the identity (nothing resolves).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tfc::eval::Bindings;
use tfc::syntax::template::{Piece, Template, parse_template};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let ast = parse_template(&text);
    let mut at = 0u32;
    for piece in &ast.pieces {
        let span = match piece {
            Piece::Text(s) | Piece::Placeholder(s, _) => *s,
        };
        assert_eq!(span.start, at, "pieces must tile the input");
        assert!(span.end as usize <= text.len());
        assert!(text.is_char_boundary(span.start as usize) && text.is_char_boundary(span.end as usize));
        at = span.end;
    }
    assert_eq!(at as usize, text.len());
    let rendered = Template::compile(&text, &ast).render(&Bindings::default());
    assert_eq!(rendered.text, text);
});
