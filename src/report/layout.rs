//! Layered drawing of a directed graph (the Sugiyama scheme), shared by `tfc graph --format
//! svg` and the HTML run report (SPEC §11.5).
//!
//! 1. Cycles (only in flows with check errors) are broken by reversing the back edges of a
//!    depth-first search.
//! 2. Ranks: longest path from the sources; a source then moves down next to its first
//!    dependent so that it does not hang at the top with one long edge.
//! 3. Edges spanning several ranks are cut into one segment per rank by dummy nodes.
//! 4. Crossings: barycenter sweeps, down and up, each layer stably sorted by the mean position of
//!    its neighbours in the layer just placed.
//! 5. Coordinates: layers stacked along the rank axis; along each layer every node is pulled to
//!    the mean centre of its neighbours by an isotonic regression (pool adjacent violators) that
//!    keeps the order and the minimum gaps — least squares, linear time per layer.
//!
//! Every step is linear in nodes + segments (the sorts aside), so a 10,000-phase flow lays out
//! in milliseconds.

/// Which way ranks grow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Orientation {
    /// Ranks stacked top to bottom.
    #[default]
    TopDown,
    /// Ranks stacked left to right.
    LeftRight,
}

/// The graph to draw: node sizes and edges by node index.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Width and height of each node.
    pub sizes: Vec<(f64, f64)>,
    /// `(from, to)` pairs; self-loops and out-of-range indices are not drawn.
    pub edges: Vec<(usize, usize)>,
    /// Where edges attach, per node (optional): the centre of the attachment span measured from
    /// the box's start along the layer, and the span's length. Several edges on one side of a
    /// node are spread over the span, ordered by where they come from. Default: the middle 60%.
    pub ports: Vec<(f64, f64)>,
}

/// A placed box: top-left corner and size.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rect {
    /// Left.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    /// The centre point.
    pub fn center(&self) -> (f64, f64) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }
}

/// The drawing: one rectangle per node, one polyline per edge (from the source's border to the
/// target's; empty for edges that are not drawn), and the size of the whole.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// Node boxes, by node index.
    pub nodes: Vec<Rect>,
    /// Edge polylines, by edge index.
    pub edges: Vec<Vec<(f64, f64)>>,
    /// Total width, margins included.
    pub width: f64,
    /// Total height, margins included.
    pub height: f64,
}

/// Space around the drawing.
pub const MARGIN: f64 = 16.0;
/// Space between two ranks.
const RANK_GAP: f64 = 56.0;
/// Space between two real nodes of one layer.
const NODE_GAP: f64 = 24.0;
/// Space next to a dummy (an edge passing through a layer).
const DUMMY_GAP: f64 = 12.0;
/// Dummy nodes allowed beyond 20 per real node.
const DUMMY_BUDGET: usize = 100_000;
/// Barycenter sweeps (each one down and one up); fewer on very large graphs.
const SWEEPS: usize = 8;

/// One node of the layered graph: a real node or a dummy on a long edge.
#[derive(Clone, Copy)]
struct Vnode {
    /// Extent along the layer (width top-down) and along the rank axis.
    cross: f64,
    main: f64,
    rank: usize,
}

