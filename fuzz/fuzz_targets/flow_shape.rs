//! Large flows on purpose (structure-aware): `arbitrary` picks a chain length (up to 2,000
//! phases), a fan-in width, extra forward edges, phase kinds and `when` guards; the flow is
//! written as JSON and checked. Most chains are short (up to 16 phases, so the fuzzer runs
//! hundreds of flows a second); one input in [`LARGE_ONE_IN`], picked by a hash of its bytes
//! ([`tfc_fuzz::large_draw`]), is a chain of 1,000 to 2,000 phases
//! (`corpus/flow_shape/seed-phases-2000` is one). Oracle: such a flow is valid — every reference
//! points at an ancestor, every kind has its required fields — so the checker reports no
//! error. With one back edge added it must report the cycle (E0104, or E0105 for a self edge)
//! and nothing else as an error.

#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value as Json, json};
use tfc::check::{CheckOptions, check_source};
use tfc::flow::LowerOptions;

#[derive(Arbitrary, Debug)]
struct Shape {
    /// Picks the chain's length: see [`phases`].
    chain: u16,
    fan_in: u16,
    edges: Vec<(u16, u16)>,
    kinds: Vec<u8>,
    guards: Vec<u16>,
    back_edge: Option<(u16, u16)>,
}

/// One input in this many is large.
const LARGE_ONE_IN: u64 = 256;

/// The number of chain phases: 1,000 to 2,000 for a large input, else 1 to 16.
fn phases(chain: u16, large: bool) -> usize {
    if large {
        1_000 + usize::from(chain) % 1_001
    } else {
        1 + usize::from(chain % 16)
    }
}

fuzz_target!(|data: &[u8]| {
    let large = tfc_fuzz::large_draw(data, LARGE_ONE_IN);
    let Ok(shape) = Shape::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let n = phases(shape.chain, large);
    let id = |i: usize| format!("p{i}");
    let mut deps: Vec<Vec<usize>> = (0..n)
        .map(|i| if i == 0 { vec![] } else { vec![i - 1] })
        .collect();
    for &(a, b) in &shape.edges {
        let (a, b) = (usize::from(a) % n, usize::from(b) % n);
        if a < b && !deps[b].contains(&a) {
            deps[b].push(a);
        }
    }
    let mut phases: Vec<Json> = Vec::with_capacity(n + 1);
    for (i, d) in deps.iter().enumerate() {
        let kind = shape
            .kinds
            .get(i % shape.kinds.len().max(1))
            .copied()
            .unwrap_or(0)
            % 6;
        let up = d.first().map(|&j| id(j));
        let read = up
            .as_ref()
            .map(|u| format!(" after {{steps.{u}.output}}"))
            .unwrap_or_default();
        let mut p = match (kind, &up) {
            (1, _) => json!({"type": "script", "run": ["echo", format!("step {i}{read}")]}),
            (2, Some(u)) => {
                json!({"type": "map", "over": format!("{{steps.{u}.json}}"), "task": "Look at {item}"})
            }
            (3, _) => {
                json!({"type": "gate", "eval": [format!("{{args.level}} contains {i}")], "task": format!("Judge{read}")})
            }
            (4, _) => {
                json!({"type": "loop", "until": "{loop.iteration} >= 2", "maxIterations": 3, "task": format!("Refine{read}")})
            }
            (5, Some(u)) => {
                json!({"type": "reduce", "from": [u], "task": "Merge {previous.output}"})
            }
            _ => json!({"task": format!("Step {i}{read}")}),
        };
        p["id"] = json!(id(i));
        if !d.is_empty() {
            p["dependsOn"] = json!(d.iter().map(|&j| id(j)).collect::<Vec<_>>());
        }
        if let Some(&g) = shape.guards.get(i % shape.guards.len().max(1))
            && i > 0
        {
            let j = usize::from(g) % i;
            p["when"] = json!(format!("{{steps.{}.output}} != ''", id(j)));
        }
        phases.push(p);
    }
    let width = usize::from(shape.fan_in) % n + 1;
    let ins: Vec<String> = (n - width..n).map(id).collect();
    let task: String = ins
        .iter()
        .map(|i| format!("{{steps.{i}.output}}\n"))
        .collect();
    phases.push(json!({"id": "join", "dependsOn": ins, "final": true, "task": task}));

    let mut flow = json!({"name": "shape", "args": {"level": {"type": "string", "default": "1"}}, "phases": phases});
    let lower = LowerOptions {
        default_name: Some("fuzz".into()),
    };
    let text = flow.to_string();
    let checked = check_source(&text, &lower, &CheckOptions::default());
    let errors: Vec<_> = checked
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{} {}", d.code.as_str(), d.message))
        .collect();
    assert!(errors.is_empty(), "a valid flow has errors: {errors:?}");
    assert_eq!(checked.flow.map(|f| f.phases.len()), Some(n + 1));

    if let Some((a, b)) = shape.back_edge {
        // Phase a depends on b ≥ a: a cycle through the chain (or a self edge).
        let (a, b) = (usize::from(a) % n, usize::from(b) % n);
        let (a, b) = (a.min(b), a.max(b));
        let deps = flow["phases"][a]
            .as_object_mut()
            .expect("phases are objects")
            .entry("dependsOn")
            .or_insert_with(|| json!([]));
        deps.as_array_mut()
            .expect("dependsOn is an array")
            .push(json!(id(b)));
        let text = flow.to_string();
        let checked = check_source(&text, &lower, &CheckOptions::default());
        let expected = if a == b { "E0105" } else { "E0104" };
        let codes: Vec<_> = checked
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.code.as_str())
            .collect();
        assert!(
            codes.contains(&expected),
            "no {expected} for {a} -> {b}: {codes:?}"
        );
        assert!(
            codes.iter().all(|c| *c == expected || *c == "E0104"),
            "{codes:?}"
        );
    }
});
