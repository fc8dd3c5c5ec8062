//! A checked flow placed on a plane: the phases as boxes, their dependencies as polylines, and
//! object `def`s (flow/expand) as clusters laid out on their own and placed as one box of their
//! parent's graph, linked to the phase that owns them. The SVG graph and the HTML report both
//! draw this, so the two look alike.

use std::collections::HashSet;

use super::layout::{Graph, MARGIN, Orientation, Rect, layout};
use super::mermaid::Level;
use crate::diag::{Diagnostic, Severity};
use crate::flow::{Flow, Join, Phase};

/// Height of every phase box.
pub const NODE_H: f64 = 46.0;
/// Labels longer than this are cut with `…` (the whole text stays in the tooltip).
pub const LABEL_CHARS: usize = 40;
/// Average glyph width of the labels' 12px sans-serif font.
pub const CHAR_W: f64 = 7.0;
/// Space inside a cluster around its graph, and the height of its title.
const PAD: f64 = 10.0;
const TITLE_H: f64 = 18.0;

/// One drawn phase.
pub struct Node<'f> {
    /// The phase.
    pub phase: &'f Phase,
    /// Its key in the run record: the id at the top level, `<owner>/<id>` inside a def.
    pub key: String,
    /// The element id (the Mermaid node id, `p_…`).
    pub dom_id: String,
    /// The worst check diagnostic naming the phase.
    pub mark: Option<Severity>,
    /// The final phase of its level.
    pub is_final: bool,
    /// Nesting: 0 at the top level.
    pub depth: usize,
    /// Its box.
    pub rect: Rect,
}

/// One drawn edge.
pub struct Edge {
    /// Node indices.
    pub from: usize,
    /// Node index; for a def link, the owner of the cluster is `from` and this is unused.
    pub to: usize,
    /// Into a `join: "any"` phase.
    pub dashed: bool,
    /// The `when` of the target.
    pub when: Option<String>,
    /// The polyline, from `from`'s border to `to`'s.
    pub points: Vec<(f64, f64)>,
}

/// An object `def` drawn as a box around its phases.
pub struct Cluster {
    /// `<id> (inline)`.
    pub title: String,
    /// The element id (the Mermaid subgraph id).
    pub dom_id: String,
    /// Its box.
    pub rect: Rect,
    /// The line from the owning phase to the cluster.
    pub link: Vec<(f64, f64)>,
}

/// The placed flow.
pub struct Drawing<'f> {
    /// Every phase, the top level first, each level's defs after it.
    pub nodes: Vec<Node<'f>>,
    /// Every dependency edge.
    pub edges: Vec<Edge>,
    /// Every object def.
    pub clusters: Vec<Cluster>,
    /// Total width.
    pub width: f64,
    /// Total height.
    pub height: f64,
}

/// Place `flow` with the phases named by `diagnostics` marked.
///
/// ```
/// use tfc::check::{CheckOptions, check_source};
/// use tfc::flow::LowerOptions;
/// use tfc::report::dag::draw;
/// use tfc::report::layout::Orientation;
///
/// let text = r#"[{"id": "a", "task": "x"}, {"id": "b", "dependsOn": ["a"], "task": "y"}]"#;
/// let checked = check_source(text, &LowerOptions::default(), &CheckOptions::default());
/// let d = draw(checked.flow.as_ref().unwrap(), &checked.diagnostics, Orientation::TopDown);
/// assert_eq!(d.nodes.len(), 2);
/// assert!(d.nodes[1].rect.y > d.nodes[0].rect.y);
/// ```
pub fn draw<'f>(
    flow: &'f Flow,
    diagnostics: &[Diagnostic],
    orientation: Orientation,
) -> Drawing<'f> {
    let mut used = HashSet::new();
    let mut root = Level::new(flow, "p_", &mut used);
    for d in diagnostics {
        root.mark(d);
    }
    let mut drawing = place(&root, "", 0, orientation);
    drawing.width = drawing.width.max(2.0 * MARGIN);
    drawing
}

/// The width of a phase box: its longest label line.
pub fn node_width(p: &Phase) -> f64 {
    let chars = label_lines(p)
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    (chars as f64 * CHAR_W + 28.0).clamp(96.0, LABEL_CHARS as f64 * CHAR_W + 28.0)
}

