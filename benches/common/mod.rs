//! Flows and arguments shared by the run benches.

use tfc::value::{Map, Value};

/// A chain of `n` agent phases, each continuing from its predecessor's output.
pub fn chain_flow(n: usize) -> String {
    let phases: Vec<String> = (0..n)
        .map(|i| match i {
            0 => r#"{"id": "p0", "task": "start"}"#.to_string(),
            _ => format!(
                r#"{{"id": "p{i}", "dependsOn": ["p{}"], "task": "Continue from {{previous.output}}"}}"#,
                i - 1
            ),
        })
        .collect();
    format!(
        r#"{{"name": "bench-chain", "phases": [{}]}}"#,
        phases.join(",")
    )
}

/// `{"files": [{"path": "src/f0.rs"}, …]}` with `items` entries, for a map over `{args.files}`.
pub fn map_args(items: usize) -> Map {
    let list = (0..items).map(|i| {
        let mut m = Map::default();
        m.insert("path".into(), Value::from(format!("src/f{i}.rs")));
        Value::Object(m)
    });
    let mut args = Map::default();
    args.insert("files".into(), Value::Array(list.collect()));
    args
}
