//! Approval deadlines (SPEC §8.8) through the machine alone, its clock the inputs' `at`: the
//! deadline recorded while pending, a resumed run keeping it, each `onTimeout` after it, and
//! a terminal question dropped when its timer fires.

use super::test_replies::{routine_reply, test_machine};
use super::{Command, Config, Decision, Event, Input, Machine};
use crate::run::record::{PhaseStatus, RunRecord, RunStatus};
use std::sync::Arc;

/// 2026-11-30T10:00:00.000Z.
const T0: u64 = 1_796_032_800_000;

/// An approval `ok` with a one-hour deadline and `onTimeout` = `on`, before a script `b`.
fn flow(on: &str) -> String {
    format!(
        r#"{{"phases": [
  {{"id": "ok", "type": "approval", "task": "go?", "timeout": "1h", "onTimeout": "{on}"}},
  {{"id": "b", "type": "script", "dependsOn": ["ok"], "run": ["true"], "final": true}}
]}}"#
    )
}

/// Feed `what` at `at` and everything the machine's own requests answer at once (directories,
/// cache lookups, scripts succeed); the commands it gave that need a person or a clock.
fn feed(m: &mut Machine, at: u64, what: Event, record: &mut Option<RunRecord>) -> Vec<Command> {
    let mut kept = Vec::new();
    let mut todo = vec![what];
    while let Some(what) = todo.pop() {
        for c in m.handle(Input { at, what }) {
            if let Some(e) = routine_reply(&c) {
                todo.push(e);
                continue;
            }
            match c {
                Command::StartScript { op, .. } => todo.push(Event::ScriptEnded {
                    op,
                    result: super::ScriptOutcome {
                        spawn_error: None,
                        end: super::io::ScriptEnd::Exited,
                        code: 0,
                        stdout: "shipped".into(),
                        stdout_truncated: false,
                        stderr: String::new(),
                        elapsed_ms: 1,
                    },
                }),
                Command::Finish(r) => *record = Some(*r),
                c @ (Command::AskApproval { .. }
                | Command::StartTimer { .. }
                | Command::Progress(_)) => kept.push(c),
                _ => {}
            }
        }
    }
    kept
}

/// Run `flow(on)` from `T0` with the parent's deadlines `carried` (node → epoch ms).
fn run(on: &str, carried: &[(&str, u64)]) -> RunRecord {
    let cfg = Config {
        approval_deadlines: Arc::new(carried.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()),
        ..Config::default()
    };
    let mut m = test_machine(&flow(on), cfg);
    let mut record = None;
    feed(&mut m, T0, Event::Start, &mut record);
    record.expect("the run ends")
}

