//! The coordinator's own cost, on an in-process instant agent: a 100 000-item map and a
//! 10 000-phase chain, also with the run record written to disk as `tfc run` does (the path
//! that once cost quadratic time: the record rebuilt on every phase transition), and the
//! run preflight's list of agent uses (once quadratic: the flow cloned per phase). Run with
//! `cargo bench --bench runtime`.

mod common;

use common::{chain_flow, map_args};
use divan::{Bencher, black_box};
use tfc::agent::{FnAgent, Outcome};
use tfc::run::{Interpreter, RunOptions, RunSettings, RunStatus};
use tfc::value::Map;

/// The allocator `tfc` itself uses, so the figures are those of the shipped binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

fn interpreter() -> Interpreter {
    Interpreter::with_agent(FnAgent::new("instant", |_| Outcome::ok("ok"))).options(RunOptions {
        settings: RunSettings {
            concurrency: Some(64),
            ..RunSettings::default()
        },
        ..RunOptions::default()
    })
}

const MAP_FLOW: &str = r#"{"name": "bench-map", "args": {"files": {"description": "items to audit"}}, "phases": [
    {"id": "audit", "type": "map", "over": "{args.files}", "as": "file", "concurrency": 64, "task": "Audit {file.path}."}
]}"#;

#[divan::bench(args = [1_000, 10_000, 100_000], sample_count = 5)]
fn map_items(b: Bencher, items: usize) {
    let args = map_args(items);
    let interp = interpreter();
    b.bench(|| {
        let r = interp
            .eval_text("bench-map", black_box(MAP_FLOW), args.clone())
            .expect("runs");
        assert_eq!(r.status, RunStatus::Completed);
    });
}

/// The static check alone, to subtract from `chain_phases` for the coordinator's own cost.
#[divan::bench(args = [1_000, 10_000], sample_count = 5)]
fn chain_check_only(b: Bencher, n: usize) {
    let flow = chain_flow(n);
    b.bench(|| {
        let checked = tfc::check::check_source(
            black_box(&flow),
            &tfc::flow::LowerOptions::default(),
            &tfc::check::CheckOptions::default(),
        );
        assert!(!checked.has_errors());
    });
}

#[divan::bench(args = [1_000, 10_000], sample_count = 5)]
fn chain_phases(b: Bencher, n: usize) {
    let flow = chain_flow(n);
    let interp = interpreter();
    b.bench(|| {
        let r = interp
            .eval_text("bench-chain", black_box(&flow), Map::default())
            .expect("runs");
        assert_eq!(r.status, RunStatus::Completed);
    });
}

/// A whole run with its record on disk (`run.json` + journal), as `tfc run` keeps it: the
/// per-phase cost must not grow with the number of phases.
#[divan::bench(args = [1_000, 10_000], sample_count = 3)]
fn chain_phases_recorded(b: Bencher, n: usize) {
    let flow = chain_flow(n);
    let root = tempfile::tempdir().expect("temp dir");
    let interp = Interpreter::with_agent(FnAgent::new("instant", |_| Outcome::ok("ok"))).options(
        RunOptions {
            settings: RunSettings {
                project_root: Some(root.path().to_path_buf()),
                ..RunSettings::default()
            },
            ..RunOptions::default()
        },
    );
    b.bench(|| {
        let r = interp
            .eval_text("bench-chain", black_box(&flow), Map::default())
            .expect("runs");
        assert_eq!(r.status, RunStatus::Completed);
    });
}

/// The preflight's agent uses of a checked chain (one per phase).
#[divan::bench(args = [1_000, 10_000], sample_count = 5)]
fn agent_uses(b: Bencher, n: usize) {
    let checked = tfc::check::check_source(
        &chain_flow(n),
        &tfc::flow::LowerOptions::default(),
        &tfc::check::CheckOptions::default(),
    );
    let flow = checked.flow.expect("flow");
    b.bench(|| {
        let uses = tfc::run::agent_uses(black_box(&flow));
        assert_eq!(uses.len(), n);
    });
}
