//! Fan-out phases: parallel (SPEC §3.3), map (§3.4) and tournament (§3.10). Items run
//! concurrently up to the phase's width; each is checked against the budget and the abort
//! before it starts; a tournament then asks its judge.

use std::borrow::Cow;

use super::super::machine::{CallDir, CallResult, Cx, Exec, Halt, KindEvent, Step};
use super::super::record::{ItemInfo, PhaseStatus};
use super::super::scope::{PhaseScope, WithLocal};
use super::super::verdict::judge_winner;
use crate::agent::{Purpose, Usage};
use crate::eval::coerce_array;
use crate::eval::safe_parse::safe_parse;
use crate::flow::{Phase, PhaseType, TournamentMode};
use crate::value::Value;

/// What a missing element reads as.
static NULL: Value = Value::Null;

/// The judge's call slot.
const JUDGE: u32 = u32::MAX;

/// How one item ended.
#[derive(Debug)]
struct ItemDone {
    index: usize,
    agent: String,
    status: PhaseStatus,
    output: String,
    error: Option<String>,
}

/// A map's elements: parsed from rendered text (owned), or a value in the phase's view of
/// the run, looked up again for each item instead of copied (a 100,000-item list stays
/// where it is).
#[derive(Debug, Default)]
enum Elements {
    #[default]
    None,
    Owned(Vec<Value>),
    Scoped,
}

/// A fan-out in progress.
#[derive(Debug, Default)]
pub(crate) struct Fanout {
    count: usize,
    width: usize,
    next: usize,
    running: usize,
    finished: usize,
    done: Vec<Option<ItemDone>>,
    /// Item agents, by index, while their calls run.
    agents: Vec<String>,
    usage: Usage,
    scope: PhaseScope,
    /// A map's elements.
    elements: Elements,
    /// A tournament's items, kept for the judge.
    items: Vec<ItemDone>,
}

/// Fan-out width: phase `concurrency`, else the flow's, else 8.
fn width(cx: &Cx<'_>, phase: &Phase) -> usize {
    let flow = cx.flow();
    let w = phase
        .concurrency
        .as_ref()
        .map(|c| c.value)
        .or_else(|| cx.cfg().concurrency.map(|c| c as f64))
        .or_else(|| flow.concurrency.as_ref().map(|c| c.value))
        .unwrap_or(8.0);
    w.floor().max(1.0) as usize
}

impl Fanout {
    pub(crate) fn step(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, ev: KindEvent) -> Step {
        let flow = cx.flow();
        let phase = &flow.phases[ex.index];
        match ev {
            KindEvent::Start => {
                self.scope = ex.scope.clone();
                self.width = width(cx, phase);
                self.count = match phase.ty {
                    PhaseType::Parallel => phase.branches.len(),
                    PhaseType::Tournament if phase.branches.len() >= 2 => phase.branches.len(),
                    PhaseType::Tournament => phase.variants.floor().clamp(2.0, 20.0) as usize,
                    _ => match self.map_elements(ex, cx, phase) {
                        Ok(n) => n,
                        Err(step) => return step,
                    },
                };
                self.done = (0..self.count).map(|_| None).collect();
                self.agents = vec![String::new(); self.count];
                self.fill(ex, cx, phase)
            }
            KindEvent::Call(JUDGE, r) => self.judged(ex, phase, r),
            KindEvent::Call(slot, r) => {
                self.item_ended(ex, cx, phase, slot as usize, r);
                self.fill(ex, cx, phase)
            }
            _ => Step::Wait,
        }
    }

    /// A map's elements (SPEC §3.4): `Err` when the phase ends at once.
    fn map_elements(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
    ) -> Result<usize, Step> {
        let scope = self.scope.clone();
        let over = over_value(ex, cx, phase, &scope);
        let borrowed = matches!(over, Some(Cow::Borrowed(_)));
        let Some(elements) = over.as_deref().and_then(coerce_array) else {
            let over = phase.over.as_ref().map_or("", |o| o.as_str());
            ex.fail(
                String::new(),
                format!(
                    "map phase '{}': 'over' ({over}) did not resolve to an array",
                    phase.id
                ),
            );
            return Err(Step::Done(Halt::None));
        };
        const MAX_DYNAMIC_MAP_ITEMS: usize = 200;
        let elements = if cx.cfg().generated && elements.len() > MAX_DYNAMIC_MAP_ITEMS {
            ex.rec.warn(
                "map fan-out truncated to MAX_DYNAMIC_MAP_ITEMS (200) inside a dynamic sub-flow",
            );
            &elements[..MAX_DYNAMIC_MAP_ITEMS]
        } else {
            &elements[..]
        };
        if elements.is_empty() {
            ex.rec.items = Some(Vec::new());
            ex.succeed(String::new());
            ex.rec.json = Some(Value::Array(Vec::new()));
            return Err(Step::Done(Halt::None));
        }
        let n = elements.len();
        self.elements = if borrowed {
            Elements::Scoped
        } else {
            Elements::Owned(elements.to_vec())
        };
        Ok(n)
    }

