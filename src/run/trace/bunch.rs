//! Notes on their way from a run to its spans, a bunch at a time. What the run tells is
//! copied in as plain data, its texts into one buffer the bunch owns: nothing the run
//! allocated is freed on the thread that makes the spans (freeing another thread's memory
//! is what costs), and a bunch's buffers are used again once its notes are read.

use std::sync::Mutex;

use crate::agent::StopReason;

use super::super::machine::{CallEnd, Facts, Progress, ScriptEnd};
use super::super::record::RunRecord;
use super::spans::{Ended, Note, RunEnd, Started, cut};
use crate::flow::PhaseType;

/// A text of the bunch: a range of its buffer.
#[derive(Clone, Copy)]
struct Txt {
    start: u32,
    end: u32,
}

/// A note as a bunch holds it: [`Note`], its texts in the bunch's buffer.
enum Held {
    PhaseStarted {
        phase: Txt,
        kind: Option<PhaseType>,
        rework: bool,
    },
    /// A phase ended: its progress note, without its texts (so it owns no memory), is the
    /// bunch's next in `ends`.
    PhaseEnded {
        phase: Txt,
        detail: Option<Txt>,
        reason: Option<Txt>,
    },
    CallStarted {
        op: u64,
        node: Txt,
        agent: Txt,
        attempt: u32,
        model: Option<Txt>,
        prompt: Option<Txt>,
    },
    CallEnded {
        op: u64,
        stop: Option<StopReason>,
        ok: bool,
        tokens: (u64, u64),
        cost_usd: Option<f64>,
        model: Option<Txt>,
        error: Option<Txt>,
        backend: Option<Txt>,
        output: Option<Txt>,
        class: Option<&'static str>,
        exit_code: Option<i32>,
    },
    ScriptStarted {
        op: u64,
        node: Txt,
        program: Txt,
    },
    ScriptEnded {
        op: u64,
        end: ScriptEnd,
        code: i32,
        spawn_error: Option<Txt>,
    },
    ReadStarted {
        op: u64,
        node: Txt,
        files: usize,
    },
    ReadEnded {
        op: u64,
        chars: usize,
        files: usize,
    },
    /// A shard's journal lines, one text each.
    ShardEnded(Vec<Txt>),
    Finish {
        end: Box<RunEnd>,
        reason: Option<Txt>,
        output_phase: Option<Txt>,
        first_failure: Option<Txt>,
    },
    Live,
}

/// Notes with their times, in order.
#[derive(Default)]
pub(super) struct Bunch {
    notes: Vec<(u64, Held)>,
    text: String,
    /// The progress notes of phases that ended, in order (kept apart: they are large).
    ends: Vec<Progress>,
}

/// What the machine's progress note of a phase re-run by a gate's rework says.
const REWORK: &str = "re-run by a gate's rework";

/// Emptied bunches, for the next ones (at most [`POOL_SIZE`]).
static POOL: Mutex<Vec<Bunch>> = Mutex::new(Vec::new());
const POOL_SIZE: usize = 32;

impl Bunch {
    /// An empty bunch with room for `notes` notes (one used before, when there is one).
    pub fn new(notes: usize) -> Bunch {
        let pooled = POOL.lock().ok().and_then(|mut p| p.pop());
        pooled.unwrap_or_else(|| Bunch {
            notes: Vec::with_capacity(notes),
            text: String::with_capacity(notes * 16),
            ends: Vec::with_capacity(notes / 2),
        })
    }

    /// Notes in the bunch.
    pub fn len(&self) -> usize {
        self.notes.len()
    }

    fn txt(&mut self, s: &str) -> Txt {
        let start = self.text.len();
        self.text.push_str(s);
        Txt {
            start: u32::try_from(start).unwrap_or(u32::MAX),
            end: u32::try_from(self.text.len()).unwrap_or(u32::MAX),
        }
    }

    fn opt(&mut self, s: Option<&str>) -> Option<Txt> {
        s.map(|s| self.txt(s))
    }

    fn push(&mut self, at: u64, held: Held) {
        self.notes.push((at, held));
    }

