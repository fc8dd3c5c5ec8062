//! Graph structure (SPEC §7.2 E01xx, W0101, W0102): duplicate ids, unknown and self
//! dependencies, cycles, multiple finals, disconnected phases, dead ends, and gates that are
//! the only route to the final phase. Every pass is linear in phases + edges.

use super::graph::{Graph, IdSuggester};
use crate::diag::{Code, Diagnostic};
use crate::flow::{Flow, Phase, PhaseType};
use crate::source::Span;

/// Step id → the phases whose `when` reads it, each with the span of the first such read.
type WhenReads<'f> =
    std::collections::HashMap<&'f str, Vec<(Span, usize)>, foldhash::fast::RandomState>;

/// Duplicate ids and unknown or self dependencies. Returns whether the ids and edges are
/// reliable enough for the cycle, reference and lint rules.
pub fn identity(flow: &Flow, out: &mut Vec<Diagnostic>) -> bool {
    // A phase left out, or a `dependsOn`/`from` that could not be read (wrong type, or a
    // misspelt key such as `dependOn`): the edges are not what the author wrote.
    let mut reliable = !flow.incomplete
        && flow
            .phases
            .iter()
            .all(|p| !p.invalid.contains(&"dependsOn") && !p.invalid.contains(&"from"));
    // Every id maps to its first phase: only when some id repeats are there duplicates.
    let repeated = flow.ids.len() < flow.phases.len();
    for (i, p) in flow.phases.iter().enumerate().filter(|_| repeated) {
        if let Some(j) = flow.index_of(&p.id).filter(|&j| j != i) {
            reliable = false;
            out.push(
                Diagnostic::new(
                    Code::DuplicatePhaseId,
                    format!("duplicate phase id '{}'", p.id),
                )
                .at(p.id_span)
                .phase(&p.id)
                .with_label("used again here")
                .label(flow.phases[j].id_span, "first used here")
                .help("phase ids must be unique; rename one of them"),
            );
        }
    }
    let mut names = IdSuggester::new(flow);
    for p in &flow.phases {
        // Every name written resolved to a distinct other phase: nothing to report.
        if p.deps.len() == p.depends_on.len() + p.from.len()
            && p.deps.iter().all(|d| flow.phases[d.index()].id != p.id)
        {
            continue;
        }
        for (field, list) in [("dependsOn", &p.depends_on), ("from", &p.from)] {
            for dep in list {
                if dep.value == p.id {
                    out.push(
                        Diagnostic::new(
                            Code::SelfDependency,
                            format!("{}: {field} lists the phase itself", p.id),
                        )
                        .at(dep.span)
                        .phase(&p.id)
                        .with_label("depends on itself")
                        .help("remove it: a phase cannot wait for its own output"),
                    );
                } else if flow.index_of(&dep.value).is_none() {
                    reliable = false;
                    let mut d = Diagnostic::new(
                        Code::UnknownDependency,
                        format!("{}: {field} unknown phase '{}'", p.id, dep.value),
                    )
                    .at(dep.span)
                    .phase(&p.id)
                    .with_label("no phase has this id");
                    d = d.help(match names.suggest(&dep.value, &p.id) {
                        Some(s) => format!("did you mean '{s}'?"),
                        None => format!(
                            "depend on the id of a phase in this flow, or remove '{}'",
                            dep.value
                        ),
                    });
                    out.push(d);
                }
            }
        }
    }
    reliable
}

/// Report every cycle once: walk dependencies from each phase left over by the topological
/// sort; every such walk ends on a cycle.
pub fn cycles(flow: &Flow, graph: &Graph, out: &mut Vec<Diagnostic>) {
    if graph.topo.is_some() {
        return;
    }
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        OnPath,
        Done,
    }
    let mut state = vec![State::New; graph.len()];
    for start in 0..graph.len() {
        if state[start] != State::New {
            continue;
        }
        // Iterative DFS over dependencies, keeping the current path.
        let mut path: Vec<usize> = vec![start];
        let mut next_edge: Vec<usize> = vec![0];
        state[start] = State::OnPath;
        while let Some(&u) = path.last() {
            let k = next_edge.last_mut().expect("parallel stacks");
            if let Some(&v) = graph.deps[u].get(*k) {
                *k += 1;
                match state[v] {
                    State::New => {
                        state[v] = State::OnPath;
                        path.push(v);
                        next_edge.push(0);
                    }
                    State::OnPath => {
                        let at = path.iter().position(|&x| x == v).expect("on path");
                        report_cycle(flow, &path[at..], out);
                    }
                    State::Done => {}
                }
            } else {
                state[u] = State::Done;
                path.pop();
                next_edge.pop();
            }
        }
    }
}