    /// Start items while slots are free; merge when all have ended.
    fn fill(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, phase: &Phase) -> Step {
        while self.running < self.width && self.next < self.count {
            let i = self.next;
            self.next += 1;
            let (agent, prompt, dir) = self.item(ex, cx, phase, i);
            if cx.aborted() {
                self.done[i] = Some(ItemDone {
                    index: i,
                    agent,
                    status: PhaseStatus::Failed,
                    output: String::new(),
                    error: Some("Aborted".into()),
                });
                continue;
            }
            if cx.over().is_some() {
                ex.rec.budget_truncated = true;
                self.done[i] = Some(ItemDone {
                    index: i,
                    agent,
                    status: PhaseStatus::Skipped,
                    output: String::new(),
                    error: Some("(skipped: budget exceeded)".into()),
                });
                continue;
            }
            self.running += 1;
            let mut spec = ex
                .spec(format!("{}#{i}", phase.id), &agent, prompt, Purpose::Task)
                .checked(phase);
            spec.cwd = dir;
            spec.item_index = Some(i);
            spec.caught = true;
            self.agents[i] = agent;
            cx.call(ex, i as u32, spec);
        }
        if self.running > 0 || self.next < self.count {
            return Step::Wait;
        }
        let items: Vec<ItemDone> = std::mem::take(&mut self.done)
            .into_iter()
            .flatten()
            .collect();
        ex.rec.usage.add(&self.usage);
        if phase.ty == PhaseType::Tournament {
            return self.judge(ex, cx, phase, items);
        }
        merge(ex, items);
        Step::Done(Halt::None)
    }

    /// Item `i`'s agent, prompt and directory.
    fn item(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
        i: usize,
    ) -> (String, String, CallDir) {
        let here = CallDir::At(ex.work_dir.clone());
        let own = || phase.agent.value.clone();
        let (text, agent, dir) = match phase.ty {
            PhaseType::Parallel => {
                let b = &phase.branches[i];
                let text = match &b.task {
                    Some(t) => ex.render(cx, &format!("branches[{i}].task"), t, &self.scope),
                    None => String::new(),
                };
                let dir = match &b.cwd {
                    Some(c) if cx.cfg().dry_run => CallDir::At(cx.cfg().cwd.join(&c.value)),
                    Some(c) => CallDir::Branch {
                        index: i,
                        path: c.value.clone(),
                        phase: phase.id.clone(),
                        base: cx.cfg().cwd.clone(),
                    },
                    None => here,
                };
                (
                    text,
                    b.agent.as_ref().map_or_else(own, |a| a.value.clone()),
                    dir,
                )
            }
            PhaseType::Map => {
                let looked_up;
                let value = match &self.elements {
                    Elements::Owned(v) => v.get(i),
                    Elements::Scoped => {
                        looked_up = phase.over.as_ref().and_then(|o| {
                            crate::eval::resolve(&self.scope, &o.template.paths()[0])
                        });
                        looked_up
                            .as_deref()
                            .and_then(coerce_array)
                            .and_then(|a| a.get(i))
                    }
                    Elements::None => None,
                };
                let item = WithLocal {
                    base: &self.scope,
                    name: phase.local_name(),
                    value: value.unwrap_or(&NULL),
                };
                let text = match &phase.task {
                    Some(t) => ex.render(cx, "task", t, &item),
                    None => String::new(),
                };
                (text, own(), here)
            }
            _ => match phase.branches.get(i) {
                Some(b) => (
                    b.task
                        .as_ref()
                        .map(|t| ex.render(cx, &format!("branches[{i}].task"), t, &self.scope))
                        .unwrap_or_default(),
                    b.agent.as_ref().map_or_else(own, |a| a.value.clone()),
                    here,
                ),
                None => (
                    phase
                        .task
                        .as_ref()
                        .map(|t| ex.render(cx, "task", t, &self.scope))
                        .unwrap_or_default(),
                    own(),
                    here,
                ),
            },
        };
        let prompt = ex.prompt(cx, &text);
        (agent, prompt, dir)
    }

