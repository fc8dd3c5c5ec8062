//! Unit tests of the condition machine and its use sites.

use super::compare::cmp_utf16;
use super::machine::{Evaluated, INLINE_STACK};
use super::outcome::{Outcome, eval_gate_entry, eval_until, eval_when};
use crate::compile::Condition;
use crate::eval::scope::{Bindings, StepState, StepStatus};
use crate::value::{Map, Value};

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
    let r =
        eval("{args.zero} && {steps.x.json.label} && {args.zero} && {nope} && {previous.output}");
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

/// A condition that fails to *parse* reports the placeholders read before the error:
/// resolved ones, distinct, with their phases; none after the error. One that fails to
/// *tokenize* reads nothing: the whole expression is tokenized before any operand is resolved.
#[test]
fn parse_errors_keep_the_reads_before_them() {
    let s = scope();
    let o = eval_when(
        "{steps.triage.json.severity} == high && {args.x} && {nope} && {args.x} == {args.mode} b",
        &s,
    );
    assert!(o.value);
    assert_eq!(
        o.error.as_ref().map(|e| e.message.as_str()),
        Some("trailing tokens")
    );
    assert_eq!(
        o.reads,
        ["steps.triage.json.severity", "args.x", "args.mode"]
    );
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
}

#[test]
fn tokenizer_errors_read_nothing() {
    let s = scope();
    for src in [
        "{steps.triage.json.severity} == high && {args.x} = {args.mode}",
        "{args.x} == \"unterminated",
        "{args.x} == {args.mode",
        "{steps.x.output} >== broken",
        "{args.x}\u{a0}== 5",
    ] {
        let o = eval_when(src, &s);
        assert!(o.value, "{src:?}");
        assert!(o.error.is_some(), "{src:?}");
        assert_eq!(
            (o.reads, o.read_phases),
            (Vec::<String>::new(), Vec::<String>::new()),
            "{src:?}"
        );
    }
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

/// The deepest conditions the parser accepts compile and evaluate on a small stack.
#[test]
fn deepest_conditions_compile_and_run_on_a_small_stack() {
    use crate::syntax::condition::MAX_DEPTH;
    let run = || {
        for unit in ["(", "!", "(!", "!("] {
            let deep = format!(
                "{}{{a}}{}",
                unit.repeat(MAX_DEPTH / 2),
                ")".repeat(unit.matches('(').count() * MAX_DEPTH / 2)
            );
            let compiled = Condition::parse(&deep).unwrap();
            compiled.eval(&Bindings::default());
        }
    };
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn use_sites_name_their_undefined_operands() {
    let s = scope();
    let o = eval_when(
        "{steps.triage.json.severity} == high && {steps.triage.json.files.0} != x || {args.nope} == {args.nope}",
        &s,
    );
    assert_eq!(o.unresolved, ["steps.triage.json.files.0", "args.nope"]);
    assert!(eval_until("{args.x} == 5", &s).unresolved.is_empty());
    assert_eq!(
        eval_gate_entry("{args.gone} contains x", &s).unresolved,
        ["args.gone"]
    );
    assert!(eval_when("{args.nope} == == 5", &s).unresolved.is_empty());
}
