//! approval (SPEC §3.7, §8.8): flags decide, else a person is asked (when the run may ask),
//! else the run pauses.

use super::super::machine::{Command, Cx, Decision, Exec, Halt, KindEvent, OpKind, Step};
use super::super::record::{ApprovalInfo, GateInfo, PhaseStatus};
use crate::value::{Map, Value};

pub(crate) fn step(ex: &mut Exec, cx: &mut Cx<'_>, ev: KindEvent) -> Step {
    match ev {
        KindEvent::Start => {
            let flow = cx.flow();
            let phase = &flow.phases[ex.index];
            let scope = ex.scope.clone();
            let message = match &phase.task {
                Some(t) => ex.render(cx, "task", t, &scope),
                None => "Approve to continue?".to_owned(),
            };
            let id = cx.node(&phase.id);
            let cfg = cx.cfg();
            if cfg.settings.reject.contains(&id) {
                let note = cfg
                    .settings
                    .reject_notes
                    .get(&id)
                    .or(cfg.settings.reject_reason.as_ref())
                    .cloned();
                return decide(ex, cx, Decision::Reject, note, "flag");
            }
            if cfg.settings.approve_all
                || cfg.settings.dry_run
                || cfg.settings.approve.contains(&id)
            {
                return decide(ex, cx, Decision::Approve, None, "flag");
            }
            if cfg.ask {
                let upstream = scope
                    .previous
                    .as_ref()
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                cx.io(0, OpKind::Other, |op| Command::AskApproval {
                    op,
                    phase: id,
                    message,
                    upstream,
                });
                return Step::Wait;
            }
            ex.rec.status = PhaseStatus::Pending;
            ex.rec.approval = Some(ApprovalInfo {
                decision: "pending",
                note: None,
                source: None,
            });
            Step::Done(Halt::AwaitApproval)
        }
        KindEvent::Approval(decision, note, by_signal) => {
            let source = if by_signal { "signal" } else { "tty" };
            decide(ex, cx, decision, note, source)
        }
        _ => Step::Wait,
    }
}

fn decide(
    ex: &mut Exec,
    cx: &mut Cx<'_>,
    decision: Decision,
    note: Option<String>,
    source: &'static str,
) -> Step {
    let id = ex.id(&cx.flow()).to_owned();
    let mut journal = Map::default();
    journal.insert("type".into(), Value::from("approval"));
    journal.insert("ts".into(), Value::from(cx.ts()));
    journal.insert("phase".into(), Value::from(id.as_str()));
    match decision {
        Decision::Approve | Decision::Edit => {
            let kind = if note.is_some() { "edit" } else { "approve" };
            journal.insert("decision".into(), Value::from(kind));
            let out = note.clone().unwrap_or_else(|| format!("({kind})"));
            ex.rec.approval = Some(ApprovalInfo {
                decision: kind,
                note,
                source: Some(source),
            });
            cx.journal_value(Value::Object(journal));
            ex.succeed(out);
            Step::Done(Halt::None)
        }
        Decision::Reject => {
            journal.insert("decision".into(), Value::from("reject"));
            cx.journal_value(Value::Object(journal));
            let reason = note
                .clone()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "Rejected by user".to_owned());
            ex.rec.approval = Some(ApprovalInfo {
                decision: "reject",
                note: note.clone(),
                source: Some(source),
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
