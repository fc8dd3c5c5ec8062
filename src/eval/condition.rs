//! Running compiled conditions (SPEC §6) and the three places a flow uses them: `when`,
//! `until` and gate `eval` entries (§3.5).
//!
//! The machine resolves the program's distinct placeholders first (recording the reads a full
//! left-to-right evaluation records; see [`crate::compile::condition`]), then runs the ops on a
//! small stack. Comparisons never allocate for two strings: UTF-16 order is derived from the
//! chars directly; only numbers and arrays compared as strings need text built.

use std::borrow::Cow;
use std::cmp::Ordering;

use super::scope::dig;
use super::{Scope, js_trim, resolve, truthy};
use crate::compile::condition::{Op, Program};
use crate::syntax::RefPath;
use crate::syntax::condition::{CmpOp, Condition, ConditionError, refs_before_error};
use crate::syntax::template::Template;
use crate::value::{Value, js_number_value, write_number};

/// The result of evaluating a condition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evaluated {
    pub value: bool,
    /// Resolved placeholder paths, distinct, in first-resolution order (every operand counts,
    /// whether or not `&&`/`||` needed it).
    pub reads: Vec<String>,
    /// Phase ids read through `steps.ID…` and `previous.output`, distinct, first-read order.
    pub read_phases: Vec<String>,
}

/// A value on the machine's stack.
#[derive(Clone, Copy, Debug, Default)]
pub enum Item<'a> {
    /// An unresolved placeholder.
    #[default]
    Undefined,
    /// The result of `!`, a comparison, `&&` or `||`.
    Bool(bool),
    /// A constant or a resolved placeholder.
    Value(&'a Value),
}

impl Item<'_> {
    pub fn truthy(self) -> bool {
        match self {
            Item::Undefined => false,
            Item::Bool(b) => b,
            Item::Value(v) => truthy(Some(v)),
        }
    }
}

/// How many placeholders / stack slots live on the native stack before spilling to the heap.
const INLINE_REFS: usize = 8;
const INLINE_STACK: usize = 16;

/// Which entries of a program's ref table resolved: one bit per entry, so recording the reads
/// of an evaluation allocates nothing for up to 64 distinct placeholders. The paths are only
/// turned into text when asked for ([`Condition::path_texts`](crate::syntax::condition::Condition::path_texts)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadSet {
    /// Entries 0–63.
    low: u64,
    /// Entries from 64 on, 64 per word (empty, and unallocated, for most conditions).
    high: Vec<u64>,
}

impl ReadSet {
    #[inline]
    fn insert(&mut self, index: usize) {
        if index < 64 {
            self.low |= 1 << index;
        } else {
            let word = index / 64 - 1;
            if self.high.len() <= word {
                self.high.resize(word + 1, 0);
            }
            self.high[word] |= 1 << (index % 64);
        }
    }

    pub fn contains(&self, index: usize) -> bool {
        if index < 64 {
            self.low & (1 << index) != 0
        } else {
            self.high
                .get(index / 64 - 1)
                .is_some_and(|w| w & (1 << (index % 64)) != 0)
        }
    }

    /// How many entries resolved.
    pub fn len(&self) -> usize {
        let high: u32 = self.high.iter().map(|w| w.count_ones()).sum();
        (self.low.count_ones() + high) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The resolved entries' indices, ascending (the ref table's first-appearance order).
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        std::iter::once(self.low)
            .chain(self.high.iter().copied())
            .enumerate()
            .flat_map(|(w, mut bits)| {
                std::iter::from_fn(move || {
                    (bits != 0).then(|| {
                        let bit = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        w * 64 + bit
                    })
                })
            })
    }
}

/// A condition's value and which placeholders it read, as indices into the program's ref table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    pub value: bool,
    pub reads: ReadSet,
}

/// Evaluate `program` against `scope`, with its reads as ref-table indices (no text built).
pub fn decide<S: Scope + ?Sized>(program: &Program, scope: &S) -> Decision {
    with_resolved(program, scope, |slots| {
        let mut reads = ReadSet::default();
        for (i, slot) in slots.iter().enumerate() {
            if slot.is_some() {
                reads.insert(i);
            }
        }
        Decision {
            value: execute(program, slots),
            reads,
        }
    })
}

/// The text of each read path, in order.
pub fn path_texts(program: &Program, reads: &ReadSet) -> Vec<String> {
    let mut out = Vec::with_capacity(reads.len());
    for i in reads.iter() {
        if let Some(path) = program.refs.get(i) {
            out.push(String::from(&*path.text));
        }
    }
    out
}

/// The phase ids the reads read, distinct, in first-read order.
pub fn read_phases<S: Scope + ?Sized>(
    program: &Program,
    scope: &S,
    reads: &ReadSet,
) -> Vec<String> {
    let mut out = Vec::new();
    for i in reads.iter() {
        if let Some(path) = program.refs.get(i) {
            add_read_phases(scope, path, &mut out);
        }
    }
    out
}

/// Evaluate `program` against `scope`, with its reads.
pub fn run<S: Scope + ?Sized>(program: &Program, scope: &S) -> Evaluated {
    let Decision { value, reads } = decide(program, scope);
    Evaluated {
        value,
        reads: path_texts(program, &reads),
        read_phases: read_phases(program, scope, &reads),
    }
}

