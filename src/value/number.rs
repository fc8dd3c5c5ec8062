//! Numbers as JavaScript sees them: `Number::toString` formatting and the `Number()` value of a
//! string (SPEC conventions and §6, decision 6).

/// ECMAScript `Number::prototype.toString()`: the shortest round-trip digits, plain notation for
/// `1e-6 <= |x| < 1e21`, exponent notation (`1e+21`, `1.5e-7`) otherwise; `-0` prints `0`.
pub(crate) fn format_number(x: f64) -> String {
    let mut out = String::new();
    write_number(x, &mut out);
    out
}

/// Append the JavaScript `String(x)` form of `x` (`1e+21`, `-0` as `0`, `NaN`, `Infinity`).
pub fn write_number(x: f64, out: &mut String) {
    use std::fmt::Write;
    if x.is_nan() {
        out.push_str("NaN");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if x == 0.0 {
        out.push('0');
        return;
    }
    // Integers of up to 15 digits print without the formatting machinery.
    // (`x as i64` is exact below 1e15, and cheaper than `fract`, a library call on most targets.)
    if x.abs() < 1e15 && (x as i64) as f64 == x {
        let mut digits = [0u8; 16];
        let mut at = digits.len();
        let mut rest = (x as i64).unsigned_abs();
        while rest > 0 {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        if x < 0.0 {
            at -= 1;
            digits[at] = b'-';
        }
        // ASCII digits and `-`: always UTF-8.
        if let Ok(text) = std::str::from_utf8(&digits[at..]) {
            out.push_str(text);
        }
        return;
    }
    // Rust's `{:e}` is the shortest round-trip representation: `d.ddde±N`.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` always has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    let n = exp + 1; // position of the decimal point relative to the digits
    if x < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        let _ = write!(out, "e{}{}", if e >= 0 { '+' } else { '-' }, e.abs());
    }
}

/// The JS `Number()` value of a string (SPEC §6): JS-trimmed; decimal with optional sign,
/// fraction and exponent; `0x`/`0o`/`0b` integers; `±Infinity`; anything else (and the empty
/// string, which `Number()` maps to 0 but tfc never treats as numeric) is `NaN`.
pub(crate) fn js_number_value(text: &str) -> f64 {
    let t = super::js::js_trim(text);
    if t.is_empty() {
        return f64::NAN;
    }
    match t {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    let bytes = t.as_bytes();
    if bytes.len() > 2 && bytes[0] == b'0' {
        let radix = match bytes[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix != 0 {
            let mut value = 0f64;
            for &b in &bytes[2..] {
                match (b as char).to_digit(radix) {
                    Some(d) => value = value * radix as f64 + d as f64,
                    None => return f64::NAN,
                }
            }
            return value;
        }
    }
    if is_decimal_literal(bytes) {
        // Rust's float parser rounds to nearest, overflows to ±∞ and underflows to 0.
        let body = t.strip_prefix('+').unwrap_or(t);
        body.parse::<f64>().unwrap_or(f64::NAN)
    } else {
        f64::NAN
    }
}

/// `^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`
fn is_decimal_literal(b: &[u8]) -> bool {
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = i - s;
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == s {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_javascript() {
        let cases = [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-42.0, "-42"),
            (1.5, "1.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (2.5e25, "2.5e+25"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.000123, "0.000123"),
            (1e15, "1000000000000000"),
            (123.456, "123.456"),
        ];
        for (x, want) in cases {
            assert_eq!(format_number(x), want, "formatting {x:?}");
        }
    }

    #[test]
    fn number_value_follows_spec() {
        let finite = [
            (" 42 ", 42.0),
            ("1e3", 1000.0),
            (".5", 0.5),
            ("5.", 5.0),
            ("007", 7.0),
            ("0x1f", 31.0),
            ("0o17", 15.0),
            ("0b101", 5.0),
            ("+1", 1.0),
            ("-1.5e-2", -0.015),
            ("1e-400", 0.0),
        ];
        for (s, want) in finite {
            assert_eq!(js_number_value(s), want, "{s:?}");
        }
        for s in [
            "1_000", "1e", "e5", "0x", "-0x10", "1 2", "inf", "NaN", "", "  ", "0x1g", ".",
        ] {
            assert!(js_number_value(s).is_nan(), "{s:?} should be NaN");
        }
        assert_eq!(js_number_value("1e400"), f64::INFINITY);
        assert_eq!(js_number_value("-Infinity"), f64::NEG_INFINITY);
    }
}
