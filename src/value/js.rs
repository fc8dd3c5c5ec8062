//! JavaScript's whitespace and `String.prototype.trim`, the one definition every stage uses
//! (SPEC conventions: trimming is JS-trim, never Rust's `trim`).

/// The characters JavaScript's `String.prototype.trim` strips (SPEC conventions): not U+0085.
pub fn is_js_whitespace(c: char) -> bool {
    matches!(c,
        '\u{9}'..='\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}'
        | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}')
}

/// JS-trim: strip JavaScript whitespace from both ends.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// JS-trim the end only.
pub fn js_trim_end(s: &str) -> &str {
    s.trim_end_matches(is_js_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_trim_is_not_rust_trim() {
        assert_eq!(js_trim("\u{feff}\u{a0} a \u{3000}\n"), "a");
        assert_eq!(js_trim("\u{85}a\u{85}"), "\u{85}a\u{85}");
        assert_eq!(js_trim("\u{200b}a"), "\u{200b}a");
    }
}
