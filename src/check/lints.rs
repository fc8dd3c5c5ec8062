//! Graph lints (SPEC §7.2 W0103–W0105, W0109, W0110, W0309): budget below the minimum,
//! parallel fan-outs wider than the flow's concurrency, opposing guards, a guarded final phase,
//! a `join: "any"` phase reading a dependency that may not have finished. Never promoted by
//! strict mode except W0309, which is a field warning.

use std::collections::HashMap;

use super::graph::{Graph, ancestors};
use super::refs::Use;
use crate::diag::{Code, Diagnostic};
use crate::flow::{Cond, Flow, Join, PhaseType};

/// W0309 (an empty budget) and a budget below the flow's estimated minimum spend, or
/// (`maxCalls`) below the fewest calls a run makes (`crate::plan`, through `loader` for
/// `use` targets).
pub fn budget(
    flow: &Flow,
    loader: Option<&dyn super::loader::FlowLoader>,
    out: &mut Vec<Diagnostic>,
) {
    let Some(b) = &flow.budget else { return };
    if b.value.empty {
        out.push(
            Diagnostic::new(Code::EmptyBudget, "'budget' sets no cap")
                .at(b.span)
                .with_label("no maxUSD, maxTokens or maxCalls")
                .help("set \"maxUSD\", \"maxTokens\" and/or \"maxCalls\", or remove 'budget' (an empty one also forces one phase at a time)"),
        );
        return;
    }
    let saved = Saved(loader);
    out.extend(crate::plan::below_minimum(flow, || {
        crate::plan::min_calls(flow, &saved)
    }));
}

/// Saved flows for the plan's count of `maxCalls`' minimum: the check's loader.
struct Saved<'a>(Option<&'a dyn super::loader::FlowLoader>);

impl crate::plan::Env for Saved<'_> {
    fn saved_flow(&self, name: &str) -> Option<String> {
        self.0?.load(name).ok().map(|(_, text)| text)
    }
}

/// W0104. Measured against the flow's `concurrency` as written (default 8): a budget forces
/// one phase at a time anyway, and a per-phase cap is the fix either way.
pub fn branch_width(flow: &Flow, out: &mut Vec<Diagnostic>) {
    let width = flow
        .concurrency
        .as_ref()
        .map_or(8, |c| c.value.floor().max(1.0) as usize);
    for p in &flow.phases {
        if p.ty() == PhaseType::Parallel && p.concurrency.is_none() && p.branches().len() > width {
            let mut d = Diagnostic::new(
                    Code::BranchesExceedConcurrency,
                    format!(
                        "{}: {} branches but the flow runs at most {width} at once",
                        p.id,
                        p.branches().len()
                    ),
                )
                .at(p.written.get("branches").copied().unwrap_or(p.id_span))
                .with_label(format!("{} branches", p.branches().len()))
                .phase(&p.id)
                .help(format!("add \"concurrency\": {width} (or another cap) to the phase to say how many branches may run together"));
            if let Some(c) = &flow.concurrency {
                d = d.label(c.span, "the flow's limit");
            }
            out.push(d);
        }
    }
}

/// Two guarded phases on the same dependencies whose guards are the same comparison, one with
/// `==` and one with `!=` (`{x} == high` / `{x} != high`): exactly one of them runs, so the
/// other is always skipped. That is if/else routing when a `join: "any"` phase depends on both
/// (the idiom, no warning); otherwise anything waiting for both is never reached.
pub fn opposing_guards(flow: &Flow, graph: &Graph, out: &mut Vec<Diagnostic>) {
    /// Sorted dependsOn, the comparison's operands as printed, `==` (true) or `!=` (false).
    type Key = (Vec<String>, String, String);
    // Per key, the first `!=` and the first `==` guard seen.
    let mut seen: HashMap<Key, [Option<usize>; 2]> = HashMap::new();
    for (i, p) in flow.phases.iter().enumerate() {
        let Some(when) = &p.when else { continue };
        let Some((key_ops, eq)) = guard_of(when.as_str()) else {
            continue;
        };
        let mut deps: Vec<String> = p.depends_on.iter().map(|d| d.value.clone()).collect();
        deps.sort();
        deps.dedup();
        let slots = seen.entry((deps, key_ops.0, key_ops.1)).or_default();
        slots[usize::from(eq)].get_or_insert(i);
        let Some(j) = slots[usize::from(!eq)] else {
            continue;
        };
        let joined = graph.dependents[i]
            .iter()
            .any(|&d| flow.phases[d].join == Join::Any && graph.deps[d].contains(&j));
        if joined {
            continue;
        }
        let other = &flow.phases[j];
        let mut d = Diagnostic::new(
            Code::OpposingGuards,
            format!("'{}' and '{}' have opposing guards: exactly one of them runs and the other is always skipped", other.id, p.id),
        )
        .at(when.src.span)
        .phase(&p.id)
        .with_label(format!("'{}' runs only when this holds", p.id));
        if let Some(w) = &other.when {
            d = d.label(
                w.src.span,
                format!("'{}' runs only when this holds", other.id),
            );
        }
        out.push(d.help(format!(
            "if this is if/else routing, merge the two branches in a phase with \"join\": \"any\" and \"dependsOn\": [\"{}\", \"{}\"]; a phase waiting for both with the default join \"all\" never runs",
            other.id, p.id
        )));
    }
}

