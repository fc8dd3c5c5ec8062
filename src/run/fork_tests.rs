//! Unit tests of the fork's plan: the re-run set for each reason, on parents run in memory
//! with the store.

use std::path::{Path, PathBuf};

use super::*;
use crate::agent::{FnAgent, Outcome};
use crate::run::{Interpreter, RunOptions, RunSettings};

/// A diamond with a side branch: `a → b, c → d`; `e` reads `{args.who}` in its `when`;
/// `f` depends on `e`.
const FLOW: &str = r#"{"name": "k", "args": {"who": {"type": "string", "default": "me"}},
  "phases": [
    {"id": "a", "task": "one"},
    {"id": "b", "dependsOn": ["a"], "task": "two {steps.a.output}"},
    {"id": "c", "dependsOn": ["a"], "task": "three", "idempotent": false},
    {"id": "d", "dependsOn": ["b", "c"], "task": "four {steps.b.output}"},
    {"id": "e", "when": "{args.who} == me", "task": "five"},
    {"id": "f", "dependsOn": ["e", "d"], "task": "six", "output": "json",
     "expect": {"type": "object", "required": ["ok"]}}
  ]}"#;

fn parent(root: &Path) -> Parent {
    let agent = FnAgent::new("echo", |req| {
        if req.prompt.starts_with("six") {
            Outcome::ok("{\"ok\": true}")
        } else {
            Outcome::ok(format!("<{}>", req.prompt))
        }
    });
    let rec = stored_run(root, agent, "k", FLOW, None);
    let dir: PathBuf = root.join(".tfc/runs/k").join(&rec.run_id);
    open(&dir).expect("opens")
}

/// Run `text` with `agent` in the project `root` (its store there), as a fork or resume of
/// `carried` when given.
fn stored_run(
    root: &Path,
    agent: impl crate::agent::Agent + 'static,
    name: &str,
    text: &str,
    carried: Option<Carried>,
) -> crate::run::RunRecord {
    Interpreter::with_agent(agent)
        .options(RunOptions {
            settings: RunSettings {
                project_root: Some(root.to_path_buf()),
                ..RunSettings::default()
            },
            cwd: Some(root.to_path_buf()),
            resume: carried.map(Arc::new),
            ..RunOptions::default()
        })
        .eval_text(name, text, Map::default())
        .expect("runs")
}

fn actions(f: &Fork) -> Vec<(String, String)> {
    f.actions
        .iter()
        .map(|(id, a)| (id.clone(), a.label()))
        .collect()
}

fn runs(f: &Fork) -> Vec<&str> {
    f.actions
        .iter()
        .filter(|(_, a)| matches!(a, Action::Run(_)))
        .map(|(id, _)| id.as_str())
        .collect()
}

#[test]
fn from_takes_the_phase_and_every_descendant() {
    let tmp = tempfile::tempdir().expect("temp");
    let p = parent(tmp.path());
    let req = ForkRequest {
        from: vec!["c".into()],
        ..ForkRequest::default()
    };
    let f = plan(&p, "completed", &req, None, Caps::default()).expect("plan");
    assert_eq!(runs(&f), vec!["c", "d", "f"]);
    // c is idempotent:false and asked for: it runs; the copies are a, b, e.
    let copied = &f.plan.carried.fork.as_ref().expect("fork").nodes.copy;
    let mut copied: Vec<&String> = copied.iter().collect();
    copied.sort();
    assert_eq!(copied, vec!["a", "b", "e"]);
    assert_eq!(f.plan.carried.spent_before.expect("spent").calls, 3);
    let fresh = &f.plan.carried.fork.as_ref().expect("fork").fresh;
    assert!(fresh.contains("c") && fresh.contains("f") && !fresh.contains("a"));
}

#[test]
fn a_set_reruns_only_its_descendants_and_is_checked_against_its_contract() {
    let tmp = tempfile::tempdir().expect("temp");
    let p = parent(tmp.path());
    let set = |phase: &str, text: &str| ForkRequest {
        set: vec![SetOutput {
            phase: phase.into(),
            item: None,
            text: text.into(),
        }],
        ..ForkRequest::default()
    };
    let f = plan(&p, "completed", &set("b", "new b"), None, Caps::default()).expect("plan");
    assert_eq!(runs(&f), vec!["d", "f"]);
    assert_eq!(actions(&f)[1], ("b".to_owned(), "set".to_owned()));
    let (key, rec) = &f.plan.carried.states["b"];
    assert_eq!((key.as_str(), rec.output.as_str()), (ANY_KEY, "new b"));
    // f's contract requires `ok`.
    let err = plan(
        &p,
        "completed",
        &set("f", "{\"no\": 1}"),
        None,
        Caps::default(),
    )
    .expect_err("violates");
    assert!(
        err.contains("$: missing required property 'ok'") || err.contains("ok"),
        "{err}"
    );
    let f = plan(
        &p,
        "completed",
        &set("f", "{\"ok\": 2}"),
        None,
        Caps::default(),
    )
    .expect("ok");
    assert_eq!(
        f.plan.carried.states["f"]
            .1
            .json
            .as_ref()
            .map(Value::to_json)
            .as_deref(),
        Some("{\"ok\":2}")
    );
}

