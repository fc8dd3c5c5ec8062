//! race (SPEC §3.12): every branch starts at once; the first success wins and, with
//! `cancelLosers`, the others are cancelled. The phase ends when every branch has settled,
//! or at its deadline (a timer), whichever comes first. The winner is journaled
//! (`race-won {phase, branch}`) the moment it is decided.

use super::super::machine::{CallResult, Cx, Exec, Halt, KindEvent, Step};
use super::super::record::{ItemInfo, PhaseStatus};
use crate::agent::Purpose;
use crate::flow::{Phase, kinds};
use crate::value::Value;

/// The deadline timer's slot.
const DEADLINE: u32 = u32::MAX;

/// A branch not started at the call cap.
const NOT_STARTED: &str = "(skipped: budget exceeded)";

/// A race in progress.
#[derive(Debug, Default)]
pub(crate) struct Race {
    results: Vec<Option<CallResult>>,
    winner: Option<usize>,
    settled: usize,
    deadline_ms: u64,
    timer: Option<u64>,
}

impl Race {
    pub(crate) fn step(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        k: &kinds::Race,
        ev: KindEvent,
    ) -> Step {
        let flow = cx.flow();
        let phase = &flow.phases[ex.index];
        let n = k.branches.len();
        match ev {
            KindEvent::Start => {
                self.deadline_ms = phase
                    .timeout
                    .as_ref()
                    .map_or(60_000.0, |t| t.value.min(300_000.0))
                    as u64;
                self.results = (0..n).map(|_| None).collect();
                let scope = ex.scope.clone();
                let mut specs = Vec::with_capacity(n);
                for (i, b) in k.branches.iter().enumerate() {
                    let text = match &b.task {
                        Some(t) => ex.render(cx, &format!("branches[{i}].task"), t, &scope),
                        None => String::new(),
                    };
                    let prompt = ex.prompt(cx, &text);
                    let agent = b
                        .agent
                        .as_ref()
                        .map_or_else(|| phase.agent.value.clone(), |a| a.value.clone());
                    specs.push((agent, prompt));
                }
                // Branches that would pass the call cap are not started (SPEC §8.7); with
                // none started, the race is skipped.
                let mut started = 0;
                for (i, (agent, prompt)) in specs.into_iter().enumerate() {
                    if let Some(reason) = cx.refuse_call() {
                        if started == 0 {
                            ex.skip_over_budget(&reason);
                            return Step::Done(Halt::None);
                        }
                        self.results[i] = Some(CallResult {
                            error: Some(NOT_STARTED.into()),
                            capped: true,
                            ..CallResult::default()
                        });
                        self.settled += 1;
                        continue;
                    }
                    if started == 0 {
                        self.timer = Some(cx.timer(DEADLINE, self.deadline_ms));
                    }
                    started += 1;
                    let mut spec =
                        ex.spec(format!("{}#{i}", phase.id), &agent, prompt, Purpose::Task);
                    spec.item_index = Some(i);
                    spec.caught = true;
                    cx.call(ex, i as u32, spec);
                }
                if n == 0 {
                    return self.finish(ex, cx, phase, false);
                }
                Step::Wait
            }
            KindEvent::Call(slot, r) => {
                let i = slot as usize;
                if i >= n || self.results[i].is_some() {
                    return Step::Wait;
                }
                self.settled += 1;
                if r.ok && self.winner.is_none() {
                    self.winner = Some(i);
                    // The decision itself, for readers of the journal (`tfc test --coverage`).
                    cx.journal("race-won", |m| {
                        m.insert("phase".into(), Value::from(phase.id.as_str()));
                        m.insert("branch".into(), Value::Number(i as f64));
                    });
                    if k.cancel_losers {
                        for j in 0..n {
                            if j != i && self.results[j].is_none() {
                                cx.cancel_call(j as u32);
                            }
                        }
                    }
                }
                self.results[i] = Some(r);
                if self.settled < n {
                    return Step::Wait;
                }
                if let Some(t) = self.timer.take() {
                    cx.cancel_timer(t);
                }
                self.finish(ex, cx, phase, false)
            }
            KindEvent::Timer(DEADLINE) => {
                self.timer = None;
                for j in 0..n {
                    if self.results[j].is_none() {
                        cx.cancel_call(j as u32);
                    }
                }
                self.finish(ex, cx, phase, true)
            }
            _ => Step::Wait,
        }
    }

    fn finish(&mut self, ex: &mut Exec, _cx: &mut Cx<'_>, phase: &Phase, late: bool) -> Step {
        let n = phase.branches().len();
        let mut items = Vec::with_capacity(n);
        let mut errors = Vec::new();
        for (i, r) in self.results.iter().enumerate() {
            match r {
                Some(r) if r.capped => {
                    ex.rec.budget_truncated = true;
                    items.push(ItemInfo {
                        index: i,
                        status: PhaseStatus::Skipped,
                        error: Some(NOT_STARTED.into()),
                        input_hash: None,
                    });
                }
                Some(r) => {
                    ex.rec.attempts += r.attempts;
                    ex.rec.usage.add(&r.usage);
                    let (status, error) = if Some(i) == self.winner || r.ok {
                        (PhaseStatus::Done, None)
                    } else if r.aborted && self.winner.is_some() {
                        (
                            PhaseStatus::Failed,
                            Some("cancelled: another branch won".to_owned()),
                        )
                    } else {
                        let e = r.error.clone().unwrap_or_default();
                        errors.push(e.clone());
                        (PhaseStatus::Failed, Some(e))
                    };
                    items.push(ItemInfo {
                        index: i,
                        status,
                        error,
                        input_hash: None,
                    });
                }
                None => items.push(ItemInfo {
                    index: i,
                    status: PhaseStatus::Failed,
                    error: Some("cancelled: did not settle in time".into()),
                    input_hash: None,
                }),
            }
        }
        ex.rec.items = Some(items);
        let outstanding = n - self.settled;
        let winner_output = |w: Option<usize>, results: &[Option<CallResult>]| {
            w.and_then(|w| results[w].as_ref())
                .map(|r| r.output.clone())
                .unwrap_or_default()
        };
        if late && outstanding > 0 {
            ex.rec.budget_truncated = true;
            let out = winner_output(self.winner, &self.results);
            ex.fail(
                out,
                format!(
                    "race phase '{}': {outstanding} branch(es) did not report usage within {}ms",
                    phase.id, self.deadline_ms
                ),
            );
            return Step::Done(Halt::None);
        }
        match self.winner {
            Some(_) => {
                let out = winner_output(self.winner, &self.results);
                ex.succeed(out);
            }
            None => {
                let first: Vec<String> = errors.into_iter().take(3).collect();
                ex.fail(
                    String::new(),
                    format!(
                        "race phase '{}': all {n} branches failed: {}",
                        phase.id,
                        first.join("; ")
                    ),
                );
            }
        }
        Step::Done(Halt::None)
    }
}