/// Lay `g` out.
///
/// ```
/// use tfc::report::layout::{Graph, Orientation, layout};
/// let g = Graph { sizes: vec![(80.0, 40.0); 3], edges: vec![(0, 1), (0, 2)], ports: vec![] };
/// let l = layout(&g, Orientation::TopDown);
/// assert!(l.nodes[1].y > l.nodes[0].y + 40.0);
/// assert_eq!(l.nodes[1].y, l.nodes[2].y);
/// assert_eq!(l.edges[0].len(), 2);
/// ```
pub fn layout(g: &Graph, orientation: Orientation) -> Layout {
    let n = g.sizes.len();
    let edges: Vec<(usize, usize)> = g
        .edges
        .iter()
        .map(|&(a, b)| {
            if a < n && b < n && a != b {
                (a, b)
            } else {
                (usize::MAX, usize::MAX)
            }
        })
        .collect();
    let reversed = back_edges(n, &edges);
    // Edges pointing down the ranks.
    let acyclic: Vec<(usize, usize)> = edges
        .iter()
        .zip(&reversed)
        .map(|(&(a, b), &r)| if r { (b, a) } else { (a, b) })
        .collect();
    let rank = ranks(n, &acyclic);

    // (along the layer, along the rank axis)
    let extent = |&(w, h): &(f64, f64)| match orientation {
        Orientation::TopDown => (w, h),
        Orientation::LeftRight => (h, w),
    };
    let mut v: Vec<Vnode> = g
        .sizes
        .iter()
        .zip(&rank)
        .map(|(s, &r)| {
            let (cross, main) = extent(s);
            Vnode {
                cross: cross.max(0.0),
                main: main.max(0.0),
                rank: r,
            }
        })
        .collect();
    // Segments between consecutive ranks, and each edge's chain of virtual nodes.
    let mut segs: Vec<(usize, usize)> = Vec::new();
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(edges.len());
    // Dummies are linear in practice, but a chain whose every phase also feeds the last one
    // would need n²/2: past this budget a long edge is drawn straight, outside the ordering.
    let mut budget = DUMMY_BUDGET + 20 * n;
    for &(a, b) in &acyclic {
        if a == usize::MAX {
            chains.push(Vec::new());
            continue;
        }
        let span = rank[b] - rank[a] - 1;
        if span > budget {
            chains.push(vec![a, b]);
            continue;
        }
        budget -= span;
        let mut chain = vec![a];
        let mut prev = a;
        for r in rank[a] + 1..rank[b] {
            v.push(Vnode {
                cross: 0.0,
                main: 0.0,
                rank: r,
            });
            let d = v.len() - 1;
            segs.push((prev, d));
            chain.push(d);
            prev = d;
        }
        segs.push((prev, b));
        chain.push(b);
        chains.push(chain);
    }
    let total = v.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); total];
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); total];
    for &(a, b) in &segs {
        succs[a].push(b);
        preds[b].push(a);
    }
    let layers_n = v.iter().map(|x| x.rank + 1).max().unwrap_or(0);
    let mut layers: Vec<Vec<usize>> = vec![Vec::new(); layers_n];
    for (i, x) in v.iter().enumerate() {
        layers[x.rank].push(i);
    }
    let mut pos = vec![0usize; total];
    order(&mut layers, &mut pos, &preds, &succs, total);

    // Coordinates along the rank axis.
    let mut main_at = vec![0.0; layers_n];
    let mut thick = vec![0.0f64; layers_n];
    for (r, layer) in layers.iter().enumerate() {
        thick[r] = layer.iter().map(|&i| v[i].main).fold(0.0, f64::max);
    }
    let mut at = MARGIN;
    for r in 0..layers_n {
        main_at[r] = at;
        at += thick[r] + RANK_GAP;
    }
    let main_total = if layers_n == 0 {
        2.0 * MARGIN
    } else {
        at - RANK_GAP + MARGIN
    };

    // Coordinates along the layers: centres.
    let center = place(&layers, &v, &preds, &succs);
    let min_left = (0..total)
        .map(|i| center[i] - v[i].cross / 2.0)
        .fold(f64::INFINITY, f64::min);
    let shift = if min_left.is_finite() {
        MARGIN - min_left
    } else {
        0.0
    };
    let cross_total = (0..total)
        .map(|i| center[i] + v[i].cross / 2.0 + shift)
        .fold(0.0, f64::max)
        + MARGIN;

    // Real nodes: centred in their layer's band along the rank axis.
    let boxes: Vec<(f64, f64, f64, f64)> = (0..total)
        .map(|i| {
            let x = &v[i];
            let c0 = center[i] + shift - x.cross / 2.0;
            let m0 = main_at[x.rank] + (thick[x.rank] - x.main) / 2.0;
            (c0, m0, x.cross, x.main)
        })
        .collect();
    let to_rect = |&(c0, m0, cw, mw): &(f64, f64, f64, f64)| match orientation {
        Orientation::TopDown => Rect {
            x: c0,
            y: m0,
            w: cw,
            h: mw,
        },
        Orientation::LeftRight => Rect {
            x: m0,
            y: c0,
            w: mw,
            h: cw,
        },
    };
    let nodes: Vec<Rect> = boxes[..n].iter().map(to_rect).collect();
    let point = |c: f64, m: f64| match orientation {
        Orientation::TopDown => (c, m),
        Orientation::LeftRight => (m, c),
    };
    // Ports: the edges leaving (entering) a node spread along its border, ordered by the
    // position of the next (previous) node of their chain.
    let port = |i: usize| {
        g.ports
            .get(i)
            .copied()
            .unwrap_or((v[i].cross / 2.0, v[i].cross * 0.6))
    };
    let mut out_ports: Vec<Vec<(f64, usize)>> = vec![Vec::new(); n];
    let mut in_ports: Vec<Vec<(f64, usize)>> = vec![Vec::new(); n];
    for (k, chain) in chains.iter().enumerate() {
        if let [first, second, ..] = chain[..] {
            out_ports[first].push((center[second], k));
        }
        if let [.., before, last] = chain[..] {
            in_ports[last].push((center[before], k));
        }
    }
    let mut out_at = vec![0.0; chains.len()];
    let mut in_at = vec![0.0; chains.len()];
    for (ports, at) in [(&mut out_ports, &mut out_at), (&mut in_ports, &mut in_at)] {
        for (i, list) in ports.iter_mut().enumerate() {
            list.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (mid, span) = port(i);
            let start = boxes[i].0 + mid;
            let k = list.len() as f64;
            for (j, &(_, e)) in list.iter().enumerate() {
                at[e] = start + span * ((j as f64 + 1.0) / (k + 1.0) - 0.5);
            }
        }
    }
    let edges_out = chains
        .iter()
        .zip(&reversed)
        .enumerate()
        .map(|(k, (chain, &rev))| {
            let (Some(&first), Some(&last)) = (chain.first(), chain.last()) else {
                return Vec::new();
            };
            let mut pts = Vec::with_capacity(chain.len() * 2);
            let (_, m, _, mw) = boxes[first];
            pts.push(point(out_at[k], m + mw));
            for &d in &chain[1..chain.len() - 1] {
                let (c, _, _, _) = boxes[d];
                let r = v[d].rank;
                // A dummy runs straight through its layer's band.
                pts.push(point(c, main_at[r]));
                pts.push(point(c, main_at[r] + thick[r]));
            }
            let (_, m, _, _) = boxes[last];
            pts.push(point(in_at[k], m));
            if rev {
                pts.reverse();
            }
            pts
        })
        .collect();
    let (width, height) = match orientation {
        Orientation::TopDown => (cross_total.max(2.0 * MARGIN), main_total),
        Orientation::LeftRight => (main_total, cross_total.max(2.0 * MARGIN)),
    };
    Layout {
        nodes,
        edges: edges_out,
        width,
        height,
    }
}