    /// A progress note that tells a phase started or ended (others are not kept).
    pub fn progress(&mut self, at: u64, p: &Progress) {
        let phase = self.txt(&p.phase);
        let held = match p.status {
            "running" => Held::PhaseStarted {
                phase,
                kind: p.kind,
                rework: p.detail.as_deref() == Some(REWORK),
            },
            "done" | "failed" | "skipped" => {
                let detail = self.opt(p.detail.as_deref());
                let f = &p.facts;
                let reason = self.opt(f.reason.as_deref());
                let facts = Facts {
                    approval: f.approval,
                    items: f.items,
                    tally: f.tally,
                    iteration: f.iteration,
                    stop: f.stop,
                    verdict: f.verdict,
                    reason: None,
                    rework: f.rework,
                    cache_hit: f.cache_hit,
                    record_attempts: f.record_attempts,
                };
                let p = Progress {
                    phase: String::new(),
                    status: p.status,
                    kind: p.kind,
                    detail: None,
                    attempts: p.attempts,
                    tokens: p.tokens,
                    cost_usd: p.cost_usd,
                    facts,
                };
                self.ends.push(p);
                Held::PhaseEnded {
                    phase,
                    detail,
                    reason,
                }
            }
            _ => {
                self.text.truncate(phase.start as usize);
                return;
            }
        };
        self.push(at, held);
    }

    /// An agent call's attempt starts; `content`: its prompt is recorded, cut to this
    /// many characters.
    pub fn call_started(
        &mut self,
        at: u64,
        op: u64,
        r: &super::super::machine::CallRequest,
        content: Option<usize>,
    ) {
        let node = self.txt(&r.node);
        let agent = self.txt(&r.agent);
        let model = self.opt(r.model.as_deref());
        let prompt = content.map(|n| {
            let p = cut(&r.prompt, n);
            self.txt(&p)
        });
        self.push(
            at,
            Held::CallStarted {
                op,
                node,
                agent,
                attempt: r.attempt,
                model,
                prompt,
            },
        );
    }

    /// An agent call's attempt ended; `content`: its output is recorded, cut to this many
    /// characters.
    pub fn call_ended(&mut self, at: u64, op: u64, end: &CallEnd, content: Option<usize>) {
        let held = match end {
            CallEnd::Outcome(o) => {
                let ok = o.is_ok();
                let output = content
                    .filter(|_| ok || !o.output.is_empty())
                    .map(|n| cut(&o.output, n));
                Held::CallEnded {
                    op,
                    stop: Some(o.stop()),
                    ok,
                    tokens: (o.usage.input, o.usage.output),
                    cost_usd: o.usage.cost_usd,
                    model: self.opt(o.model.as_deref()),
                    error: self.opt(o.error.as_deref()),
                    backend: self.opt(Some(o.backend.as_str()).filter(|b| !b.is_empty())),
                    output: self.opt(output.as_deref()),
                    class: None,
                    exit_code: o.exit_code,
                }
            }
            CallEnd::NoBackend { message }
            | CallEnd::Refused { message }
            | CallEnd::Panicked { message } => Held::CallEnded {
                op,
                stop: None,
                ok: false,
                tokens: (0, 0),
                cost_usd: None,
                model: None,
                error: Some(self.txt(message)),
                backend: None,
                output: None,
                exit_code: None,
                // Never sent: no backend for the agent, its directory is missing, or the
                // backend's code broke.
                class: Some(match end {
                    CallEnd::NoBackend { .. } => StopReason::BackendMissing.as_str(),
                    CallEnd::Refused { .. } => "spawn",
                    _ => StopReason::Failed.as_str(),
                }),
            },
        };
        self.push(at, held);
    }

    /// A script phase's command starts.
    pub fn script_started(&mut self, at: u64, op: u64, node: &str, program: &str) {
        let node = self.txt(node);
        let program = self.txt(program);
        self.push(at, Held::ScriptStarted { op, node, program });
    }

    /// A script ended.
    pub fn script_ended(&mut self, at: u64, op: u64, r: &super::super::machine::ScriptOutcome) {
        let spawn_error = self.opt(r.spawn_error.as_deref());
        let (end, code) = (r.end, r.code);
        self.push(
            at,
            Held::ScriptEnded {
                op,
                end,
                code,
                spawn_error,
            },
        );
    }