/// Evaluate `program` against `scope`, the value only.
pub fn run_value<S: Scope + ?Sized>(program: &Program, scope: &S) -> bool {
    with_resolved(program, scope, |slots| execute(program, slots))
}

/// Add the phase ids a resolved path read, as `Rendered::read_phases` records them: the step
/// of a `steps.ID…` path, the phases behind `previous.output`.
fn add_read_phases<S: Scope + ?Sized>(scope: &S, path: &RefPath, out: &mut Vec<String>) {
    let add = |phase: &str, out: &mut Vec<String>| {
        if !out.iter().any(|p| p == phase) {
            out.push(phase.to_owned());
        }
    };
    match path.step_id() {
        // A `steps.ID…` path reads its step: no list to build.
        Some(id) => add(id, out),
        None => {
            for phase in crate::syntax::template::read_phases(scope, path) {
                add(phase, out);
            }
        }
    }
}

type Slot<'s> = Option<Cow<'s, Value>>;

/// Resolve every entry of the ref table, in order, into slots (on the stack when few).
fn with_resolved<'s, S: Scope + ?Sized, R>(
    program: &Program,
    scope: &'s S,
    f: impl FnOnce(&[Slot<'s>]) -> R,
) -> R {
    let refs = &program.refs;
    let mut resolver = Resolver { scope, step: None };
    if refs.len() <= INLINE_REFS {
        let mut slots: [Slot<'s>; INLINE_REFS] = Default::default();
        for (slot, path) in slots.iter_mut().zip(refs) {
            *slot = resolver.resolve(path);
        }
        f(&slots[..refs.len()])
    } else {
        let slots: Vec<Slot<'s>> = refs.iter().map(|path| resolver.resolve(path)).collect();
        f(&slots)
    }
}

/// [`resolve`], remembering the last step whose JSON it looked up: a condition usually reads
/// several fields of one step in a row, and each lookup hashes the step id.
struct Resolver<'p, 's, S: ?Sized> {
    scope: &'s S,
    /// The step id of the last `steps.ID.json…` path and that step's JSON.
    step: Option<(&'p str, Option<&'s Value>)>,
}

impl<'p, 's, S: Scope + ?Sized> Resolver<'p, 's, S> {
    fn resolve(&mut self, path: &'p RefPath) -> Slot<'s> {
        let Some((id, keys)) = path.step_json_keys() else {
            return resolve(self.scope, path);
        };
        let json = match self.step {
            Some((last, json)) if last == id => json,
            _ => {
                let json = self.scope.step_json(id);
                self.step = Some((id, json));
                json
            }
        };
        dig(json?, keys)
    }
}

/// The operand stack: a fixed array, spilling to a `Vec` for unusually deep programs.
struct Stack<'a> {
    inline: [Item<'a>; INLINE_STACK],
    len: usize,
    spill: Vec<Item<'a>>,
}

impl<'a> Stack<'a> {
    fn new() -> Self {
        Stack {
            inline: [Item::Undefined; INLINE_STACK],
            len: 0,
            spill: Vec::new(),
        }
    }

    fn push(&mut self, item: Item<'a>) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = item,
            None => self.spill.push(item),
        }
        self.len += 1;
    }

    /// Pop; an (impossible) underflow reads as undefined rather than panicking.
    fn pop(&mut self) -> Item<'a> {
        if self.len == 0 {
            return Item::Undefined;
        }
        self.len -= 1;
        match self.inline.get(self.len) {
            Some(item) => *item,
            None => self.spill.pop().unwrap_or_default(),
        }
    }
}

/// The machine loop. `slots[r]` is the resolved value of `program.refs[r]`.
fn execute(program: &Program, slots: &[Slot<'_>]) -> bool {
    let mut stack = Stack::new();
    let mut pc = 0;
    while let Some(&op) = program.ops.get(pc) {
        pc += 1;
        match op {
            Op::Const(k) => stack.push(
                program
                    .consts
                    .get(k as usize)
                    .map_or(Item::Undefined, Item::Value),
            ),
            Op::Ref(r) => stack.push(match slots.get(r as usize) {
                Some(Some(value)) => Item::Value(value),
                _ => Item::Undefined,
            }),
            Op::Compare(op) => {
                let b = stack.pop();
                let a = stack.pop();
                stack.push(Item::Bool(compare(op, a, b)));
            }
            Op::Not => {
                let v = stack.pop();
                stack.push(Item::Bool(!v.truthy()));
            }
            Op::Truthy => {
                let v = stack.pop();
                stack.push(Item::Bool(v.truthy()));
            }
            Op::JumpIfFalse(target) => {
                if !stack.pop().truthy() {
                    stack.push(Item::Bool(false));
                    pc = target as usize;
                }
            }
            Op::JumpIfTrue(target) => {
                if stack.pop().truthy() {
                    stack.push(Item::Bool(true));
                    pc = target as usize;
                }
            }
        }
    }
    stack.pop().truthy()
}

/// `a OP b` (SPEC §6): numerically when both are numeric, else by the UTF-16 code units of
/// their string forms.
pub fn compare(op: CmpOp, a: Item<'_>, b: Item<'_>) -> bool {
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
pub fn numeric(item: Item<'_>) -> Option<f64> {
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
pub fn string_form<'a>(item: Item<'a>) -> Cow<'a, str> {
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
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
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

/// A condition evaluated at a use site.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// `when`: run the phase; `until`: stop the loop; gate entry: the check passed.
    pub value: bool,
    /// The parse error, when the text is not a condition (the value is then the use site's
    /// fallback).
    pub error: Option<ConditionError>,
    pub reads: Vec<String>,
    pub read_phases: Vec<String>,
}

/// A `when` guard: a parse error is true (fail-open) and reported; empty is true, no error.
pub fn eval_when<S: Scope + ?Sized>(src: &str, scope: &S) -> Outcome {
    eval_or(src, scope, true)
}

/// A loop's `until`: a parse error is true, which stops the loop (fail-safe), and reported.
pub fn eval_until<S: Scope + ?Sized>(src: &str, scope: &S) -> Outcome {
    eval_or(src, scope, true)
}

/// One gate `eval` entry (SPEC §3.5): did it pass? An empty entry passes; `LHS contains RHS`
/// is a substring test; anything else is a condition, whose parse error fails the check.
pub fn eval_gate_entry<S: Scope + ?Sized>(src: &str, scope: &S) -> Outcome {
    const CONTAINS: &str = " contains ";
    match src.find(CONTAINS) {
        Some(at) if at > 0 => {
            let (lhs, rhs) = (js_trim(&src[..at]), js_trim(&src[at + CONTAINS.len()..]));
            let template = Template::parse(lhs);
            let rendered = template.render(scope);
            Outcome {
                value: rendered.missing.is_empty() && rendered.text.contains(rhs),
                error: None,
                reads: template.path_texts(&rendered.reads),
                read_phases: template.read_phases(scope, &rendered.reads),
            }
        }
        _ => eval_or(src, scope, false),
    }
}

/// Parse and evaluate `src`; a parse error yields `fallback` with the error.
fn eval_or<S: Scope + ?Sized>(src: &str, scope: &S, fallback: bool) -> Outcome {
    match Condition::parse(src) {
        Ok(condition) => {
            let Evaluated {
                value,
                reads,
                read_phases,
            } = condition.eval(scope);
            Outcome {
                value,
                error: None,
                reads,
                read_phases,
            }
        }
        Err(error) => {
            // The placeholders read before the error count as reads (SPEC §4.4).
            let mut out = Outcome {
                value: fallback,
                ..Outcome::default()
            };
            for path in refs_before_error(src, &error) {
                if !out.reads.iter().any(|r| **r == *path.text) && resolve(scope, &path).is_some() {
                    out.reads.push(String::from(&*path.text));
                    add_read_phases(scope, &path, &mut out.read_phases);
                }
            }
            out.error = Some(error);
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{Bindings, StepState, StepStatus};
    use crate::value::Map;

    fn json(text: &str) -> Value {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        Value::from(&v)
    }

    pub(super) fn scope() -> Bindings {
        let mut args = json(
            r#"{"x": 5, "mode": "fast", "s42": " 42 ", "empty": "", "zero": 0, "no": "No",
                "t": true, "f": false, "nil": null, "arr": [1, null, "b", [2, [3]], {"k": 1}],
                "none": [], "obj": {"a": 1}, "eobj": {}, "hex": "0x1f", "inf": "Infinity",
                "big": 1e21, "tiny": 1e-7, "frac": 0.1}"#,
        );
        if let Value::Object(o) = &mut args {
            o.insert("huge".into(), Value::Number(f64::INFINITY));
        }
        let mut b = Bindings {
            args: Some(args),
            ..Bindings::default()
        };
        b.steps.insert(
            "triage".into(),
            StepState::done(r#"{"severity": "high", "suppressed": false, "n": 7}"#),
        );
        b.steps.insert(
            "enrich".into(),
            StepState::new(StepStatus::Failed, "partial".into(), None),
        );
        b.steps
            .insert("x".into(), StepState::done(r#"{"label": "high-priority"}"#));
        b.steps.insert(
            "hidden".into(),
            StepState::new(StepStatus::Hidden, "x".into(), None),
        );
        b.previous = Some(Value::from("prev"));
        b.previous_phases = vec!["triage".into(), "x".into()];
        b.locals
            .insert("item".into(), json(r#"{"kind": "x", "n": 3}"#));
        let mut lp = Map::default();
        lp.insert("iteration".into(), Value::Number(2.0));
        b.locals.insert("loop".into(), Value::Object(lp));
        b
    }

    fn eval(src: &str) -> Evaluated {
        Condition::parse(src)
            .unwrap_or_else(|e| panic!("{src:?}: {e}"))
            .eval(&scope())
    }

    fn is(src: &str) -> bool {
        eval(src).value
    }

    #[test]
    fn comparison_table() {
        let rows = [
            (r#"1.5 == "1.5""#, true),
            (r#""10" > "9""#, true),
            (r#""9" > "10""#, false),
            (r#"" 42 " == 42"#, true),
            (r#""1e3" == 1000"#, true),
            (r#"".5" == 0.5"#, true),
            (r#""5." == 5"#, true),
            (r#""007" == 7"#, true),
            (r#""0x1f" == 31"#, true),
            (r#""0o17" == 15"#, true),
            (r#""0b101" == 5"#, true),
            (r#""-0x10" == -16"#, false),
            (r#""Infinity" > 5"#, true),
            (r#""1_000" == 1000"#, false),
            ("{args.x} == high", false),
            (r#"true == "true""#, true),
        ];
        for (src, want) in rows {
            assert_eq!(is(src), want, "{src}");
        }
    }

    #[test]
    fn numeric_or_string() {
        let rows = [
            // Numeric: both sides numbers or numeric strings (trimmed, prefixed, exponent).
            ("{args.s42} == 42", true),
            ("{args.hex} == 31", true),
            ("{args.x} > 10", false),
            ("{args.x} >= 5 && {args.x} <= 5", true),
            ("-0 == 0", true),
            ("{args.big} == \"1e+21\"", true),
            ("1e400 > 5", true), // ∞ is not numeric: "Infinity" vs "5", 'I' > '5'
            ("1e400 == Infinity", true),
            ("{args.huge} == Infinity", true),
            ("{args.huge} > 5", true),
            ("{args.x} == .5e1", true), // BAREWORD ".5e1" is a numeric string
            // Strings: booleans and null are never numeric.
            ("true == 1", false),
            ("null == 0", false),
            ("null == \"\"", true),
            ("{nope} == \"\"", true),
            ("{nope} == null", true),
            ("{nope} < a", true),
            ("\"\" == 0", false),
            ("\" \" == 0", false),
            ("{args.t} == true", true),
            ("{args.f} == \"false\"", true),
            ("{args.nil} == \"\"", true),
            ("{args.arr} == \"1,,b,2,3,[object Object]\"", true),
            ("{args.none} == \"\"", true),
            ("{args.obj} == \"[object Object]\"", true),
            ("{args.eobj} == \"[object Object]\"", true),
            ("{args.tiny} == \"1e-7\"", true),
            ("{args.frac} < a", true),
            ("{args.inf} > 5", true),
            ("abc < abd", true),
            ("B < a", true),
            ("a < ab", true),
            ("é > z", true),
            // UTF-16 order: U+E000..U+FFFF sort above supplementary chars.
            ("\u{e000} > 😀", true),
            ("\u{ffff} > 𐀀", true),
            ("\u{d7ff} < 😀", true),
            ("😀 < 😁", true),
            ("x😀 != x😁", true),
        ];
        for (src, want) in rows {
            assert_eq!(is(src), want, "{src}");
        }
    }

    #[test]
    fn truthiness_through_conditions() {
        let falsy = [
            "{nope}",
            "null",
            "false",
            "0",
            "-0",
            "{args.zero}",
            "{args.empty}",
            "\"\"",
            "\"  \"",
            "no",
            "{args.no}",
            "OFF",
            "'null'",
            "\"FALSE\"",
            "' 0 '",
            "{args.none}",
            "{args.eobj}",
            "{args.nil}",
            "{args.f}",
            "{steps.hidden.output}",
            "!1",
            "",
        ];
        for src in falsy {
            if !src.is_empty() {
                assert!(!is(src), "{src:?} should be false");
            }
        }
        let truthy = [
            "1",
            "-1",
            "0.5",
            "yes",
            "nope",
            "\"0.0\"",
            "{args.arr}",
            "{args.obj}",
            "{args.t}",
            "{args.x}",
            "true",
            "!null",
            "!!x",
            "",
            "  ",
        ];
        for src in truthy {
            assert!(is(src), "{src:?} should be true");
        }
    }

    #[test]
    fn logic() {
        assert!(is("a && b && c"));
        assert!(!is("a && 0 && c"));
        assert!(is("0 || 0 || c"));
        assert!(!is("0 || null || ''"));
        assert!(is("!{a} == b"), "!({{a}} == b) with {{a}} undefined");
        assert!(!is("!({args.x} == 5)"));
        assert!(is("(0 || 1) == true"), "&& and || give booleans");
        assert!(is("(1 && yes) == true"));
        assert!(is("({args.x}) == 5"), "a group is its value");
        assert!(is("!{args.x} == 6"));
    }

    #[test]
    fn seed_examples() {
        assert!(is(
            "({steps.triage.json.severity} == high || {steps.triage.json.severity} == critical) && !{steps.triage.json.suppressed}"
        ));
        assert!(is(r#"{steps.enrich.output} == "[previous phase failed]""#));
        assert!(!is("{steps.enrich.json}"));
        assert!(is(r#"{steps.x.json.label} == "high-priority""#));
        assert!(is("{steps.x.json.label} == high-priority"));
        assert!(is(r#"true == "true""#));
        assert!(is(r#""a\nb" == anb"#));
        assert!(is(r#"'a\'b' == "a'b""#));
        assert!(is(r#""\\" == '\\'"#));
        assert!(is("{ steps.triage.json.n } > 3"));
        assert!(is("{item.kind} == \"x\" && {loop.iteration} >= 2"));
        assert!(is("{previous.output} == prev"));
    }

    #[test]
    fn reads_cover_every_operand() {
        // `||` is decided by its first operand, `&&` by its first: every ref is still read.
        let r = eval("{args.x} == 5 || {args.mode} == slow && {steps.triage.json.n}");
        assert!(r.value);
        assert_eq!(r.reads, ["args.x", "args.mode", "steps.triage.json.n"]);
        assert_eq!(r.read_phases, ["triage"]);
        let r = eval(
            "{args.zero} && {steps.x.json.label} && {args.zero} && {nope} && {previous.output}",
        );
        assert!(!r.value);
        assert_eq!(
            r.reads,
            ["args.zero", "steps.x.json.label", "previous.output"]
        );
        assert_eq!(r.read_phases, ["x", "triage"]);
        let r = eval("{steps.enrich.output} && {steps.enrich.json.a} && {steps.hidden.output}");
        assert_eq!(r.reads, ["steps.enrich.output"]);
        assert_eq!(r.read_phases, ["enrich"]);
        assert_eq!(eval("").reads, Vec::<String>::new());
    }

    #[test]
    fn refs_are_listed_with_spans() {
        let src = "{a} == 1 || !{ b.c } && {a}";
        let c = Condition::parse(src).unwrap();
        let refs: Vec<(&str, &str)> = c.refs().map(|(s, p)| (&src[s.range()], &*p.text)).collect();
        assert_eq!(refs, [("{a}", "a"), ("{ b.c }", "b.c"), ("{a}", "a")]);
        assert_eq!(c.source(), src);
    }

    #[test]
    fn holds_matches_eval() {
        for src in ["{args.x} > 3", "{nope}", "a == b", ""] {
            let c = Condition::parse(src).unwrap();
            assert_eq!(c.holds(&scope()), c.eval(&scope()).value, "{src}");
        }
    }

    #[test]
    fn many_refs_and_deep_stacks_spill() {
        let src = (0..20)
            .map(|i| format!("{{args.x}} == {{nope{i}}}"))
            .collect::<Vec<_>>()
            .join(" || ");
        let r = eval(&src);
        assert!(!r.value);
        assert_eq!(r.reads, ["args.x"]);
        let n = 40;
        let deep = format!("{}{{args.x}}{}", "({args.x} == (".repeat(n), "))".repeat(n));
        assert!(!is(&deep));
        let c = Condition::parse(&deep).unwrap();
        assert!(c.program().max_stack as usize > INLINE_STACK);
    }

    #[test]
    fn deep_values_compare_without_recursion() {
        let mut v = Value::from("x");
        for _ in 0..100_000 {
            v = Value::Array(vec![v, Value::Null]);
        }
        let mut s = scope();
        s.locals.insert("deep".into(), v);
        let c = Condition::parse("{deep} < y").unwrap();
        let r = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || c.eval(&s).value)
            .unwrap()
            .join()
            .unwrap();
        assert!(r);
    }

    #[test]
    fn utf16_order() {
        let cases = [
            "",
            "a",
            "ab",
            "b",
            "é",
            "\u{e000}",
            "\u{ffff}",
            "😀",
            "𐀀",
            "a😀",
            "a\u{ffff}",
        ];
        for a in cases {
            for b in cases {
                let want = a.encode_utf16().cmp(b.encode_utf16());
                assert_eq!(cmp_utf16(a, b), want, "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn when_fails_open() {
        let s = scope();
        let o = eval_when("{args.x} == == 5", &s);
        assert!(o.value);
        assert_eq!(
            o.error.as_ref().map(|e| e.message.as_str()),
            Some("unexpected operator '=='")
        );
        assert_eq!(
            eval_when("", &s),
            Outcome {
                value: true,
                ..Outcome::default()
            }
        );
        assert_eq!(
            eval_when(" \n ", &s),
            Outcome {
                value: true,
                ..Outcome::default()
            }
        );
        let o = eval_when("{args.x} == 6", &s);
        assert_eq!((o.value, o.error), (false, None));
        assert_eq!(o.reads, ["args.x"]);
        let o = eval_when("{steps.missing.json}", &s);
        assert_eq!(
            (o.value, o.error),
            (false, None),
            "unresolved is falsy, not an error"
        );
    }

    /// Deep operands compare by their joined text without recursion, on a 256 KiB stack.
    #[test]
    fn deep_operands_compare_on_a_small_stack() {
        use crate::value::fixtures::{DEPTH, mixed, nested_arrays, small_stack};
        small_stack(|| {
            let mut s = Bindings::default();
            s.locals
                .insert("a".into(), nested_arrays(DEPTH, Value::from("x")));
            s.locals.insert("o".into(), mixed(DEPTH, Value::Null));
            let holds = |src: &str| Condition::parse(src).map(|c| c.holds(&s)).ok();
            assert_eq!(holds("{a} == x && {a}"), Some(true));
            assert_eq!(holds("{o} == \"[object Object]\""), Some(true));
            let o = eval_when("{a} != y", &s);
            assert_eq!((o.value, o.reads), (true, vec!["a".to_owned()]));
        });
    }

    /// A condition that fails to parse reports the placeholders read before the error:
    /// resolved ones, distinct, with their phases; none after the error.
    #[test]
    fn parse_errors_keep_the_reads_before_them() {
        let s = scope();
        let o = eval_when(
            "{steps.triage.json.severity} == high && {args.x} && {nope} && {args.x} = {args.mode}",
            &s,
        );
        assert!(o.value);
        assert_eq!(
            o.error.as_ref().map(|e| e.message.as_str()),
            Some("unexpected char '='")
        );
        assert_eq!(o.reads, ["steps.triage.json.severity", "args.x"]);
        assert_eq!(o.read_phases, ["triage"]);
        let o = eval_until("({previous.output} == a) ({steps.x.output})", &s);
        assert_eq!(
            o.error.map(|e| e.message),
            Some("trailing tokens".to_owned())
        );
        assert_eq!(o.reads, ["previous.output"]);
        assert_eq!(o.read_phases, ["triage", "x"]);
        let o = eval_gate_entry("{steps.x.output} >", &s);
        assert!(!o.value);
        assert_eq!(
            (o.reads, o.read_phases),
            (vec!["steps.x.output".into()], vec!["x".into()])
        );
        let o = eval_when("{args.x} == \"unterminated", &s);
        assert_eq!(o.reads, ["args.x"]);
    }

    #[test]
    fn until_fails_safe() {
        let s = scope();
        let o = eval_until("{loop.iteration} >= (3", &s);
        assert!(o.value, "a parse error stops the loop");
        assert_eq!(o.error.map(|e| e.message), Some("missing )".to_owned()));
        let o = eval_until("{loop.iteration} >= 3", &s);
        assert_eq!(
            (o.value, o.error, o.reads),
            (false, None, vec!["loop.iteration".into()])
        );
    }

    #[test]
    fn gate_entries() {
        let s = scope();
        let pass = |src: &str| eval_gate_entry(src, &s).value;
        assert!(pass(""), "an empty entry passes");
        assert!(pass("{args.x} == 5"));
        assert!(!pass("{args.x} == 6"));
        let o = eval_gate_entry("{args.x} ==", &s);
        assert!(!o.value, "a parse error fails the check");
        assert_eq!(
            o.error.map(|e| e.message),
            Some("unexpected end".to_owned())
        );
        // contains: LHS rendered as a template, RHS literal, case-sensitive.
        let o = eval_gate_entry("{steps.enrich.output} contains phase failed", &s);
        assert!(o.value);
        assert_eq!(o.error, None);
        assert_eq!(o.reads, ["steps.enrich.output"]);
        assert_eq!(o.read_phases, ["enrich"]);
        assert!(!pass("{steps.enrich.output} contains Phase"));
        assert!(pass("  mode={args.mode}!  contains   =fast!  "));
        assert!(!pass("{args.mode} contains \"fast\""), "quotes are kept");
        assert!(pass("say \"fast\" contains \"fast\""));
        assert!(!pass("{nope} contains {nope}"), "an unresolved LHS fails");
        assert!(!pass("{args.mode} {nope} contains fast"));
        assert!(
            !pass("a contains b contains a"),
            "split at the first occurrence"
        );
        let mut s2 = scope();
        s2.locals
            .insert("phrase".into(), Value::from("say b contains c"));
        assert!(eval_gate_entry("{phrase} contains b contains c", &s2).value);
        assert!(
            !pass("{args.x} contains 5 || 1"),
            "no || mixing: the RHS is literal"
        );
        assert!(
            pass("{args.mode} && b contains fast && b"),
            "nor on the left"
        );
        // Not the contains form: at index 0, wrong case, no spaces.
        let o = eval_gate_entry(" contains x", &s);
        assert_eq!(
            o.error.map(|e| e.message),
            Some("trailing tokens".to_owned())
        );
        assert!(!pass("a CONTAINS a"));
        assert!(!pass("a\tcontains a"));
        assert!(
            pass("{args.arr} contains \"b\""),
            "containers render as pretty JSON"
        );
    }
}

/// The machine checked against a tree-walking evaluator written straight from SPEC §6 (every
/// operand evaluated, UTF-16 vectors, `String`s everywhere), on generated conditions.
#[cfg(test)]
mod laws {
    use super::tests::scope;
    use super::*;
    use crate::eval::Bindings;
    use crate::syntax::Target;
    use crate::syntax::condition::{Expr, Node, Operand, parse_cond};
    use proptest::prelude::*;
    use proptest::sample::select;

    /// A tree-walker value.
    #[derive(Debug)]
    enum Tw {
        Undefined,
        Value(Value),
    }

    fn tw_truthy(v: &Tw) -> bool {
        match v {
            Tw::Undefined => false,
            Tw::Value(v) => truthy(Some(v)),
        }
    }

    fn tw_numeric(v: &Tw) -> Option<f64> {
        match v {
            Tw::Value(Value::Number(n)) if n.is_finite() => Some(*n),
            Tw::Value(Value::String(s)) if !js_trim(s).is_empty() => {
                Some(js_number_value(s)).filter(|n| n.is_finite())
            }
            _ => None,
        }
    }

    fn tw_str(v: &Value) -> String {
        match v {
            Value::Null => String::new(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => crate::value::format_number(*n),
            Value::String(s) => s.clone(),
            Value::Array(items) => items.iter().map(tw_str).collect::<Vec<_>>().join(","),
            Value::Object(_) => "[object Object]".into(),
        }
    }

    fn tw_compare(op: CmpOp, a: &Tw, b: &Tw) -> bool {
        if let (Some(x), Some(y)) = (tw_numeric(a), tw_numeric(b)) {
            return match op {
                CmpOp::Eq => x == y,
                CmpOp::Ne => x != y,
                CmpOp::Ge => x >= y,
                CmpOp::Le => x <= y,
                CmpOp::Gt => x > y,
                CmpOp::Lt => x < y,
            };
        }
        let s = |v: &Tw| match v {
            Tw::Undefined => Vec::new(),
            Tw::Value(v) => tw_str(v).encode_utf16().collect::<Vec<u16>>(),
        };
        let (x, y) = (s(a), s(b));
        match op {
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            CmpOp::Ge => x >= y,
            CmpOp::Le => x <= y,
            CmpOp::Gt => x > y,
            CmpOp::Lt => x < y,
        }
    }

    fn walk(node: &Node, scope: &Bindings, reads: &mut Vec<String>) -> Tw {
        let boolean = |b: bool| Tw::Value(Value::Bool(b));
        match &node.node {
            Expr::Or(items) => {
                let all: Vec<bool> = items
                    .iter()
                    .map(|n| tw_truthy(&walk(n, scope, reads)))
                    .collect();
                boolean(all.into_iter().any(|b| b))
            }
            Expr::And(items) => {
                let all: Vec<bool> = items
                    .iter()
                    .map(|n| tw_truthy(&walk(n, scope, reads)))
                    .collect();
                boolean(all.into_iter().all(|b| b))
            }
            Expr::Not(inner) => boolean(!tw_truthy(&walk(inner, scope, reads))),
            Expr::Compare(a, op, b) => {
                let a = walk(a, scope, reads);
                let b = walk(b, scope, reads);
                boolean(tw_compare(op.node, &a, &b))
            }
            Expr::Paren(inner) => walk(inner, scope, reads),
            Expr::Operand(operand) => match operand {
                Operand::Ref(path) => match resolve(scope, path) {
                    Some(v) => {
                        if !reads.iter().any(|r| **r == *path.text) {
                            reads.push(path.text.to_string());
                        }
                        Tw::Value(v.into_owned())
                    }
                    None => Tw::Undefined,
                },
                Operand::Str(s) | Operand::Bareword(s) => Tw::Value(Value::String(s.clone())),
                Operand::Number { value, .. } => Tw::Value(Value::Number(*value)),
                Operand::Bool(b) => boolean(*b),
                Operand::Null => Tw::Value(Value::Null),
            },
        }
    }

    /// Tree-walk `src`: value, reads, read phases.
    fn tree_walk(src: &str, scope: &Bindings) -> Evaluated {
        let cond = parse_cond(src).unwrap();
        let mut reads = Vec::new();
        let value = cond
            .expr
            .as_ref()
            .is_none_or(|n| tw_truthy(&walk(n, scope, &mut reads)));
        let mut read_phases: Vec<String> = Vec::new();
        for r in &reads {
            let path = RefPath::parse(r);
            for p in read_phases_of(scope, &path) {
                if !read_phases.contains(&p) {
                    read_phases.push(p);
                }
            }
        }
        Evaluated {
            value,
            reads,
            read_phases,
        }
    }

    fn read_phases_of(scope: &Bindings, path: &RefPath) -> Vec<String> {
        match path.target {
            Target::Previous => scope.previous_phases.clone(),
            _ => path.step_id().map(str::to_owned).into_iter().collect(),
        }
    }

    const REFS: &[&str] = &[
        "args.x",
        "args.mode",
        "args.s42",
        "args.empty",
        "args.zero",
        "args.no",
        "args.t",
        "args.f",
        "args.nil",
        "args.arr",
        "args.arr.3",
        "args.arr.length",
        "args.none",
        "args.obj",
        "args.eobj",
        "args.hex",
        "args.inf",
        "args.big",
        "args.tiny",
        "args.frac",
        "args.huge",
        "nope",
        "nope.x",
        " args.x ",
        "steps.triage.json.severity",
        "steps.triage.json.n",
        "steps.triage.json",
        "steps.triage.output",
        "steps.enrich.output",
        "steps.enrich.json",
        "steps.hidden.output",
        "steps.x.json.label",
        "previous.output",
        "previous",
        "item.kind",
        "item.n",
        "item",
        "loop.iteration",
    ];

    const LITERALS: &[&str] = &[
        "true",
        "false",
        "null",
        "high",
        "fast",
        "x",
        "a",
        "b",
        ".5",
        ".5e1",
        "v1.2",
        "-x",
        "-",
        "no",
        "off",
        "Infinity",
        "NaN",
        "é",
        "\u{e000}",
        "😀",
        "\"5\"",
        "' 42 '",
        r#""a\"b""#,
        r#""1,,b,2,3,[object Object]""#,
        "\"\"",
        "\" \"",
        "\"true\"",
        "'Infinity'",
        "\"0x1f\"",
        "\"0b101\"",
        "'-0x10'",
        "\"[object Object]\"",
        "'high-priority'",
        r"'\n'",
    ];

    const OPS: &[&str] = &["==", "!=", ">=", "<=", ">", "<"];

    fn leaf() -> impl Strategy<Value = String> {
        prop_oneof![
            select(REFS).prop_map(|p| format!("{{{p}}}")),
            select(LITERALS).prop_map(str::to_owned),
            "-?[0-9]{1,3}(\\.[0-9]{1,2})?([eE][+-]?[0-9]{1,3})?",
        ]
    }

    /// Conditions from the grammar (with assorted spacing).
    fn condition() -> impl Strategy<Value = String> {
        let sep = || select(&[" ", "", "  ", "\t", "\r\n"][..]);
        leaf().prop_recursive(5, 48, 4, move |inner| {
            let primary = prop_oneof![leaf(), inner.clone().prop_map(|e| format!("({e})"))];
            prop_oneof![
                (primary.clone(), sep(), select(OPS), sep(), primary)
                    .prop_map(|(a, s1, op, s2, b)| format!("{a}{s1}{op}{s2}{b}")),
                (sep(), inner.clone()).prop_map(|(s, e)| format!("!{s}{e}")),
                (inner.clone(), sep(), inner.clone())
                    .prop_map(|(a, s, b)| format!("{a}{s}&&{s}{b}")),
                (inner.clone(), sep(), inner.clone())
                    .prop_map(|(a, s, b)| format!("{a}{s}||{s}{b}")),
                inner.prop_map(|e| format!("( {e} )")),
            ]
        })
    }

    /// Reads past the 64 inline bits of a read set keep their order and count.
    #[test]
    fn read_sets_past_64_entries() {
        let mut s = scope();
        for i in (0..200).step_by(3) {
            s.locals
                .insert(format!("v{i}"), Value::Number(f64::from(i)));
        }
        // Every third of 200 distinct placeholders resolves.
        let src = (0..200)
            .map(|i| format!("{{v{i}}} >= 0"))
            .collect::<Vec<_>>()
            .join(" || ");
        let cond = Condition::parse(&src).unwrap();
        let decision = cond.decide(&s);
        let want = tree_walk(&src, &s);
        assert_eq!(decision.value, want.value);
        assert_eq!(decision.reads.len(), want.reads.len());
        assert_eq!(cond.path_texts(&decision.reads), want.reads);
        assert_eq!(cond.program().refs.len(), 200);
        assert_eq!(decision.reads.len(), 67);
        let mut last = None;
        for i in decision.reads.iter() {
            assert!(decision.reads.contains(i) && last < Some(i));
            last = Some(i);
        }
        assert!(!decision.reads.contains(cond.program().refs.len() + 64));
    }

    /// Programs deeper than the inline stack, and with more refs than inline slots.
    #[test]
    fn spilled_machine_agrees() {
        let s = scope();
        for n in [10, 20, 40] {
            let deep = format!("{}{{args.x}}{}", "({args.x} == (".repeat(n), "))".repeat(n));
            let wide = (0..n)
                .map(|i| format!("{{args.x}} == {{nope{i}}} || !{{item.n}}"))
                .collect::<Vec<_>>()
                .join(" && ");
            for src in [deep, wide] {
                assert_eq!(
                    Condition::parse(&src).unwrap().eval(&s),
                    tree_walk(&src, &s)
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// The bytecode machine and the tree-walker agree on the value and on the reads.
        #[test]
        fn machine_agrees_with_tree_walker(src in condition()) {
            let s = scope();
            let cond = Condition::parse(&src);
            prop_assert!(cond.is_ok(), "{:?}: {:?}", src, cond.err());
            let cond = cond.unwrap();
            prop_assert_eq!(cond.eval(&s), tree_walk(&src, &s), "{:?}", src);
            prop_assert_eq!(cond.holds(&s), cond.eval(&s).value);
            let decision = cond.decide(&s);
            prop_assert_eq!(decision.value, cond.eval(&s).value);
            prop_assert_eq!(cond.path_texts(&decision.reads), cond.eval(&s).reads);
            prop_assert_eq!(cond.read_phases(&s, &decision.reads), cond.eval(&s).read_phases);
            let sites: Vec<_> = cond.refs().collect();
            let ast = parse_cond(&src).unwrap();
            prop_assert_eq!(sites, ast.refs());
        }

        /// Printing is stable: print → parse → print gives the same text, and the same result.
        #[test]
        fn print_parse_print_is_stable(src in condition()) {
            let s = scope();
            let printed = parse_cond(&src).unwrap().to_string();
            let reparsed = parse_cond(&printed);
            prop_assert!(reparsed.is_ok(), "{:?} printed as {:?}: {:?}", src, printed, reparsed);
            prop_assert_eq!(reparsed.unwrap().to_string(), printed.clone());
            prop_assert_eq!(
                Condition::parse(&printed).unwrap().eval(&s),
                Condition::parse(&src).unwrap().eval(&s)
            );
        }

        /// Any text: no panic; errors point inside the input on char boundaries; what parses
        /// evaluates like the tree-walker.
        #[test]
        fn any_text(src in "([a-z0-9.\\-]|[ \t]|[&|!=<>()]|[\"'{}\\\\]|\\{args\\.x\\}|\u{a0}|é|😀)*") {
            let s = scope();
            match Condition::parse(&src) {
                Ok(cond) => prop_assert_eq!(cond.eval(&s), tree_walk(&src, &s)),
                Err(e) => {
                    let r = e.span.range();
                    prop_assert!(r.start <= r.end && r.end <= src.len());
                    prop_assert!(src.is_char_boundary(r.start) && src.is_char_boundary(r.end));
                    prop_assert_eq!(r.is_empty(), r.start == src.len() && matches!(
                        e.message.as_str(), "unexpected end" | "missing )"), "{:?}", e);
                }
            }
            let _ = eval_gate_entry(&src, &s);
        }
    }
}
