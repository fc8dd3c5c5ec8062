//! The phase graph as indices: edges `dependsOn ∪ from` resolved to phase positions, built once
//! and shared by every check. All traversals are iterative (flows may hold 100 000 phases).

use std::collections::{HashMap, HashSet};

use foldhash::fast::RandomState;

use crate::flow::Flow;

/// Phase `i`'s dependencies and dependents by index, from the edges lowering resolved
/// ([`Common::deps`](crate::flow::Common::deps)); unknown ids are left out (the DAG check
/// reports them), and so are self-edges (reported on their own, E0105, not as cycles).
pub struct Graph {
    /// `deps[i]`: the phases `i` depends on (dependsOn first, then from, de-duplicated).
    pub deps: Adjacency,
    /// `dependents[i]`: the phases that depend on `i`, in phase order.
    pub dependents: Adjacency,
    /// A topological order (dependencies first), or `None` when the graph has a cycle.
    pub topo: Option<Vec<usize>>,
}

/// One list of phases per phase, all in one vector (`list[i]` is a slice): two allocations
/// for the whole graph instead of one per phase.
pub struct Adjacency {
    /// `starts[i]..starts[i + 1]` is the part of `targets` that is phase `i`'s list.
    starts: Vec<usize>,
    targets: Vec<usize>,
}

impl Adjacency {
    /// The number of lists (phases).
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// No lists?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The lists in phase order.
    pub fn iter(&self) -> impl Iterator<Item = &[usize]> + '_ {
        (0..self.len()).map(move |i| &self[i])
    }
}

impl std::ops::Index<usize> for Adjacency {
    type Output = [usize];
    fn index(&self, i: usize) -> &[usize] {
        &self.targets[self.starts[i]..self.starts[i + 1]]
    }
}

impl Graph {
    /// The graph of `flow`'s resolved edges.
    pub fn new(flow: &Flow) -> Graph {
        let n = flow.phases.len();
        let mut starts = Vec::with_capacity(n + 1);
        starts.push(0);
        let mut targets = Vec::new();
        // How many phases depend on each phase.
        let mut fan_out = vec![0usize; n + 1];
        for (i, p) in flow.phases.iter().enumerate() {
            for j in p.deps.iter().map(|j| j.index()) {
                if j != i && j < n {
                    targets.push(j);
                    fan_out[j + 1] += 1;
                }
            }
            starts.push(targets.len());
        }
        let deps = Adjacency { starts, targets };
        // The dependents' lists, filled in phase order.
        for j in 0..n {
            fan_out[j + 1] += fan_out[j];
        }
        let mut next = fan_out.clone();
        let mut by = vec![0usize; deps.targets.len()];
        for i in 0..n {
            for &j in &deps[i] {
                by[next[j]] = i;
                next[j] += 1;
            }
        }
        let dependents = Adjacency {
            starts: fan_out,
            targets: by,
        };
        let topo = topo_order(&deps, &dependents);
        Graph {
            deps,
            dependents,
            topo,
        }
    }

    /// The number of phases.
    pub fn len(&self) -> usize {
        self.deps.len()
    }

    /// No phases?
    pub fn is_empty(&self) -> bool {
        self.deps.is_empty()
    }
}

/// Kahn's algorithm; `None` if some phases are on a cycle.
fn topo_order(deps: &Adjacency, dependents: &Adjacency) -> Option<Vec<usize>> {
    let mut indegree: Vec<usize> = deps.iter().map(<[usize]>::len).collect();
    let mut order: Vec<usize> = (0..deps.len()).filter(|&i| indegree[i] == 0).collect();
    let mut next = 0;
    while next < order.len() {
        let u = order[next];
        next += 1;
        for &v in &dependents[u] {
            indegree[v] -= 1;
            if indegree[v] == 0 {
                order.push(v);
            }
        }
    }
    (order.len() == deps.len()).then_some(order)
}

