//! The text of captured bytes that a cap may have cut inside a character.

/// Lossy UTF-8 of kept leading bytes; when `cut`, an incomplete last character is dropped.
pub(crate) fn head_text(bytes: &[u8], cut: bool) -> String {
    let mut end = bytes.len();
    if cut
        && let Err(e) = std::str::from_utf8(bytes)
        && e.error_len().is_none()
    {
        end = e.valid_up_to();
    }
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Lossy UTF-8 of kept trailing bytes; when `cut`, continuation bytes of a character whose
/// start was dropped are skipped.
pub(crate) fn tail_text(bytes: &[u8], cut: bool) -> String {
    let skip = if cut {
        bytes
            .iter()
            .take(3)
            .take_while(|b| (**b & 0b1100_0000) == 0b1000_0000)
            .count()
    } else {
        0
    };
    String::from_utf8_lossy(&bytes[skip..]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_characters_are_dropped() {
        let s = "aé€".as_bytes(); // 1 + 2 + 3 bytes
        assert_eq!(head_text(&s[..4], true), "aé");
        assert_eq!(head_text(&s[..4], false), "aé\u{fffd}");
        assert_eq!(tail_text(&s[2..], true), "€");
        assert_eq!(tail_text(&s[4..], true), "");
    }
}
