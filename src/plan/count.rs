//! The calls of each phase (SPEC §18), kind by kind, and of a whole flow.
//!
//! A phase's calls are a few [`Group`]s. `min` assumes every guard may be false (a phase
//! that can be skipped, by its `when` or by a skipped dependency under `join: "all"`, makes
//! 0 calls), gates that pass at once and loops that stop after one iteration; `max` assumes
//! every guard true, loops to `maxIterations`, maps to their most items and gates that block
//! until their `onBlock: "retry"` rounds are spent; `worst` is `max` with every call at its
//! attempt limit (§8.4).

use indexmap::IndexSet;

use super::items;
use super::model::{Calls, Count, Group, PhasePlan};
use super::prompt::{self, Size};
use crate::flow::kinds::reduce::tree_calls;
use crate::flow::{
    Combine, Def, Flow, Join, LowerOptions, OnBlock, OutputMode, Phase, PhaseKind, TournamentMode,
    lower_source,
};
use crate::value::Map;

/// What the plan may read besides the flow: saved flows (`use`), pre-read files, prices.
pub trait Env {
    /// The text of the saved flow `name`, if there is one.
    fn saved_flow(&self, _name: &str) -> Option<String> {
        None
    }

    /// The text of a pre-read file (a path relative to the invocation directory), if the run
    /// would read it today (a regular file of at most 10 MiB).
    fn context_file(&self, _path: &str) -> Option<String> {
        None
    }

    /// The price of `agent`'s calls, or why none is known.
    fn price(&self, agent: &str) -> Result<super::model::Price, String> {
        Err(format!("no price is known for agent '{agent}'"))
    }
}

/// An environment with nothing in it: no saved flows, no files, no prices.
pub struct NoEnv;

impl Env for NoEnv {}

/// What the invocation says.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'a> {
    /// `--items N`: every map fans out over N items.
    pub items: Option<u64>,
    /// `--output-tokens N`: each call answers with N tokens.
    pub output_tokens: Option<u64>,
    /// The invocation's arguments (a map over `{args.X}` then has a known size).
    pub args: Option<&'a Map>,
    /// `--max-calls N`: the call cap in place of the budget's `maxCalls`.
    pub max_calls: Option<u64>,
}

/// Gate reworks nest at most this deep (SPEC §3.5: re-runs only while depth < 3).
const MAX_REWORK_DEPTH: u32 = 3;

/// Plans flows, collecting the assumptions that would settle the unknowns.
pub struct Planner<'e> {
    env: &'e dyn Env,
    items: Option<u64>,
    /// What would settle each unknown, in the order met, once each.
    pub assumptions: IndexSet<String>,
    /// The saved flows being planned, outermost first (a `use` cycle is unknown).
    chain: Vec<String>,
}

/// One phase's calls before the skip rule: its groups and sub-flow phases.
#[derive(Clone, Default)]
struct Own {
    groups: Vec<Group>,
    children: Option<Vec<PhasePlan>>,
}

