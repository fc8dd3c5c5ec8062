//! Child workflow `TfcShard`: one batch of a large map's item calls, run by a shard
//! machine ([`Machine::shard`]) fed by Temporal events, in a history of its own (SPEC
//! §14.3). Its calls are the same `agent-call` activities as the run's, its backoffs durable
//! timers; the parent's cancellation (the run's abort) interrupts the machine, which stops
//! its calls and still returns every item.

use std::collections::{BTreeMap, VecDeque};

use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{WorkflowContext, WorkflowResult};

use super::host::{Flying, Out, call_flight, machine_now, setup, timer_flight, wake};
use super::wire::ShardInput;
use crate::run::machine::{Command, Event, Input, Machine, ShardResult};

/// The workflow id of the run's shard started as operation `op`.
pub(super) fn shard_id(run_id: &str, op: u64) -> String {
    format!("{run_id}/shard{op}")
}

/// The workflow's state outside `run`: whether the run spent past a cap (signal `cap`).
#[workflow]
#[derive(Default)]
pub struct TfcShard {
    capped: bool,
}

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
        // A traced run's shard calls get `TRACEPARENT` naming the spans the run's trace
        // records for them from the shard's result.
        let trace_id = setup
            .meta
            .get("traceId")
            .and_then(crate::value::Value::as_str)
            .map(str::to_owned);
        let mut machine = Machine::shard(setup.flow, setup.config, input.shard);
        let mut pending = VecDeque::from([Event::Start]);
        let mut flights: BTreeMap<u64, Flying<'_>> = BTreeMap::new();
        let mut cancelled: std::pin::Pin<Box<dyn std::future::Future<Output = Option<String>>>> =
            Box::pin(ctx.cancelled());
        let mut interrupted = false;
        let mut capped = false;
        loop {
            while let Some(what) = pending.pop_front() {
                let at = machine_now(ctx);
                for c in machine.handle(Input { at, what }) {
                    match c {
                        Command::StartCall { op, request } => {
                            let tp = trace_id.as_deref().and_then(|t| {
                                crate::run::trace::call_traceparent(
                                    t,
                                    &request.node,
                                    request.attempt,
                                )
                            });
                            flights.insert(op, call_flight(ctx, &run_id, op, *request, tp));
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
            // Once told, the signal is not waited for again.
            let told = capped;
            let woken = wake(
                ctx,
                move |s: &TfcShard| s.capped && !told,
                &mut cancelled,
                !interrupted,
                &mut flights,
            )
            .await;
            if woken.signalled {
                capped = true;
                pending.push_back(Event::Capped);
            }
            if woken.cancelled {
                interrupted = true;
                pending.push_back(Event::Interrupt);
            }
            for (_, out) in woken.done {
                if let Out::Event(e) = out {
                    pending.push_back(e);
                }
            }
        }
    }

    /// The run spent past a cap: start no more calls.
    #[signal]
    pub fn cap(&mut self, _ctx: &mut temporalio_sdk::SyncWorkflowContext<Self>, _why: String) {
        self.capped = true;
    }
}
