//! The SVG of a placed flow (`tfc graph --format svg`, and the DAG of the HTML report).
//!
//! Plain SVG 1.1 with one inline `<style>`: no scripts, fonts or links. One shape per phase kind
//! (the SVG counterparts of the Mermaid shapes), dashed edges into `join: "any"` phases, `when`
//! labels on the last segment of each edge into a conditional phase, clusters for object defs.
//! Every text from the flow is XML-escaped; each phase carries a `<title>` tooltip.

use std::fmt::Write;

use super::dag::{Drawing, Node, label_lines, when_label};
use crate::diag::Severity;
use crate::flow::PhaseType;

/// How one phase is drawn on top of its shape: CSS classes and small badges.
#[derive(Clone, Debug, Default)]
pub struct Deco {
    /// Extra classes of the node group (`err`, `warn`, `final`, `st-done`, …).
    pub classes: Vec<String>,
    /// Badges along the box's top edge (`×3`, `cached`, `pass`).
    pub badges: Vec<String>,
    /// Extra tooltip lines.
    pub notes: Vec<String>,
    /// A link (the report links each phase to its details).
    pub href: Option<String>,
}

/// The styles of both uses: check marks for `tfc graph`, statuses for the report.
pub const STYLE: &str = "\
.tfc-dag{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;font-size:12px}\
.tfc-dag .n>.s{fill:#fff;stroke:#556;stroke-width:1.2}\
.tfc-dag .n .s2{fill:none;stroke:#556;stroke-width:1}\
.tfc-dag .n text{fill:#123;text-anchor:middle}\
.tfc-dag .n .id{font-weight:600}\
.tfc-dag .n .ty{fill:#556;font-size:11px}\
.tfc-dag .final>.s{stroke-width:3}\
.tfc-dag .err>.s{fill:#fdd;stroke:#c00;stroke-width:2.5}\
.tfc-dag .warn>.s{fill:#ffd;stroke:#b80;stroke-width:2.5}\
.tfc-dag .st-done>.s{fill:#dcf5dc;stroke:#2a7a2a}\
.tfc-dag .st-failed>.s{fill:#fbd5d5;stroke:#b00}\
.tfc-dag .st-skipped>.s{fill:#eee;stroke:#999;stroke-dasharray:4 3}\
.tfc-dag .st-running>.s{fill:#dbe9ff;stroke:#2558b0}\
.tfc-dag .st-pending>.s{fill:#fff;stroke:#999}\
.tfc-dag .st-skipped text{fill:#777}\
.tfc-dag .b rect{fill:#345;stroke:none}\
.tfc-dag .b text{fill:#fff;font-size:10px;text-anchor:middle}\
.tfc-dag .b.hit rect{fill:#2a7a2a}\
.tfc-dag .b.block rect{fill:#b00}\
.tfc-dag .e{fill:none;stroke:#667;stroke-width:1.3}\
.tfc-dag .e.any{stroke-dasharray:6 4}\
.tfc-dag .wl rect{fill:#fff;fill-opacity:.9;stroke:#ccd}\
.tfc-dag .wl text{fill:#446;font-size:10px;text-anchor:middle}\
.tfc-dag .cl>rect{fill:#f6f7fb;stroke:#99a;stroke-dasharray:3 3}\
.tfc-dag .cl>text{fill:#556;font-size:11px}\
.tfc-dag .dl{fill:none;stroke:#99a;stroke-dasharray:2 3}\
.tfc-dag .ah{fill:#667}";

/// The marks of `tfc graph --format svg`: check errors and warnings outlined, the final phase
/// thick.
pub fn check_deco(n: &Node) -> Deco {
    let mut d = Deco::default();
    match n.mark {
        Some(Severity::Error) => d.classes.push("err".into()),
        Some(Severity::Warning) => d.classes.push("warn".into()),
        None => {}
    }
    if n.is_final {
        d.classes.push("final".into());
    }
    d
}

