//! tournament (SPEC §3.10): variants of one task (or one per branch) on the fan-out engine,
//! then a judge picks the winner (`best`) or synthesises from the eligible ones
//! (`aggregate`).

use super::super::machine::{CallDir, CallResult, Cx, Exec, Halt, Step};
use super::super::record::{ItemInfo, PhaseStatus};
use super::super::verdict::judge_winner;
use super::items::{Fanout, ItemDone};
use crate::agent::Purpose;
use crate::flow::{Phase, TournamentMode, kinds};

/// The judge's call slot.
pub(super) const JUDGE: u32 = u32::MAX;

/// How many variants run.
pub(super) fn count(k: &kinds::Tournament) -> usize {
    if k.branches.len() >= 2 {
        k.branches.len()
    } else {
        k.variants.floor().clamp(2.0, 20.0) as usize
    }
}

/// Variant `i`'s text, agent and directory.
pub(super) fn item(
    f: &Fanout,
    ex: &mut Exec,
    cx: &mut Cx<'_>,
    phase: &Phase,
    k: &kinds::Tournament,
    i: usize,
) -> (String, String, CallDir) {
    let own = || phase.agent.value.clone();
    let (text, agent) = match k.branches.get(i) {
        Some(b) => (
            b.task
                .as_ref()
                .map(|t| ex.render(cx, &format!("branches[{i}].task"), t, &f.scope))
                .unwrap_or_default(),
            b.agent.as_ref().map_or_else(own, |a| a.value.clone()),
        ),
        None => (
            phase
                .task
                .as_ref()
                .map(|t| ex.render(cx, "task", t, &f.scope))
                .unwrap_or_default(),
            own(),
        ),
    };
    (text, agent, CallDir::At(ex.work_dir.clone()))
}

/// A tournament's items have ended: pick a winner, asking the judge when it must.
pub(super) fn judge(
    f: &mut Fanout,
    ex: &mut Exec,
    cx: &mut Cx<'_>,
    phase: &Phase,
    k: &kinds::Tournament,
    items: Vec<ItemDone>,
) -> Step {
    let n = f.count;
    ex.rec.items = Some(
        items
            .iter()
            .map(|it| ItemInfo {
                index: it.index,
                status: it.status,
                error: it.error.clone().filter(|_| it.status != PhaseStatus::Done),
                input_hash: None,
            })
            .collect(),
    );
    let survivors: Vec<usize> = survivors(&items);
    let Some(&first) = survivors.first() else {
        ex.fail(
            String::new(),
            format!("tournament '{}': all {n} variants failed", phase.id),
        );
        return Step::Done(Halt::None);
    };
    if survivors.len() == 1 {
        pick(ex, &items, first, n);
        return Step::Done(Halt::None);
    }
    if cx.aborted() || cx.refuse_call().is_some() {
        ex.rec.warn("judge skipped: run aborted or budget exceeded");
        pick(ex, &items, first, n);
        return Step::Done(Halt::None);
    }
    let rubric = match &k.judge {
        Some(j) => ex.render(cx, "judge", j, &f.scope),
        None => "Several candidates answered the same task independently. Judge them on correctness, completeness and usefulness.".to_owned(),
    };
    let blocks: Vec<String> = items
        .iter()
        .map(|it| {
            let failed = it.status != PhaseStatus::Done;
            let body = if failed {
                it.error.clone().unwrap_or_default()
            } else {
                it.output.clone()
            };
            format!(
                "### Variant {}{}\n\n{body}",
                it.index + 1,
                if failed {
                    " (failed — ineligible)"
                } else {
                    ""
                }
            )
        })
        .collect();
    let directive = match k.mode {
        TournamentMode::Best => {
            "\n\nEnd your response with exactly one line in this form: WINNER: <number>"
        }
        TournamentMode::Aggregate => {
            "\n\nSynthesize the single strongest answer from the eligible variants, then end with exactly one line in this form: WINNER: <number> (the variant that contributed most)."
        }
    };
    let text = format!(
        "{rubric}\n\nThe candidate variants:\n\n{}{directive}",
        blocks.join("\n\n---\n\n")
    );
    let prompt = ex.prompt(cx, &text);
    let judge_agent = k
        .judge_agent
        .as_ref()
        .map_or_else(|| phase.agent.value.clone(), |a| a.value.clone());
    let spec = ex.spec(
        format!("{}#judge", phase.id),
        &judge_agent,
        prompt,
        Purpose::Judge,
    );
    f.items = items;
    cx.call(ex, JUDGE, spec);
    Step::Wait
}

pub(super) fn judged(f: &mut Fanout, ex: &mut Exec, k: &kinds::Tournament, r: CallResult) -> Step {
    if let Some(msg) = r.crashed {
        return ex.crash(msg);
    }
    let items = std::mem::take(&mut f.items);
    let n = f.count;
    let survivors = survivors(&items);
    let first = survivors.first().copied().unwrap_or(0);
    ex.rec.attempts += r.attempts;
    ex.rec.usage.add(&r.usage);
    if !r.ok {
        ex.rec.warn(format!(
            "judge failed ({}); the first surviving variant wins",
            r.error.unwrap_or_default()
        ));
        pick(ex, &items, first, n);
        return Step::Done(Halt::None);
    }
    let winner = judge_winner(&r.output, n).unwrap_or(1) - 1;
    if !survivors.contains(&winner) {
        ex.rec.warn(format!(
            "judge picked variant {}, which failed; the first surviving variant wins",
            winner + 1
        ));
        pick(ex, &items, first, n);
        return Step::Done(Halt::None);
    }
    ex.rec.tournament = Some((winner + 1, n));
    match k.mode {
        TournamentMode::Best => ex.succeed(items[winner].output.clone()),
        TournamentMode::Aggregate => ex.succeed(r.output),
    }
    Step::Done(Halt::None)
}
fn survivors(items: &[ItemDone]) -> Vec<usize> {
    items
        .iter()
        .filter(|it| it.status == PhaseStatus::Done)
        .map(|it| it.index)
        .collect()
}

fn pick(ex: &mut Exec, items: &[ItemDone], w: usize, n: usize) {
    ex.rec.tournament = Some((w + 1, n));
    let out = items[w].output.clone();
    ex.succeed(out);
}
