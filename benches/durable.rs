//! Durable runs: resuming a 10,000-phase run whose phases are all reusable (open the parent,
//! plan the child, run it with every phase restored from the parent — no agent call), and
//! one cross-run cache lookup (key hash + `.tfc/cache/<key>.json` read) with a warm store of
//! 1,000 entries; and a fork of a finished 1,000-phase run that re-runs its last phase
//! (`tfc fork RUN --from LEAF`: open, plan, copy 999 phases) against a resume of the same run,
//! timed to the fork's first agent call (SPEC §10.4: within 2× the resume). Prints medians.
//! Run with `cargo bench --bench durable` (`DURABLE_ONLY=resume|lookup|fork` for one).

#[allow(dead_code)]
mod common;

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::chain_flow;
use tfc::agent::{FnAgent, Outcome};
use tfc::run::cache::key::KeyParts;
use tfc::run::cache::store;
use tfc::run::resume::{Caps, open, plan};
use tfc::run::{Interpreter, RunOptions, RunSettings, RunStatus};
use tfc::value::{Map, Value};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The time this thread has spent on a CPU (Linux `schedstat`; `None` elsewhere): on a busy
/// machine the wall time also counts the waits for a core.
fn cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn interp(root: &Path, resume: Option<Arc<tfc::run::resume::Carried>>) -> Interpreter {
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let agent = FnAgent::new("bench", move |_req| {
        calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Outcome::ok("ok".to_owned())
    });
    Interpreter::with_agent(agent).options(RunOptions {
        settings: RunSettings {
            project_root: Some(root.to_path_buf()),
            ..RunSettings::default()
        },
        cwd: Some(root.to_path_buf()),
        resume,
        ..RunOptions::default()
    })
}

fn resume_bench() {
    let n = 10_000;
    let text = chain_flow(n);
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path();
    let t = Instant::now();
    let parent = interp(root, None)
        .eval_text("chain", &text, Map::default())
        .expect("the chain runs");
    println!(
        "(the parent run itself, with its store: {:.1} ms)",
        t.elapsed().as_secs_f64() * 1e3
    );
    assert_eq!(parent.status, RunStatus::Completed);
    let flow_dir = std::fs::read_dir(root.join(".tfc/runs"))
        .expect("runs")
        .flatten()
        .next()
        .expect("flow dir")
        .path();
    let dir = flow_dir.join(&parent.run_id);
    let mut samples = Vec::new();
    let mut cpu = Vec::new();
    for _ in 0..7 {
        let c = cpu_time();
        let t = Instant::now();
        let p = open(&dir).expect("opens");
        let opened = t.elapsed();
        let planned = plan(&p, "failed", None, Caps::default()).expect("plans");
        let planned_at = t.elapsed();
        let def = planned.def.to_json();
        let child = interp(root, Some(Arc::new(planned.carried)))
            .eval_text("chain", &def, Map::default())
            .expect("the child runs");
        samples.push(t.elapsed());
        if let (Some(a), Some(b)) = (c, cpu_time()) {
            cpu.push(b.saturating_sub(a));
        }
        eprintln!(
            "  open {:.1} ms, plan {:.1} ms, child run {:.1} ms",
            opened.as_secs_f64() * 1e3,
            (planned_at - opened).as_secs_f64() * 1e3,
            (t.elapsed() - planned_at).as_secs_f64() * 1e3
        );
        assert_eq!(child.status, RunStatus::Completed);
        let reused = child
            .phases
            .values()
            .filter(|r| r.cache_hit == Some("run-only"))
            .count();
        assert_eq!(reused, n, "every phase is reused");
        black_box(child);
    }
    let m = median(samples);
    println!(
        "resume_all_reusable_10000: {:.1} ms per resume ({:.1} µs per phase)",
        m.as_secs_f64() * 1e3,
        m.as_secs_f64() * 1e6 / n as f64
    );
    if !cpu.is_empty() {
        println!(
            "  (on-CPU time of the resuming thread: {:.1} ms per resume)",
            median(cpu).as_secs_f64() * 1e3
        );
    }
}

