//! The Mermaid flowchart of a checked flow (SPEC §11.3).
//!
//! One node per phase (`p_` + the id with every `[^A-Za-z0-9_]` turned into `_`), shaped by the
//! phase kind and labelled `"<id><br/><type>[ · <agent>]"`; one edge per `dependsOn ∪ from`
//! dependency (dotted into `join:"any"` phases, labelled with the condition into `when` phases);
//! object `def`s as subgraphs whose node ids carry the parent's id as a prefix (`p_<id>__…`);
//! phases with check errors, warnings and the final phase marked with classes; the diagnostics as
//! `%%` comments at the end.
//!
//! Text inside quotes has `"` written as `#quot;` (Mermaid's entity syntax); line breaks and
//! other control characters become spaces, since every Mermaid statement is one line.

use std::collections::HashSet;
use std::fmt::Write;

use crate::diag::{Diagnostic, Severity};
use crate::flow::{Def, Flow, Join, Phase, PhaseType};
use crate::source::Span;

/// `flowchart TD` or `flowchart LR`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Direction {
    /// Top-down (`TD`), the default.
    #[default]
    TopDown,
    /// Left-to-right (`LR`).
    LeftRight,
}

impl Direction {
    /// The Mermaid keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::TopDown => "TD",
            Direction::LeftRight => "LR",
        }
    }
}

/// The Mermaid flowchart of `flow`, with the phases named by `diagnostics` marked and every
/// diagnostic listed as a `%% <code> <message>` comment.
///
/// ```
/// use tfc::check::{CheckOptions, check_source};
/// use tfc::flow::LowerOptions;
/// use tfc::report::{Direction, mermaid};
///
/// let text = r#"[{"id": "a", "task": "x"}, {"id": "b", "type": "gate", "dependsOn": ["a"], "task": "y"}]"#;
/// let checked = check_source(text, &LowerOptions::default(), &CheckOptions::default());
/// let chart = mermaid(checked.flow.as_ref().unwrap(), &checked.diagnostics, Direction::TopDown);
/// assert!(chart.starts_with("flowchart TD\n"));
/// assert!(chart.contains("    p_b{\"b<br/>gate\"}\n"));
/// assert!(chart.contains("    p_a --> p_b\n"));
/// ```
pub fn mermaid(flow: &Flow, diagnostics: &[Diagnostic], direction: Direction) -> String {
    let mut used = HashSet::new();
    let mut root = Level::new(flow, "p_", &mut used);
    for d in diagnostics {
        root.mark(d);
    }
    let mut out = String::new();
    let _ = writeln!(out, "flowchart {}", direction.as_str());
    root.write(&mut out, 1);
    out.push_str("    classDef error fill:#fdd,stroke:#c00\n");
    out.push_str("    classDef warning fill:#ffd,stroke:#b80\n");
    out.push_str("    classDef final stroke-width:3px\n");
    let mut classes: [(&str, Vec<&str>); 3] =
        [("error", vec![]), ("warning", vec![]), ("final", vec![])];
    root.classes(&mut classes);
    for (class, nodes) in &classes {
        if !nodes.is_empty() {
            let _ = writeln!(out, "    class {} {class}", nodes.join(","));
        }
    }
    for d in diagnostics {
        let _ = writeln!(out, "%% {} {}", d.code.as_str(), one_line(&d.message));
    }
    out
}

/// One flow of the chart (the document, or an object `def` inside it) with its node ids.
/// Shared with the SVG and DOT drawings, so the three name and mark phases alike.
pub(crate) struct Level<'f> {
    pub(crate) flow: &'f Flow,
    /// The node id of each phase, by index.
    pub(crate) nodes: Vec<String>,
    /// Object defs: (def span, phase index, subgraph id, the def's level), in file order.
    pub(crate) defs: Vec<(Span, usize, String, Level<'f>)>,
    /// The phases' spans sorted by start, with their indices (for diagnostics without a phase).
    spans: Vec<(Span, usize)>,
    /// The worst diagnostic severity per phase.
    pub(crate) marks: Vec<Option<Severity>>,
}