    /// A phase's pre-read starts…
    pub fn read_started(&mut self, at: u64, op: u64, node: &str, files: usize) {
        let node = self.txt(node);
        self.push(at, Held::ReadStarted { op, node, files });
    }

    /// … and ends with `chars` characters, from `files` files actually read.
    pub fn read_ended(&mut self, at: u64, op: u64, chars: usize, files: usize) {
        self.push(at, Held::ReadEnded { op, chars, files });
    }

    /// A shard's `agent-call` journal lines.
    pub fn shard_ended(&mut self, at: u64, lines: &[String]) {
        let lines = lines.iter().map(|l| self.txt(l)).collect();
        self.push(at, Held::ShardEnded(lines));
    }

    /// The run ended as `record` says.
    pub fn finish(&mut self, at: u64, record: &RunRecord) {
        let end = Box::new(RunEnd {
            status: record.status,
            reason: None,
            agent_calls: record.agent_calls(),
            input_tokens: record.usage.input,
            output_tokens: record.usage.output,
            cost_usd: record.usage.cost_usd,
            output_phase: None,
            first_failure: None,
        });
        let reason = self.opt(record.reason.as_deref());
        let output_phase = self.opt(record.output_phase.as_deref());
        let first_failure = first_failure(record).map(|f| self.txt(&f));
        self.push(
            at,
            Held::Finish {
                end,
                reason,
                output_phase,
                first_failure,
            },
        );
    }

    /// What was noted so far is another process's to export: from here on, spans are
    /// exported.
    pub fn live(&mut self, at: u64) {
        self.push(at, Held::Live);
    }