impl<'e> Planner<'e> {
    /// A planner reading through `env`; `items` is `--items N`.
    pub fn new(env: &'e dyn Env, items: Option<u64>) -> Planner<'e> {
        Planner {
            env,
            items,
            assumptions: IndexSet::new(),
            chain: Vec::new(),
        }
    }

    /// The plan of every phase of `flow`, in file order. `prefix` names it inside its parent
    /// (`review/`), `args` are its invocation arguments when known.
    pub fn flow(&mut self, flow: &Flow, prefix: &str, args: Option<&Map>) -> Vec<PhasePlan> {
        let order = topo_order(flow);
        let skippable = skippable(flow, &order);
        let mut own: Vec<Option<Own>> = vec![None; flow.phases.len()];
        for &i in &order {
            let o = self.own(flow, i, 0, prefix, args, &own);
            own[i] = Some(o);
        }
        flow.phases
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let Own {
                    mut groups,
                    children,
                } = own[i].take().unwrap_or_default();
                if skippable[i] {
                    for g in &mut groups {
                        g.calls.min = Some(0);
                    }
                }
                let calls = groups.iter().fold(Calls::ZERO, |acc, g| acc.plus(g.calls));
                let prompt_tokens = groups.iter().map(Group::tokens).max().unwrap_or(0);
                let dynamic = groups.iter().any(|g| g.dynamic);
                PhasePlan {
                    id: p.id.clone(),
                    kind: p.ty(),
                    calls,
                    prompt_tokens,
                    dynamic,
                    children,
                    groups,
                }
            })
            .collect()
    }

    fn assume(&mut self, text: String) {
        self.assumptions.insert(text);
    }

    /// Phase `i`'s own calls when it runs at rework depth `depth`. `done` holds the phases
    /// planned so far at depth 0 (every dependency of `i`, in topological order).
    fn own(
        &mut self,
        flow: &Flow,
        i: usize,
        depth: u32,
        prefix: &str,
        args: Option<&Map>,
        done: &[Option<Own>],
    ) -> Own {
        let p = &flow.phases[i];
        let a = attempts(p);
        let env = self.env;
        let pre = prompt::pre_read(p, &|path| env.context_file(path));
        let agent = p.agent.value.as_str();
        let one = |agent: &str, calls: Calls, size: Size| Group {
            agent: agent.to_owned(),
            calls,
            chars: size.chars,
            dynamic: size.dynamic,
        };
        let task = pre.and(prompt::optional(p.task.as_ref()));
        let groups = match &p.kind {
            PhaseKind::Agent(_) => vec![one(agent, Calls::exactly(1, a), task)],
            PhaseKind::Parallel(k) => k
                .branches
                .iter()
                .map(|b| {
                    let size = pre.and(prompt::optional(b.task.as_ref()));
                    let agent = b.agent.as_ref().map_or(agent, |f| f.value.as_str());
                    one(agent, Calls::exactly(1, a), size)
                })
                .collect(),
            PhaseKind::Race(k) => k
                .branches
                .iter()
                .map(|b| {
                    let size = pre.and(prompt::optional(b.task.as_ref()));
                    let agent = b.agent.as_ref().map_or(agent, |f| f.value.as_str());
                    one(agent, Calls::exactly(1, a), size)
                })
                .collect(),
            PhaseKind::Map(_) => {
                let n = items::of_map(flow, p, self.items, args);
                if n.max.is_none() {
                    // Only kinds that take `expect` can state the most items.
                    let source = items::source_id(p)
                        .filter(|s| {
                            flow.phase(s).is_some_and(|src| {
                                matches!(
                                    src.kind,
                                    PhaseKind::Agent(_)
                                        | PhaseKind::Gate(_)
                                        | PhaseKind::Reduce(_)
                                        | PhaseKind::Loop(_)
                                        | PhaseKind::Map(_)
                                )
                            })
                        })
                        .map(|s| {
                            format!(", or declare \"maxItems\" in the expect of '{prefix}{s}'")
                        })
                        .unwrap_or_default();
                    self.assume(format!(
                        "{prefix}{}: the number of map items is unknown: pass --items N{source}",
                        p.id
                    ));
                }
                vec![one(agent, Calls::between(Some(n.min), n.max, a), task)]
            }
            PhaseKind::Loop(k) => {
                let n = k.max_iterations.floor().clamp(1.0, 100.0) as u64;
                let size = if k.reflexion {
                    task.with_dynamic()
                } else {
                    task
                };
                vec![one(agent, Calls::between(Some(1), Some(n), a), size)]
            }
            PhaseKind::Tournament(k) => {
                let mut groups: Vec<Group> = if k.branches.is_empty() {
                    let n = k.variants.floor().clamp(2.0, 20.0) as u64;
                    vec![one(agent, Calls::exactly(n, a), task)]
                } else {
                    k.branches
                        .iter()
                        .map(|b| {
                            let size = pre.and(prompt::optional(b.task.as_ref()));
                            let agent = b.agent.as_ref().map_or(agent, |f| f.value.as_str());
                            one(agent, Calls::exactly(1, a), size)
                        })
                        .collect()
                };
                let n = groups.iter().filter_map(|g| g.calls.max).sum::<u64>();
                let rubric = match &k.judge {
                    Some(t) => prompt::template(t),
                    None => Size::fixed(DEFAULT_RUBRIC),
                };
                let directive = match k.mode {
                    TournamentMode::Best => BEST_DIRECTIVE,
                    TournamentMode::Aggregate => AGGREGATE_DIRECTIVE,
                };
                // "### Variant i\n\n" per variant, joined by "\n\n---\n\n".
                let blocks: u64 = (1..=n)
                    .map(|i| format!("### Variant {i}\n\n").len() as u64)
                    .sum::<u64>()
                    + 7 * n.saturating_sub(1);
                let judge = pre
                    .and(rubric)
                    .and(Size::fixed(VARIANTS_HEADER))
                    .and(Size::fixed(directive))
                    .and(Size {
                        chars: blocks,
                        dynamic: true,
                    });
                let judge_agent = k.judge_agent.as_ref().map_or(agent, |f| f.value.as_str());
                groups.push(one(judge_agent, Calls::exactly(1, a), judge));
                groups
            }
            PhaseKind::Reduce(k) => {
                let inputs = p.from.len() as u64;
                let calls = |n: u64| {
                    if k.is_tree() && n >= 2 {
                        let b = k.batch_size.as_ref().map_or(2, |b| b.value as usize);
                        tree_calls(n as usize, b) as u64
                    } else {
                        1
                    }
                };
                // Under join "any" the reduce may start with one input done.
                let least = if p.join == Join::Any {
                    calls(1)
                } else {
                    calls(inputs)
                };
                vec![one(
                    agent,
                    Calls::between(Some(least), Some(calls(inputs)), a),
                    task,
                )]
            }
            PhaseKind::Gate(k) => self.gate(flow, i, k, depth, prefix, args, done, pre, a),
            PhaseKind::Approval(_) | PhaseKind::Script(_) => Vec::new(),
            PhaseKind::Flow(k) => {
                let child = match (&k.use_flow, &k.def) {
                    (_, Some(def)) => match &def.value {
                        Def::Inline(child) => Some(self.child(child, &p.id, prefix)),
                        Def::Template(_) => {
                            self.assume(format!("{prefix}{}: its 'def' is built at run time (a template): the calls of that sub-flow are unknown; write the def as an object to plan it", p.id));
                            None
                        }
                    },
                    (Some(name), None) => self.saved(&name.value, &p.id, prefix),
                    (None, None) => None,
                };
                return match child {
                    Some(children) => Own {
                        groups: children
                            .iter()
                            .flat_map(|c| c.groups.iter().cloned())
                            .map(|mut g| {
                                // The parent's pre-read prefixes every child prompt.
                                g.chars += pre.chars;
                                g.dynamic |= pre.dynamic;
                                g
                            })
                            .collect(),
                        children: Some(children),
                    },
                    None => Own {
                        groups: vec![one(agent, Calls::UNKNOWN, pre)],
                        children: None,
                    },
                };
            }
            PhaseKind::Expand(_) => {
                self.assume(format!(
                    "{prefix}{}: expand builds its phases at run time: its calls are unknown",
                    p.id
                ));
                vec![one(agent, Calls::UNKNOWN, pre)]
            }
        };
        Own {
            groups,
            children: None,
        }
    }

    /// A gate (SPEC §3.5, §3.14): per round one call (its task, or its score judge) unless a
    /// fast path decides; with `onBlock: "retry"`, rounds that re-run its direct `dependsOn`
    /// phases and ask again.
    #[allow(clippy::too_many_arguments)]
    fn gate(
        &mut self,
        flow: &Flow,
        i: usize,
        k: &crate::flow::kinds::Gate,
        depth: u32,
        prefix: &str,
        args: Option<&Map>,
        done: &[Option<Own>],
        pre: Size,
        a: u64,
    ) -> Vec<Group> {
        let p = &flow.phases[i];
        let score = k.score.as_ref();
        let judge = score.and_then(|s| s.judge.as_ref());
        // The call of a round, if any: the judge decides when there is one, else the task.
        let (agent, size) = match (judge, &p.task) {
            (Some(j), _) => (
                j.agent
                    .as_ref()
                    .map_or(p.agent.value.as_str(), |f| f.value.as_str()),
                pre.and(prompt::optional(j.task.as_ref()))
                    .and(Size::fixed(SCORE_JUDGE_TEXT))
                    .with_dynamic(),
            ),
            (None, Some(t)) => {
                let mut size = pre.and(prompt::template(t));
                let contract = p.output == OutputMode::Json && p.expect.is_some();
                if !contract && !asks_for_verdict(t.as_str()) {
                    size = size.and(Size::fixed(GATE_SUFFIX));
                }
                if score.is_some() {
                    // The scorer report is appended to the task.
                    size = size.with_dynamic();
                }
                (p.agent.value.as_str(), size)
            }
            (None, None) => (p.agent.value.as_str(), Size::default()),
        };
        let per_round: u64 = u64::from(judge.is_some() || p.task.is_some());
        let fast = !k.eval.is_empty()
            || score.is_some_and(|s| s.judge.is_none() || s.combine == Combine::Weighted);
        let deps: Vec<usize> = p
            .depends_on
            .iter()
            .filter_map(|d| flow.index_of(&d.value))
            .filter(|&d| d != i)
            .collect();
        let rounds = if k.on_block == OnBlock::Retry && depth < MAX_REWORK_DEPTH && !deps.is_empty()
        {
            p.retry
                .as_ref()
                .map_or(1, |r| r.value.max.floor().max(0.0) as u64)
        } else {
            0
        };
        let min = if fast { 0 } else { per_round };
        let gate_calls = Calls::between(Some(min), Some(per_round * (rounds + 1)), a);
        let mut groups = vec![Group {
            agent: agent.to_owned(),
            calls: gate_calls,
            chars: size.chars,
            dynamic: size.dynamic,
        }];
        if rounds > 0 {
            let mut seen: Vec<usize> = Vec::new();
            for d in deps {
                if seen.contains(&d) {
                    continue;
                }
                seen.push(d);
                let again = match &flow.phases[d].kind {
                    // A re-run reworking gate may rework in turn, one level deeper.
                    PhaseKind::Gate(g) if g.on_block == OnBlock::Retry => {
                        let dp = &flow.phases[d];
                        let env = self.env;
                        let dep_pre = prompt::pre_read(dp, &|path| env.context_file(path));
                        let groups = self.gate(
                            flow,
                            d,
                            g,
                            depth + 1,
                            prefix,
                            args,
                            done,
                            dep_pre,
                            attempts(dp),
                        );
                        Own {
                            groups,
                            children: None,
                        }
                    }
                    _ => match done.get(d).and_then(Option::as_ref) {
                        Some(o) => o.clone(),
                        None => self.own(flow, d, depth + 1, prefix, args, done),
                    },
                };
                for mut g in again.groups {
                    g.calls = Calls {
                        min: Some(0),
                        max: g.calls.max.map(|n| n.saturating_mul(rounds)),
                        worst: g.calls.worst.map(|n| n.saturating_mul(rounds)),
                    };
                    groups.push(g);
                }
            }
        }
        groups
    }

    /// An inline `def`'s phases.
    fn child(&mut self, child: &Flow, id: &str, prefix: &str) -> Vec<PhasePlan> {
        let inner = format!("{prefix}{id}/");
        self.flow(child, &inner, None)
    }

    /// A saved flow's phases; `None` (and an assumption) when it cannot be planned.
    fn saved(&mut self, name: &str, id: &str, prefix: &str) -> Option<Vec<PhasePlan>> {
        if self.chain.iter().any(|c| c == name) {
            self.assume(format!(
                "{prefix}{id}: saved flow '{name}' uses itself: its calls are unknown"
            ));
            return None;
        }
        let Some(text) = self.env.saved_flow(name) else {
            self.assume(format!(
                "{prefix}{id}: saved flow '{name}' was not found: its calls are unknown"
            ));
            return None;
        };
        let lowered = lower_source(
            &text,
            &LowerOptions {
                default_name: Some(name.to_owned()),
            },
        );
        let Some(child) = lowered
            .flow
            .filter(|_| !lowered.diagnostics.iter().any(|d| d.is_error()))
        else {
            self.assume(format!(
                "{prefix}{id}: saved flow '{name}' has errors: its calls are unknown (run `tfc check` on it)"
            ));
            return None;
        };
        self.chain.push(name.to_owned());
        let plans = self.child(&child, id, prefix);
        self.chain.pop();
        Some(plans)
    }
}

