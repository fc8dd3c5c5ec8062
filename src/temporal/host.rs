//! What the two workflows share (`TfcRun`, the run; `TfcShard`, a shard of a map's calls):
//! the machine's setup from the run's input, and the operations in flight they both start
//! (agent calls as activities, durable timers).

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use temporalio_sdk::{
    ActivityCancellationType, ActivityExecutionError, ActivityOptions, TimerOptions,
    WorkflowCancellationToken, WorkflowContext,
};

use super::activities::TfcActivities;
use super::wire::{CallWire, RunInput};
use crate::run::machine::{CallEnd, CallOutcome, CallRequest, Config, Event};
use crate::value::{Map, Value};

/// Heartbeat timeout of calls and scripts: a worker silent this long is lost.
pub(super) const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(30);

/// The message of a call whose worker was lost (transient: it says `timed out`, SPEC §8.4).
pub(super) fn worker_lost(detail: &str) -> String {
    format!("worker lost: the activity timed out without a heartbeat ({detail})")
}

/// An operation in flight: what it gives back when it ends.
pub(super) type Flight<'a> = Pin<Box<dyn Future<Output = Out> + 'a>>;

/// An operation in flight, and the token that stops it (when it can be stopped).
pub(super) type Flying<'a> = (Flight<'a>, Option<WorkflowCancellationToken>);

/// What an operation in flight gives back.
pub(super) enum Out {
    /// A machine input.
    Event(Event),
    /// A prepared directory (a temporary one is removed when its phase ends).
    Dir(u64, super::wire::DirReady),
    /// Nothing for the machine (a fire-and-forget operation).
    Nothing,
}

/// One attempt of an agent call as activity `agent-call` (no retries: the machine owns
/// them; a lost worker is a transient failure), with the `traceparent` of its span when the
/// run is traced.
pub(super) fn call_flight<'a, W>(
    ctx: &'a WorkflowContext<W>,
    run_id: &str,
    op: u64,
    request: CallRequest,
    traceparent: Option<String>,
) -> Flying<'a> {
    let node = request.node.clone();
    let attempt = request.attempt;
    let token = WorkflowCancellationToken::new();
    let opts = ActivityOptions::with_start_to_close_timeout(Duration::from_secs(7 * 24 * 3600))
        .activity_id(format!("{run_id}/{node}@a{attempt}"))
        .heartbeat_timeout(HEARTBEAT_TIMEOUT)
        .cancellation_type(ActivityCancellationType::WaitCancellationCompleted)
        .cancellation_token(token.clone())
        .retry_policy(once())
        .build();
    let mut wire = CallWire::from_request(request);
    wire.traceparent = traceparent;
    let fut = ctx.execute_activity(TfcActivities::agent_call, wire, opts);
    let flight = Box::pin(async move {
        let end = match fut.await {
            Ok(end) => end,
            Err(e) => lost_call(&e),
        };
        Out::Event(Event::CallEnded {
            op,
            node,
            attempt,
            end,
        })
    });
    (flight, Some(token))
}

/// A durable timer.
pub(super) fn timer_flight<'a, W>(ctx: &'a WorkflowContext<W>, op: u64, ms: u64) -> Flying<'a> {
    let token = WorkflowCancellationToken::new();
    let fut = ctx.timer(
        TimerOptions::builder(Duration::from_millis(ms.max(1)))
            .cancellation_token(token.clone())
            .build(),
    );
    let flight = Box::pin(async move {
        fut.await;
        Out::Event(Event::TimerFired { op })
    });
    (flight, Some(token))
}

pub(super) fn machine_now<W>(ctx: &WorkflowContext<W>) -> u64 {
    ctx.workflow_time()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64)
}

/// No activity retries: the machine owns retries (SPEC §8.4).
pub(super) fn once() -> temporalio_common::RetryPolicy {
    temporalio_common::RetryPolicy::builder()
        .maximum_attempts(1)
        .build()
}

