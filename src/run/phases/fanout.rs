//! Fan-out phases: parallel (SPEC §3.3), map (§3.4) and tournament (§3.10). Items run
//! concurrently up to the phase's width; each is checked against the budget before it starts.

use std::borrow::Cow;
use std::sync::Arc;

use super::super::call::{CallResult, CallSpec, call, call_caught};
use super::super::ctx::Shared;
use super::super::exec::Exec;
use super::super::record::{ItemInfo, PhaseStatus};
use super::super::scope::{PhaseScope, WithLocal};
use super::super::verdict::judge_winner;
use super::super::workdir::branch as branch_dir;
use crate::agent::{Purpose, Usage};
use crate::eval::coerce_array;
use crate::eval::safe_parse::safe_parse;
use crate::flow::{Phase, TournamentMode};
use crate::value::Value;

/// One item to run.
struct ItemSpec {
    index: usize,
    agent: String,
    prompt: String,
    /// Where the item's call runs: the phase's directory, or a parallel branch's own (`Err`:
    /// why that directory cannot be used; the item fails).
    cwd: Result<std::path::PathBuf, String>,
}

/// How one item ended.
struct ItemDone {
    index: usize,
    agent: String,
    status: PhaseStatus,
    output: String,
    error: Option<String>,
}

/// Fan-out width: phase `concurrency`, else the flow's, else 8.
fn width(sh: &Shared, phase: &Phase) -> usize {
    let w = phase
        .concurrency
        .as_ref()
        .map(|c| c.value)
        .or_else(|| sh.opts.concurrency.map(|c| c as f64))
        .or_else(|| sh.flow.concurrency.as_ref().map(|c| c.value))
        .unwrap_or(8.0);
    w.floor().max(1.0) as usize
}

