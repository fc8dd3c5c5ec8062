use super::*;

#[test]
fn guards_are_single_comparisons_with_a_placeholder() {
    let g = |s: &str| guard_of(s).map(|(ops, eq)| (ops.0, ops.1, eq));
    assert_eq!(
        g("{steps.t.json.severity} == high"),
        Some(("high".into(), "{steps.t.json.severity}".into(), true))
    );
    assert_eq!(
        g("(high != { steps.t.json.severity })").map(|x| x.2),
        Some(false)
    );
    assert_eq!(g("{a} == b"), g("b == {a}"));
    assert_eq!(g("{a} >= 1"), None);
    assert_eq!(g("{a} == 1 && {b} != 2"), None);
    assert_eq!(g("x == y"), None);
    assert_eq!(g("{a} =="), None);
}

mod flow_tests {
    use crate::check::testing::codes;

    const IF_ELSE: &str = r#"[
        {"id": "t", "output": "json", "task": "classify"},
        {"id": "deep", "dependsOn": ["t"], "when": "{steps.t.json.severity} == high", "task": "deep"},
        {"id": "quick", "dependsOn": ["t"], "when": "{steps.t.json.severity} != high", "task": "quick"},
        {"id": "merge", "type": "reduce", "from": ["deep", "quick"], "JOIN": "all", "task": "{previous.output}"}
    ]"#;

    #[test]
    fn if_else_joined_with_any_is_not_a_warning() {
        let joined = IF_ELSE.replace(r#""JOIN": "all""#, r#""join": "any""#);
        assert_eq!(codes(&joined), Vec::<&str>::new());
        let waits_for_both = IF_ELSE.replace(r#""JOIN": "all""#, r#""join": "all""#);
        assert_eq!(codes(&waits_for_both), ["W0105"]);
    }

    #[test]
    fn different_comparisons_do_not_oppose() {
        let text = IF_ELSE
            .replace("!= high", "!= low")
            .replace(r#""JOIN": "all""#, r#""join": "all""#);
        assert_eq!(codes(&text), Vec::<&str>::new());
    }
}
