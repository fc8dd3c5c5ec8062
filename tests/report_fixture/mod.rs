//! A run for the report tests: every section filled, and hostile text from the flow and the
//! model (markup in ids, prompts and outputs), a 70,000-char output, a retried call, a map,
//! a gate verdict, a skipped `when` phase and a `join: "any"` reduce.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use crate::common::{Outcome, root, scratch, tfc_in};

pub const FLOW: &str = r#"{"name": "report<demo>", "phases": [
  {"id": "evil<i>", "task": "Say <b>hi</b> & \"bye\" </script>"},
  {"id": "long", "dependsOn": ["evil<i>"], "task": "Write a lot."},
  {"id": "list", "output": "json", "task": "List items."},
  {"id": "flaky", "dependsOn": ["evil<i>"], "retry": {"max": 2, "backoffMs": 1}, "task": "Try."},
  {"id": "fan", "type": "map", "over": "{steps.list.json}", "dependsOn": ["long", "list"], "task": "Item {item}"},
  {"id": "review", "type": "gate", "dependsOn": ["fan", "flaky"], "task": "Review {steps.fan.output}"},
  {"id": "never", "dependsOn": ["review"], "when": "{steps.long.output} == \"nope\"", "task": "Never runs."},
  {"id": "sum", "type": "reduce", "join": "any", "from": ["never", "review"], "final": true, "task": "Sum {previous.output}"}
]}"#;

/// The agent script.
pub fn agent() -> String {
    root()
        .join("tests/fixtures/agents/report.sh")
        .display()
        .to_string()
}

/// A fresh project in `name` holding the flow, and the run's `tfc run` outcome (with `extra`
/// flags). Returns the project dir.
pub fn run(name: &str, extra: &[&str]) -> (Outcome, PathBuf) {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc")).expect("create .tfc");
    std::fs::write(dir.join("flow.json"), FLOW).expect("write flow");
    let agent = agent();
    let mut argv = vec!["run", "flow.json", "--agent-cmd", &agent];
    argv.extend_from_slice(extra);
    (tfc_in(Some(&dir), &argv, b""), dir)
}

/// The one run directory of the project.
pub fn run_dir(project: &Path) -> PathBuf {
    let flows = project.join(".tfc/runs");
    let flow = std::fs::read_dir(&flows)
        .expect("runs dir")
        .next()
        .expect("a flow dir")
        .expect("entry")
        .path();
    std::fs::read_dir(flow)
        .expect("flow dir")
        .next()
        .expect("a run dir")
        .expect("entry")
        .path()
}