/// The drawing as a standalone SVG document (the `<svg>` element, with its style).
pub fn svg(d: &Drawing, deco: &dyn Fn(&Node) -> Deco) -> String {
    let mut out = String::with_capacity(512 + d.nodes.len() * 700);
    let (w, h) = (num(d.width), num(d.height));
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"tfc-dag\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" role=\"img\">\n<style>{STYLE}</style>\n<defs><marker id=\"tfc-arrow\" \
         viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" \
         orient=\"auto-start-reverse\"><path class=\"ah\" d=\"M0,0L10,5L0,10z\"/></marker></defs>\n"
    );
    for c in &d.clusters {
        let r = c.rect;
        let _ = writeln!(
            out,
            "<g class=\"cl\" id=\"{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\"/>\
             <text x=\"{}\" y=\"{}\">{}</text></g>",
            esc(&c.dom_id),
            num(r.x),
            num(r.y),
            num(r.w),
            num(r.h),
            num(r.x + 8.0),
            num(r.y + 13.0),
            esc(&c.title)
        );
        if c.link.len() >= 2 {
            let _ = writeln!(out, "<path class=\"dl\" d=\"{}\"/>", path(&c.link));
        }
    }
    for e in &d.edges {
        if e.points.len() < 2 {
            continue;
        }
        let class = if e.dashed { "e any" } else { "e" };
        let _ = writeln!(
            out,
            "<path class=\"{class}\" d=\"{}\" marker-end=\"url(#tfc-arrow)\"/>",
            path(&e.points)
        );
    }
    // `when` labels after every edge, so no edge runs over one: one per conditional phase,
    // just above its box (above the arrowheads).
    for n in &d.nodes {
        let Some(when) = &n.phase.when else {
            continue;
        };
        let (text, tw) = when_label(when.as_str());
        let r = n.rect;
        let x = r.x + r.w / 2.0;
        let y = (r.y - if r.y >= 30.0 { 30.0 } else { 16.0 }).max(0.0);
        let _ = writeln!(
            out,
            "<g class=\"wl\"><title>when: {}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"14\" rx=\"3\"/>\
             <text x=\"{}\" y=\"{}\">{}</text></g>",
            esc(when.as_str()),
            num(x - tw / 2.0),
            num(y),
            num(tw),
            num(x),
            num(y + 10.5),
            esc(&text)
        );
    }
    for n in &d.nodes {
        node(&mut out, n, &deco(n));
    }
    out.push_str("</svg>\n");
    out
}

/// One phase: its group, tooltip, shape, label and badges.
fn node(out: &mut String, n: &Node, deco: &Deco) {
    let r = n.rect;
    let mut class = String::from("n");
    for c in &deco.classes {
        class.push(' ');
        class.push_str(c);
    }
    let p = n.phase;
    if let Some(h) = &deco.href {
        let _ = write!(out, "<a href=\"{}\">", esc(h));
    }
    let _ = write!(
        out,
        "<g class=\"{class}\" id=\"{}\" data-phase=\"{}\"><title>{} ({}",
        esc(&n.dom_id),
        esc(&n.key),
        esc(&n.key),
        p.ty().as_str()
    );
    if p.ty().runs_agents() {
        let _ = write!(out, ", agent {}", esc(&p.agent.value));
    }
    out.push(')');
    match n.mark {
        Some(Severity::Error) => out.push_str("\ncheck: error"),
        Some(Severity::Warning) => out.push_str("\ncheck: warning"),
        None => {}
    }
    for note in &deco.notes {
        let _ = write!(out, "\n{}", esc(note));
    }
    out.push_str("</title>");
    shape(out, p.ty(), r.x, r.y, r.w, r.h);
    let [id, kind] = label_lines(p);
    let cx = num(r.x + r.w / 2.0);
    let _ = write!(
        out,
        "<text class=\"id\" x=\"{cx}\" y=\"{}\">{}</text><text class=\"ty\" x=\"{cx}\" y=\"{}\">{}</text>",
        num(r.y + 19.0),
        esc(&id),
        num(r.y + 35.0),
        esc(&kind)
    );
    let mut right = r.x + r.w - 2.0;
    for b in &deco.badges {
        let bw = b.chars().count() as f64 * 6.0 + 8.0;
        let x = right - bw;
        let kind = match b.as_str() {
            "block" | "rejected" => " block",
            b if b.starts_with("cache") => " hit",
            _ => "",
        };
        let _ = write!(
            out,
            "<g class=\"b{kind}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"13\" rx=\"6\"/>\
             <text x=\"{}\" y=\"{}\">{}</text></g>",
            num(x),
            num(r.y - 7.0),
            num(bw),
            num(x + bw / 2.0),
            num(r.y + 3.0),
            esc(b)
        );
        right = x - 3.0;
    }
    out.push_str(if deco.href.is_some() {
        "</g></a>\n"
    } else {
        "</g>\n"
    });
}

