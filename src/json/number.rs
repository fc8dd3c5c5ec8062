//! The JSON number grammar, checked on the loose number tokens of the lexer:
//! `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.

/// Why a number token is not a JSON number: the problem, and a fix when there is an obvious one.
#[derive(Debug, PartialEq)]
pub(super) struct BadNumber {
    pub problem: String,
    pub help: Option<String>,
}

/// Checks `text` against the JSON number grammar.
pub(super) fn check(text: &str) -> Result<(), BadNumber> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let at = |i: usize| bytes.get(i).copied();
    let digits = |mut i: usize| {
        while at(i).is_some_and(|b| b.is_ascii_digit()) {
            i += 1;
        }
        i
    };
    let bad = |problem: &str, help: Option<String>| {
        Err(BadNumber {
            problem: problem.to_owned(),
            help,
        })
    };
    match at(i) {
        Some(b'+') => {
            let fixed = text.get(1..).unwrap_or("");
            return bad(
                "a leading '+' is not allowed",
                Some(format!("write {fixed}")),
            );
        }
        Some(b'-') => i += 1,
        _ => {}
    }
    match at(i) {
        Some(b'.') => {
            let (sign, rest) = text.split_at(i);
            return bad(
                "expected a digit before '.'",
                Some(format!("write {sign}0{rest}")),
            );
        }
        Some(b'0') if at(i + 1).is_some_and(|b| b.is_ascii_digit()) => {
            return bad("leading zeros are not allowed", None);
        }
        Some(b) if b.is_ascii_digit() => i = digits(i),
        _ => return bad("expected a digit", None),
    }
    if at(i) == Some(b'.') {
        let after = digits(i + 1);
        if after == i + 1 {
            return bad("expected a digit after '.'", None);
        }
        i = after;
    }
    if matches!(at(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(at(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let after = digits(i);
        if after == i {
            return bad("expected a digit in the exponent", None);
        }
        i = after;
    }
    match text.get(i..).and_then(|rest| rest.chars().next()) {
        None => Ok(()),
        Some(c) => bad(&format!("unexpected '{c}' in a number"), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_numbers_pass() {
        for n in [
            "0", "-0", "12", "-12.5", "1e5", "1E+5", "1.25e-3", "0.0", "-0.5E0",
        ] {
            assert_eq!(check(n), Ok(()), "{n}");
        }
    }

    #[test]
    fn problems_are_named() {
        let problem = |n: &str| check(n).unwrap_err().problem;
        assert_eq!(problem("+1"), "a leading '+' is not allowed");
        assert_eq!(problem(".5"), "expected a digit before '.'");
        assert_eq!(problem("-.5"), "expected a digit before '.'");
        assert_eq!(problem("01"), "leading zeros are not allowed");
        assert_eq!(problem("-007"), "leading zeros are not allowed");
        assert_eq!(problem("1."), "expected a digit after '.'");
        assert_eq!(problem("1.e3"), "expected a digit after '.'");
        assert_eq!(problem("1e"), "expected a digit in the exponent");
        assert_eq!(problem("1e+"), "expected a digit in the exponent");
        assert_eq!(problem("0x1F"), "unexpected 'x' in a number");
        assert_eq!(problem("1_000"), "unexpected '_' in a number");
        assert_eq!(problem("1.5.2"), "unexpected '.' in a number");
    }

    #[test]
    fn fixes_are_offered() {
        let help = |n: &str| check(n).unwrap_err().help;
        assert_eq!(help("+1").as_deref(), Some("write 1"));
        assert_eq!(help("-.5").as_deref(), Some("write -0.5"));
        assert_eq!(help(".5e1").as_deref(), Some("write 0.5e1"));
    }
}
