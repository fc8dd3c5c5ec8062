//! Crash recovery (SPEC §10.2–§10.4): a run killed with SIGKILL at random instants — across
//! a chain, a map and a gate — is `interrupted`, and `tfc resume` completes it without
//! calling any node that had finished before the kill.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{scratch, tfc_in};

const FLOW: &str = r#"{"name":"crash","phases":[
 {"id":"list","task":"list three items"},
 {"id":"each","type":"map","over":"{steps.list.output}","dependsOn":["list"],"task":"work on {item}"},
 {"id":"check","type":"gate","dependsOn":["each"],"task":"Review {steps.each.output}"},
 {"id":"sum","dependsOn":["check"],"task":"summarise {steps.each.output}"},
 {"id":"done","final":true,"dependsOn":["sum"],"task":"finish {steps.sum.output}"}
]}"#;

const AGENT: &str = r#"#!/bin/sh
p=$(cat)
echo "$TFC_NODE" >> calls.log
sleep 0.01
case "$p" in
  *three\ items*) echo '["x","y","z"]';;
  *Review*) echo "fine"; echo "VERDICT: PASS";;
  *) echo "answer to: $p";;
esac
"#;

/// A small deterministic generator (xorshift), seeded from the clock and printed.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Nodes whose result the journal had recorded: phases that ended `done`, and map items.
fn finished(journal: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in journal.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        match v["type"].as_str() {
            Some("phase-end") if v["status"] == "done" => {
                out.insert(v["phase"].as_str().unwrap_or("").to_owned());
            }
            Some("item-end") => {
                out.insert(v["node"].as_str().unwrap_or("").to_owned());
            }
            _ => {}
        }
    }
    out
}

fn project(dir: &Path) {
    std::fs::create_dir_all(dir.join(".tfc")).expect("mkdir");
    std::fs::write(dir.join("flow.json"), FLOW).expect("flow");
    std::fs::write(dir.join("agent.sh"), AGENT).expect("agent");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.join("agent.sh"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
}

fn run_dir(dir: &Path) -> Option<std::path::PathBuf> {
    std::fs::read_dir(dir.join(".tfc/runs/crash"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
}

#[test]
fn a_run_killed_at_50_random_points_resumes_without_paying_twice() {
    let base = scratch("resume-kill");
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_nanos() as u64
        | 1;
    println!("seed {seed}");
    let mut rng = Rng(seed);
    // How long a whole run takes here: the kills spread over it.
    let probe = base.join("probe");
    project(&probe);
    let t0 = Instant::now();
    let out = tfc_in(
        Some(&probe),
        &["run", "flow.json", "--agent-cmd", "./agent.sh"],
        b"",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let span = t0.elapsed().as_millis() as u64;
    let (mut resumed, mut reused_items) = (0, 0);
    for i in 0..50 {
        let dir = base.join(format!("k{i}"));
        project(&dir);
        let mut child = Command::new(env!("CARGO_BIN_EXE_tfc"))
            .args(["run", "flow.json", "--agent-cmd", "./agent.sh"])
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(Duration::from_millis(rng.below(span + 20)));
        let _ = child.kill();
        let _ = child.wait();
        // Orphaned agents finish their sleep and log; let them.
        std::thread::sleep(Duration::from_millis(60));
        let Some(run) = run_dir(&dir) else {
            continue; // killed before the run existed: nothing to resume
        };
        let record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).expect("run.json"))
                .expect("run.json is valid JSON at every instant");
        if record["status"] == "completed" {
            continue;
        }
        let journal = std::fs::read_to_string(run.join("journal.jsonl")).expect("journal");
        let before = finished(&journal);
        reused_items += before.iter().filter(|n| n.contains('#')).count();
        let _ = std::fs::rename(dir.join("calls.log"), dir.join("calls.before"));
        let out = tfc_in(Some(&dir), &["resume", "last"], b"");
        assert_eq!(out.code, 0, "point {i} (seed {seed}): {}", out.stderr);
        assert!(
            out.stdout.starts_with("answer to: finish"),
            "{}",
            out.stdout
        );
        let after = std::fs::read_to_string(dir.join("calls.log")).unwrap_or_default();
        for node in after.lines() {
            assert!(
                !before.contains(node),
                "point {i} (seed {seed}): {node} had finished before the kill and was called again; finished: {before:?}"
            );
        }
        resumed += 1;
    }
    println!("{resumed} of 50 kills left a run to resume; {reused_items} map items reused");
    assert!(
        resumed >= 10,
        "too few kills landed inside a run ({resumed})"
    );
}
