//! race (SPEC §3.12): every branch starts at once; the first success wins and, with
//! `cancelLosers`, the others are cancelled. The phase ends when every branch has settled.

use std::time::Duration;

use super::super::call::{CallResult, CallSpec, call_caught};
use super::super::exec::Exec;
use super::super::record::{ItemInfo, PhaseStatus};
use crate::agent::{CancelSource, Purpose};

pub async fn run(ex: &mut Exec<'_>) {
    let phase = ex.phase;
    let n = phase.branches().len();
    let scope = ex.scope.clone();
    let deadline_ms = phase
        .timeout
        .as_ref()
        .map_or(60_000.0, |t| t.value.min(300_000.0)) as u64;
    let (tx, rx) = async_channel::unbounded::<(usize, CallResult)>();
    let mut cancels = Vec::with_capacity(n);
    for (i, b) in phase.branches().iter().enumerate() {
        let text = match &b.task {
            Some(t) => ex.render(&format!("branches[{i}].task"), t, &scope),
            None => String::new(),
        };
        let prompt = ex.prompt(&text);
        let agent = b
            .agent
            .as_ref()
            .map_or_else(|| phase.agent.value.clone(), |a| a.value.clone());
        let source = CancelSource::new();
        let token = source.token();
        cancels.push(source);
        let dir = ex.work_dir.clone();
        let sh = ex.sh.clone();
        let index = ex.index;
        let tx = tx.clone();
        let refused = ex.oversize.clone();
        ex.sh
            .executor
            .clone()
            .spawn(async move {
                let phase = &sh.flow.phases[index];
                let r = call_caught(&sh, phase, {
                    let mut call_spec =
                        CallSpec::new(format!("{}#{i}", phase.id), &agent, prompt, Purpose::Task)
                            .in_dir(dir)
                            .refuse(refused);
                    call_spec.item_index = Some(i);
                    call_spec.cancel = Some(token);
                    call_spec
                })
                .await;
                let _ = tx.send((i, r)).await;
            })
            .detach();
    }
    drop(tx);
    let mut results: Vec<Option<CallResult>> = (0..n).map(|_| None).collect();
    let mut winner: Option<usize> = None;
    let mut settled = 0;
    let deadline = smol::Timer::after(Duration::from_millis(deadline_ms));
    futures_lite::pin!(deadline);
    let mut late = false;
    while settled < n {
        let next = futures_lite::future::or(async { rx.recv().await.ok() }, async {
            (&mut deadline).await;
            None
        })
        .await;
        let Some((i, r)) = next else {
            late = true;
            break;
        };
        settled += 1;
        if r.ok && winner.is_none() {
            winner = Some(i);
            if phase.race_fields().cancel_losers {
                for (j, c) in cancels.iter().enumerate() {
                    if j != i {
                        c.cancel();
                    }
                }
            }
        }
        results[i] = Some(r);
    }
    if late {
        for c in &cancels {
            c.cancel();
        }
    }
    let mut items = Vec::with_capacity(n);
    let mut errors = Vec::new();
    for (i, r) in results.iter().enumerate() {
        match r {
            Some(r) => {
                ex.rec.attempts += r.attempts;
                ex.rec.usage.add(&r.usage);
                let (status, error) = if Some(i) == winner || r.ok {
                    (PhaseStatus::Done, None)
                } else if r.aborted && winner.is_some() {
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
                });
            }
            None => items.push(ItemInfo {
                index: i,
                status: PhaseStatus::Failed,
                error: Some("cancelled: did not settle in time".into()),
            }),
        }
    }
    ex.rec.items = Some(items);
    let outstanding = n - settled;
    if late && outstanding > 0 {
        ex.rec.budget_truncated = true;
        let out = winner
            .and_then(|w| results[w].as_ref())
            .map(|r| r.output.clone())
            .unwrap_or_default();
        ex.fail(out, format!("race phase '{}': {outstanding} branch(es) did not report usage within {deadline_ms}ms", phase.id));
        return;
    }
    match winner {
        Some(w) => {
            let out = results[w]
                .as_ref()
                .map(|r| r.output.clone())
                .unwrap_or_default();
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
}
