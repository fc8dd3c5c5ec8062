//! Child workflow `TfcShard`: one batch of a large map's item calls, run by a shard
//! machine ([`Machine::shard`]) fed by Temporal events, in a history of its own (SPEC
//! §14.3). Its calls are the same `agent-call` activities as the run's, its backoffs durable
//! timers; the parent's cancellation (the run's abort) interrupts the machine, which stops
//! its calls and still returns every item.

use std::collections::{BTreeMap, VecDeque};
use std::task::Poll;

use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{WorkflowContext, WorkflowResult};

use super::wire::ShardInput;
use super::workflow::{Flying, Out, call_flight, machine_now, setup, timer_flight};
use crate::run::machine::{Command, Event, Input, Machine, ShardResult};

/// The workflow's state outside `run`: none.
#[workflow]
#[derive(Default)]
pub struct TfcShard;

#[workflow_methods]
impl TfcShard {
    /// Run the shard's calls; the result is each item's end.
    #[run]
    pub async fn run(
        ctx: &mut WorkflowContext<Self>,
        input: ShardInput,
    ) -> WorkflowResult<ShardResult> {
        let Some(setup) = setup(&input.run) else {
            return Err(temporalio_sdk::WorkflowTermination::failed_application(
                temporalio_sdk::ApplicationFailure::new(
                    Box::<dyn std::error::Error + Send + Sync>::from(
                        "the shard's input could not be read (a different tfc version started it?)",
                    ),
                ),
            ));
        };
        let run_id = setup.config.run_id.clone();
        let mut machine = Machine::shard(setup.flow, setup.config, input.shard);
        let mut pending = VecDeque::from([Event::Start]);
        let mut flights: BTreeMap<u64, Flying<'_>> = BTreeMap::new();
        let mut cancelled = Box::pin(ctx.cancelled());
        let mut interrupted = false;
        loop {
            while let Some(what) = pending.pop_front() {
                let at = machine_now(ctx);
                for c in machine.handle(Input { at, what }) {
                    match c {
                        Command::StartCall { op, request } => {
                            flights.insert(op, call_flight(ctx, &run_id, op, *request));
                        }
                        Command::StartTimer { op, ms } => {
                            flights.insert(op, timer_flight(ctx, op, ms));
                        }
                        Command::Cancel { op } => {
                            if let Some((_, Some(t))) = flights.get(&op) {
                                t.cancel();
                            }
                        }
                        Command::CancelTimer { op } => {
                            if let Some((_, Some(t))) = flights.remove(&op) {
                                t.cancel();
                            }
                        }
                        Command::EndShard(result) => return Ok(*result),
                        // A shard machine asks for calls and timers only.
                        _ => {}
                    }
                }
            }
            if flights.is_empty() {
                // Nothing out and no result: the machine is stuck (a bug); say so rather
                // than wait forever.
                return Err(temporalio_sdk::WorkflowTermination::failed_application(
                    temporalio_sdk::ApplicationFailure::new(Box::<
                        dyn std::error::Error + Send + Sync,
                    >::from(
                        "internal error: the shard waits for nothing but has not ended",
                    )),
                ));
            }
            let woke = std::future::poll_fn(|cx| {
                let mut got = Vec::new();
                if !interrupted && cancelled.as_mut().poll(cx).is_ready() {
                    got.push(None);
                }
                for (op, (f, _)) in flights.iter_mut() {
                    if let Poll::Ready(e) = f.as_mut().poll(cx) {
                        got.push(Some((*op, e)));
                    }
                }
                if got.is_empty() {
                    Poll::Pending
                } else {
                    Poll::Ready(got)
                }
            })
            .await;
            for w in woke {
                match w {
                    None => {
                        interrupted = true;
                        pending.push_back(Event::Interrupt);
                    }
                    Some((op, out)) => {
                        flights.remove(&op);
                        if let Out::Event(e) = out {
                            pending.push_back(e);
                        }
                    }
                }
            }
        }
    }
}