/// The outline of a phase kind inside the box `(x, y, w, h)`: class `s` (filled by status),
/// plus `s2` strokes for the double-lined kinds.
fn shape(out: &mut String, ty: PhaseType, x: f64, y: f64, w: f64, h: f64) {
    let rect = |out: &mut String, rx: f64| {
        let _ = write!(
            out,
            "<rect class=\"s\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"{}\"/>",
            num(x),
            num(y),
            num(w),
            num(h),
            num(rx)
        );
    };
    let poly = |out: &mut String, pts: &[(f64, f64)]| {
        out.push_str("<polygon class=\"s\" points=\"");
        for (k, (px, py)) in pts.iter().enumerate() {
            if k > 0 {
                out.push(' ');
            }
            let _ = write!(out, "{},{}", num(*px), num(*py));
        }
        out.push_str("\"/>");
    };
    let (r, b, m) = (x + w, y + h, y + h / 2.0);
    match ty {
        PhaseType::Agent => rect(out, 3.0),
        PhaseType::Script => rect(out, 10.0),
        PhaseType::Loop => rect(out, h / 2.0),
        PhaseType::Map => {
            rect(out, 0.0);
            let _ = write!(
                out,
                "<path class=\"s2\" d=\"M{},{}V{}M{},{}V{}\"/>",
                num(x + 7.0),
                num(y),
                num(b),
                num(r - 7.0),
                num(y),
                num(b)
            );
        }
        PhaseType::Expand => {
            rect(out, h / 2.0);
            let _ = write!(
                out,
                "<rect class=\"s2\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"{}\"/>",
                num(x + 3.0),
                num(y + 3.0),
                num(w - 6.0),
                num(h - 6.0),
                num(h / 2.0 - 3.0)
            );
        }
        PhaseType::Parallel => poly(out, &[(x + 10.0, y), (r, y), (r - 10.0, b), (x, b)]),
        PhaseType::Reduce => poly(out, &[(x, y), (r, y), (r - 12.0, b), (x + 12.0, b)]),
        PhaseType::Race => poly(out, &[(x + 12.0, y), (r - 12.0, y), (r, b), (x, b)]),
        PhaseType::Gate => poly(
            out,
            &[
                (x, m),
                (x + 16.0, y),
                (r - 16.0, y),
                (r, m),
                (r - 16.0, b),
                (x + 16.0, b),
            ],
        ),
        PhaseType::Approval => poly(
            out,
            &[
                (x, y + 8.0),
                (x + 8.0, y),
                (r - 8.0, y),
                (r, y + 8.0),
                (r, b - 8.0),
                (r - 8.0, b),
                (x + 8.0, b),
                (x, b - 8.0),
            ],
        ),
        PhaseType::Tournament => poly(out, &[(x, y), (r, y), (r, b), (x, b), (x + 12.0, m)]),
        PhaseType::Flow => {
            let rx = num(w / 2.0);
            let _ = write!(
                out,
                "<path class=\"s\" d=\"M{x0},{t}A{rx},5 0 0 1 {x1},{t}V{bb}A{rx},5 0 0 1 {x0},{bb}Z\"/>\
                 <path class=\"s2\" d=\"M{x0},{t}A{rx},5 0 0 0 {x1},{t}\"/>",
                x0 = num(x),
                x1 = num(r),
                t = num(y + 5.0),
                bb = num(b - 5.0),
            );
        }
    }
}

/// `M x,y L x,y …`.
fn path(points: &[(f64, f64)]) -> String {
    let mut d = String::with_capacity(points.len() * 16);
    for (k, (x, y)) in points.iter().enumerate() {
        let _ = write!(
            d,
            "{}{},{}",
            if k == 0 { 'M' } else { 'L' },
            num(*x),
            num(*y)
        );
    }
    d
}

/// A coordinate with at most one decimal, without a trailing `.0`.
pub fn num(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// XML/HTML text and attribute escaping; control characters other than tab and newline (not
/// allowed in XML 1.0) become U+FFFD.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
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
    use crate::report::dag::draw;
    use crate::report::layout::Orientation;

    fn picture(text: &str) -> String {
        let checked = check_source(text, &LowerOptions::default(), &CheckOptions::default());
        let flow = checked.flow.expect("flow lowers");
        svg(
            &draw(&flow, &checked.diagnostics, Orientation::TopDown),
            &check_deco,
        )
    }

    #[test]
    fn text_from_the_flow_is_escaped() {
        assert_eq!(
            esc("<a href='x'>&\"\u{1}"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;\u{FFFD}"
        );
        let s = picture(
            r#"[{"id": "<b>&x", "task": "t"},
                {"id": "y", "dependsOn": ["<b>&x"], "when": "{steps.<b>&x.output} == \"</svg>\"", "task": "t", "final": true}]"#,
        );
        assert!(!s.contains("<b>"), "{s}");
        assert!(s.contains("&lt;b&gt;&amp;x"), "{s}");
        assert_eq!(s.matches("</svg>").count(), 1, "{s}");
    }

    #[test]
    fn marks_edges_and_shapes() {
        let s = picture(
            r#"[{"id": "a", "task": "t"}, {"id": "b", "type": "gate", "dependsOn": ["a"], "task": "t"},
                {"id": "c", "join": "any", "dependsOn": ["a", "b", "zz"], "task": "t", "final": true}]"#,
        );
        assert!(s.contains("<g class=\"n err final\" id=\"p_c\""), "{s}");
        assert_eq!(s.matches("class=\"e any\"").count(), 2, "{s}");
        assert_eq!(s.matches("class=\"e\"").count(), 1, "{s}");
        assert!(s.contains("<g class=\"n\" id=\"p_b\" data-phase=\"b\"><title>b (gate, agent default)</title><polygon"), "{s}");
        // `w` is a dead end (W0101).
        let s = picture(r#"[{"id": "w", "task": "t"}, {"id": "f", "task": "t", "final": true}]"#);
        assert!(s.contains("<g class=\"n warn\" id=\"p_w\" data-phase=\"w\"><title>w (agent, agent default)\ncheck: warning</title><rect"), "{s}");
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(num(12.0), "12");
        assert_eq!(num(12.25), "12.3");
        assert_eq!(num(-0.04), "0");
    }
}
