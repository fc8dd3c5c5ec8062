//! Comparisons and truthiness of condition operands (SPEC §6). Comparisons never allocate for
//! two strings: UTF-16 order is derived from the chars directly; only numbers and arrays
//! compared as strings need text built.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::eval::text::truthy;
use crate::syntax::condition::CmpOp;
use crate::value::{Value, js_number_value, write_number};

/// A value on the machine's stack.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) enum Item<'a> {
    /// An unresolved placeholder.
    #[default]
    Undefined,
    /// The result of `!`, a comparison, `&&` or `||`.
    Bool(bool),
    /// A constant or a resolved placeholder.
    Value(&'a Value),
}

impl Item<'_> {
    /// The item's truthiness (SPEC §4.6): undefined is false.
    pub fn truthy(self) -> bool {
        match self {
            Item::Undefined => false,
            Item::Bool(b) => b,
            Item::Value(v) => truthy(Some(v)),
        }
    }
}

/// `a OP b` (SPEC §6): numerically when both are numeric, else by the UTF-16 code units of
/// their string forms.
pub(crate) fn compare(op: CmpOp, a: Item<'_>, b: Item<'_>) -> bool {
    if let Some(x) = numeric(a)
        && let Some(y) = numeric(b)
    {
        return op.holds(x.partial_cmp(&y).unwrap_or(Ordering::Equal));
    }
    let (x, y) = (string_form(a), string_form(b));
    match op {
        CmpOp::Eq => x == y,
        CmpOp::Ne => x != y,
        _ => op.holds(cmp_utf16(&x, &y)),
    }
}

/// The number an operand compares as, if it is numeric: a finite number, or a string whose
/// JS-trim is non-empty and whose JS number value is finite. Booleans and null never are.
pub(crate) fn numeric(item: Item<'_>) -> Option<f64> {
    let n = match item {
        Item::Value(Value::Number(n)) => *n,
        // A JS number literal starts with a digit, a sign, `.` or `I` (`Infinity`), after
        // whitespace, which is never an ASCII letter: `high`, `prod`, … are words at a glance.
        Item::Value(Value::String(s))
            if s.as_bytes()
                .first()
                .is_some_and(|&b| b.is_ascii_alphabetic() && b != b'I') =>
        {
            return None;
        }
        // `js_number_value` trims and maps an empty string to NaN.
        Item::Value(Value::String(s)) => js_number_value(s),
        _ => return None,
    };
    n.is_finite().then_some(n)
}

/// `str(x)` of SPEC §6: undefined/null ⇒ `""`, booleans, numbers JS-formatted, arrays joined
/// by `,` (null and undefined elements empty, nested arrays flattened), objects
/// `[object Object]`. Borrowed whenever no text has to be built.
pub(crate) fn string_form<'a>(item: Item<'a>) -> Cow<'a, str> {
    let value = match item {
        Item::Undefined => return Cow::Borrowed(""),
        Item::Bool(b) => return Cow::Borrowed(bool_str(b)),
        Item::Value(v) => v,
    };
    match value {
        Value::String(s) => Cow::Borrowed(s),
        Value::Null => Cow::Borrowed(""),
        Value::Bool(b) => Cow::Borrowed(bool_str(*b)),
        Value::Object(_) => Cow::Borrowed(OBJECT),
        Value::Number(n) => {
            let mut out = String::new();
            write_number(*n, &mut out);
            Cow::Owned(out)
        }
        Value::Array(items) => Cow::Owned(join_array(items)),
    }
}

const OBJECT: &str = "[object Object]";

fn bool_str(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// `Array.prototype.join(",")`, iteratively (model output may nest arrays very deep).
fn join_array(items: &[Value]) -> String {
    let mut out = String::new();
    let mut stack: Vec<(std::slice::Iter<'_, Value>, bool)> = vec![(items.iter(), true)];
    while let Some((iter, first)) = stack.last_mut() {
        let Some(item) = iter.next() else {
            stack.pop();
            continue;
        };
        if !std::mem::take(first) {
            out.push(',');
        }
        match item {
            Value::Null => {}
            Value::Bool(b) => out.push_str(bool_str(*b)),
            Value::Number(n) => write_number(*n, &mut out),
            Value::String(s) => out.push_str(s),
            Value::Object(_) => out.push_str(OBJECT),
            Value::Array(inner) => stack.push((inner.iter(), true)),
        }
    }
    out
}

/// Compare two strings by UTF-16 code units without encoding them. UTF-8 byte order is code
/// point order, which agrees with UTF-16 order except between U+E000–U+FFFF and supplementary
/// chars (surrogates sort below U+E000); so find the first differing char and compare just
/// that pair's UTF-16 encodings.
pub(crate) fn cmp_utf16(a: &str, b: &str) -> Ordering {
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    // The shared prefix is the same bytes in both, so a char boundary of one is of the other.
    let mut at = common;
    while !a.is_char_boundary(at) {
        at -= 1;
    }
    let next = |s: &str| s.get(at..).and_then(|rest| rest.chars().next());
    match (next(a), next(b)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => {
            let (mut bx, mut by) = ([0u16; 2], [0u16; 2]);
            let ux: &[u16] = x.encode_utf16(&mut bx);
            let uy: &[u16] = y.encode_utf16(&mut by);
            ux.cmp(uy)
        }
    }
}
