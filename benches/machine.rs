//! The run machine alone, no driver and no executor: `Machine::handle` throughput on the
//! 10,000-phase chain, every call answered at once with a success. Prints the median time of
//! a whole run, per phase and per input. Run with `cargo bench --bench machine`.

#[allow(dead_code)]
mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::chain_flow;
use tfc::check::{CheckOptions, check_source};
use tfc::flow::LowerOptions;
use tfc::run::RunStatus;
use tfc::run::machine::{CallEnd, CallOutcome, Command, Config, Event, Input, Machine, UsageData};
use tfc::value::Map;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Drive one run to its end; returns the number of inputs handled.
fn drive(flow: &Arc<tfc::flow::Flow>) -> usize {
    let cfg = Config {
        run_id: "bench".into(),
        max_output: 16 << 20,
        max_prompt: 16 << 20,
        ..Config::default()
    };
    let mut m = Machine::new(flow.clone(), Map::default(), cfg);
    let mut queue = Vec::new();
    let mut cmds = Vec::new();
    let mut at = 0;
    let mut inputs = 1;
    m.handle_into(
        Input {
            at,
            what: Event::Start,
        },
        &mut cmds,
    );
    loop {
        for c in cmds.drain(..) {
            match c {
                Command::StartCall { op, request } => queue.push(Input {
                    at,
                    what: Event::CallEnded {
                        op,
                        node: request.node,
                        attempt: request.attempt,
                        end: CallEnd::Outcome(Box::new(CallOutcome {
                            output: "ok".into(),
                            usage: UsageData::default(),
                            model: None,
                            stop: "completed".into(),
                            error: None,
                            stderr: String::new(),
                            warnings: Vec::new(),
                            backend: "bench".into(),
                            elapsed_ms: 0,
                            exit_code: None,
                        })),
                    },
                }),
                Command::Finish(record) => {
                    assert_eq!(record.status, RunStatus::Completed);
                    return inputs;
                }
                _ => {}
            }
        }
        let Some(input) = queue.pop() else {
            panic!("the machine stopped without finishing");
        };
        at += 1;
        inputs += 1;
        m.handle_into(input, &mut cmds);
    }
}

fn main() {
    let n = 10_000;
    let text = chain_flow(n);
    let checked = check_source(&text, &LowerOptions::default(), &CheckOptions::default());
    let flow = Arc::new(checked.flow.expect("the chain checks"));
    drive(&flow);
    let mut samples: Vec<Duration> = Vec::new();
    let mut inputs = 0;
    for _ in 0..11 {
        let t = Instant::now();
        inputs = black_box(drive(&flow));
        samples.push(t.elapsed());
    }
    samples.sort();
    let median = samples[samples.len() / 2];
    let ns = median.as_nanos() as f64;
    println!(
        "machine_chain_10000: {:.2} ms per run, {:.0} ns per phase, {:.0} ns per input ({inputs} inputs), {:.2} M inputs/s",
        ns / 1e6,
        ns / n as f64,
        ns / inputs as f64,
        inputs as f64 / (ns / 1e9) / 1e6
    );
}