    fn item_ended(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
        i: usize,
        mut r: CallResult,
    ) {
        self.running -= 1;
        ex.rec.attempts += r.attempts;
        self.usage.add(&r.usage);
        ex.rec.timed_out |= r.timed_out;
        if ex.rec.model.is_none() {
            ex.rec.model = r.model.take();
        }
        for w in r.warnings.drain(..) {
            ex.rec.warn(w);
        }
        let agent = std::mem::take(&mut self.agents[i]);
        self.done[i] = Some(ItemDone {
            index: i,
            agent,
            status: if r.ok {
                PhaseStatus::Done
            } else {
                PhaseStatus::Failed
            },
            output: std::mem::take(&mut r.output),
            error: r.error.take(),
        });
        self.finished += 1;
        if cx.cfg().progress {
            let note = super::super::machine::Progress {
                phase: cx.node(&phase.id),
                status: "running",
                detail: Some(format!("{}/{} items", self.finished, self.count)),
                attempts: ex.rec.attempts,
                tokens: self.usage.billable_tokens(),
                cost_usd: self.usage.cost_usd,
            };
            cx.push(super::super::machine::Command::Progress(note));
        }
    }

    /// A tournament's items have ended: pick a winner, asking the judge when it must.
    fn judge(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
        items: Vec<ItemDone>,
    ) -> Step {
        let n = self.count;
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
        if cx.aborted() || cx.over().is_some() {
            ex.rec.warn("judge skipped: run aborted or budget exceeded");
            pick(ex, &items, first, n);
            return Step::Done(Halt::None);
        }
        let rubric = match &phase.judge {
            Some(j) => ex.render(cx, "judge", j, &self.scope),
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
        let directive = match phase.mode {
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
        let judge_agent = phase
            .judge_agent
            .as_ref()
            .map_or_else(|| phase.agent.value.clone(), |a| a.value.clone());
        let spec = ex.spec(
            format!("{}#judge", phase.id),
            &judge_agent,
            prompt,
            Purpose::Judge,
        );
        self.items = items;
        cx.call(ex, JUDGE, spec);
        Step::Wait
    }

    fn judged(&mut self, ex: &mut Exec, phase: &Phase, r: CallResult) -> Step {
        if let Some(msg) = r.crashed {
            return ex.crash(msg);
        }
        let items = std::mem::take(&mut self.items);
        let n = self.count;
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
        match phase.mode {
            TournamentMode::Best => ex.succeed(items[winner].output.clone()),
            TournamentMode::Aggregate => ex.succeed(r.output),
        }
        Step::Done(Halt::None)
    }
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

/// The shared merge of map and parallel items (SPEC §3.3).
fn merge(ex: &mut Exec, items: Vec<ItemDone>) {
    use std::fmt::Write as _;
    let n = items.len();
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
    let skip_note = (skipped > 0).then(|| format!("{skipped} item(s) skipped: budget exceeded"));
    if skipped > 0 {
        ex.rec.budget_truncated = true;
    }
    if errors.is_empty() {
        if let Some(note) = skip_note {
            ex.rec.warn(note);
        }
        ex.succeed(output);
    } else {
        let mut err = errors.join("; ");
        if let Some(note) = skip_note {
            err.push_str("; ");
            err.push_str(&note);
        }
        ex.fail(output, err);
    }
    ex.rec.json = Some(Value::Array(json));
}

/// The value a map fans out over (SPEC §3.4), before coerceArray: a lone placeholder's raw
/// value (strings go through safeParse), else the rendered text through safeParse.
fn over_value<'s>(
    ex: &mut Exec,
    cx: &mut Cx<'_>,
    phase: &Phase,
    scope: &'s PhaseScope,
) -> Option<Cow<'s, Value>> {
    let over = phase.over.as_ref()?;
    let paths = over.template.paths();
    let whole = over.template.refs().len() == 1
        && over.template.refs()[0].span.range() == (0..over.as_str().len());
    if !whole {
        let text = ex.render(cx, "over", over, scope);
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
            ex.missing_warning(cx, "over", &[paths[0].text.to_string()]);
            None
        }
    }
}