fn lookup_bench() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path();
    let now = 1_800_000_000_000u64;
    let parts = |i: usize| KeyParts {
        flow: "bench".into(),
        phase_fp: format!("{i:016x}"),
        kind: vec![
            format!("p{i}"),
            "default".into(),
            String::new(),
            format!("task {i} ").repeat(40),
        ],
        agent_scope: "both".into(),
        agents: "{}".into(),
        backend: "bench/".into(),
        ..KeyParts::default()
    };
    let mut record = Map::default();
    record.insert("status".into(), Value::from("done"));
    record.insert(
        "output".into(),
        Value::from("an answer of a few hundred bytes ".repeat(10)),
    );
    let record = Value::Object(record);
    for i in 0..store::MAX_ENTRIES {
        store::store(root, &parts(i).key(None), &record, now).expect("store");
    }
    let keys: Vec<KeyParts> = (0..store::MAX_ENTRIES).map(parts).collect();
    let rounds = 5_000;
    let mut samples = Vec::new();
    for _ in 0..9 {
        let t = Instant::now();
        for r in 0..rounds {
            let k = &keys[(r * 7919) % keys.len()];
            let key = k.key(None);
            let hit = store::lookup(root, &key, now + 1, None);
            assert!(matches!(hit, store::Lookup::Hit(_)));
            black_box(hit);
        }
        samples.push(t.elapsed() / rounds as u32);
    }
    let m = median(samples);
    println!(
        "cache_lookup_warm_1000: {:.2} µs per phase (key + read + parse)",
        m.as_secs_f64() * 1e6
    );
}

fn fork_bench() {
    use std::sync::Mutex;
    let n = 1_000;
    let text = chain_flow(n);
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path();
    let parent = interp(root, None)
        .eval_text("chain", &text, Map::default())
        .expect("the chain runs");
    assert_eq!(parent.status, RunStatus::Completed);
    let dir = std::fs::read_dir(root.join(".tfc/runs"))
        .expect("runs")
        .flatten()
        .next()
        .expect("flow dir")
        .path()
        .join(&parent.run_id);
    let leaf = format!("p{}", n - 1);
    let (mut resumes, mut firsts, mut forks) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..9 {
        // The resume of the same run, every phase reused (as `tfc resume` of a failed run).
        let t = Instant::now();
        let p = open(&dir).expect("opens");
        let planned = plan(&p, "failed", None, Caps::default()).expect("plans");
        let def = planned.def.to_json();
        let child = interp(root, Some(Arc::new(planned.carried)))
            .eval_text("chain", &def, Map::default())
            .expect("the resume runs");
        resumes.push(t.elapsed());
        assert_eq!(child.status, RunStatus::Completed);
        // The fork, timed to its first (and only) call.
        let first: Arc<Mutex<Option<Duration>>> = Arc::new(Mutex::new(None));
        let seen = first.clone();
        let t = Instant::now();
        let agent = FnAgent::new("bench", move |_req| {
            seen.lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(t.elapsed());
            Outcome::ok("ok".to_owned())
        });
        let p = open(&dir).expect("opens");
        let req = tfc::run::resume::ForkRequest {
            from: vec![leaf.clone()],
            ..Default::default()
        };
        let fork =
            tfc::run::fork::plan(&p, "completed", &req, None, Caps::default()).expect("forks");
        let def = fork.plan.def.to_json();
        let child = Interpreter::with_agent(agent)
            .options(RunOptions {
                settings: RunSettings {
                    project_root: Some(root.to_path_buf()),
                    ..RunSettings::default()
                },
                cwd: Some(root.to_path_buf()),
                resume: Some(Arc::new(fork.plan.carried)),
                ..RunOptions::default()
            })
            .eval_text("chain", &def, Map::default())
            .expect("the fork runs");
        forks.push(t.elapsed());
        assert_eq!(child.status, RunStatus::Completed);
        assert_eq!(child.agent_calls(), 1, "only the leaf is called");
        firsts.push(
            first
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .expect("one call"),
        );
    }
    let (r, f, whole) = (median(resumes), median(firsts), median(forks));
    println!(
        "fork_one_leaf_1000: first call after {:.1} ms (whole fork {:.1} ms); resume of the same run {:.1} ms; ratio {:.2} (goal <= 2)",
        f.as_secs_f64() * 1e3,
        whole.as_secs_f64() * 1e3,
        r.as_secs_f64() * 1e3,
        f.as_secs_f64() / r.as_secs_f64()
    );
}

fn main() {
    let only = std::env::var("DURABLE_ONLY").unwrap_or_default();
    if only.is_empty() || only == "resume" {
        resume_bench();
    }
    if only.is_empty() || only == "lookup" {
        lookup_bench();
    }
    if only.is_empty() || only == "fork" {
        fork_bench();
    }
}
