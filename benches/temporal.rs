//! What running on Temporal costs: the same flow run by the local driver and on a Temporal dev
//! server with two `tfc worker`s, every call answered by the same instant command agent, side
//! by side. Prints the medians and the overhead per phase (a 200-phase chain) and per map item
//! (a 500-item map at concurrency 16, and a 2,000-item one that runs in shards). Needs `--features temporal` and the `temporal` binary
//! (env `TFC_TEMPORAL_BIN`, else `PATH`): `cargo bench --features temporal --bench temporal`.
//! Goals (issue: runs on Temporal): ≤ 100 ms per phase, ≤ 20 ms per map item.

#[path = "../tests/temporal_env/mod.rs"]
mod temporal_env;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use temporal_env::{Server, Worker, require, scratch, tfc};

/// An agent that answers at once: reads the prompt, prints one line.
const INSTANT: &str = "#!/bin/sh\ncat >/dev/null\necho \"ok $TFC_PHASE_ID\"\n";

/// Runs of each engine per workload (alternating local and Temporal).
const SAMPLES: usize = 3;

fn chain(n: usize) -> String {
    let mut phases = vec![r#"{"id": "p0", "task": "start"}"#.to_owned()];
    for i in 1..n {
        phases.push(format!(
            r#"{{"id": "p{i}", "dependsOn": ["p{}"], "task": "next {{steps.p{}.output}}"}}"#,
            i - 1,
            i - 1
        ));
    }
    format!(r#"{{"name": "chain", "phases": [{}]}}"#, phases.join(",\n"))
}

fn map(n: usize) -> String {
    format!(
        r#"{{"name": "map", "phases": [
  {{"id": "list", "type": "script",
    "run": ["sh", "-c", "printf '['; seq -s, -f '\"f%g\"' 0 {last}; printf ']'"]}},
  {{"id": "each", "type": "map", "over": "{{steps.list.json}}", "dependsOn": ["list"],
    "concurrency": 16, "task": "look at {{item}}"}}]}}"#,
        last = n - 1
    )
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// One `tfc run` of `flow.json` in a fresh copy of `dir`'s flow, with `extra` arguments; its
/// wall time. Panics when the run does not succeed (a figure of a failed run means nothing).
fn timed_run(dir: &Path, agent: &Path, extra: &[&str]) -> Duration {
    let _ = std::fs::remove_dir_all(dir.join(".tfc").join("runs"));
    let agent = agent.display().to_string();
    let mut args = vec!["run", "flow.json", "--agent-cmd", &agent];
    args.extend_from_slice(extra);
    let start = Instant::now();
    let ran = tfc(dir, &args);
    let took = start.elapsed();
    assert_eq!(ran.code, 0, "tfc {args:?} failed:\n{}", ran.stderr);
    took
}

fn workload(server: &Server, base: &Path, name: &str, flow: &str, units: usize, unit: &str) {
    let dir = base.join(name);
    std::fs::create_dir_all(dir.join(".tfc")).expect("project");
    std::fs::write(dir.join("flow.json"), flow).expect("flow");
    let agent = dir.join("agent.sh");
    std::fs::write(&agent, INSTANT).expect("agent");
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let _workers = [
        Worker::start(server, &dir, &agent, "a"),
        Worker::start(server, &dir, &agent, "b"),
    ];
    let address = server.address();
    let remote = ["--engine", "temporal", "--temporal", address.as_str()];
    // One untimed run each: the workers connect and the caches warm.
    timed_run(&dir, &agent, &[]);
    timed_run(&dir, &agent, &remote);
    let (mut local, mut temporal) = (Vec::new(), Vec::new());
    for _ in 0..SAMPLES {
        local.push(timed_run(&dir, &agent, &[]));
        temporal.push(timed_run(&dir, &agent, &remote));
    }
    let (local, temporal) = (median(local), median(temporal));
    let overhead = temporal.saturating_sub(local).as_secs_f64() * 1e3 / units as f64;
    println!(
        "{name:<10} local {:>9.1} ms   temporal {:>9.1} ms   overhead {overhead:>6.1} ms per {unit}",
        local.as_secs_f64() * 1e3,
        temporal.as_secs_f64() * 1e3,
    );
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |key: &str| filter.is_empty() || filter.iter().any(|f| key.contains(f.as_str()));
    let Some(bin) = require() else { return };
    let base = scratch("bench");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("scratch");
    let server = Server::start(&bin, &base);
    if wanted("chain_200") {
        workload(&server, &base, "chain_200", &chain(200), 200, "phase");
    }
    if wanted("map_500") {
        workload(&server, &base, "map_500", &map(500), 500, "item");
    }
    if wanted("map_2000") {
        // Past the default shard size: four child workflows of 500 items.
        workload(&server, &base, "map_2000", &map(2000), 2000, "item");
    }
}
