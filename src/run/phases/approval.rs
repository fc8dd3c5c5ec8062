//! approval (SPEC §3.7, §8.8): flags decide, else a person is asked (when the run may ask),
//! else the run pauses. An approval with a `timeout` has a deadline: the moment it first
//! became ready in the run's lineage plus the timeout (a resumed run keeps its parent's,
//! [`Config::approval_deadlines`](super::super::machine::Config)). Reached after it, or still
//! asked at it, the approval is decided by its `onTimeout`.

use super::super::machine::{Command, Cx, Decision, Exec, Halt, KindEvent, OpKind, Step};
use super::super::record::{ApprovalInfo, GateInfo, PhaseStatus, timestamp};
use crate::flow::{OnTimeout, PhaseKind};
use crate::value::{Map, Value};

/// The running state of an approval: the question out to a person and the timer of its
/// deadline.
#[derive(Debug, Default)]
pub(crate) struct Approval {
    /// The deadline (epoch ms) and what it decides.
    deadline: Option<(u64, OnTimeout)>,
    /// The operation of the question asked on the terminal.
    asked: Option<u64>,
    /// The operation of the deadline's timer (slot [`DEADLINE`]).
    timer: Option<u64>,
}

/// The timer slot of the deadline.
const DEADLINE: u32 = 1;