/// Which edges a depth-first search (from each unvisited node in index order) finds pointing
/// back to a node still on its stack. Iterative: deep chains do not touch the call stack.
fn back_edges(n: usize, edges: &[(usize, usize)]) -> Vec<bool> {
    let mut out: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (k, &(a, b)) in edges.iter().enumerate() {
        if a != usize::MAX {
            out[a].push((b, k));
        }
    }
    // 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; n];
    let mut reversed = vec![false; edges.len()];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for s in 0..n {
        if state[s] != 0 {
            continue;
        }
        state[s] = 1;
        stack.push((s, 0));
        while let Some(&mut (u, ref mut next)) = stack.last_mut() {
            if let Some(&(w, k)) = out[u].get(*next) {
                *next += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => reversed[k] = true,
                    _ => {}
                }
            } else {
                state[u] = 2;
                stack.pop();
            }
        }
    }
    reversed
}

/// Longest-path ranks of an acyclic edge list, then sources moved down to just above their
/// nearest dependent.
fn ranks(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut indeg = vec![0usize; n];
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        if a != usize::MAX {
            out[a].push(b);
            indeg[b] += 1;
        }
    }
    let sources: Vec<bool> = indeg.iter().map(|&d| d == 0).collect();
    let mut rank = vec![0usize; n];
    let mut queue: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut head = 0;
    while head < queue.len() {
        let u = queue[head];
        head += 1;
        for &w in &out[u] {
            rank[w] = rank[w].max(rank[u] + 1);
            indeg[w] -= 1;
            if indeg[w] == 0 {
                queue.push(w);
            }
        }
    }
    for u in 0..n {
        if sources[u]
            && let Some(lowest) = out[u].iter().map(|&w| rank[w]).min()
        {
            rank[u] = lowest.saturating_sub(1);
        }
    }
    rank
}

