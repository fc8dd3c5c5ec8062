//! The run machine under fire: the bytes pick one of the machine flows and then, step by
//! step, which outstanding command the "world" answers next and how — calls that succeed
//! (text, JSON, verdicts), fail transiently or for good, time out, panic or are refused;
//! scripts that exit or time out; timers; approvals approved, edited or rejected; directories
//! that cannot be made; interrupts; answers delivered twice; answers to operations that never
//! existed. Oracles, after the bytes run out and every still-outstanding command is answered
//! with a success:
//! - `handle` never panics, whatever arrives;
//! - the run finishes exactly once, and nothing but journal and progress comes after it;
//! - it finishes within a bounded number of inputs (no livelock);
//! - the recorded inputs, replayed into a fresh machine, give the same record.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tfc::run::RunRecord;
use tfc::run::journal;
use tfc::run::machine::{
    CacheHit, CallEnd, CallOutcome, Command, Decision, Event, Input, Machine, ScriptEnd,
    ScriptOutcome, UsageData,
};
use tfc::value::{Map, Value};
use tfc_fuzz::{machine_config, machine_flows};

/// One outstanding command the world owes an answer to.
#[derive(Clone, Debug)]
enum Owed {
    Call { op: u64, node: String, attempt: u32 },
    Script { op: u64 },
    Timer { op: u64 },
    Approval { op: u64, phase: String },
    Dir { op: u64 },
    Context { op: u64 },
    Scorer { op: u64 },
    Flow { op: u64 },
    Agents { op: u64 },
    Cache { op: u64 },
}

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
}

const OUTPUTS: [&str; 6] = [
    "ok",
    "[1, 2, 3]",
    "{\"a\": 1}",
    "VERDICT: PASS",
    "VERDICT: FAIL\nnot yet",
    "skip",
];

fn outcome(output: &str, stop: &str, error: Option<&str>, tokens: u64) -> CallEnd {
    CallEnd::Outcome(Box::new(CallOutcome {
        output: output.to_owned(),
        usage: UsageData {
            input: tokens,
            output: tokens,
            ..UsageData::default()
        },
        model: None,
        stop: stop.to_owned(),
        error: error.map(str::to_owned),
        stderr: String::new(),
        warnings: Vec::new(),
        backend: "fuzz".into(),
        elapsed_ms: 1,
        exit_code: None,
    }))
}

fn script(end: ScriptEnd, code: i32, stdout: &str) -> ScriptOutcome {
    ScriptOutcome {
        spawn_error: None,
        end,
        code,
        stdout: stdout.to_owned(),
        stdout_truncated: false,
        stderr: String::new(),
        elapsed_ms: 1,
    }
}

/// The answer to `owed`; `how` picks its shape (0 = plain success).
fn answer(owed: &Owed, how: u8) -> Event {
    match owed.clone() {
        Owed::Call { op, node, attempt } => {
            let end = match how % 10 {
                0..=3 => outcome(
                    OUTPUTS[usize::from(how / 10) % OUTPUTS.len()],
                    "completed",
                    None,
                    7,
                ),
                4 => outcome("", "failed", Some("rate limited (429)"), 1),
                5 => outcome("", "failed", Some("exit 1"), 0),
                6 => outcome("", "timeout", Some("timed out"), 0),
                7 => CallEnd::Panicked {
                    message: "boom".into(),
                },
                8 => CallEnd::Refused {
                    message: "the branch directory is unusable".into(),
                },
                _ => outcome(OUTPUTS[0], "completed", None, 60),
            };
            Event::CallEnded {
                op,
                node,
                attempt,
                end,
            }
        }
        Owed::Script { op } => Event::ScriptEnded {
            op,
            result: match how % 4 {
                0 | 1 => script(ScriptEnd::Exited, 0, "hi"),
                2 => script(ScriptEnd::Exited, 3, ""),
                _ => script(ScriptEnd::Timeout, -1, ""),
            },
        },
        Owed::Timer { op } => Event::TimerFired { op },
        Owed::Approval { op, phase } => Event::Approval {
            op,
            phase,
            decision: match how % 3 {
                0 => Decision::Approve,
                1 => Decision::Edit,
                _ => Decision::Reject,
            },
            note: (how % 3 != 0).then(|| "a note".to_owned()),
            by_signal: how % 2 == 1,
        },
        Owed::Dir { op } => Event::DirReady {
            op,
            path: if how % 5 == 4 {
                Err("cannot make the directory".into())
            } else {
                Ok(std::env::temp_dir())
            },
            warning: None,
        },
        Owed::Context { op } => Event::ContextRead {
            op,
            text: String::new(),
        },
        Owed::Scorer { op } => Event::ScorerEnded {
            op,
            pass: how % 2 == 0,
            detail: None,
        },
        Owed::Flow { op } => Event::FlowLoaded { op, text: None },
        // A miss, a corrupt entry (a miss with a warning), or a reusable `done` state.
        Owed::Cache { op } => Event::CacheChecked {
            op,
            key: format!("{op:016x}"),
            hit: (how % 3 == 2).then(|| {
                Box::new(CacheHit {
                    source: if how % 2 == 0 {
                        "run-only"
                    } else {
                        "cross-run"
                    }
                    .into(),
                    record: serde_json::json!({
                        "status": "done",
                        "output": OUTPUTS[usize::from(how) % OUTPUTS.len()],
                        "attempts": 1,
                    })
                    .into(),
                })
            }),
            warning: (how % 3 == 1).then(|| "the cache entry is corrupt".to_owned()),
        },
        Owed::Agents { op } => Event::AgentsResolved {
            op,
            run_id: "fuzz-sub".into(),
            backends: Vec::new(),
            error: None,
        },
    }
}

