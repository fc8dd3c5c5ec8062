use super::*;
use crate::flow::{LowerOptions, lower_source};

/// Phases `p0…p(n-1)` in a shuffled array order, each depending on up to three earlier
/// ones, from a fixed seed.
fn random_dag(n: usize, seed: u64) -> Flow {
    let mut state = seed;
    let mut next = move |m: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % m.max(1)
    };
    let mut phases: Vec<String> = (0..n)
        .map(|i| {
            let deps: Vec<String> = (0..if i == 0 { 0 } else { next(4) })
                .map(|_| format!("\"p{}\"", next(i)))
                .collect();
            format!(
                r#"{{"id": "p{i}", "task": "t", "dependsOn": [{}]}}"#,
                deps.join(",")
            )
        })
        .collect();
    for i in (1..phases.len()).rev() {
        phases.swap(i, next(i + 1));
    }
    let text = format!("[{}]", phases.join(","));
    lower_source(&text, &LowerOptions::default())
        .flow
        .expect("flow")
}

/// Ancestors of `b` by a plain search.
fn reachable(graph: &Graph, a: usize, b: usize) -> bool {
    let mut seen = vec![false; graph.len()];
    let mut stack = vec![b];
    while let Some(v) = stack.pop() {
        for &d in &graph.deps[v] {
            if d == a {
                return true;
            }
            if !std::mem::replace(&mut seen[d], true) {
                stack.push(d);
            }
        }
    }
    false
}

/// Dense queries (each phase asked about ~30 times: its direct edges go in a set) and sparse
/// ones (one or two: its dependencies are scanned).
#[test]
fn ancestors_match_a_plain_search() {
    for (seed, every) in (0..20).flat_map(|seed| [(seed, 5), (seed, 97)]) {
        let flow = random_dag(150, seed);
        let graph = Graph::new(&flow);
        assert!(graph.topo.is_some());
        let queries: Vec<(usize, usize)> = (0..graph.len())
            .flat_map(|a| (0..graph.len()).map(move |b| (a, b)))
            .filter(|(a, b)| (a * 7 + b * 13 + seed as usize).is_multiple_of(every))
            .collect();
        let answers = ancestors(&graph, &queries);
        for (&(a, b), got) in queries.iter().zip(answers) {
            assert_eq!(got, reachable(&graph, a, b), "seed {seed}: {a} -> {b}");
        }
    }
}

#[test]
fn ancestors_of_a_cyclic_graph_are_all_false() {
    let flow = lower_source(
        r#"[{"id": "a", "dependsOn": ["b"]}, {"id": "b", "dependsOn": ["a"]}]"#,
        &LowerOptions::default(),
    )
    .flow
    .unwrap();
    let graph = Graph::new(&flow);
    assert_eq!(ancestors(&graph, &[(0, 1), (1, 0)]), [false, false]);
}

#[test]
fn suggestions_are_budgeted_per_distinct_word() {
    let flow = lower_source(
        r#"[{"id": "scan", "task": "x"}, {"id": "audit", "task": "y"}]"#,
        &LowerOptions::default(),
    )
    .flow
    .unwrap();
    let mut names = IdSuggester::new(&flow);
    assert_eq!(names.suggest("scna", "audit"), Some("scan"));
    for i in 0..IdSuggester::BUDGET {
        names.suggest(&format!("zz{i}"), "audit");
    }
    // Known words keep their answer; new ones are no longer looked up.
    assert_eq!(names.suggest("scna", "audit"), Some("scan"));
    assert_eq!(names.suggest("audti", "scan"), None);
}

/// The phase that holds a misspelt name is never offered for it (SPEC §7.5 "One mistake, one
/// error"): `betaa` inside `beta` gets the next nearest id, or none.
#[test]
fn suggestions_skip_the_phase_that_asks() {
    let flow = lower_source(
        r#"[{"id": "beta", "task": "x"}, {"id": "betas", "task": "y"}, {"id": "gamma", "task": "z"}]"#,
        &LowerOptions::default(),
    )
    .flow
    .unwrap();
    let mut names = IdSuggester::new(&flow);
    assert_eq!(names.suggest("beta_", "gamma"), Some("beta"));
    assert_eq!(names.suggest("beta_", "beta"), Some("betas"));
    assert_eq!(names.suggest("gamm", "gamma"), None);
}

#[test]
fn opposing_guards_stay_linear() {
    // 20 000 guarded phases on one dependency: a quadratic pairing would take minutes.
    let mut phases = vec![r#"{"id": "root", "task": "x"}"#.to_owned()];
    for i in 0..20_000 {
        phases.push(format!(
                r#"{{"id": "p{i}", "dependsOn": ["root"], "when": "{{steps.root.output}} == v{i}", "task": "t", "final": {}}}"#,
                i == 0
            ));
    }
    let text = format!("[{}]", phases.join(","));
    let checked = crate::check::check_source(
        &text,
        &LowerOptions::default(),
        &crate::check::CheckOptions::default(),
    );
    assert!(!checked.has_errors());
}
