//! The machine checked against a tree-walking evaluator written straight from SPEC §6 (every
//! operand evaluated, UTF-16 vectors, `String`s everywhere), on generated conditions.

use super::machine::Evaluated;
use super::outcome::eval_gate_entry;
use super::tests::scope;
use crate::compile::Condition;
use crate::eval::scope::{Bindings, resolve};
use crate::eval::text::truthy;
use crate::syntax::condition::{CmpOp, Expr, Node, Operand, parse_cond};
use crate::syntax::{RefPath, Target};
use crate::value::{Value, js_number_value, js_trim};
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
            (inner.clone(), sep(), inner.clone()).prop_map(|(a, s, b)| format!("{a}{s}&&{s}{b}")),
            (inner.clone(), sep(), inner.clone()).prop_map(|(a, s, b)| format!("{a}{s}||{s}{b}")),
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