/// Feed one input; collect what it owes and whether it finished. Panics if anything but
/// journal lines and progress follows the finish.
fn feed(
    m: &mut Machine,
    input: Input,
    owed: &mut Vec<Owed>,
    finished: &mut Vec<RunRecord>,
    inputs: &mut Vec<Input>,
) {
    let mut out = Vec::new();
    inputs.push(input.clone());
    m.handle_into(input, &mut out);
    for c in out {
        let new = match c {
            Command::StartCall { op, request } => Some(Owed::Call {
                op,
                node: request.node,
                attempt: request.attempt,
            }),
            Command::StartScript { op, .. } => Some(Owed::Script { op }),
            Command::StartTimer { op, .. } => Some(Owed::Timer { op }),
            Command::CancelTimer { op } => {
                owed.retain(|o| !matches!(o, Owed::Timer { op: t } if *t == op));
                None
            }
            Command::AskApproval { op, phase, .. } => Some(Owed::Approval { op, phase }),
            Command::PrepareDir { op, .. } => Some(Owed::Dir { op }),
            Command::ReadContext { op, .. } => Some(Owed::Context { op }),
            Command::RunScorer { op, .. } => Some(Owed::Scorer { op }),
            Command::LoadFlow { op, .. } => Some(Owed::Flow { op }),
            Command::ResolveAgents { op, .. } => Some(Owed::Agents { op }),
            Command::CacheLookup { op, .. } => Some(Owed::Cache { op }),
            Command::CacheStore { key, record } => {
                let done = matches!(&record, Value::Object(m)
                    if m.get("status").and_then(Value::as_str) == Some("done"));
                assert!(done, "cache entry {key} stored for a phase not done");
                None
            }
            Command::Finish(record) => {
                finished.push(*record);
                None
            }
            Command::StartShard { .. } | Command::CapShard { .. } | Command::EndShard(_) => {
                panic!("a run without shard_items asked for a shard")
            }
            Command::Cancel { .. }
            | Command::ReleaseDir { .. }
            | Command::Progress(_)
            | Command::Journal(_)
            | Command::Save => None,
        };
        if let Some(o) = new {
            assert!(
                finished.is_empty(),
                "a command after the run finished: {o:?}"
            );
            owed.push(o);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut bytes = Bytes(data);
    let flows = machine_flows();
    let pick = bytes.next().unwrap_or(0);
    let flow = flows[usize::from(pick) % flows.len()].clone();
    let config = machine_config(pick & 0x80 != 0, pick & 0x40 != 0);
    let mut m = Machine::new(flow.clone(), Map::default(), config.clone());
    let (mut owed, mut finished, mut inputs) = (Vec::new(), Vec::new(), Vec::new());
    let mut at = 1_000u64;
    let start = Input {
        at,
        what: Event::Start,
    };
    feed(&mut m, start, &mut owed, &mut finished, &mut inputs);
    let mut answered: Vec<Owed> = Vec::new();
    while finished.is_empty() {
        let Some(b) = bytes.next() else { break };
        let how = bytes.next().unwrap_or(0);
        at += u64::from(how);
        let what = match b {
            // An interrupt, now and then.
            0xFF => Event::Interrupt,
            // An answer delivered twice.
            0xFE if !answered.is_empty() => {
                answer(&answered[usize::from(how) % answered.len()], how)
            }
            // An answer to an operation that never existed.
            0xFD => answer(
                &Owed::Call {
                    op: 1_000_000 + u64::from(how),
                    node: "nowhere".into(),
                    attempt: 1,
                },
                how,
            ),
            _ if owed.is_empty() => break,
            _ => {
                let o = owed.remove(usize::from(b) % owed.len());
                let e = answer(&o, how);
                answered.push(o);
                e
            }
        };
        feed(
            &mut m,
            Input { at, what },
            &mut owed,
            &mut finished,
            &mut inputs,
        );
    }
    // The world answers everything still owed, with successes, until the run ends.
    let mut steps = 0;
    while finished.is_empty() {
        let Some(o) = (!owed.is_empty()).then(|| owed.remove(0)) else {
            panic!("the run neither finished nor owes anything: it is stuck");
        };
        steps += 1;
        assert!(steps < 100_000, "no end after {steps} answers");
        at += 1;
        let e = answer(&o, 0);
        feed(
            &mut m,
            Input { at, what: e },
            &mut owed,
            &mut finished,
            &mut inputs,
        );
    }
    assert_eq!(finished.len(), 1, "the run finished more than once");
    // Replay: the same inputs into a fresh machine give the same record.
    let replayed = journal::replay(flow, Map::default(), config, &inputs);
    assert_eq!(finished.pop(), replayed, "replay gave another record");
});