/// A guard that is one comparison `a == b` or `a != b` (parentheses allowed): its operands as
/// printed, in a canonical order, and whether it is `==`.
fn guard_of(text: &str) -> Option<((String, String), bool)> {
    use crate::syntax::condition::{CmpOp, Expr, Operand, parse_cond};
    let cond = parse_cond(text).ok()?;
    let mut node = cond.expr.as_ref()?;
    while let Expr::Paren(inner) = &node.node {
        node = inner;
    }
    let Expr::Compare(a, op, b) = &node.node else {
        return None;
    };
    let eq = match op.node {
        CmpOp::Eq => true,
        CmpOp::Ne => false,
        _ => return None,
    };
    let is_ref =
        |n: &crate::syntax::condition::Node| matches!(n.node, Expr::Operand(Operand::Ref(_)));
    if !is_ref(a) && !is_ref(b) {
        return None;
    }
    let (a, b) = (a.node.to_string(), b.node.to_string());
    Some((if a <= b { (a, b) } else { (b, a) }, eq))
}

#[cfg(test)]
mod tests;

/// How many guards [`final_guarded`] keeps per phase (see there).
const GUARDS_KEPT: usize = 16;

/// W0109: the final phase runs only if some `when` holds, so a run can end `completed` with
/// another phase's output (SPEC §8.9's fallback) when it does not.
///
/// Which `when`s can skip the final phase on their own, following the run's cascade (SPEC
/// §8.2): a phase is skipped by its own `when`; by any guard that skips one of its
/// dependencies under `join: "all"`; under `join: "any"` only by a guard that skips *every*
/// dependency (a guard upstream of all of them). So the final's own `when` counts, a guarded
/// phase on every route to the final counts, and if/else routing merged with `join: "any"`
/// (each branch behind its own guard) stays silent: one of the branches runs. A `when` that
/// does not parse (fail-open) or is constantly true guards nothing. And it warns only when
/// every route from an entry phase to the final passes through a guarded phase: a `join:
/// "all"` final with one unguarded route besides a guarded one stays silent (the run itself
/// says so if the final phase is skipped).
///
/// Each phase keeps at most [`GUARDS_KEPT`] guards (the ones furthest upstream, which are the
/// ones routes share), so a flow of 100 000 guarded phases costs linear time; a kept set is
/// always a subset of the true one, so the lint may stay silent but never names a wrong guard.
pub fn final_guarded(flow: &Flow, graph: &Graph, out: &mut Vec<Diagnostic>) {
    let (Some(topo), Some(fin)) = (&graph.topo, flow.final_phase()) else {
        return;
    };
    let guard: Vec<bool> = flow
        .phases
        .iter()
        .map(|p| p.when.as_ref().is_some_and(|w| is_guard(w)))
        .collect();
    if !guard.iter().any(|&g| g) {
        return;
    }
    let n = flow.phases.len();
    let mut pos = vec![0usize; n];
    for (k, &v) in topo.iter().enumerate() {
        pos[v] = k;
    }
    // Only the final phase and its ancestors matter.
    let mut needed = vec![false; n];
    let mut stack = vec![fin];
    while let Some(v) = stack.pop() {
        if !std::mem::replace(&mut needed[v], true) {
            stack.extend(graph.deps[v].iter().copied());
        }
    }
    // `skipped_by[v]`: guards whose `when` alone skips v, sorted by topological position.
    let mut skipped_by: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &v in topo.iter().filter(|&&v| needed[v]) {
        let deps = &graph.deps[v];
        let mut set: Vec<usize> = match deps.split_first() {
            None => Vec::new(),
            Some((first, rest)) if flow.phases[v].join == Join::Any => {
                let mut set = skipped_by[*first].clone();
                for d in rest {
                    set.retain(|g| skipped_by[*d].contains(g));
                }
                set
            }
            Some(_) => deps
                .iter()
                .flat_map(|d| skipped_by[*d].iter().copied())
                .collect(),
        };
        if guard[v] {
            set.push(v);
        }
        set.sort_unstable_by_key(|&g| pos[g]);
        set.dedup();
        set.truncate(GUARDS_KEPT);
        skipped_by[v] = set;
    }
    // A route from an entry phase to the final phase that no `when` guards: the warning
    // is for flows where every route passes a guard (issue wording), and a guard whose
    // `when` alone skips the final phase (above) names it.
    let mut free = vec![false; n];
    for &v in topo.iter().filter(|&&v| needed[v]) {
        let deps = &graph.deps[v];
        free[v] = !guard[v] && (deps.is_empty() || deps.iter().any(|&d| free[d]));
    }
    if free[fin] {
        return;
    }
    let guards = &skipped_by[fin];
    // Name the final's own `when`, else the guard nearest to it.
    let Some(&named) = (if guard[fin] {
        Some(&fin)
    } else {
        guards.last()
    }) else {
        return;
    };
    let final_phase = &flow.phases[fin];
    let g = &flow.phases[named];
    let Some(when) = &g.when else { return };
    let (message, label, help) = if named == fin {
        (
            format!("the final phase '{}' has a 'when': when it is false the phase is skipped, and the run still completes, with another phase's output", g.id),
            format!("if this is false, '{}' is skipped", g.id),
            "to always end with this phase, move the condition to a phase before it; if skipping is meant, expect the run's output to be the last finished phase's (the run says so when it happens)".to_owned(),
        )
    } else {
        (
            format!(
                "the final phase '{}' runs only if the 'when' of '{}' holds: otherwise it is skipped, and the run still completes, with another phase's output",
                final_phase.id, g.id
            ),
            format!(
                "if this is false, '{}' is skipped, and so is '{}'",
                g.id, final_phase.id
            ),
            format!(
                "if '{}' should always run, give it \"join\": \"any\" over '{}' and a phase for when the condition is false (an if/else pair of 'when's); if skipping is meant, expect the run's output to be the last finished phase's",
                final_phase.id, g.id
            ),
        )
    };
    let mut d = Diagnostic::new(Code::FinalGuarded, message)
        .at(when.src.span)
        .with_label(label)
        .phase(&final_phase.id);
    if named != fin {
        d = d.label(final_phase.id_span, "the final phase");
    }
    for &other in guards.iter().rev().filter(|&&o| o != named).take(3) {
        if let Some(w) = &flow.phases[other].when {
            d = d.label(
                w.src.span,
                format!("if this is false, '{}' is skipped too", final_phase.id),
            );
        }
    }
    out.push(d.help(help));
}