/// Barycenter sweeps over `layers`; `pos` ends as each node's index within its layer.
fn order(
    layers: &mut [Vec<usize>],
    pos: &mut [usize],
    preds: &[Vec<usize>],
    succs: &[Vec<usize>],
    total: usize,
) {
    let set_pos = |layer: &[usize], pos: &mut [usize]| {
        for (k, &i) in layer.iter().enumerate() {
            pos[i] = k;
        }
    };
    for layer in layers.iter() {
        set_pos(layer, pos);
    }
    let sweeps = if total > 50_000 { 1 } else { SWEEPS };
    let mut keys: Vec<f64> = vec![0.0; total];
    // The sweeps may make things worse again: keep the order with the fewest crossings.
    let mut best_count = crossings(layers, pos, succs);
    let mut best: Option<Vec<Vec<usize>>> = None;
    for _ in 0..sweeps {
        if best_count == 0 {
            break;
        }
        for down in [true, false] {
            let range: Box<dyn Iterator<Item = usize>> = if down {
                Box::new(1..layers.len())
            } else {
                Box::new((0..layers.len().saturating_sub(1)).rev())
            };
            for r in range {
                let layer = &mut layers[r];
                for &i in layer.iter() {
                    let nb = if down { &preds[i] } else { &succs[i] };
                    keys[i] = if nb.is_empty() {
                        pos[i] as f64
                    } else {
                        nb.iter().map(|&j| pos[j] as f64).sum::<f64>() / nb.len() as f64
                    };
                }
                // Stable: ties keep the current order.
                layer.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]));
                set_pos(layer, pos);
            }
        }
        let count = crossings(layers, pos, succs);
        if count < best_count {
            best_count = count;
            best = Some(layers.to_vec());
        }
    }
    if let Some(best) = best {
        for (layer, b) in layers.iter_mut().zip(best) {
            *layer = b;
            set_pos(layer, pos);
        }
    }
}

/// Edge crossings between consecutive layers: for each pair, the inversions among the
/// segments' lower ends once sorted by their upper ends, counted with a Fenwick tree
/// (O(E log V)).
fn crossings(layers: &[Vec<usize>], pos: &[usize], succs: &[Vec<usize>]) -> u64 {
    let mut total = 0u64;
    let mut ends: Vec<(usize, usize)> = Vec::new();
    let mut tree: Vec<u64> = Vec::new();
    for r in 0..layers.len().saturating_sub(1) {
        ends.clear();
        for &a in &layers[r] {
            for &b in &succs[a] {
                ends.push((pos[a], pos[b]));
            }
        }
        ends.sort_unstable();
        let width = layers[r + 1].len();
        tree.clear();
        tree.resize(width + 1, 0);
        for (seen, &(_, b)) in ends.iter().enumerate() {
            // Segments already seen whose lower end lies right of b cross this one.
            let mut not_right = 0u64;
            let mut k = b + 1;
            while k > 0 {
                not_right += tree[k];
                k &= k - 1;
            }
            total += seen as u64 - not_right;
            let mut k = b + 1;
            while k <= width {
                tree[k] += 1;
                k += k & k.wrapping_neg();
            }
        }
    }
    total
}

/// Node centres along the layers: packed first, then a few passes pulling each layer to its
/// neighbours' mean centre under the order and gap constraints.
fn place(
    layers: &[Vec<usize>],
    v: &[Vnode],
    preds: &[Vec<usize>],
    succs: &[Vec<usize>],
) -> Vec<f64> {
    let mut center = vec![0.0; v.len()];
    let gap = |a: usize, b: usize| {
        let dummy = v[a].cross == 0.0 || v[b].cross == 0.0;
        (v[a].cross + v[b].cross) / 2.0 + if dummy { DUMMY_GAP } else { NODE_GAP }
    };
    for layer in layers {
        let mut at = 0.0;
        for (k, &i) in layer.iter().enumerate() {
            if k > 0 {
                at += gap(layer[k - 1], i);
            }
            center[i] = at;
        }
    }
    // Centre each layer on the widest one before pulling.
    let widest = layers
        .iter()
        .map(|l| l.last().map_or(0.0, |&i| center[i]))
        .fold(0.0, f64::max);
    for layer in layers {
        let w = layer.last().map_or(0.0, |&i| center[i]);
        for &i in layer {
            center[i] += (widest - w) / 2.0;
        }
    }
    let mut desired = vec![0.0; v.len()];
    let passes = [true, false, true, false, true];
    for down in passes {
        let range: Box<dyn Iterator<Item = &Vec<usize>>> = if down {
            Box::new(layers.iter())
        } else {
            Box::new(layers.iter().rev())
        };
        for layer in range {
            for &i in layer {
                let nb = if down { &preds[i] } else { &succs[i] };
                desired[i] = if nb.is_empty() {
                    center[i]
                } else {
                    nb.iter().map(|&j| center[j]).sum::<f64>() / nb.len() as f64
                };
            }
            fit(layer, &desired, &mut center, &gap);
        }
    }
    center
}

