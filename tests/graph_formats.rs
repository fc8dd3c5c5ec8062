//! `tfc graph --format svg|dot` end to end (SPEC §11.5): goldens of one example flow, marks of
//! check problems, the default staying Mermaid.
//!
//! `TFC_BLESS=1 cargo test --test graph_formats` rewrites the goldens instead of comparing.

mod common;

use common::{root, scratch, tfc, tfc_in};

fn bless() -> bool {
    std::env::var_os("TFC_BLESS").is_some_and(|v| v == "1")
}

/// Compare `got` with `tests/golden/graph/<name>` (or rewrite it when blessing).
fn golden(name: &str, got: &str) {
    let path = root().join("tests/golden/graph").join(name);
    if bless() {
        std::fs::write(&path, got).expect("write golden");
        return;
    }
    let want = std::fs::read_to_string(&path).expect("read golden");
    assert!(
        got == want,
        "{name} differs from its golden (TFC_BLESS=1 to rewrite):\n{got}"
    );
}

#[test]
fn svg_of_the_conditional_review_example() {
    let out = tfc(&[
        "graph",
        "examples/conditional-review.json",
        "--format",
        "svg",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    golden("conditional-review.svg", &out.stdout);
}

#[test]
fn dot_of_the_conditional_review_example() {
    let out = tfc(&[
        "graph",
        "examples/conditional-review.json",
        "--format",
        "dot",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    golden("conditional-review.dot", &out.stdout);
}

#[test]
fn svg_and_dot_of_the_changelog_example() {
    let svg = tfc(&["graph", "examples/changelog/flow.json", "--format", "svg"]);
    assert_eq!(svg.code, 0, "{svg:?}");
    golden("changelog.svg", &svg.stdout);
    let dot = tfc(&[
        "graph",
        "examples/changelog/flow.json",
        "--format",
        "dot",
        "--direction",
        "lr",
    ]);
    assert_eq!(dot.code, 0, "{dot:?}");
    golden("changelog-lr.dot", &dot.stdout);
}

#[test]
fn mermaid_stays_the_default() {
    let plain = tfc(&["graph", "examples/conditional-review.json"]);
    let named = tfc(&[
        "graph",
        "examples/conditional-review.json",
        "--format",
        "mermaid",
    ]);
    assert_eq!(plain.code, 0);
    assert!(plain.stdout.starts_with("flowchart TD\n"), "{plain:?}");
    assert_eq!(plain.stdout, named.stdout);
}

#[test]
fn check_problems_are_outlined_and_the_exit_code_kept() {
    let cwd = scratch("graph-formats-errors");
    std::fs::write(
        cwd.join("bad.json"),
        r#"[{"id": "a", "task": "x"},
            {"id": "b<i>", "dependsOn": ["a", "nope"], "task": "y", "final": true}]"#,
    )
    .expect("write flow");
    let svg = tfc_in(Some(&cwd), &["graph", "bad.json", "--format", "svg"], b"");
    assert_eq!(svg.code, 1, "{svg:?}");
    assert!(svg.stdout.starts_with("<svg "), "{svg:?}");
    assert!(
        svg.stdout
            .contains("<g class=\"n err final\" id=\"p_b_i_\" data-phase=\"b&lt;i&gt;\">"),
        "{}",
        svg.stdout
    );
    assert!(!svg.stdout.contains("<i>"), "{}", svg.stdout);
    assert!(svg.stderr.contains("E0103"), "{}", svg.stderr);
    let dot = tfc_in(Some(&cwd), &["graph", "bad.json", "--format", "dot"], b"");
    assert_eq!(dot.code, 1, "{dot:?}");
    assert!(
        dot.stdout
            .contains("p_b_i_ [label=\"b<i>\\nagent\", shape=box, color=\"#cc0000\""),
        "{}",
        dot.stdout
    );
    let bad = tfc_in(Some(&cwd), &["graph", "bad.json", "--format", "png"], b"");
    assert_eq!(bad.code, 2, "{bad:?}");
}

#[test]
fn dot_output_is_read_by_graphviz() {
    if std::process::Command::new("dot")
        .arg("-V")
        .output()
        .is_err()
    {
        common::skip("Graphviz `dot` not found (Debian: graphviz)");
        return;
    }
    let cwd = scratch("graph-formats-graphviz");
    std::fs::write(
        cwd.join("f.json"),
        r#"{"name": "q\"uote", "phases": [
            {"id": "a\\b", "task": "x"},
            {"id": "s", "type": "flow", "dependsOn": ["a\\b"], "def": {"phases": [{"id": "x", "task": "t"}]}},
            {"id": "c", "join": "any", "dependsOn": ["a\\b", "s"], "when": "{steps.s.output} == \"y\\n\"", "task": "t", "final": true}]}"#,
    )
    .expect("write flow");
    let out = tfc_in(Some(&cwd), &["graph", "f.json", "--format", "dot"], b"");
    assert_eq!(out.code, 0, "{out:?}");
    std::fs::write(cwd.join("f.dot"), &out.stdout).expect("write dot");
    let gv = std::process::Command::new("dot")
        .args(["-Tsvg", "-o"])
        .arg(cwd.join("f.svg"))
        .arg(cwd.join("f.dot"))
        .output()
        .expect("run dot");
    let stderr = String::from_utf8_lossy(&gv.stderr);
    assert!(
        gv.status.success() && stderr.trim().is_empty(),
        "{stderr}\n{}",
        out.stdout
    );
    let svg = std::fs::read_to_string(cwd.join("f.svg")).expect("dot wrote svg");
    assert!(svg.contains("a\\b"), "{svg}");
}