fn report_cycle(flow: &Flow, cycle: &[usize], out: &mut Vec<Diagnostic>) {
    let ids: Vec<&str> = cycle.iter().map(|&i| flow.phases[i].id.as_str()).collect();
    let mut text = ids.join(" -> ");
    text.push_str(" -> ");
    text.push_str(ids[0]);
    let mut d = Diagnostic::new(Code::DependencyCycle, format!("Dependency cycle detected: {text}"))
        .phase(ids[0])
        .help("a flow must be acyclic: remove one of these dependencies (use a loop phase to repeat work)");
    for (k, &i) in cycle.iter().enumerate() {
        let p = &flow.phases[i];
        let target = ids[(k + 1) % ids.len()];
        if let Some(edge) = p
            .depends_on
            .iter()
            .chain(&p.from)
            .find(|e| e.value == target)
        {
            let msg = format!("'{}' depends on '{target}'", p.id);
            if d.span.is_none() {
                d = d.at(edge.span).with_label(msg);
            } else {
                d = d.label(edge.span, msg);
            }
        }
    }
    out.push(d);
}

/// More than one `final: true` (E0106).
pub fn finals(flow: &Flow, out: &mut Vec<Diagnostic>) {
    let finals: Vec<_> = flow.phases.iter().filter(|p| p.is_final).collect();
    if finals.len() < 2 {
        return;
    }
    let span_of = |p: &Phase| p.written.get("final").copied().unwrap_or(p.id_span);
    let mut d = Diagnostic::new(
        Code::MultipleFinal,
        format!(
            "Only one phase may be marked 'final' (found {})",
            finals.len()
        ),
    )
    .at(span_of(finals[1]))
    .phase(&finals[1].id)
    .with_label(format!("'{}' is final", finals[1].id))
    .help("keep 'final: true' on the phase whose output the flow returns");
    for p in finals
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != 1)
        .map(|(_, p)| p)
    {
        d = d.label(span_of(p), format!("'{}' is final too", p.id));
    }
    out.push(d);
}