/// Least-squares centres for one layer: as close to `desired` as possible while keeping the
/// layer's order and each pair's minimum gap. With `offset[k]` the packed position of node `k`,
/// the problem becomes an isotonic regression of `desired - offset`, solved by pooling adjacent
/// violators.
fn fit(layer: &[usize], desired: &[f64], center: &mut [f64], gap: &impl Fn(usize, usize) -> f64) {
    if layer.is_empty() {
        return;
    }
    let mut offset = Vec::with_capacity(layer.len());
    let mut at = 0.0;
    for (k, &i) in layer.iter().enumerate() {
        if k > 0 {
            at += gap(layer[k - 1], i);
        }
        offset.push(at);
    }
    // Blocks of (sum, count), each block's value = mean.
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(layer.len());
    for (k, &i) in layer.iter().enumerate() {
        blocks.push((desired[i] - offset[k], 1.0, 1));
        while blocks.len() > 1 {
            let (s1, c1, n1) = blocks[blocks.len() - 1];
            let (s0, c0, n0) = blocks[blocks.len() - 2];
            if s0 / c0 <= s1 / c1 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (s0 + s1, c0 + c1, n0 + n1);
        }
    }
    let mut k = 0;
    for (s, c, len) in blocks {
        let value = s / c;
        for _ in 0..len {
            center[layer[k]] = value + offset[k];
            k += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxes(n: usize) -> Vec<(f64, f64)> {
        vec![(80.0, 40.0); n]
    }

    fn overlap(a: &Rect, b: &Rect) -> bool {
        a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
    }

    #[test]
    fn a_chain_is_one_column() {
        let g = Graph {
            sizes: boxes(4),
            edges: vec![(0, 1), (1, 2), (2, 3)],
            ports: vec![],
        };
        let l = layout(&g, Orientation::TopDown);
        for w in l.nodes.windows(2) {
            assert_eq!(w[0].x, w[1].x);
            assert!(w[1].y >= w[0].y + w[0].h + RANK_GAP - 1e-9);
        }
        assert_eq!(l.edges[0], vec![(56.0, 56.0), (56.0, 112.0)]);
        assert_eq!(l.width, 80.0 + 2.0 * MARGIN);
    }

    #[test]
    fn left_right_swaps_the_axes() {
        let g = Graph {
            sizes: vec![(100.0, 30.0); 2],
            edges: vec![(0, 1)],
            ports: vec![],
        };
        let l = layout(&g, Orientation::LeftRight);
        assert_eq!(l.nodes[0].y, l.nodes[1].y);
        assert!(l.nodes[1].x >= l.nodes[0].x + 100.0 + RANK_GAP - 1e-9);
        assert_eq!(l.edges[0].first(), Some(&(116.0, 31.0)));
    }

    #[test]
    fn no_two_nodes_overlap_and_every_edge_points_down() {
        // A diamond with a long edge and a fan.
        let g = Graph {
            sizes: (0..9).map(|k| (60.0 + 10.0 * k as f64, 40.0)).collect(),
            edges: vec![
                (0, 1),
                (0, 2),
                (1, 3),
                (2, 3),
                (0, 3),
                (3, 4),
                (3, 5),
                (3, 6),
                (4, 7),
                (0, 7),
                (8, 7),
            ],
            ports: vec![],
        };
        let l = layout(&g, Orientation::TopDown);
        for (i, a) in l.nodes.iter().enumerate() {
            for b in &l.nodes[i + 1..] {
                assert!(!overlap(a, b), "{a:?} {b:?}");
            }
        }
        for (k, &(a, b)) in g.edges.iter().enumerate() {
            assert!(l.nodes[b].y > l.nodes[a].y, "edge {k}");
            let pts = &l.edges[k];
            assert!(pts.windows(2).all(|w| w[1].1 >= w[0].1), "{pts:?}");
            assert_eq!(pts[0].1, l.nodes[a].y + 40.0);
            assert_eq!(pts[pts.len() - 1].1, l.nodes[b].y);
        }
        // The long edge 0→7 passes ranks 1, 2 and 3 through dummies: 2 + 3·2 points.
        assert_eq!(l.edges[9].len(), 8);
        // The source 8 sits just above its only dependent.
        assert_eq!(l.nodes[8].y, l.nodes[4].y);
        assert!(
            l.nodes
                .iter()
                .all(|r| r.x + r.w <= l.width && r.y + r.h <= l.height)
        );
    }

    #[test]
    fn crossings_are_removed_from_a_twisted_bipartite_graph() {
        // 0→5, 1→4, 2→3: packed in index order this crosses three times.
        let g = Graph {
            sizes: boxes(6),
            edges: vec![(0, 5), (1, 4), (2, 3)],
            ports: vec![],
        };
        let l = layout(&g, Orientation::TopDown);
        let x = |i: usize| l.nodes[i].x;
        assert!(x(0) < x(1) && x(1) < x(2));
        assert!(x(5) < x(4) && x(4) < x(3), "{:?}", l.nodes);
    }

    #[test]
    fn cycles_and_bad_edges_are_drawn_without_hanging() {
        let g = Graph {
            sizes: boxes(3),
            edges: vec![(0, 1), (1, 2), (2, 0), (1, 1), (0, 9)],
            ports: vec![],
        };
        let l = layout(&g, Orientation::TopDown);
        assert_eq!(l.nodes.len(), 3);
        assert!(l.edges[3].is_empty() && l.edges[4].is_empty());
        // The back edge runs upwards, from 2's top to 0's bottom.
        let back = &l.edges[2];
        assert_eq!(back.first().map(|p| p.1), Some(l.nodes[2].y));
        assert_eq!(back.last().map(|p| p.1), Some(l.nodes[0].y + 40.0));
    }

    #[test]
    fn crossings_are_counted() {
        // Layer 0: 0 1 2; layer 1: 3 4 5. 0→5, 1→4, 2→3 cross pairwise: 3.
        let layers = vec![vec![0, 1, 2], vec![3, 4, 5]];
        let pos = vec![0, 1, 2, 0, 1, 2];
        let succs = vec![vec![5], vec![4], vec![3], vec![], vec![], vec![]];
        assert_eq!(crossings(&layers, &pos, &succs), 3);
        let succs = vec![vec![3, 4], vec![4], vec![5], vec![], vec![], vec![]];
        assert_eq!(crossings(&layers, &pos, &succs), 0);
        // Shared end points do not cross.
        let succs = vec![vec![4], vec![4], vec![3], vec![], vec![], vec![]];
        assert_eq!(crossings(&layers, &pos, &succs), 2);
    }

    #[test]
    fn an_empty_graph_is_just_margins() {
        let l = layout(&Graph::default(), Orientation::TopDown);
        assert_eq!((l.width, l.height), (2.0 * MARGIN, 2.0 * MARGIN));
    }

    #[test]
    fn a_children_centre_under_their_parent() {
        let g = Graph {
            sizes: boxes(3),
            edges: vec![(0, 1), (0, 2)],
            ports: vec![],
        };
        let l = layout(&g, Orientation::TopDown);
        let mid = (l.nodes[1].center().0 + l.nodes[2].center().0) / 2.0;
        assert!((l.nodes[0].center().0 - mid).abs() < 1e-9, "{:?}", l.nodes);
    }

    #[test]
    fn ten_thousand_phases_lay_out_quickly() {
        let n = 10_000;
        let g = Graph {
            sizes: boxes(n),
            // A chain whose every phase also feeds the last: n²/2 dummies without the budget.
            edges: (1..n)
                .map(|i| (i - 1, i))
                .chain((0..n - 1).map(|i| (i, n - 1)))
                .collect(),
            ports: vec![],
        };
        let t = std::time::Instant::now();
        let l = layout(&g, Orientation::TopDown);
        assert_eq!(l.nodes.len(), n);
        // Generous for debug builds on a busy machine; the bench measures the real figure.
        assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    }
}