/// Answers "is `a` a transitive ancestor of `b`?" for a batch of queries. Queries where `a` is
/// a direct dependency of `b` (the common case: chains and fan-ins) cost O(1). The rest
/// propagate 64-target bitsets along a topological order: targets are sorted by position and
/// taken 64 at a time, and each block walks only the part of the order from its first target
/// to its last asker. That is linear when references reach a bounded distance back (a chain
/// reading a few phases up), and O((V + E) · T / 64) at worst for T distinct far targets.
pub fn ancestors(graph: &Graph, queries: &[(usize, usize)]) -> Vec<bool> {
    let mut answers = vec![false; queries.len()];
    let Some(topo) = &graph.topo.as_ref().filter(|_| !queries.is_empty()) else {
        return answers;
    };
    let mut pos = vec![0usize; graph.len()];
    for (k, &v) in topo.iter().enumerate() {
        pos[v] = k;
    }
    // Direct edges: an asker asked a few times has its dependencies scanned for each query
    // (a fan-in phase may have thousands of them); one asked more often has them put in a
    // set, once.
    const SCANNED: u32 = 8;
    let mut asked = vec![0u32; graph.len()];
    for &(_, b) in queries {
        asked[b] += 1;
    }
    let mut direct: HashSet<(usize, usize), RandomState> = HashSet::default();
    for (b, _) in asked.iter().enumerate().filter(|(_, n)| **n > SCANNED) {
        direct.extend(graph.deps[b].iter().map(|&d| (d, b)));
    }
    let is_direct = |a: usize, b: usize| match asked[b] > SCANNED {
        true => direct.contains(&(a, b)),
        false => graph.deps[b].contains(&a),
    };
    // Queries needing a search, and their distinct targets in topological order.
    let mut pending: Vec<usize> = Vec::new();
    let mut targets: Vec<usize> = Vec::new();
    let mut is_target = vec![false; graph.len()];
    for (qi, &(a, b)) in queries.iter().enumerate() {
        if is_direct(a, b) {
            answers[qi] = true;
        } else if pos[a] < pos[b] {
            pending.push(qi);
            if !std::mem::replace(&mut is_target[a], true) {
                targets.push(a);
            }
        }
    }
    if targets.is_empty() {
        return answers;
    }
    targets.sort_unstable_by_key(|&t| pos[t]);
    let mut slot = vec![0usize; graph.len()];
    for (k, &t) in targets.iter().enumerate() {
        slot[t] = k;
    }
    // The pending queries of each block of 64 targets.
    let mut by_block: Vec<Vec<usize>> = vec![Vec::new(); targets.len().div_ceil(64)];
    for &qi in &pending {
        by_block[slot[queries[qi].0] / 64].push(qi);
    }
    let mut reach = vec![0u64; graph.len()];
    for (chunk, block) in targets.chunks(64).zip(&by_block) {
        let start = pos[chunk[0]];
        let end = block
            .iter()
            .map(|&qi| pos[queries[qi].1])
            .max()
            .unwrap_or(start);
        let range = &topo[start..=end.max(start)];
        for &v in range {
            reach[v] = 0;
        }
        for (bit, &t) in chunk.iter().enumerate() {
            reach[t] |= 1 << bit;
        }
        for &u in range {
            let bits = reach[u];
            if bits != 0 {
                for &v in &graph.dependents[u] {
                    reach[v] |= bits;
                }
            }
        }
        for &qi in block {
            let (a, b) = queries[qi];
            answers[qi] = reach[b] & (1 << (slot[a] % 64)) != 0;
        }
    }
    answers
}

/// Did-you-mean over the phase ids of a flow. Each new word costs a pass over every id, so a
/// flow gets at most [`IdSuggester::BUDGET`] distinct words looked up (repeats are free); the
/// rest go without a suggestion, keeping checks of huge generated flows linear.
pub struct IdSuggester<'f> {
    flow: &'f Flow,
    /// The ids, listed on the first lookup (most checks never need one).
    ids: Vec<&'f str>,
    seen: HashMap<String, Option<&'f str>>,
}

impl<'f> IdSuggester<'f> {
    /// The most distinct words it looks up near ids for (each lookup scans every id).
    pub const BUDGET: usize = 64;

    /// A suggester over the ids of `flow`.
    pub fn new(flow: &'f Flow) -> IdSuggester<'f> {
        IdSuggester {
            flow,
            ids: Vec::new(),
            seen: HashMap::new(),
        }
    }

    /// The id nearest `word`, if one is near enough, never `except`: the phase that holds the
    /// misspelt name (offering it would turn the mistake into a self-reference, E0203/E0105).
    /// Memoised; `None` past the budget.
    pub fn suggest(&mut self, word: &str, except: &str) -> Option<&'f str> {
        let near = self.lookup(word.to_owned(), word, None)?;
        if near != except {
            return Some(near);
        }
        // The phase itself was nearest: the next one, looked up (and counted) on its own.
        self.lookup(format!("{word}\0{except}"), word, Some(except))
    }

    /// The id nearest `word` except `except`, memoised under `key`.
    fn lookup(&mut self, key: String, word: &str, except: Option<&str>) -> Option<&'f str> {
        if let Some(&known) = self.seen.get(&key) {
            return known;
        }
        if self.seen.len() >= Self::BUDGET {
            return None;
        }
        if self.ids.is_empty() {
            self.ids = self.flow.phases.iter().map(|p| p.id.as_str()).collect();
        }
        let ids = self.ids.iter().copied().filter(|id| Some(*id) != except);
        let near = crate::diag::did_you_mean(word, ids);
        self.seen.insert(key, near);
        near
    }
}

#[cfg(test)]
mod tests;