/// The two label lines: the id, and `type[ · agent]` (the agent as in the Mermaid chart).
pub fn label_lines(p: &Phase) -> [String; 2] {
    let mut kind = p.ty().as_str().to_owned();
    if p.ty().runs_agents() && (p.has("agent") || p.agent.value != "default") {
        kind.push_str(" · ");
        kind.push_str(&p.agent.value);
    }
    [cut(&p.id, LABEL_CHARS), cut(&kind, LABEL_CHARS)]
}

/// Height of the band above a phase box that holds its `when` label.
pub const WHEN_H: f64 = 18.0;

/// The `when` label of a phase and its drawn width.
pub fn when_label(cond: &str) -> (String, f64) {
    let text = cut(&format!("when: {cond}"), 48);
    let w = text.chars().count() as f64 * CHAR_W * 0.85 + 8.0;
    (text, w)
}

/// `text` on one line, at most `max` characters, `…` marking a cut.
pub fn cut(text: &str, max: usize) -> String {
    let one: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one.chars().count() <= max {
        return one;
    }
    let mut out: String = one.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Lay out one level: its phases plus one box per def, then the defs inside their boxes.
fn place<'f>(level: &Level<'f>, prefix: &str, depth: usize, o: Orientation) -> Drawing<'f> {
    let flow = level.flow;
    let n = flow.phases.len();
    let subs: Vec<Drawing<'f>> = level
        .defs
        .iter()
        .map(|(_, i, _, child)| {
            let key = format!("{prefix}{}/", flow.phases[*i].id);
            place(child, &key, depth + 1, o)
        })
        .collect();
    // Each phase reserves room for its `when` label, drawn once above it: top-down the label's
    // width, left-to-right a band above the box.
    let mut sizes = Vec::with_capacity(n + subs.len());
    let mut ports = Vec::with_capacity(n + subs.len());
    for p in &flow.phases {
        let w = node_width(p);
        let label = p.when.as_ref().map_or(0.0, |c| when_label(c.as_str()).1);
        match o {
            Orientation::TopDown => {
                let rw = w.max(label);
                sizes.push((rw, NODE_H));
                ports.push((rw / 2.0, w * 0.6));
            }
            Orientation::LeftRight => {
                let band = if label > 0.0 { WHEN_H } else { 0.0 };
                sizes.push((w, NODE_H + band));
                ports.push((band + NODE_H / 2.0, NODE_H * 0.6));
            }
        }
    }
    for sub in &subs {
        let size = (sub.width + 2.0 * PAD, sub.height + PAD + TITLE_H);
        sizes.push(size);
        ports.push(match o {
            Orientation::TopDown => (size.0 / 2.0, size.0 * 0.6),
            Orientation::LeftRight => (size.1 / 2.0, size.1 * 0.6),
        });
    }
    let (deps, _) = flow.edges();
    let mut edges: Vec<(usize, usize)> = Vec::new();
    let mut meta: Vec<(usize, usize)> = Vec::new();
    for (i, d) in deps.iter().enumerate() {
        for &j in d {
            edges.push((j, i));
            meta.push((j, i));
        }
    }
    for (k, (_, owner, _, _)) in level.defs.iter().enumerate() {
        edges.push((*owner, n + k));
    }
    let l = layout(
        &Graph {
            sizes,
            edges,
            ports,
        },
        o,
    );
    let final_phase = flow.final_phase();
    let mut nodes: Vec<Node<'f>> = flow
        .phases
        .iter()
        .enumerate()
        .map(|(i, p)| Node {
            phase: p,
            key: format!("{prefix}{}", p.id),
            dom_id: level.nodes[i].clone(),
            mark: level.marks[i],
            is_final: final_phase == Some(i),
            depth,
            rect: {
                // The box inside the room reserved for it.
                let r = l.nodes[i];
                let w = node_width(p);
                Rect {
                    x: r.x + (r.w - w) / 2.0,
                    y: r.y + r.h - NODE_H,
                    w,
                    h: NODE_H,
                }
            },
        })
        .collect();
    let mut out_edges: Vec<Edge> = meta
        .iter()
        .enumerate()
        .map(|(k, &(from, to))| {
            let target = &flow.phases[to];
            Edge {
                from,
                to,
                dashed: target.join == Join::Any,
                when: target.when.as_ref().map(|c| c.as_str().to_owned()),
                points: l.edges[k].clone(),
            }
        })
        .collect();
    let mut clusters = Vec::new();
    for (k, (sub, (_, owner, dom, _))) in subs.into_iter().zip(&level.defs).enumerate() {
        let b = l.nodes[n + k];
        clusters.push(Cluster {
            title: format!("{} (inline)", cut(&flow.phases[*owner].id, LABEL_CHARS)),
            dom_id: dom.clone(),
            rect: b,
            link: l.edges[meta.len() + k].clone(),
        });
        let (dx, dy) = (b.x + PAD - MARGIN, b.y + TITLE_H - MARGIN);
        let shift = |(x, y): (f64, f64)| (x + dx, y + dy);
        let base = nodes.len();
        for mut node in sub.nodes {
            node.rect.x += dx;
            node.rect.y += dy;
            nodes.push(node);
        }
        for mut e in sub.edges {
            e.from += base;
            e.to += base;
            e.points = e.points.into_iter().map(shift).collect();
            out_edges.push(e);
        }
        for mut c in sub.clusters {
            c.rect.x += dx;
            c.rect.y += dy;
            c.link = c.link.into_iter().map(shift).collect();
            clusters.push(c);
        }
    }
    Drawing {
        nodes,
        edges: out_edges,
        clusters,
        width: l.width,
        height: l.height,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_source};
    use crate::flow::LowerOptions;

    fn drawn(text: &str, f: impl FnOnce(&Drawing)) {
        let checked = check_source(text, &LowerOptions::default(), &CheckOptions::default());
        let flow = checked.flow.expect("flow lowers");
        f(&draw(&flow, &checked.diagnostics, Orientation::TopDown));
    }

    #[test]
    fn defs_become_clusters_holding_their_phases() {
        drawn(
            r#"[{"id": "a", "task": "t"},
                {"id": "sub", "type": "flow", "dependsOn": ["a"], "def": {"phases": [
                   {"id": "x", "task": "t"}, {"id": "y", "dependsOn": ["x"], "task": "t"}]}},
                {"id": "z", "dependsOn": ["sub"], "task": "t", "final": true}]"#,
            |d| {
                let keys: Vec<&str> = d.nodes.iter().map(|n| n.key.as_str()).collect();
                assert_eq!(keys, ["a", "sub", "z", "sub/x", "sub/y"]);
                assert_eq!(d.clusters.len(), 1);
                let c = &d.clusters[0];
                assert_eq!(c.title, "sub (inline)");
                assert_eq!(c.dom_id, "p_sub_def");
                for n in &d.nodes[3..] {
                    let r = n.rect;
                    assert!(
                        r.x >= c.rect.x && r.x + r.w <= c.rect.x + c.rect.w,
                        "{r:?} {:?}",
                        c.rect
                    );
                    assert!(
                        r.y >= c.rect.y && r.y + r.h <= c.rect.y + c.rect.h,
                        "{r:?} {:?}",
                        c.rect
                    );
                }
                assert_eq!(d.nodes[3].dom_id, "p_sub__x");
                assert!(d.nodes[4].is_final && d.nodes[2].is_final && !d.nodes[0].is_final);
                // Inner edge shifted with its cluster.
                let e = d.edges.iter().find(|e| e.from == 3).expect("x → y");
                assert_eq!(e.points[0].1, d.nodes[3].rect.y + NODE_H);
                assert!(c.link.len() >= 2);
                assert!(d.width >= c.rect.x + c.rect.w && d.height >= c.rect.y + c.rect.h);
            },
        );
    }

    #[test]
    fn edges_carry_join_any_and_when() {
        drawn(
            r#"[{"id": "a", "task": "t"}, {"id": "b", "task": "t"},
                {"id": "c", "join": "any", "dependsOn": ["a", "b"], "when": "{steps.a.output} == x", "task": "t"}]"#,
            |d| {
                assert_eq!(d.edges.len(), 2);
                assert!(d.edges.iter().all(|e| e.dashed && e.to == 2));
                assert_eq!(d.edges[0].when.as_deref(), Some("{steps.a.output} == x"));
            },
        );
    }

    #[test]
    fn check_problems_mark_their_phase() {
        drawn(
            r#"[{"id": "a", "task": "t"}, {"id": "b", "dependsOn": ["zz"], "task": "t", "final": true}]"#,
            |d| {
                assert_eq!(d.nodes[1].mark, Some(Severity::Error));
                assert_eq!(d.nodes[0].mark, None);
            },
        );
        // `a` is a dead end (W0101).
        drawn(
            r#"[{"id": "a", "task": "t"}, {"id": "b", "task": "t", "final": true}]"#,
            |d| assert_eq!(d.nodes[0].mark, Some(Severity::Warning)),
        );
    }

    #[test]
    fn long_labels_are_cut() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "ab…");
        assert_eq!(cut("a\nb", 5), "a b");
    }
}
