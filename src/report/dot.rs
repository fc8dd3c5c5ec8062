//! Graphviz text of a checked flow (`tfc graph --format dot`): the same nodes, ids, edges,
//! clusters and marks as the Mermaid chart, for `dot -Tsvg` and friends.

use std::collections::HashSet;
use std::fmt::Write;

use super::mermaid::Level;
use crate::diag::{Diagnostic, Severity};
use crate::flow::{Join, PhaseType};

use super::layout::Orientation;

/// The DOT digraph of `flow`.
///
/// ```
/// use tfc::check::{CheckOptions, check_source};
/// use tfc::flow::LowerOptions;
/// use tfc::report::dot::dot;
/// use tfc::report::layout::Orientation;
///
/// let text = r#"[{"id": "a", "task": "x"}, {"id": "b", "dependsOn": ["a"], "task": "y"}]"#;
/// let checked = check_source(text, &LowerOptions::default(), &CheckOptions::default());
/// let g = dot(checked.flow.as_ref().unwrap(), &checked.diagnostics, Orientation::TopDown);
/// assert!(g.contains("  p_a -> p_b;\n"));
/// ```
pub fn dot(flow: &crate::flow::Flow, diagnostics: &[Diagnostic], o: Orientation) -> String {
    let mut used = HashSet::new();
    let mut root = Level::new(flow, "p_", &mut used);
    for d in diagnostics {
        root.mark(d);
    }
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", quote(&flow.name));
    let _ = writeln!(
        out,
        "  rankdir={};",
        match o {
            Orientation::TopDown => "TB",
            Orientation::LeftRight => "LR",
        }
    );
    out.push_str(
        "  node [fontname=\"Helvetica\", fontsize=11, style=filled, fillcolor=\"#ffffff\"];\n",
    );
    out.push_str("  edge [fontname=\"Helvetica\", fontsize=9];\n");
    write_level(&mut out, &root, 1);
    for d in diagnostics {
        let msg: String = d
            .message
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let _ = writeln!(out, "  // {} {}", d.code.as_str(), msg);
    }
    out.push_str("}\n");
    out
}

/// Nodes, then def clusters, then edges, indented `depth` levels.
fn write_level(out: &mut String, level: &Level, depth: usize) {
    let indent = "  ".repeat(depth);
    let flow = level.flow;
    let final_phase = flow.final_phase();
    for (i, p) in flow.phases.iter().enumerate() {
        let mut label = format!("{}\\n{}", quote(&p.id), p.ty().as_str());
        if p.ty().runs_agents() && (p.has("agent") || p.agent.value != "default") {
            let _ = write!(label, " · {}", quote(&p.agent.value));
        }
        let (shape, extra) = shape(p.ty());
        let mut attrs = format!("label=\"{label}\", shape={shape}{extra}");
        match level.marks[i] {
            Some(Severity::Error) => attrs.push_str(", color=\"#cc0000\", fillcolor=\"#ffdddd\""),
            Some(Severity::Warning) => attrs.push_str(", color=\"#bb8800\", fillcolor=\"#ffffdd\""),
            None => {}
        }
        if final_phase == Some(i) {
            attrs.push_str(", penwidth=3");
        }
        let _ = writeln!(out, "{indent}{} [{attrs}];", level.nodes[i]);
    }
    for (_, i, sub, child) in &level.defs {
        let _ = writeln!(out, "{indent}subgraph cluster_{sub} {{");
        let _ = writeln!(
            out,
            "{indent}  label=\"{} (inline)\"; style=dashed; color=\"#9999aa\";",
            quote(&flow.phases[*i].id)
        );
        write_level(out, child, depth + 1);
        let _ = writeln!(out, "{indent}}}");
    }
    let (deps, _) = flow.edges();
    for (i, d) in deps.iter().enumerate() {
        let p = &flow.phases[i];
        let mut attrs = Vec::new();
        if p.join == Join::Any {
            attrs.push("style=dashed".to_owned());
        }
        if let Some(c) = &p.when {
            attrs.push(format!("label=\"when: {}\"", quote(c.as_str())));
        }
        let attrs = if attrs.is_empty() {
            String::new()
        } else {
            format!(" [{}]", attrs.join(", "))
        };
        for &j in d {
            let _ = writeln!(
                out,
                "{indent}{} -> {}{attrs};",
                level.nodes[j], level.nodes[i]
            );
        }
    }
    for (_, i, sub, child) in &level.defs {
        // Graphviz draws no edge to a cluster: link the owner to the def's first phase.
        if let Some(first) = child.nodes.first() {
            let _ = writeln!(
                out,
                "{indent}{} -> {first} [style=dotted, arrowhead=none, lhead=cluster_{sub}];",
                level.nodes[*i]
            );
        }
    }
}

/// Graphviz shape (and extra attributes) per phase kind.
fn shape(ty: PhaseType) -> (&'static str, &'static str) {
    match ty {
        PhaseType::Agent => ("box", ""),
        PhaseType::Parallel => ("parallelogram", ""),
        PhaseType::Map => ("box", ", peripheries=2"),
        PhaseType::Gate => ("diamond", ""),
        PhaseType::Reduce => ("invtrapezium", ""),
        PhaseType::Approval => ("hexagon", ""),
        PhaseType::Flow => ("cylinder", ""),
        PhaseType::Loop => ("ellipse", ""),
        PhaseType::Tournament => ("cds", ""),
        PhaseType::Script => ("box", ", style=\"rounded,filled\""),
        PhaseType::Race => ("trapezium", ""),
        PhaseType::Expand => ("doubleoctagon", ""),
    }
}

/// Text for inside a DOT double-quoted string: `\` and `"` escaped, line breaks as spaces.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_source};
    use crate::flow::LowerOptions;

    fn graph(text: &str) -> String {
        let checked = check_source(text, &LowerOptions::default(), &CheckOptions::default());
        dot(
            checked.flow.as_ref().expect("lowers"),
            &checked.diagnostics,
            Orientation::LeftRight,
        )
    }

    #[test]
    fn quotes_and_backslashes_are_escaped() {
        assert_eq!(quote("a\"b\\n\nc"), "a\\\"b\\\\n c");
        let g = graph(r#"[{"id": "x\"y", "task": "t", "when": "{args.a} == \"\\\\\""}]"#);
        assert!(g.contains("p_x_y [label=\"x\\\"y\\nagent\""), "{g}");
    }

    #[test]
    fn edges_clusters_and_marks() {
        let g = graph(
            r#"[{"id": "a", "task": "t"},
                {"id": "s", "type": "flow", "dependsOn": ["a"], "def": {"phases": [{"id": "x", "task": "t"}]}},
                {"id": "c", "join": "any", "dependsOn": ["a", "s", "zz"], "when": "{steps.a.output} == y", "task": "t", "final": true}]"#,
        );
        assert!(
            g.starts_with("digraph \"flow\" {\n  rankdir=LR;\n") || g.contains("rankdir=LR;"),
            "{g}"
        );
        assert!(
            g.contains("  p_a -> p_c [style=dashed, label=\"when: {steps.a.output} == y\"];\n"),
            "{g}"
        );
        assert!(g.contains("  subgraph cluster_p_s_def {\n"), "{g}");
        assert!(
            g.contains("    p_s__x [label=\"x\\nagent\", shape=box, penwidth=3];\n"),
            "{g}"
        );
        assert!(g.contains("p_c [label=\"c\\nagent\", shape=box, color=\"#cc0000\", fillcolor=\"#ffdddd\", penwidth=3];"), "{g}");
        assert!(g.contains("  // E0103 "), "{g}");
        assert!(g.ends_with("}\n"));
    }
}