#[test]
fn a_pending_approval_records_its_deadline_and_the_pause_says_it() {
    let r = run("approve", &[]);
    assert_eq!(r.status, RunStatus::Paused);
    let a = r.phases["ok"].approval.as_ref().expect("approval");
    assert_eq!(a.decision, "pending");
    assert_eq!(a.expires_at.as_deref(), Some("2026-11-30T11:00:00.000Z"));
    assert_eq!(
        r.final_output.lines().next(),
        Some(
            "Run paused — awaiting approval: ok (expires 2026-11-30T11:00:00.000Z, then approve)."
        )
    );
    // No deadline, no parenthesis.
    let text = flow("reject").replace(r#", "timeout": "1h", "onTimeout": "reject""#, "");
    let mut m = test_machine(&text, Config::default());
    let mut record = None;
    feed(&mut m, T0, Event::Start, &mut record);
    let r = record.expect("ends");
    assert!(
        r.final_output
            .starts_with("Run paused — awaiting approval: ok.\n"),
        "{}",
        r.final_output
    );
    assert_eq!(r.phases["ok"].approval.as_ref().unwrap().expires_at, None);
}

#[test]
fn a_resumed_run_keeps_the_deadline_it_carries() {
    let carried = T0 + 600_000;
    let r = run("reject", &[("ok", carried)]);
    assert_eq!(r.status, RunStatus::Paused);
    let a = r.phases["ok"].approval.as_ref().expect("approval");
    assert_eq!(a.expires_at.as_deref(), Some("2026-11-30T10:10:00.000Z"));
}

#[test]
fn after_the_deadline_on_timeout_decides() {
    let past = T0 - 1;
    let expires = "2026-11-30T09:59:59.999Z";
    let note = format!("no decision before {expires}");
    // approve: the phase is done and the run goes on.
    let r = run("approve", &[("ok", past)]);
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.reason);
    let ok = &r.phases["ok"];
    let a = ok.approval.as_ref().unwrap();
    assert_eq!((a.decision, a.source), ("approve", Some("timeout")));
    assert_eq!(a.note.as_deref(), Some(note.as_str()));
    assert_eq!(r.phases["b"].status, PhaseStatus::Done);
    // reject: the run is blocked, with the note as the reason.
    let r = run("reject", &[("ok", past)]);
    assert_eq!(r.status, RunStatus::Blocked);
    let a = r.phases["ok"].approval.as_ref().unwrap();
    assert_eq!((a.decision, a.source), ("reject", Some("timeout")));
    assert!(
        r.reason.as_deref().unwrap_or("").contains(&note),
        "{:?}",
        r.reason
    );
    // fail: decision `expired`, the phase failed.
    let r = run("fail", &[("ok", past)]);
    assert_eq!(r.status, RunStatus::Failed);
    let ok = &r.phases["ok"];
    assert_eq!(ok.status, PhaseStatus::Failed);
    assert_eq!(
        ok.error.as_deref(),
        Some(format!("approval 'ok' expired at {expires}").as_str())
    );
    let a = ok.approval.as_ref().unwrap();
    assert_eq!((a.decision, a.source), ("expired", Some("timeout")));
    assert_eq!(r.phases["b"].status, PhaseStatus::Skipped);
}

#[test]
fn a_question_on_the_terminal_stops_waiting_at_the_deadline() {
    let ask = |on: &str| {
        let cfg = Config {
            ask: true,
            progress: true,
            ..Config::default()
        };
        let mut m = test_machine(&flow(on), cfg);
        let mut record = None;
        let out = feed(&mut m, T0, Event::Start, &mut record);
        let asked = out.iter().find_map(|c| match c {
            Command::AskApproval { op, deadline, .. } => {
                // The question carries its deadline (a driver refuses a later answer).
                assert_eq!(
                    deadline.map(|(at, on)| (at, on.as_str())),
                    Some((T0 + 3_600_000, on))
                );
                Some(*op)
            }
            _ => None,
        });
        let timer = out.iter().find_map(|c| match c {
            Command::StartTimer { op, ms } => Some((*op, *ms)),
            _ => None,
        });
        (
            m,
            record,
            asked.expect("asked"),
            timer.expect("a deadline timer"),
        )
    };
    let (mut m, mut record, asked, (timer, ms)) = ask("fail");
    assert_eq!(ms, 3_600_000);
    let out = feed(
        &mut m,
        T0 + ms,
        Event::TimerFired { op: timer },
        &mut record,
    );
    // The display is told why the question no longer matters.
    let told = "no decision before 2026-11-30T11:00:00.000Z: its onTimeout (fail) decides";
    assert!(
        out.iter().any(|c| matches!(c, Command::Progress(p)
            if p.status == "warning" && p.detail.as_deref() == Some(told))),
        "{out:?}"
    );
    // The answer after the deadline is late news.
    feed(
        &mut m,
        T0 + ms + 5,
        Event::Approval {
            op: asked,
            phase: "ok".into(),
            decision: Decision::Approve,
            note: None,
            by_signal: false,
        },
        &mut record,
    );
    let r = record.expect("the run ends at the deadline");
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(
        r.phases["ok"].error.as_deref(),
        Some("approval 'ok' expired at 2026-11-30T11:00:00.000Z")
    );
    // An answer in time wins, and the timer is cancelled.
    let (mut m, _, asked, (timer, _)) = ask("fail");
    let out = m.handle(Input {
        at: T0 + 10,
        what: Event::Approval {
            op: asked,
            phase: "ok".into(),
            decision: Decision::Approve,
            note: None,
            by_signal: false,
        },
    });
    assert!(
        out.iter()
            .any(|c| matches!(c, Command::CancelTimer { op } if *op == timer)),
        "the deadline timer is cancelled: {out:?}"
    );
}