/// A call activity that did not return: cancelled (the machine's cancel) or lost.
fn lost_call(e: &ActivityExecutionError) -> CallEnd {
    let (stop, error) = match e {
        ActivityExecutionError::Cancelled(_) => ("cancelled", "Aborted".to_owned()),
        other => ("failed", worker_lost(&other.to_string())),
    };
    CallEnd::Outcome(Box::new(CallOutcome {
        output: String::new(),
        usage: Default::default(),
        model: None,
        stop: stop.to_owned(),
        error: Some(error),
        stderr: String::new(),
        warnings: Vec::new(),
        backend: String::new(),
        elapsed_ms: 0,
        exit_code: None,
    }))
}

/// What the machine is built from, read back from the input.
pub(super) struct Setup {
    pub flow: Arc<crate::flow::Flow>,
    pub args: Map,
    pub config: Config,
    pub def: Option<Value>,
    pub meta: Map,
    pub dir: PathBuf,
}

fn parse(text: &str) -> Option<Value> {
    crate::json::parse(text).root.map(|r| r.to_value())
}

pub(super) fn setup(input: &RunInput) -> Option<Setup> {
    let def = parse(&input.def)?;
    let root = crate::json::parse(&input.def).root?;
    let flow = crate::flow::lower(
        &root,
        &crate::flow::LowerOptions {
            default_name: Some(input.flow_name.clone()),
        },
    )
    .flow?;
    let args = match &parse(&input.args)? {
        Value::Object(m) => m.clone(),
        _ => return None,
    };
    let mut config = Config::from_value(&parse(&input.config)?)?;
    config.progress = false;
    config.journaling = true;
    let meta = match &parse(&input.meta)? {
        Value::Object(m) => m.clone(),
        _ => Map::default(),
    };
    let dir = config
        .settings
        .project_root
        .clone()
        .unwrap_or_else(|| config.cwd.clone())
        .join(".tfc")
        .join("runs")
        .join(crate::run::store::sanitize(&flow.name))
        .join(&config.run_id);
    Some(Setup {
        flow: Arc::new(flow),
        args,
        config,
        def: Some(def),
        meta,
        dir,
    })
}

/// What woke a workflow, in the order it handles it (so a replay decides alike): its
/// signal condition held, it was cancelled (asked only while `watch_cancel`), then the
/// operations that ended, in id order.
pub(super) struct Woken {
    pub signalled: bool,
    pub cancelled: bool,
    pub done: Vec<(u64, Out)>,
}

/// Wait until `condition` holds (a signal arrived), the workflow is cancelled or an
/// operation in `flights` ends; the operations that ended leave `flights`.
pub(super) async fn wake<'a, W>(
    ctx: &'a WorkflowContext<W>,
    condition: impl FnMut(&W) -> bool + 'a,
    cancelled: &mut Pin<Box<dyn Future<Output = Option<String>> + 'a>>,
    watch_cancel: bool,
    flights: &mut BTreeMap<u64, Flying<'a>>,
) -> Woken {
    let token = WorkflowCancellationToken::new();
    let mut signalled = Box::pin(
        ctx.wait_condition_with_options(
            condition,
            temporalio_sdk::WaitConditionOptions::builder()
                .cancellation_token(token.clone())
                .build(),
        ),
    );
    let woken = std::future::poll_fn(|cx| {
        let mut w = Woken {
            signalled: signalled.as_mut().poll(cx).is_ready(),
            cancelled: watch_cancel && cancelled.as_mut().poll(cx).is_ready(),
            done: Vec::new(),
        };
        for (op, (f, _)) in flights.iter_mut() {
            if let Poll::Ready(e) = f.as_mut().poll(cx) {
                w.done.push((*op, e));
            }
        }
        if w.signalled || w.cancelled || !w.done.is_empty() {
            Poll::Ready(w)
        } else {
            Poll::Pending
        }
    })
    .await;
    drop(signalled);
    token.cancel();
    for (op, _) in &woken.done {
        flights.remove(op);
    }
    woken
}