/// The most attempts of one call of `p` (SPEC §8.4): `E = 1 + retry.max`, at least 4 with
/// the transient layer (`idempotent` not false).
pub fn attempts(p: &Phase) -> u64 {
    let e = 1 + p
        .retry
        .as_ref()
        .map_or(0, |r| r.value.max.floor().max(0.0) as u64);
    if p.idempotent { e.max(4) } else { e }
}

/// The phases in an order where each comes after its dependencies (Kahn, file order among
/// the ready ones); phases on a cycle come last, in file order.
fn topo_order(flow: &Flow) -> Vec<usize> {
    let n = flow.phases.len();
    let (deps, dependents) = flow.edges();
    let mut waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut ready: std::collections::VecDeque<usize> =
        (0..n).filter(|&i| waiting[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    while let Some(i) = ready.pop_front() {
        order.push(i);
        placed[i] = true;
        for &d in &dependents[i] {
            waiting[d] -= 1;
            if waiting[d] == 0 {
                ready.push_back(d);
            }
        }
    }
    order.extend((0..n).filter(|&i| !placed[i]));
    order
}

/// Which phases a run may skip although every call succeeds: a `when` may be false, and a
/// skipped dependency skips a `join: "all"` phase (all of them, a `join: "any"` one).
fn skippable(flow: &Flow, order: &[usize]) -> Vec<bool> {
    let n = flow.phases.len();
    let mut skip = vec![false; n];
    let mut seen = vec![false; n];
    for &i in order {
        let p = &flow.phases[i];
        let deps = p
            .deps
            .iter()
            .map(|d| d.index())
            .filter(|&d| d < n && d != i);
        let upstream = match p.join {
            Join::All => deps.clone().any(|d| skip[d] || !seen[d]),
            Join::Any => {
                let mut any = false;
                let mut all = true;
                for d in deps {
                    any = true;
                    all &= skip[d] || !seen[d];
                }
                any && all
            }
        };
        skip[i] = p.when.is_some() || upstream;
        seen[i] = true;
    }
    skip
}

/// The sum of the calls of `plans`.
pub fn total_calls(plans: &[PhasePlan]) -> Calls {
    plans.iter().fold(Calls::ZERO, |acc, p| acc.plus(p.calls))
}

/// The static input tokens of `plans`' calls: with their fewest and most calls.
pub fn input_tokens(plans: &[PhasePlan]) -> (Count, Count) {
    let mut min = Some(0u64);
    let mut max = Some(0u64);
    for g in plans.iter().flat_map(|p| &p.groups) {
        let t = g.tokens();
        min = super::model::add(min, g.calls.min.map(|n| n.saturating_mul(t)));
        max = super::model::add(max, g.calls.max.map(|n| n.saturating_mul(t)));
    }
    (min, max)
}

/// Does a gate task as written ask for the verdict line itself (`/VERDICT\s*[:=]/i`)?
fn asks_for_verdict(task: &str) -> bool {
    let lower = task.to_ascii_lowercase();
    lower.match_indices("verdict").any(|(at, w)| {
        lower[at + w.len()..]
            .trim_start_matches(|c: char| c.is_whitespace())
            .starts_with([':', '='])
    })
}

/// The format suffix of a gate call (SPEC §3.5).
pub(super) const GATE_SUFFIX: &str = "\n\n--- Required output format ---\nEnd your response with exactly one line in this exact form (no Markdown, no bold, no extra words):\nVERDICT: PASS\nor\nVERDICT: BLOCK";
/// A tournament judge's rubric without `judge` (SPEC §3.10).
pub(super) const DEFAULT_RUBRIC: &str = "Several candidates answered the same task independently. Judge them on correctness, completeness and usefulness.";
/// Between the rubric and the variants.
pub(super) const VARIANTS_HEADER: &str = "\n\nThe candidate variants:\n\n";
/// The judge's directive in `best` mode.
pub(super) const BEST_DIRECTIVE: &str =
    "\n\nEnd your response with exactly one line in this form: WINNER: <number>";
/// The judge's directive in `aggregate` mode.
pub(super) const AGGREGATE_DIRECTIVE: &str = "\n\nSynthesize the single strongest answer from the eligible variants, then end with exactly one line in this form: WINNER: <number> (the variant that contributed most).";
/// The fixed text of a score judge's prompt around its task, target and report (SPEC §3.14).
pub(super) const SCORE_JUDGE_TEXT: &str = "\n\nTarget:\n```\n\n```\n\nScorer report:\n\n\nReply with JSON {\"score\": <0..1>, \"verdict\": \"pass\"|\"block\", \"reason\": \"<why>\"}.";