/// Run the items (prompts made lazily by `make`) with at most `width` at once.
async fn run_items(
    ex: &mut Exec<'_>,
    count: usize,
    mut make: impl FnMut(&mut Exec<'_>, usize) -> ItemSpec,
) -> Vec<ItemDone> {
    let width = width(ex.sh, ex.phase);
    let (tx, rx) = async_channel::unbounded::<(ItemDone, CallResult)>();
    let mut done: Vec<Option<ItemDone>> = (0..count).map(|_| None).collect();
    let (mut next, mut running, mut finished) = (0usize, 0usize, 0usize);
    let mut usage = Usage::default();
    while next < count || running > 0 {
        while running < width && next < count {
            let i = next;
            next += 1;
            let spec = make(ex, i);
            if ex.sh.cancel.is_cancelled() {
                done[i] = Some(ItemDone {
                    index: i,
                    agent: spec.agent,
                    status: PhaseStatus::Failed,
                    output: String::new(),
                    error: Some("Aborted".into()),
                });
                continue;
            }
            let cwd = match spec.cwd {
                Ok(dir) => dir,
                Err(e) => {
                    done[i] = Some(ItemDone {
                        index: i,
                        agent: spec.agent,
                        status: PhaseStatus::Failed,
                        output: String::new(),
                        error: Some(e),
                    });
                    continue;
                }
            };
            if ex.sh.meter.over().is_some() {
                ex.rec.budget_truncated = true;
                done[i] = Some(ItemDone {
                    index: i,
                    agent: spec.agent,
                    status: PhaseStatus::Skipped,
                    output: String::new(),
                    error: Some("(skipped: budget exceeded)".into()),
                });
                continue;
            }
            running += 1;
            let sh: Arc<Shared> = ex.sh.clone();
            let phase_index = ex.index;
            let tx = tx.clone();
            let refused = ex.oversize.clone();
            ex.sh
                .executor
                .clone()
                .spawn(async move {
                    let phase = &sh.flow.phases[phase_index];
                    let mut r = call_caught(&sh, phase, {
                        let mut call_spec = CallSpec::new(
                            format!("{}#{}", phase.id, spec.index),
                            &spec.agent,
                            spec.prompt,
                            Purpose::Task,
                        )
                        .checked(phase)
                        .in_dir(cwd)
                        .refuse(refused);
                        call_spec.item_index = Some(spec.index);
                        call_spec
                    })
                    .await;
                    // The receiver reads the call's accounting only: the answer moves.
                    let item = ItemDone {
                        index: spec.index,
                        agent: spec.agent,
                        status: if r.ok {
                            PhaseStatus::Done
                        } else {
                            PhaseStatus::Failed
                        },
                        output: std::mem::take(&mut r.output),
                        error: r.error.take(),
                    };
                    let _ = tx.send((item, r)).await;
                })
                .detach();
        }
        if running == 0 {
            continue;
        }
        let Ok((item, r)) = rx.recv().await else {
            break;
        };
        running -= 1;
        ex.rec.attempts += r.attempts;
        usage.add(&r.usage);
        ex.rec.timed_out |= r.timed_out;
        if ex.rec.model.is_none() {
            ex.rec.model = r.model;
        }
        for w in r.warnings {
            ex.rec.warn(w);
        }
        let i = item.index;
        done[i] = Some(item);
        finished += 1;
        if let Some(sink) = &ex.sh.opts.progress {
            let node = ex.sh.node(&ex.phase.id);
            let detail = format!("{finished}/{count} items");
            (sink.0)(&crate::run::ProgressNote {
                phase: &node,
                status: "running",
                detail: Some(&detail),
                attempts: ex.rec.attempts,
                tokens: usage.billable_tokens(),
                cost_usd: usage.cost_usd,
            });
        }
    }
    ex.rec.usage.add(&usage);
    done.into_iter().flatten().collect()
}

/// The shared merge of map and parallel items (SPEC §3.3).
fn merge(ex: &mut Exec<'_>, items: Vec<ItemDone>) {
    use std::fmt::Write as _;
    let n = items.len();
    // The blocks joined by the separator, written in place.
    let mut output = String::new();
    let mut first = true;
    let mut block = |output: &mut String| {
        if !std::mem::take(&mut first) {
            output.push_str("\n\n---\n\n");
        }
    };
    let mut json = Vec::with_capacity(n);
    let mut errors = Vec::new();
    let mut skipped = 0;
    let mut infos = Vec::with_capacity(n);
    for it in &items {
        infos.push(ItemInfo {
            index: it.index,
            status: it.status,
            error: it.error.clone().filter(|_| it.status != PhaseStatus::Done),
        });
        match it.status {
            PhaseStatus::Done => {
                block(&mut output);
                let _ = write!(output, "### [{}/{n}] {}\n\n", it.index + 1, it.agent);
                output.push_str(&it.output);
                json.push(
                    safe_parse(&it.output)
                        .value
                        .unwrap_or_else(|| Value::from(it.output.as_str())),
                );
            }
            PhaseStatus::Failed => {
                let err = it.error.clone().unwrap_or_default();
                block(&mut output);
                let _ = write!(
                    output,
                    "### [{}/{n}] {} (failed)\n\n{err}",
                    it.index + 1,
                    it.agent
                );
                errors.push(format!("{}: {err}", it.agent));
            }
            _ => skipped += 1,
        }
    }
    ex.rec.items = Some(infos);
    ex.rec.json = Some(Value::Array(json));
    let skip_note = (skipped > 0).then(|| format!("{skipped} item(s) skipped: budget exceeded"));
    if skipped > 0 {
        ex.rec.budget_truncated = true;
    }
    if errors.is_empty() {
        if let Some(note) = skip_note {
            ex.rec.warn(note);
        }
        let json = ex.rec.json.take();
        ex.succeed(output);
        ex.rec.json = json;
    } else {
        let mut err = errors.join("; ");
        if let Some(note) = skip_note {
            err.push_str("; ");
            err.push_str(&note);
        }
        let json = ex.rec.json.take();
        ex.fail(output, err);
        ex.rec.json = json;
    }
}

pub async fn parallel(ex: &mut Exec<'_>) {
    let phase = ex.phase;
    let scope = ex.scope.clone();
    let items = run_items(ex, phase.branches().len(), |ex, i| {
        let b = &phase.branches()[i];
        let text = match &b.task {
            Some(t) => ex.render(&format!("branches[{i}].task"), t, &scope),
            None => String::new(),
        };
        ItemSpec {
            index: i,
            agent: b
                .agent
                .as_ref()
                .map_or_else(|| phase.agent.value.clone(), |a| a.value.clone()),
            prompt: ex.prompt(&text),
            cwd: match &b.cwd {
                Some(c) => branch_dir(ex.sh, phase, i, &c.value),
                None => Ok(ex.work_dir.clone()),
            },
        }
    })
    .await;
    merge(ex, items);
}

/// The value a map fans out over (SPEC §3.4), before coerceArray: a lone placeholder's raw
/// value (borrowed from `scope` when it can be; strings go through safeParse), else the
/// rendered text through safeParse.
fn over_value<'s>(ex: &mut Exec<'_>, scope: &'s PhaseScope) -> Option<Cow<'s, Value>> {
    let over = ex.phase.map_fields().over.as_ref()?;
    let paths = over.template.paths();
    let whole = over.template.refs().len() == 1
        && over.template.refs()[0].span.range() == (0..over.as_str().len());
    if !whole {
        let text = ex.render("over", over, scope);
        return ex.parse_json(&text).map(Cow::Owned);
    }
    match crate::eval::resolve(scope, &paths[0]) {
        Some(v) => {
            for id in over.template.read_phases(scope, &[0]) {
                ex.rec.read(&id);
            }
            match &*v {
                Value::String(s) => ex.parse_json(s).map(Cow::Owned),
                _ => Some(v),
            }
        }
        None => {
            ex.missing_warning("over", &[paths[0].text.to_string()]);
            None
        }
    }
}

pub async fn map(ex: &mut Exec<'_>) {
    let phase = ex.phase;
    let scope = ex.scope.clone();
    let over = over_value(ex, &scope);
    let Some(elements) = over.as_deref().and_then(coerce_array) else {
        let over = phase.map_fields().over.as_ref().map_or("", |o| o.as_str());
        ex.fail(
            String::new(),
            format!(
                "map phase '{}': 'over' ({over}) did not resolve to an array",
                phase.id
            ),
        );
        return;
    };
    const MAX_DYNAMIC_MAP_ITEMS: usize = 200;
    let elements = if ex.sh.generated && elements.len() > MAX_DYNAMIC_MAP_ITEMS {
        ex.rec
            .warn("map fan-out truncated to MAX_DYNAMIC_MAP_ITEMS (200) inside a dynamic sub-flow");
        &elements[..MAX_DYNAMIC_MAP_ITEMS]
    } else {
        &elements[..]
    };
    if elements.is_empty() {
        ex.rec.json = Some(Value::Array(Vec::new()));
        ex.rec.items = Some(Vec::new());
        ex.succeed(String::new());
        ex.rec.json = Some(Value::Array(Vec::new()));
        return;
    }
    let name = phase.local_name().to_owned();
    let items = run_items(ex, elements.len(), |ex, i| {
        let item = WithLocal {
            base: &scope,
            name: &name,
            value: &elements[i],
        };
        let text = match &phase.task {
            Some(t) => ex.render("task", t, &item),
            None => String::new(),
        };
        ItemSpec {
            index: i,
            agent: phase.agent.value.clone(),
            prompt: ex.prompt(&text),
            cwd: Ok(ex.work_dir.clone()),
        }
    })
    .await;
    merge(ex, items);
}

pub async fn tournament(ex: &mut Exec<'_>) {
    let phase = ex.phase;
    let scope = ex.scope.clone();
    let n = if phase.branches().len() >= 2 {
        phase.branches().len()
    } else {
        phase.tournament_fields().variants.floor().clamp(2.0, 20.0) as usize
    };
    let items = run_items(ex, n, |ex, i| {
        let (text, agent) = match phase.branches().get(i) {
            Some(b) => (
                b.task
                    .as_ref()
                    .map(|t| ex.render(&format!("branches[{i}].task"), t, &scope))
                    .unwrap_or_default(),
                b.agent
                    .as_ref()
                    .map_or_else(|| phase.agent.value.clone(), |a| a.value.clone()),
            ),
            None => (
                phase
                    .task
                    .as_ref()
                    .map(|t| ex.render("task", t, &scope))
                    .unwrap_or_default(),
                phase.agent.value.clone(),
            ),
        };
        ItemSpec {
            index: i,
            agent,
            prompt: ex.prompt(&text),
            cwd: Ok(ex.work_dir.clone()),
        }
    })
    .await;
    ex.rec.items = Some(
        items
            .iter()
            .map(|it| ItemInfo {
                index: it.index,
                status: it.status,
                error: it.error.clone().filter(|_| it.status != PhaseStatus::Done),
            })
            .collect(),
    );
    let survivors: Vec<usize> = items
        .iter()
        .filter(|it| it.status == PhaseStatus::Done)
        .map(|it| it.index)
        .collect();
    let Some(&first) = survivors.first() else {
        ex.fail(
            String::new(),
            format!("tournament '{}': all {n} variants failed", phase.id),
        );
        return;
    };
    let pick = |ex: &mut Exec<'_>, w: usize| {
        ex.rec.tournament = Some((w + 1, n));
        let out = items[w].output.clone();
        ex.succeed(out);
    };
    if survivors.len() == 1 {
        pick(ex, first);
        return;
    }
    if ex.sh.cancel.is_cancelled() || ex.sh.meter.over().is_some() {
        ex.rec.warn("judge skipped: run aborted or budget exceeded");
        pick(ex, first);
        return;
    }
    let rubric = match &phase.tournament_fields().judge {
        Some(j) => ex.render("judge", j, &scope),
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
    let directive = match phase.tournament_fields().mode {
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
    let prompt = ex.prompt(&text);
    let judge_agent = phase
        .tournament_fields()
        .judge_agent
        .as_ref()
        .map_or_else(|| phase.agent.value.clone(), |a| a.value.clone());
    let r = call(
        ex.sh,
        phase,
        CallSpec::new(
            format!("{}#judge", phase.id),
            &judge_agent,
            prompt,
            Purpose::Judge,
        )
        .in_dir(&ex.work_dir)
        .refuse(ex.oversize.clone()),
    )
    .await;
    ex.rec.attempts += r.attempts;
    ex.rec.usage.add(&r.usage);
    if !r.ok {
        ex.rec.warn(format!(
            "judge failed ({}); the first surviving variant wins",
            r.error.unwrap_or_default()
        ));
        pick(ex, first);
        return;
    }
    let winner = judge_winner(&r.output, n).unwrap_or(1) - 1;
    if !survivors.contains(&winner) {
        ex.rec.warn(format!(
            "judge picked variant {}, which failed; the first surviving variant wins",
            winner + 1
        ));
        pick(ex, first);
        return;
    }
    ex.rec.tournament = Some((winner + 1, n));
    match phase.tournament_fields().mode {
        TournamentMode::Best => ex.succeed(items[winner].output.clone()),
        TournamentMode::Aggregate => ex.succeed(r.output),
    }
}