    /// Hand each note, as owned data, to `apply`, in order; the emptied bunch goes back to
    /// the pool.
    pub fn read(mut self, mut apply: impl FnMut(Note, u64)) {
        let text = std::mem::take(&mut self.text);
        let s = |t: Txt| text.get(t.start as usize..t.end as usize).unwrap_or("");
        let owned = |t: Txt| s(t).to_owned();
        let opt = |t: Option<Txt>| t.map(owned);
        let mut ends = self.ends.drain(..);
        for (at, held) in self.notes.drain(..) {
            let note = match held {
                Held::PhaseStarted {
                    phase,
                    kind,
                    rework,
                } => Note::PhaseStarted {
                    phase: owned(phase),
                    kind,
                    rework,
                },
                Held::PhaseEnded {
                    phase,
                    detail,
                    reason,
                } => {
                    let Some(mut p) = ends.next() else {
                        continue;
                    };
                    p.phase = owned(phase);
                    p.detail = opt(detail);
                    p.facts.reason = opt(reason);
                    Note::PhaseEnded(p)
                }
                Held::CallStarted {
                    op,
                    node,
                    agent,
                    attempt,
                    model,
                    prompt,
                } => Note::CallStarted(Box::new(Started {
                    op,
                    node: owned(node),
                    agent: owned(agent),
                    attempt,
                    model: opt(model),
                    prompt: opt(prompt),
                })),
                Held::CallEnded {
                    op,
                    stop,
                    ok,
                    tokens,
                    cost_usd,
                    model,
                    error,
                    backend,
                    output,
                    class,
                    exit_code,
                } => Note::CallEnded {
                    op,
                    end: Ended {
                        stop,
                        ok,
                        input_tokens: tokens.0,
                        output_tokens: tokens.1,
                        cost_usd,
                        model: opt(model),
                        error: opt(error),
                        backend: opt(backend),
                        output: opt(output),
                        class,
                        exit_code,
                    },
                },
                Held::ScriptStarted { op, node, program } => Note::ScriptStarted {
                    op,
                    node: owned(node),
                    program: owned(program),
                },
                Held::ScriptEnded {
                    op,
                    end,
                    code,
                    spawn_error,
                } => Note::ScriptEnded {
                    op,
                    end,
                    code,
                    spawn_error: opt(spawn_error),
                },
                Held::ReadStarted { op, node, files } => Note::ReadStarted {
                    op,
                    node: owned(node),
                    files,
                },
                Held::ReadEnded { op, chars, files } => Note::ReadEnded { op, chars, files },
                Held::ShardEnded(lines) => Note::ShardEnded(lines.into_iter().map(owned).collect()),
                Held::Finish {
                    mut end,
                    reason,
                    output_phase,
                    first_failure,
                } => {
                    end.reason = opt(reason);
                    end.output_phase = opt(output_phase);
                    end.first_failure = opt(first_failure);
                    Note::Finish(end)
                }
                Held::Live => Note::Live,
            };
            apply(note, at);
        }
        drop(ends);
        let mut text = text;
        text.clear();
        self.text = text;
        if let Ok(mut pool) = POOL.lock()
            && pool.len() < POOL_SIZE
        {
            pool.push(self);
        }
    }
}
/// `<phase>: <error>` of the run's first failed phase, in definition order: one that failed
/// the run (not optional) when there is one.
fn first_failure(record: &RunRecord) -> Option<String> {
    use super::super::record::PhaseStatus;
    let failed = |optional: bool| {
        record
            .phases
            .iter()
            .find(|(_, p)| p.status == PhaseStatus::Failed && p.optional == optional)
    };
    let (id, p) = failed(false).or_else(|| failed(true))?;
    Some(format!(
        "{id}: {}",
        p.error.as_deref().unwrap_or("the phase failed")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::machine::{CallDir, CallOutcome, CallRequest, ScriptOutcome, UsageData};

    fn progress(phase: &str, status: &'static str) -> Progress {
        Progress {
            phase: phase.into(),
            status,
            kind: Some(PhaseType::Gate),
            detail: None,
            attempts: 2,
            tokens: 30,
            cost_usd: Some(0.5),
            facts: Facts::default(),
        }
    }

    #[test]
    fn notes_come_out_as_they_went_in() {
        let mut b = Bunch::new(4);
        b.progress(1, &progress("build", "running"));
        let mut rework = progress("build", "running");
        rework.detail = Some(REWORK.into());
        b.progress(2, &rework);
        // Neither started nor ended: not kept.
        b.progress(3, &progress("build", "pending"));
        let mut ended = progress("check", "done");
        ended.detail = Some("blocked".into());
        ended.facts.verdict = Some("block");
        ended.facts.reason = Some("tests fail".into());
        ended.facts.iteration = Some((3, 5));
        b.progress(4, &ended);
        let request = CallRequest {
            run_id: "r".into(),
            phase_id: "fix".into(),
            node: "fix#2".into(),
            attempt: 3,
            agent: "coder".into(),
            prompt: "Fix it, please".into(),
            model: Some("m1".into()),
            thinking: None,
            tools: Vec::new(),
            cwd: CallDir::At(std::path::Path::new("/t").into()),
            idle_timeout_ms: None,
            wall_timeout_ms: None,
            purpose: crate::agent::Purpose::Task,
            iteration: None,
            item_index: Some(2),
            json_stub: None,
        };
        b.call_started(5, 7, &request, Some(6));
        let outcome = CallOutcome {
            output: "done".into(),
            usage: UsageData {
                input: 11,
                output: 12,
                cost_usd: Some(0.25),
                ..UsageData::default()
            },
            model: Some("m1-2024".into()),
            stop: "completed".into(),
            error: None,
            stderr: String::new(),
            warnings: Vec::new(),
            backend: "claude".into(),
            elapsed_ms: 9,
            exit_code: None,
        };
        b.call_ended(6, 7, &CallEnd::Outcome(Box::new(outcome)), None);
        let refused = CallEnd::Refused {
            message: "no budget".into(),
        };
        b.call_ended(7, 8, &refused, None);
        b.script_started(8, 9, "lint", "cargo");
        let script = ScriptOutcome {
            spawn_error: None,
            end: ScriptEnd::Exited,
            code: 2,
            stdout: String::new(),
            stdout_truncated: false,
            stderr: String::new(),
            elapsed_ms: 1,
        };
        b.script_ended(9, 9, &script);
        b.read_started(10, 10, "plan", 2);
        b.read_ended(11, 10, 40, 1);
        b.shard_ended(12, &["{\"a\":1}".into(), "{\"b\":2}".into()]);
        b.live(13);
        assert_eq!(b.len(), 12);
        let mut seen = Vec::new();
        b.read(|note, at| seen.push((at, note)));
        let times: Vec<u64> = seen.iter().map(|(at, _)| *at).collect();
        assert_eq!(times, [1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
        let mut it = seen.into_iter().map(|(_, n)| n);
        assert!(
            matches!(it.next(), Some(Note::PhaseStarted { phase, kind: Some(PhaseType::Gate), rework: false }) if phase == "build")
        );
        assert!(matches!(
            it.next(),
            Some(Note::PhaseStarted { rework: true, .. })
        ));
        let Some(Note::PhaseEnded(p)) = it.next() else {
            panic!("the ended phase");
        };
        assert_eq!(p, ended, "the whole note, texts and facts");
        let Some(Note::CallStarted(c)) = it.next() else {
            panic!("the call's start");
        };
        assert_eq!(
            (c.op, c.node.as_str(), c.agent.as_str(), c.attempt),
            (7, "fix#2", "coder", 3)
        );
        assert_eq!(c.model.as_deref(), Some("m1"));
        assert_eq!(c.prompt.as_deref(), Some("Fix it… [8 more characters]"));
        let Some(Note::CallEnded { op: 7, end }) = it.next() else {
            panic!("the call's end");
        };
        assert_eq!(end.stop, Some(StopReason::Completed));
        assert!(end.ok);
        assert_eq!((end.input_tokens, end.output_tokens), (11, 12));
        assert_eq!(end.cost_usd, Some(0.25));
        assert_eq!(end.model.as_deref(), Some("m1-2024"));
        assert_eq!(end.backend.as_deref(), Some("claude"));
        assert_eq!(
            (end.error, end.output),
            (None, None),
            "no content asked for"
        );
        let Some(Note::CallEnded { op: 8, end }) = it.next() else {
            panic!("the refused call");
        };
        assert_eq!((end.stop, end.ok), (None, false));
        assert_eq!(end.error.as_deref(), Some("no budget"));
        assert!(
            matches!(it.next(), Some(Note::ScriptStarted { op: 9, node, program }) if node == "lint" && program == "cargo")
        );
        assert!(matches!(
            it.next(),
            Some(Note::ScriptEnded {
                op: 9,
                end: ScriptEnd::Exited,
                code: 2,
                spawn_error: None
            })
        ));
        assert!(
            matches!(it.next(), Some(Note::ReadStarted { op: 10, node, files: 2 }) if node == "plan")
        );
        assert!(matches!(
            it.next(),
            Some(Note::ReadEnded {
                op: 10,
                chars: 40,
                files: 1
            })
        ));
        assert!(
            matches!(it.next(), Some(Note::ShardEnded(lines)) if lines == ["{\"a\":1}", "{\"b\":2}"])
        );
        assert!(matches!(it.next(), Some(Note::Live)));
        assert!(it.next().is_none());
    }

    #[test]
    fn an_output_is_kept_only_when_content_is_recorded() {
        let outcome = |output: &str, error: Option<&str>| {
            CallEnd::Outcome(Box::new(CallOutcome {
                output: output.into(),
                usage: UsageData::default(),
                model: None,
                stop: "completed".into(),
                error: error.map(str::to_owned),
                stderr: String::new(),
                warnings: Vec::new(),
                backend: String::new(),
                elapsed_ms: 0,
                exit_code: None,
            }))
        };
        let mut b = Bunch::new(4);
        b.call_ended(1, 1, &outcome("a long answer", None), Some(4));
        b.call_ended(2, 2, &outcome("", Some("broke")), Some(4));
        let mut ends = Vec::new();
        b.read(|n, _| {
            if let Note::CallEnded { end, .. } = n {
                ends.push(end);
            }
        });
        assert_eq!(ends[0].output.as_deref(), Some("a lo… [9 more characters]"));
        assert_eq!(ends[0].backend, None, "an empty backend is none");
        assert_eq!(ends[1].output, None, "a failed call without output");
        assert_eq!(ends[1].error.as_deref(), Some("broke"));
        assert!(!ends[1].ok);
    }
}