/// Phases outside the largest weakly-connected component that have edges (E0107). Returns
/// which phases are outside it (with or without edges), so other lints can leave them alone.
pub fn connectivity(flow: &Flow, graph: &Graph, out: &mut Vec<Diagnostic>) -> Vec<bool> {
    let n = graph.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for (i, deps) in graph.deps.iter().enumerate() {
        for &j in deps {
            let (a, b) = (find(&mut parent, i), find(&mut parent, j));
            if a != b {
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut size = vec![0usize; n];
    let roots: Vec<usize> = (0..n).map(|i| find(&mut parent, i)).collect();
    for &r in &roots {
        size[r] += 1;
    }
    // Largest component; ties go to the one holding the earliest phase (roots are minimal).
    let Some(main) = (0..n)
        .filter(|&i| roots[i] == i)
        .max_by(|&a, &b| size[a].cmp(&size[b]).then(b.cmp(&a)))
    else {
        return Vec::new();
    };
    for (i, p) in flow.phases.iter().enumerate() {
        let has_edges = !graph.deps[i].is_empty() || !graph.dependents[i].is_empty();
        if roots[i] != main && has_edges {
            out.push(
                Diagnostic::new(
                    Code::DisconnectedPhase,
                    format!("Phase '{}' is disconnected from the main DAG", p.id),
                )
                .at(p.id_span)
                .phase(&p.id)
                .with_label("not connected to the other phases")
                .help("connect it to the main graph with dependsOn, or remove it"),
            );
        }
    }
    roots.iter().map(|&r| r != main).collect()
}

/// Terminal phases that are not final (W0101); `disconnected` ones already have E0107.
pub fn dead_ends(flow: &Flow, graph: &Graph, disconnected: &[bool], out: &mut Vec<Diagnostic>) {
    let implicit = flow.final_phase();
    for (i, p) in flow.phases.iter().enumerate() {
        let reported = disconnected.get(i).copied().unwrap_or(false)
            && !(graph.deps[i].is_empty() && graph.dependents[i].is_empty());
        if graph.dependents[i].is_empty() && !p.is_final && Some(i) != implicit && !reported {
            out.push(
                Diagnostic::new(
                    Code::DeadEnd,
                    format!("Phase '{}' is a terminal phase (no dependents) but not marked as 'final'. Its output will be discarded.", p.id),
                )
                .at(p.id_span)
                .phase(&p.id)
                .with_label("nothing depends on this phase")
                .help("make a later phase depend on it, mark it \"final\": true, or remove it"),
            );
        }
    }
}

/// W0102, only where a gate on every route to the final phase is likely a mistake.
///
/// A gate (or approval) exists to block, and a block halts the whole run (SPEC §8.3): every
/// phase not yet started is skipped, whatever route it is on. Standing on every path to the
/// final phase is therefore the ordinary use of a gate and is not reported by itself. It is
/// reported when the flow also shows that its author expects the run to go on after a block:
///
/// * the gate is `optional: true` — `optional` tolerates a failed call, never a block (§3.5);
/// * a phase on a route from the gate to the final phase (the final phase included) has a
///   `when` that reads the gate's result (`{steps.G…}`): it routes on the verdict, but after a
///   block it never starts, so only a pass ever reaches that condition.
///
/// The final phase is the explicit one, else the last (a mistaken expectation is one either
/// way). "On every path" = the gate dominates the final phase: dominators of a DAG in one pass
/// over a topological order, with a virtual root above the entry phases.
pub fn gate_sole_path(flow: &Flow, graph: &Graph, out: &mut Vec<Diagnostic>) {
    let (Some(topo), Some(fin)) = (&graph.topo, flow.final_phase()) else {
        return;
    };
    // Only a gate or an approval can be reported.
    let blocking = |p: &Phase| matches!(p.ty(), PhaseType::Gate | PhaseType::Approval);
    if !flow.phases.iter().any(blocking) {
        return;
    }
    const ROOT: usize = usize::MAX;
    let mut pos = vec![0usize; graph.len()];
    for (k, &v) in topo.iter().enumerate() {
        pos[v] = k;
    }
    let mut idom = vec![ROOT; graph.len()];
    let intersect = |idom: &[usize], mut a: usize, mut b: usize| -> usize {
        while a != b {
            if a == ROOT || b == ROOT {
                return ROOT;
            }
            if pos[a] > pos[b] {
                a = idom[a];
            } else {
                b = idom[b];
            }
        }
        a
    };
    for &v in topo {
        let mut preds = graph.deps[v].iter().copied();
        idom[v] = match preds.next() {
            None => ROOT,
            Some(first) => preds.fold(first, |acc, p| intersect(&idom, acc, p)),
        };
    }
    let fin_phase = &flow.phases[fin];
    // The final phase and its ancestors: the phases a route to it passes through.
    let mut leads_to_final = vec![false; graph.len()];
    let mut stack = vec![fin];
    while let Some(v) = stack.pop() {
        if !std::mem::replace(&mut leads_to_final[v], true) {
            stack.extend(graph.deps[v].iter().copied());
        }
    }
    // Built at the first gate on every route, once for all of them.
    let mut reads = None;
    let mut cur = idom[fin];
    while cur != ROOT {
        let g = &flow.phases[cur];
        if blocking(g) {
            let what = format!("{} '{}'", g.ty().as_str(), g.id);
            if g.optional {
                out.push(
                    Diagnostic::new(
                        Code::GateSolePath,
                        format!("{what} is optional, but a block still halts the run: it is on every path to the final phase '{}'", fin_phase.id),
                    )
                    .at(g.written.get("optional").copied().unwrap_or(g.id_span))
                    .with_label("optional does not let the run go on after a block")
                    .label(fin_phase.id_span, "never reached after a block")
                    .phase(&g.id)
                    .help("remove \"optional\" if a block should stop the run; if the run must go on whatever the verdict, ask for it in an agent phase with \"output\": \"json\" and route on that with \"when\""),
                );
            }
            let reads = reads.get_or_insert_with(|| when_reads(flow, &leads_to_final));
            let routed = routed_on(flow, cur, &pos, reads);
            if let Some(((span, p), others)) = routed.split_first() {
                let mut d = Diagnostic::new(
                    Code::GateSolePath,
                    format!("'{}' routes on the result of {what}, but a block halts the run before any phase after it starts: only a pass reaches this condition", p.id),
                )
                .at(*span)
                .with_label(format!("reads the result of '{}'", g.id))
                .label(g.id_span, "a block here halts the whole run")
                .phase(&p.id);
                for (span, other) in others {
                    d = d.label(*span, format!("'{}' routes on it too", other.id));
                }
                out.push(d.help(format!("to act on a negative verdict, ask for it in an agent phase with \"output\": \"json\" and route on that; once '{}' blocks, nothing after it runs", g.id)));
            }
        }
        cur = idom[cur];
    }
}

/// For each step id read by the `when` of a phase on a route to the final phase: those phases,
/// each with the span of its first placeholder of that step, in phase order. One pass over
/// the phases, so that asking it about every gate stays linear.
fn when_reads<'f>(flow: &'f Flow, leads_to_final: &[bool]) -> WhenReads<'f> {
    let mut reads = WhenReads::default();
    for (v, p) in flow.phases.iter().enumerate() {
        if p.when.is_none() || !leads_to_final[v] {
            continue;
        }
        for u in super::refs::uses(v, p) {
            let Some(id) = u.path.step_id().filter(|_| u.field == "when") else {
                continue;
            };
            let list = reads.entry(id).or_default();
            if list.last().is_none_or(|&(_, w)| w != v) {
                list.push((u.span, v));
            }
        }
    }
    reads
}

/// The phases after gate `g` on a route to the final phase whose `when` reads `{steps.G…}`,
/// each with the span of its first such placeholder. `g` is on every route to the final
/// phase, so a phase on such a route is after `g` exactly when it is later in topological
/// order (an earlier one leads to `g`).
fn routed_on<'f>(
    flow: &'f Flow,
    g: usize,
    pos: &[usize],
    when_reads: &WhenReads<'_>,
) -> Vec<(Span, &'f Phase)> {
    let Some(reads) = when_reads.get(flow.phases[g].id.as_str()) else {
        return Vec::new();
    };
    let mut found: Vec<_> = reads
        .iter()
        .filter(|&&(_, v)| pos[v] > pos[g])
        .map(|&(span, v)| (span, &flow.phases[v]))
        .collect();
    found.sort_by_key(|(span, _)| span.start);
    found
}

#[cfg(test)]
mod tests;