impl<'f> Level<'f> {
    /// Assign node ids: this level's phases first (so they keep the plain form when a
    /// sanitised id collides), then each def's subgraph and children.
    pub(crate) fn new(flow: &'f Flow, prefix: &str, used: &mut HashSet<String>) -> Level<'f> {
        let nodes: Vec<String> = flow
            .phases
            .iter()
            .map(|p| unique(used, format!("{prefix}{}", node_id(&p.id))))
            .collect();
        let mut defs = Vec::new();
        for (i, p) in flow.phases.iter().enumerate() {
            if let Some(def) = p.def()
                && let Def::Inline(child) = &def.value
            {
                let sub = unique(used, format!("{}_def", nodes[i]));
                let level = Level::new(child, &format!("{}__", nodes[i]), used);
                defs.push((def.span, i, sub, level));
            }
        }
        defs.sort_by_key(|d| d.0.start);
        let mut spans: Vec<(Span, usize)> = flow.phases.iter().map(|p| p.span).zip(0..).collect();
        spans.sort_by_key(|s| s.0.start);
        Level {
            flow,
            marks: vec![None; nodes.len()],
            nodes,
            defs,
            spans,
        }
    }

    /// Mark the phase `d` belongs to: inside an object def when its span is, else the phase it
    /// names, else the phase whose object holds its span. Returns whether a phase was found.
    pub(crate) fn mark(&mut self, d: &Diagnostic) -> bool {
        if let Some(span) = d.span
            && let Some(k) = containing(&self.defs, |e| e.0, span)
            && self.defs[k].3.mark(d)
        {
            return true;
        }
        let named = d.phase.as_deref().and_then(|id| self.flow.index_of(id));
        let index = named.or_else(|| {
            d.span
                .and_then(|span| containing(&self.spans, |e| e.0, span))
                .map(|k| self.spans[k].1)
        });
        let Some(i) = index else {
            return false;
        };
        let mark = &mut self.marks[i];
        *mark = (*mark).max(Some(d.severity));
        true
    }

    /// Nodes, then def subgraphs, then edges, indented `depth` levels.
    fn write(&self, out: &mut String, depth: usize) {
        let indent = "    ".repeat(depth);
        for (p, node) in self.flow.phases.iter().zip(&self.nodes) {
            let (open, close) = shape(p.ty());
            let _ = writeln!(out, "{indent}{node}{open}\"{}\"{close}", label(p));
        }
        for (_, i, sub, level) in &self.defs {
            let id = &self.flow.phases[*i].id;
            let _ = writeln!(out, "{indent}subgraph {sub}[\"{} (inline)\"]", escape(id));
            level.write(out, depth + 1);
            let _ = writeln!(out, "{indent}end");
        }
        for (p, node) in self.flow.phases.iter().zip(&self.nodes) {
            let arrow = match p.join {
                Join::All => "-->",
                Join::Any => "-.->",
            };
            let when = p
                .when
                .as_ref()
                .map(|c| format!("|\"when: {}\"|", escape(c.as_str())))
                .unwrap_or_default();
            for dep in &p.deps {
                let _ = writeln!(
                    out,
                    "{indent}{} {arrow}{when} {node}",
                    self.nodes[dep.index()]
                );
            }
        }
    }

    /// Collect the node ids of each class: `error`, `warning`, `final`.
    fn classes<'a>(&'a self, classes: &mut [(&str, Vec<&'a str>); 3]) {
        for (node, mark) in self.nodes.iter().zip(&self.marks) {
            match mark {
                Some(Severity::Error) => classes[0].1.push(node),
                Some(Severity::Warning) => classes[1].1.push(node),
                None => {}
            }
        }
        if let Some(f) = self.flow.final_phase() {
            classes[2].1.push(&self.nodes[f]);
        }
        for (_, _, _, level) in &self.defs {
            level.classes(classes);
        }
    }
}

/// The last entry (sorted by span start) whose span holds `span`, found by binary search.
fn containing<T>(sorted: &[T], span_of: impl Fn(&T) -> Span, span: Span) -> Option<usize> {
    let k = sorted
        .partition_point(|e| span_of(e).start <= span.start)
        .checked_sub(1)?;
    let s = span_of(&sorted[k]);
    (s.end >= span.end).then_some(k)
}

/// `base`, or `base_2`, `base_3`, … when another node already took it.
fn unique(used: &mut HashSet<String>, base: String) -> String {
    if used.insert(base.clone()) {
        return base;
    }
    let mut n = 2;
    loop {
        let candidate = format!("{base}_{n}");
        if used.insert(candidate.clone()) {
            return candidate;
        }
        n += 1;
    }
}

/// A phase id as a Mermaid node id: every character outside `[A-Za-z0-9_]` becomes `_`.
pub fn node_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Text for inside a quoted Mermaid string: `"` → `#quot;`, control characters → spaces.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A diagnostic message on one line.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `<id><br/><type>[ · <agent>]`, escaped; the agent is shown for the types that run agents
/// when it is not the implicit `default`.
pub fn label(p: &Phase) -> String {
    let mut out = format!("{}<br/>{}", escape(&p.id), p.ty().as_str());
    if p.ty().runs_agents() && (p.has("agent") || p.agent.value != "default") {
        let _ = write!(out, " · {}", escape(&p.agent.value));
    }
    out
}

/// The brackets around a node's quoted label, one shape per phase kind.
pub fn shape(ty: PhaseType) -> (&'static str, &'static str) {
    match ty {
        PhaseType::Agent => ("[", "]"),
        PhaseType::Parallel => ("[/", "/]"),
        PhaseType::Map => ("[[", "]]"),
        PhaseType::Gate => ("{", "}"),
        PhaseType::Reduce => ("[\\", "/]"),
        PhaseType::Approval => ("{{", "}}"),
        PhaseType::Flow => ("[(", ")]"),
        PhaseType::Loop => ("((", "))"),
        PhaseType::Tournament => (">", "]"),
        PhaseType::Script => ("(", ")"),
        PhaseType::Race => ("[\\", "\\]"),
        PhaseType::Expand => ("(((", ")))"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_source};
    use crate::flow::LowerOptions;

    fn chart(text: &str) -> String {
        let checked = check_source(text, &LowerOptions::default(), &CheckOptions::default());
        let flow = checked.flow.expect("flow lowers");
        mermaid(&flow, &checked.diagnostics, Direction::TopDown)
    }

    fn lines(chart: &str) -> Vec<&str> {
        chart.lines().map(str::trim).collect()
    }

    #[test]
    fn node_ids_replace_everything_outside_word_chars() {
        assert_eq!(node_id("fetch-data"), "fetch_data");
        assert_eq!(node_id("a.b c/ü"), "a_b_c__");
        assert_eq!(node_id("Step_2"), "Step_2");
    }

    #[test]
    fn labels_escape_quotes_and_line_breaks() {
        assert_eq!(escape(r#"say "hi""#), "say #quot;hi#quot;");
        assert_eq!(escape("a\nb\tc"), "a b c");
        let c = chart(r#"[{"id": "say\"x\"", "task": "t"}]"#);
        assert!(
            c.contains("    p_say_x_[\"say#quot;x#quot;<br/>agent\"]\n"),
            "{c}"
        );
    }

    #[test]
    fn every_kind_has_its_shape() {
        let cases = [
            (PhaseType::Agent, "p_x[\"x<br/>agent\"]"),
            (PhaseType::Parallel, "p_x[/\"x<br/>parallel\"/]"),
            (PhaseType::Map, "p_x[[\"x<br/>map\"]]"),
            (PhaseType::Gate, "p_x{\"x<br/>gate\"}"),
            (PhaseType::Reduce, "p_x[\\\"x<br/>reduce\"/]"),
            (PhaseType::Approval, "p_x{{\"x<br/>approval\"}}"),
            (PhaseType::Flow, "p_x[(\"x<br/>flow\")]"),
            (PhaseType::Loop, "p_x((\"x<br/>loop\"))"),
            (PhaseType::Tournament, "p_x>\"x<br/>tournament\"]"),
            (PhaseType::Script, "p_x(\"x<br/>script\")"),
            (PhaseType::Race, "p_x[\\\"x<br/>race\"\\]"),
            (PhaseType::Expand, "p_x(((\"x<br/>expand\")))"),
        ];
        for (ty, want) in cases {
            let p = Phase::new("x".into(), Span::default(), Span::default(), ty);
            let (open, close) = shape(ty);
            assert_eq!(format!("p_x{open}\"{}\"{close}", label(&p)), want);
        }
    }

    #[test]
    fn agent_shown_when_not_the_default() {
        let c = chart(
            r#"[{"id": "a", "agent": "reviewer", "task": "t"},
                {"id": "b", "type": "script", "run": "true", "dependsOn": ["a"]}]"#,
        );
        let l = lines(&c);
        assert!(l.contains(&"p_a[\"a<br/>agent · reviewer\"]"), "{c}");
        assert!(l.contains(&"p_b(\"b<br/>script\")"), "{c}");
    }

    #[test]
    fn edges_once_dotted_into_join_any_and_labelled_with_when() {
        let c = chart(
            r#"[{"id": "a", "task": "t"},
                {"id": "b", "task": "t"},
                {"id": "c", "type": "reduce", "from": ["a", "b"], "dependsOn": ["a"], "task": "t"},
                {"id": "d", "join": "any", "dependsOn": ["a", "b"], "task": "t"},
                {"id": "e", "dependsOn": ["c", "d"], "when": "{steps.c.output} == \"yes\"", "task": "t", "final": true}]"#,
        );
        let edges: Vec<&str> = lines(&c).into_iter().filter(|l| l.contains("->")).collect();
        assert_eq!(
            edges,
            [
                "p_a --> p_c",
                "p_b --> p_c",
                "p_a -.-> p_d",
                "p_b -.-> p_d",
                "p_c -->|\"when: {steps.c.output} == #quot;yes#quot;\"| p_e",
                "p_d -->|\"when: {steps.c.output} == #quot;yes#quot;\"| p_e",
            ],
            "{c}"
        );
        assert!(lines(&c).contains(&"class p_e final"), "{c}");
    }

    #[test]
    fn unknown_dependencies_draw_no_edge_but_mark_the_phase() {
        let c = chart(
            r#"[{"id": "a", "task": "t"}, {"id": "b", "dependsOn": ["a", "zz"], "task": "t"}]"#,
        );
        let l = lines(&c);
        assert!(l.contains(&"p_a --> p_b"), "{c}");
        assert!(!c.contains("p_zz"), "{c}");
        assert!(l.contains(&"class p_b error"), "{c}");
        assert!(
            l.iter()
                .any(|x| x.starts_with("%% E0103 ") && x.contains("zz")),
            "{c}"
        );
    }

    #[test]
    fn warnings_and_errors_are_classes() {
        // `a` is a dead end (W0101); `b` depends on itself (E0105).
        let c = chart(
            r#"[{"id": "a", "task": "t"},
                {"id": "b", "dependsOn": ["b"], "task": "t"},
                {"id": "c", "task": "t"}]"#,
        );
        let l = lines(&c);
        assert!(l.contains(&"classDef error fill:#fdd,stroke:#c00"), "{c}");
        assert!(l.contains(&"classDef warning fill:#ffd,stroke:#b80"), "{c}");
        assert!(l.contains(&"classDef final stroke-width:3px"), "{c}");
        assert!(l.contains(&"class p_b error"), "{c}");
        assert!(l.contains(&"class p_c final"), "{c}");
        assert!(
            l.iter()
                .any(|x| x.starts_with("class ") && x.contains("p_a") && x.ends_with(" warning")),
            "{c}"
        );
    }

    #[test]
    fn object_defs_become_subgraphs_with_prefixed_ids() {
        let c = chart(
            r#"[{"id": "prep", "task": "t"},
                {"id": "sub-flow", "type": "flow", "dependsOn": ["prep"], "def": {"phases": [
                    {"id": "x", "task": "t"},
                    {"id": "y", "dependsOn": ["x"], "task": "t", "dependsOn": ["x"]},
                    {"id": "inner", "type": "expand", "dependsOn": ["y"], "def": [{"id": "z", "task": "t"}]}
                ]}}]"#,
        );
        let want = "\
flowchart TD
    p_prep[\"prep<br/>agent\"]
    p_sub_flow[(\"sub-flow<br/>flow\")]
    subgraph p_sub_flow_def[\"sub-flow (inline)\"]
        p_sub_flow__x[\"x<br/>agent\"]
        p_sub_flow__y[\"y<br/>agent\"]
        p_sub_flow__inner(((\"inner<br/>expand\")))
        subgraph p_sub_flow__inner_def[\"inner (inline)\"]
            p_sub_flow__inner__z[\"z<br/>agent\"]
        end
        p_sub_flow__x --> p_sub_flow__y
        p_sub_flow__y --> p_sub_flow__inner
    end
    p_prep --> p_sub_flow
";
        assert!(c.starts_with(want), "{c}");
        // The duplicate key inside the def marks the child, not a top-level phase.
        let l = lines(&c);
        assert!(l.contains(&"class p_sub_flow__y error"), "{c}");
        assert!(
            l.contains(&"class p_sub_flow,p_sub_flow__inner,p_sub_flow__inner__z final"),
            "{c}"
        );
    }

    #[test]
    fn colliding_node_ids_stay_distinct() {
        let c = chart(
            r#"[{"id": "a-b", "task": "t"}, {"id": "a.b", "dependsOn": ["a-b"], "task": "t"}]"#,
        );
        let l = lines(&c);
        assert!(l.contains(&"p_a_b[\"a-b<br/>agent\"]"), "{c}");
        assert!(l.contains(&"p_a_b_2[\"a.b<br/>agent\"]"), "{c}");
        assert!(l.contains(&"p_a_b --> p_a_b_2"), "{c}");
    }

    #[test]
    fn left_to_right() {
        let checked = check_source(
            r#"[{"id": "a", "task": "t"}]"#,
            &LowerOptions::default(),
            &CheckOptions::default(),
        );
        let c = mermaid(
            checked.flow.as_ref().unwrap(),
            &checked.diagnostics,
            Direction::LeftRight,
        );
        assert!(c.starts_with("flowchart LR\n"), "{c}");
    }
}
