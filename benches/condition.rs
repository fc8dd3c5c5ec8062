//! Benchmarks: condition. Run with `cargo bench --bench condition`.
//!
//! A six-clause `when` against a context of 500 steps: parse + compile once, then evaluate the
//! compiled program (with its reads, and the value alone), and the `eval_when` use site that
//! parses every time.

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use tfc::compile::Condition;
use tfc::eval::{Bindings, StepState, StepStatus, eval_when};
use tfc::value::{Map, Value};

/// The allocator `tfc` itself uses, so the figures are those of the shipped binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

const WHEN: &str = "{steps.a.json.sev} == high && {steps.b.json.n} > 3 || ({args.mode} != fast && !{steps.c.output}) || {loop.iteration} >= 2 && {item.kind} == \"x\"";

/// 500 steps (three of them read by [`WHEN`]), args, `loop` and a map item.
fn context() -> Bindings {
    let mut scope = Bindings::default();
    for i in 0..497 {
        let output = format!("{{\"i\": {i}, \"sev\": \"low\", \"items\": [1, 2, 3]}}");
        scope.steps.insert(format!("s{i}"), StepState::done(output));
    }
    scope
        .steps
        .insert("a".into(), StepState::done(r#"{"sev": "medium", "n": 1}"#));
    scope
        .steps
        .insert("b".into(), StepState::done(r#"{"n": 7, "tags": ["x"]}"#));
    scope.steps.insert(
        "c".into(),
        StepState::new(StepStatus::Done, "no".into(), None),
    );
    let mut args = Map::default();
    args.insert("mode".into(), Value::from("careful"));
    args.insert("dir".into(), Value::from("src"));
    scope.args = Some(Value::Object(args));
    let mut lp = Map::default();
    lp.insert("iteration".into(), Value::Number(2.0));
    scope.locals.insert("loop".into(), Value::Object(lp));
    let mut item = Map::default();
    item.insert("kind".into(), Value::from("x"));
    scope.locals.insert("item".into(), Value::Object(item));
    scope
}

#[divan::bench]
fn parse_compile(bencher: Bencher) {
    bencher
        .counter(ItemsCount::new(1usize))
        .bench(|| Condition::parse(black_box(WHEN)));
}

#[divan::bench]
fn eval_with_reads(bencher: Bencher) {
    let scope = context();
    let cond = Condition::parse(WHEN).expect("the bench condition parses");
    let first = cond.eval(&scope); // also parses the steps' JSON once
    assert!(first.value);
    assert_eq!(first.reads.len(), 6);
    bencher
        .counter(ItemsCount::new(1usize))
        .bench_local(|| cond.eval(black_box(&scope)));
}

#[divan::bench]
fn eval_value_only(bencher: Bencher) {
    let scope = context();
    let cond = Condition::parse(WHEN).expect("the bench condition parses");
    assert!(cond.holds(&scope));
    bencher
        .counter(ItemsCount::new(1usize))
        .bench_local(|| cond.holds(black_box(&scope)));
}

#[divan::bench]
fn when_use_site(bencher: Bencher) {
    let scope = context();
    assert!(eval_when(WHEN, &scope).value);
    bencher
        .counter(ItemsCount::new(1usize))
        .bench_local(|| eval_when(black_box(WHEN), black_box(&scope)));
}
