//! A race decided while a loser's attempt is still out: whatever the driver delivers for that
//! attempt afterwards, and in whichever order with the other losers, the machine records the
//! loser as the local driver does (`failed`, `cancelled: another branch won`).

use std::collections::BTreeMap;

use super::test_replies::{routine_reply, test_machine};
use super::{CallEnd, CallOutcome, Command, Config, Event, Input, Machine, UsageData};
use crate::run::record::{PhaseStatus, RunRecord};

const FLOW: &str = r#"{"phases": [{"id": "r", "type": "race",
    "branches": [{"task": "a"}, {"task": "b"}, {"task": "c"}]}]}"#;

/// The end of an attempt: `ok`, or the cancellation as a stopped process reports it.
fn end(ok: bool) -> CallEnd {
    CallEnd::Outcome(Box::new(CallOutcome {
        output: if ok { "answer".into() } else { String::new() },
        usage: UsageData {
            input: 3,
            ..UsageData::default()
        },
        model: None,
        stop: if ok { "completed" } else { "cancelled" }.into(),
        error: (!ok).then(|| "Aborted".to_owned()),
        stderr: String::new(),
        warnings: Vec::new(),
        backend: "test".into(),
        elapsed_ms: 1,
        exit_code: None,
    }))
}

/// Run the race: branch `first` wins; then each `(branch, ok)` of `after` is delivered, in
/// that order. Returns the record and the cancelled branches.
fn race(first: usize, after: &[(usize, bool)]) -> (RunRecord, Vec<usize>) {
    let mut m = test_machine(FLOW, Config::default());
    let mut at = 1_000;
    // Branch index → (op, node); ops cancelled; the finished record.
    let mut calls: BTreeMap<usize, (u64, String)> = BTreeMap::new();
    let mut cancelled = Vec::new();
    let mut record = None;
    let mut feed = |m: &mut Machine,
                    what: Event,
                    calls: &mut BTreeMap<usize, (u64, String)>,
                    cancelled: &mut Vec<usize>,
                    record: &mut Option<RunRecord>| {
        at += 10;
        let mut todo = vec![what];
        while let Some(what) = todo.pop() {
            for c in m.handle(Input { at, what }) {
                if let Some(e) = routine_reply(&c) {
                    todo.push(e);
                    continue;
                }
                match c {
                    Command::StartCall { op, request } => {
                        let i = request.item_index.expect("a branch");
                        calls.insert(i, (op, request.node));
                    }
                    Command::Cancel { op } => {
                        let i = calls.iter().find(|(_, (o, _))| *o == op).map(|(i, _)| *i);
                        cancelled.extend(i);
                    }
                    Command::Finish(r) => *record = Some(*r),
                    _ => {}
                }
            }
        }
    };
    feed(
        &mut m,
        Event::Start,
        &mut calls,
        &mut cancelled,
        &mut record,
    );
    assert_eq!(calls.len(), 3, "every branch starts at once");
    for (i, ok) in std::iter::once((first, true)).chain(after.iter().copied()) {
        let (op, node) = calls[&i].clone();
        let what = Event::CallEnded {
            op,
            node,
            attempt: 1,
            end: end(ok),
        };
        feed(&mut m, what, &mut calls, &mut cancelled, &mut record);
    }
    (
        record.expect("the race ends when every branch settled"),
        cancelled,
    )
}

/// `(index, status, error)` of the race's items.
fn items(r: &RunRecord) -> Vec<(usize, PhaseStatus, Option<String>)> {
    r.phases["r"]
        .items
        .as_ref()
        .expect("items")
        .iter()
        .map(|i| (i.index, i.status, i.error.clone()))
        .collect()
}

#[test]
fn a_loser_that_answers_after_the_race_is_decided_is_cancelled() {
    let lost = || Some("cancelled: another branch won".to_owned());
    let expected = vec![
        (0, PhaseStatus::Failed, lost()),
        (1, PhaseStatus::Done, None),
        (2, PhaseStatus::Failed, lost()),
    ];
    // The local driver: both losers stopped.
    let (local, cancelled) = race(1, &[(0, false), (2, false)]);
    assert_eq!(cancelled, [0, 2]);
    assert_eq!(items(&local), expected);
    // A durable engine: a loser's activity completed after the cancel request, delivered
    // before or after the other loser's cancellation: the same record.
    for after in [
        [(0, true), (2, false)],
        [(2, false), (0, true)],
        [(2, true), (0, true)],
        [(0, false), (2, true)],
    ] {
        let (late, _) = race(1, &after);
        assert_eq!(items(&late), expected, "{after:?}");
        assert_eq!(late.phases["r"].status, PhaseStatus::Done);
        assert_eq!(late.phases["r"].output, "answer");
        // The late answers' usage is still counted.
        assert_eq!(late.usage.input, local.usage.input, "{after:?}");
    }
}