/// RFC 3339 UTC with ms of epoch ms `ms` (the record's `expiresAt`).
pub(crate) fn expires_at(ms: u64) -> String {
    timestamp(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
}

impl Approval {
    pub(crate) fn step(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, ev: KindEvent) -> Step {
        match ev {
            KindEvent::Start => self.start(ex, cx),
            KindEvent::Approval(decision, note, by_signal) => {
                self.asked = None;
                if let Some(op) = self.timer.take() {
                    cx.cancel_timer(op);
                }
                let source = if by_signal { "signal" } else { "tty" };
                self.decide(ex, cx, decision, note, source)
            }
            // The deadline passed while a person was asked: the question is dropped (an
            // answer after it is late news) and `onTimeout` decides.
            KindEvent::Timer(DEADLINE) => {
                self.timer = None;
                if let Some(op) = self.asked.take() {
                    cx.m.forget_op(op);
                }
                match self.deadline {
                    Some((at, on)) => {
                        // The question still shows: say why it no longer matters.
                        let local = ex.id(&cx.flow()).to_owned();
                        cx.notice(
                            &local,
                            &format!(
                                "no decision before {}: its onTimeout ({}) decides",
                                expires_at(at),
                                on.as_str()
                            ),
                        );
                        self.expire(ex, cx, at, on)
                    }
                    None => Step::Wait,
                }
            }
            _ => Step::Wait,
        }
    }

    fn start(&mut self, ex: &mut Exec, cx: &mut Cx<'_>) -> Step {
        let flow = cx.flow();
        let phase = &flow.phases[ex.index];
        let scope = ex.scope.clone();
        let message = match &phase.task {
            Some(t) => ex.render(cx, "task", t, &scope),
            None => "Approve to continue?".to_owned(),
        };
        let id = cx.node(&phase.id);
        let cfg = cx.cfg();
        let on = match &phase.kind {
            PhaseKind::Approval(k) => k.on_timeout,
            _ => OnTimeout::default(),
        };
        self.deadline = phase.timeout.as_ref().map(|t| {
            let at = match cfg.approval_deadlines.get(&id) {
                Some(&at) => at,
                None => cx.now().saturating_add(t.value as u64),
            };
            (at, on)
        });
        if let Some((at, on)) = self.deadline
            && cx.now() >= at
        {
            return self.expire(ex, cx, at, on);
        }
        if cfg.settings.reject.contains(&id) {
            // Each rejection keeps its own note; `--reason` is the note of the others.
            let note = cfg
                .settings
                .reject_notes
                .get(&id)
                .or(cfg.settings.reject_reason.as_ref())
                .cloned();
            return self.decide(ex, cx, Decision::Reject, note, "flag");
        }
        if cfg.settings.approve_all || cfg.settings.dry_run || cfg.settings.approve.contains(&id) {
            return self.decide(ex, cx, Decision::Approve, None, "flag");
        }
        if cfg.ask {
            let upstream = scope
                .previous
                .as_ref()
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let deadline = self.deadline;
            self.asked = Some(cx.io(0, OpKind::Other, |op| Command::AskApproval {
                op,
                phase: id,
                message,
                upstream,
                deadline,
            }));
            if let Some((at, _)) = self.deadline {
                self.timer = Some(cx.timer(DEADLINE, at - cx.now()));
            }
            return Step::Wait;
        }
        ex.rec.status = PhaseStatus::Pending;
        ex.rec.approval = Some(ApprovalInfo {
            decision: "pending",
            note: None,
            source: None,
            expires_at: self.expires(),
        });
        Step::Done(Halt::AwaitApproval)
    }

    /// The record's `expiresAt`.
    fn expires(&self) -> Option<String> {
        self.deadline.map(|(at, _)| expires_at(at))
    }

    /// No decision before the deadline `at`: `on` decides (SPEC §8.8).
    fn expire(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, at: u64, on: OnTimeout) -> Step {
        let expires = expires_at(at);
        let note = Some(format!("no decision before {expires}"));
        match on {
            OnTimeout::Approve => self.decide(ex, cx, Decision::Approve, note, "timeout"),
            OnTimeout::Reject => self.decide(ex, cx, Decision::Reject, note, "timeout"),
            OnTimeout::Fail => {
                let id = ex.id(&cx.flow()).to_owned();
                self.journal(cx, &id, "expired");
                ex.rec.approval = Some(ApprovalInfo {
                    decision: "expired",
                    note,
                    source: Some("timeout"),
                    expires_at: Some(expires.clone()),
                });
                ex.fail(
                    String::new(),
                    format!("approval '{id}' expired at {expires}"),
                );
                Step::Done(Halt::None)
            }
        }
    }

    fn journal(&self, cx: &mut Cx<'_>, id: &str, decision: &str) {
        let mut journal = Map::default();
        journal.insert("type".into(), Value::from("approval"));
        journal.insert("ts".into(), Value::from(cx.ts()));
        journal.insert("phase".into(), Value::from(id));
        journal.insert("decision".into(), Value::from(decision));
        cx.journal_value(Value::Object(journal));
    }

    fn decide(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        decision: Decision,
        note: Option<String>,
        source: &'static str,
    ) -> Step {
        let id = ex.id(&cx.flow()).to_owned();
        let expires_at = self.expires();
        match decision {
            Decision::Approve | Decision::Edit => {
                // A deadline's note says why; it is no edit.
                let kind = if note.is_some() && source != "timeout" {
                    "edit"
                } else {
                    "approve"
                };
                self.journal(cx, &id, kind);
                let out = match (&note, kind) {
                    (Some(n), "edit") => n.clone(),
                    _ => format!("({kind})"),
                };
                ex.rec.approval = Some(ApprovalInfo {
                    decision: kind,
                    note,
                    source: Some(source),
                    expires_at,
                });
                ex.succeed(out);
                Step::Done(Halt::None)
            }
            Decision::Reject => {
                self.journal(cx, &id, "reject");
                let reason = note
                    .clone()
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| "Rejected by user".to_owned());
                ex.rec.approval = Some(ApprovalInfo {
                    decision: "reject",
                    note: note.clone(),
                    source: Some(source),
                    expires_at,
                });
                ex.rec.gate = Some(GateInfo {
                    verdict: "block",
                    reason: Some(reason.clone()),
                    rounds: None,
                });
                ex.succeed(note.unwrap_or_else(|| "(reject)".into()));
                Step::Done(Halt::Block(Some(reason)))
            }
        }
    }
}
