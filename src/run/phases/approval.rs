//! approval (SPEC §3.7, §8.8): flags decide, else a terminal prompt, else the run pauses.

use std::io::{BufRead, IsTerminal, Write};

use super::super::ctx::Halt;
use super::super::exec::Exec;
use super::super::record::{ApprovalInfo, GateInfo, PhaseStatus};
use crate::value::{Map, Value};

enum Decision {
    Approve(Option<String>),
    Reject(Option<String>),
}

pub async fn run(ex: &mut Exec<'_>) -> Halt {
    let scope = ex.scope.clone();
    let message = match &ex.phase.task {
        Some(t) => ex.render("task", t, &scope),
        None => "Approve to continue?".to_owned(),
    };
    let id = ex.sh.node(&ex.phase.id);
    let opts = &ex.sh.opts;
    let (decision, source) = if opts.reject.contains(&id) {
        (Decision::Reject(opts.reject_reason.clone()), "flag")
    } else if opts.approve_all || opts.dry_run || opts.approve.contains(&id) {
        (Decision::Approve(None), "flag")
    } else if opts.interactive && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    {
        let upstream = scope
            .previous
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let d = smol::unblock(move || ask(&message, &upstream)).await;
        (d, "tty")
    } else {
        ex.rec.status = PhaseStatus::Pending;
        ex.rec.approval = Some(ApprovalInfo {
            decision: "pending",
            note: None,
            source: None,
        });
        return Halt::AwaitApproval;
    };
    let mut journal = Map::default();
    journal.insert("type".into(), Value::from("approval"));
    journal.insert("ts".into(), Value::from(super::super::record::now()));
    journal.insert("phase".into(), Value::from(ex.phase.id.as_str()));
    match decision {
        Decision::Approve(note) => {
            let kind = if note.is_some() { "edit" } else { "approve" };
            journal.insert("decision".into(), Value::from(kind));
            let out = note.clone().unwrap_or_else(|| format!("({kind})"));
            ex.rec.approval = Some(ApprovalInfo {
                decision: if note.is_some() { "edit" } else { "approve" },
                note,
                source: Some(source),
            });
            ex.sh.journal(Value::Object(journal));
            ex.succeed(out);
            Halt::None
        }
        Decision::Reject(note) => {
            journal.insert("decision".into(), Value::from("reject"));
            ex.sh.journal(Value::Object(journal));
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
            Halt::Block(Some(reason))
        }
    }
}

/// Ask on the terminal (stderr), reading the answer from stdin.
fn ask(message: &str, upstream: &str) -> Decision {
    let mut err = std::io::stderr();
    let shown: String = upstream.chars().take(2000).collect();
    let _ = writeln!(err, "\n── approval ──\n{message}");
    if !shown.is_empty() {
        let _ = writeln!(err, "\n{shown}");
    }
    let stdin = std::io::stdin();
    loop {
        let _ = write!(err, "[a]pprove / [r]eject / [e]dit note: ");
        let _ = err.flush();
        let mut line = String::new();
        if stdin.lock().read_line(&mut line).unwrap_or(0) == 0 {
            return Decision::Reject(Some("no answer (stdin closed)".into()));
        }
        match line.trim() {
            "a" | "approve" => return Decision::Approve(None),
            "r" | "reject" => return Decision::Reject(None),
            "e" | "edit" => {
                let _ = write!(err, "note: ");
                let _ = err.flush();
                let mut note = String::new();
                let _ = stdin.lock().read_line(&mut note);
                return Decision::Approve(Some(note.trim().to_owned()));
            }
            _ => {}
        }
    }
}