#[test]
fn a_changed_argument_reruns_what_reads_it_even_in_a_condition() {
    let tmp = tempfile::tempdir().expect("temp");
    let p = parent(tmp.path());
    let req = ForkRequest {
        pairs: vec![("who".into(), "you".into())],
        ..ForkRequest::default()
    };
    let f = plan(&p, "completed", &req, None, Caps::default()).expect("plan");
    assert_eq!(runs(&f), vec!["e", "f"]);
    assert_eq!(f.args.get("who"), Some(&Value::from("you")));
    assert_eq!(f.actions["e"], Action::Run(Why::Args), "{:?}", actions(&f));
    // A value that does not convert is refused with its code.
    let req = ForkRequest {
        args: Some("{\"nope\": 1}".into()),
        ..ForkRequest::default()
    };
    let err = plan(&p, "completed", &req, None, Caps::default()).expect_err("unknown arg");
    assert!(err.starts_with('E'), "{err}");
}

#[test]
fn a_running_parent_is_refused_and_replan_gives_the_same_states() {
    let tmp = tempfile::tempdir().expect("temp");
    let p = parent(tmp.path());
    let req = ForkRequest {
        from: vec!["d".into()],
        ..ForkRequest::default()
    };
    let err = plan(&p, "running", &req, None, Caps::default()).expect_err("running");
    assert!(err.contains("a fork starts from an ended run"), "{err}");
    let f = plan(&p, "completed", &req, None, Caps::default()).expect("plan");
    let origin = f.plan.carried.origin.clone().expect("origin");
    let again = replan(&origin).expect("replans");
    let mut a: Vec<&String> = f.plan.carried.states.keys().collect();
    let mut b: Vec<&String> = again.states.keys().collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    assert_eq!(
        again.fork.as_ref().map(|f| f.forked_from.to_json()),
        Some(format!(
            "{{\"runId\":\"{}\",\"from\":[\"d\"],\"set\":[]}}",
            p.run_id
        ))
    );
}

/// A flow of `n` agent phases where phase `i` depends on the earlier phases whose bit is set
/// in `edges[i]`, each prompt naming its id.
fn dag_flow(n: usize, edges: &[u32]) -> String {
    let phases: Vec<String> = (0..n)
        .map(|i| {
            let deps: Vec<String> = (0..i)
                .filter(|j| edges[i] & (1 << j) != 0)
                .map(|j| format!("\"p{j}\""))
                .collect();
            format!(
                r#"{{"id": "p{i}", "dependsOn": [{}], "task": "call p{i}"}}"#,
                deps.join(", ")
            )
        })
        .collect();
    format!(r#"{{"name": "g", "phases": [{}]}}"#, phases.join(", "))
}

/// Run `text` (as a fork of `carried` when given) with an agent that logs each call's phase.
fn counted_run(
    root: &Path,
    text: &str,
    carried: Option<Carried>,
) -> (crate::run::RunRecord, Vec<String>) {
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = log.clone();
    let agent = FnAgent::new("count", move |req| {
        let id = req.prompt.trim_start_matches("call ").to_owned();
        seen.lock().unwrap_or_else(|e| e.into_inner()).push(id);
        Outcome::ok("ok")
    });
    let rec = stored_run(root, agent, "g", text, carried);
    let mut calls = log.lock().unwrap_or_else(|e| e.into_inner()).clone();
    calls.sort();
    (rec, calls)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Whatever the DAG, a fork `--from P` calls exactly P and its descendants, once each,
    /// and a `--set P` exactly P's descendants.
    #[test]
    fn a_fork_calls_exactly_its_rerun_set(
        n in 2usize..9,
        edges in proptest::collection::vec(0u32..256, 9),
        pick in 0usize..9,
        set in proptest::bool::ANY,
    ) {
        let tmp = tempfile::tempdir().expect("temp");
        // Every phase after the first depends on p0 too: the graph is connected (E0106).
        let edges: Vec<u32> = edges.iter().map(|e| e | 1).collect();
        let text = dag_flow(n, &edges);
        let (parent, _) = counted_run(tmp.path(), &text, None);
        let p = open(&tmp.path().join(".tfc/runs/g").join(&parent.run_id)).expect("opens");
        let target = format!("p{}", pick % n);
        let req = if set {
            ForkRequest {
                set: vec![SetOutput { phase: target.clone(), item: None, text: "given".into() }],
                ..ForkRequest::default()
            }
        } else {
            ForkRequest { from: vec![target.clone()], ..ForkRequest::default() }
        };
        let f = plan(&p, "completed", &req, None, Caps::default()).expect("plans");
        // Expected: the closure of the target over the edges, by hand.
        let t = pick % n;
        let mut reach = vec![false; n];
        reach[t] = true;
        for i in t + 1..n {
            reach[i] = (0..i).any(|j| reach[j] && edges[i] & (1 << j) != 0);
        }
        if set {
            reach[t] = false;
        }
        let mut expected: Vec<String> =
            (0..n).filter(|&i| reach[i]).map(|i| format!("p{i}")).collect();
        expected.sort();
        let def = f.plan.def.to_json();
        let (child, calls) = counted_run(tmp.path(), &def, Some(f.plan.carried));
        proptest::prop_assert_eq!(&calls, &expected);
        proptest::prop_assert_eq!(child.agent_calls() as usize, expected.len());
        proptest::prop_assert_eq!(child.status, crate::run::RunStatus::Completed);
    }
}