/// Can this `when` be false? Not when it does not parse (fail-open) or is a constant that
/// holds (`true`, empty).
pub(crate) fn is_guard(when: &Cond) -> bool {
    match &when.parsed {
        Ok(c) => c.refs().next().is_some() || !c.holds(&crate::eval::Bindings::default()),
        Err(_) => false,
    }
}

/// W0110: a `join: "any"` phase P starts as soon as *one* dependency is satisfied (SPEC §8.2);
/// a `{steps.X…}` it reads is then left verbatim (in a condition: undefined) if X has not
/// finished — still running, not started, or skipped — as when a gate judges the literal
/// `{steps.map.output}` because another dependency finished first.
///
/// Flagged: a placeholder of P reading an ancestor X (P's own dependency, or one reached
/// through a dependency) that is not certain to have finished when P starts, i.e. some
/// dependency of P can end satisfied before X has ended. X has certainly ended before phase v
/// ends satisfied when v is X, or v joins `all` and one of its dependencies is such a phase,
/// or v joins `any` and all of them are. So these stay silent:
/// - a `join: "any"` phase with a single dependency (it is `join: "all"`);
/// - reading a dependency that every other dependency waits for (`dependsOn: [a, b]` where
///   b depends on a: reading a is safe);
/// - `{previous.output}` (the dependency that finished; the help's advice), reduce `from`
///   inputs, and reads of phases that are not ancestors (E0201 reports those).
///
/// Reading both branches of if/else routing in the merge *is* flagged: the branch that did
/// not run is skipped, and its placeholder stays literal too.
pub fn join_any_reads(flow: &Flow, graph: &Graph, all: &[Use<'_>], out: &mut Vec<Diagnostic>) {
    let Some(topo) = &graph.topo else { return };
    let candidates: Vec<(usize, usize)> = all
        .iter()
        .enumerate()
        .filter(|(_, u)| {
            let p = &flow.phases[u.phase];
            p.join == Join::Any && graph.deps[u.phase].len() >= 2
        })
        .filter_map(|(k, u)| {
            let x = u.path.step_id().and_then(|id| flow.index_of(id))?;
            matches!(
                u.path.target,
                crate::syntax::Target::StepOutput | crate::syntax::Target::StepJson
            )
            .then_some((k, x))
        })
        .filter(|&(k, x)| x != all[k].phase)
        .collect();
    if candidates.is_empty() {
        return;
    }
    let queries: Vec<(usize, usize)> = candidates.iter().map(|&(k, x)| (x, all[k].phase)).collect();
    let is_ancestor = ancestors(graph, &queries);
    let mut pos = vec![0usize; graph.len()];
    for (k, &v) in topo.iter().enumerate() {
        pos[v] = k;
    }
    // The reads of each (reader, dependency) pair, in file order: one warning per pair.
    let mut pairs: Vec<((usize, usize), Vec<usize>)> = Vec::new();
    let mut slot: HashMap<(usize, usize), usize> = HashMap::new();
    for (&(k, x), _) in candidates.iter().zip(&is_ancestor).filter(|(_, a)| **a) {
        let key = (all[k].phase, x);
        let at = *slot.entry(key).or_insert_with(|| {
            pairs.push((key, Vec::new()));
            pairs.len() - 1
        });
        pairs[at].1.push(k);
    }
    // Per X read: the phases that end satisfied only after X has ended.
    let mut after: HashMap<usize, Vec<bool>> = HashMap::new();
    for ((reader, x), mut reads) in pairs {
        let ends_after = after.entry(x).or_insert_with(|| {
            let mut set = vec![false; graph.len()];
            set[x] = true;
            for &v in &topo[pos[x] + 1..] {
                let deps = &graph.deps[v];
                set[v] = !deps.is_empty()
                    && match flow.phases[v].join {
                        Join::Any => deps.iter().all(|&d| set[d]),
                        Join::All => deps.iter().any(|&d| set[d]),
                    };
            }
            set
        });
        let Some(&early) = graph.deps[reader].iter().find(|&&d| !ends_after[d]) else {
            continue;
        };
        reads.sort_by_key(|&k| (all[k].span.start, all[k].span.end));
        let p = &flow.phases[reader];
        let xid = &flow.phases[x].id;
        let in_condition = |k: &usize| matches!(&*all[*k].field, "when" | "until" | "eval");
        let effect = match (
            reads.iter().any(|k| !in_condition(k)),
            reads.iter().any(in_condition),
        ) {
            (true, true) => {
                "the placeholder stays verbatim in the prompt, and is undefined in the condition"
            }
            (false, _) => "it is undefined in the condition",
            (true, false) => "the placeholder stays verbatim in the prompt",
        };
        let mut paths: Vec<String> = Vec::new();
        for &k in &reads {
            let text = format!("{{{}}}", all[k].path.text);
            if !paths.contains(&text) {
                paths.push(text);
            }
        }
        let first = &all[reads[0]];
        let mut d = Diagnostic::new(
            Code::JoinAnyUnfinishedRead,
            format!(
                "'{}' joins \"any\" and reads {}: it starts as soon as one dependency is satisfied, and '{xid}' may not have finished by then (then {effect})",
                p.id,
                paths.join(", ")
            ),
        )
        .at(first.span)
        .phase(&p.id)
        .with_label(format!("'{xid}' may still be running, or skipped, when '{}' starts", p.id));
        for &k in &reads[1..] {
            d = d.label(
                all[k].span,
                format!("reads '{xid}' here too ({})", all[k].field),
            );
        }
        if let Some(&join) = p.written.get("join") {
            d = d.label(
                join,
                format!(
                    "starts on the first satisfied dependency, e.g. '{}'",
                    flow.phases[early].id
                ),
            );
        }
        out.push(d.help(format!(
            "read only the dependency that triggers it: {{previous.output}} is the output of the dependency that finished; or use \"join\": \"all\" if '{}' needs '{xid}'",
            p.id
        )));
    }
}
