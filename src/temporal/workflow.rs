//! Workflow `TfcRun`: the run machine fed by Temporal events. Every input's time is workflow
//! time; activity results, timers, approval decisions (update `decide`, signal `approval`)
//! and the workflow's cancellation become machine inputs, in a deterministic order
//! (decisions, then cancellation, then operations by id), so a replay of the history makes
//! the same decisions.
//!
//! An approval's deadline (SPEC §8.8) is the machine's own timer, served here as a durable
//! Temporal timer: it fires with no `tfc` client alive, and the machine lets `onTimeout`
//! decide. A decision that comes at or after the deadline is refused: update `decide`
//! fails with SPEC §8.8's message (so `tfc approve` says so), a bare signal is dropped.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{
    ActivityCancellationType, ActivityExecutionError, ActivityOptions,
    ChildWorkflowCancellationType, ChildWorkflowOptions, LocalActivityOptions, SyncWorkflowContext,
    WorkflowCancellationToken, WorkflowContext, WorkflowContextView, WorkflowResult,
};

use super::activities::TfcActivities;
use super::host::{
    Flying, HEARTBEAT_TIMEOUT, Out, Setup, call_flight, machine_now, once, setup, timer_flight,
    wake, worker_lost,
};
use super::wire::{
    ApprovalSignal, DirWire, HookWire, LookupWire, RunInput, ShardInput, StoreBatch,
};
use crate::run::machine::{
    Command, Config, Event, Input, Line, Machine, ScriptEnd, ScriptOutcome, ShardEnd, ShardRequest,
};

/// The workflow's state outside `run`: approval decisions received, and what the handlers
/// need to refuse a late one.
#[workflow]
#[derive(Default)]
pub struct TfcRun {
    inbox: VecDeque<ApprovalSignal>,
    /// The deadlines of the approvals asked (node path → epoch ms, its `onTimeout`).
    deadlines: BTreeMap<String, (u64, &'static str)>,
    /// The workflow time the run last handled inputs at (epoch ms): an update's validator
    /// has no clock of its own.
    now: u64,
}

impl TfcRun {
    /// Why a decision on approval `phase` at workflow time `now` comes too late: SPEC §8.8's
    /// refusal, once its deadline has passed.
    fn too_late(&self, phase: &str, now: u64) -> Option<String> {
        let &(at, on) = self.deadlines.get(phase)?;
        (now >= at).then(|| {
            let expires = crate::run::record::timestamp(
                std::time::UNIX_EPOCH + std::time::Duration::from_millis(at),
            );
            super::wire::expired_refusal(phase, &expires, on)
        })
    }
}

#[workflow_methods]
impl TfcRun {
    /// Run the machine to its end; the result is the run's status.
    #[run]
    pub async fn run(ctx: &mut WorkflowContext<Self>, input: RunInput) -> WorkflowResult<String> {
        let Some(setup) = setup(&input) else {
            return Err(temporalio_sdk::WorkflowTermination::failed_application(
                temporalio_sdk::ApplicationFailure::new(anyhow_msg(
                    "the run's input could not be read (a different tfc version started it?)",
                )),
            ));
        };
        let Setup {
            flow,
            args,
            mut config,
            def,
            meta,
            dir,
        } = setup;
        // A traced run's machine tells its phases' progress (on every worker alike: the
        // input decides), and the worker holding the workflow exports its spans.
        config.progress = input.trace.is_some();
        let mut traced = super::traced::WorkflowTrace::start(
            input.trace.as_deref(),
            &config,
            &flow.name,
            ctx.is_replaying(),
        );
        let run_id = config.run_id.clone();
        // A traced run's agents and scripts get `TRACEPARENT` naming the spans recorded for
        // their operations.
        let trace_id = meta
            .get("traceId")
            .and_then(crate::value::Value::as_str)
            .map(str::to_owned);
        let cwd = config.cwd.clone();
        let project_root = config.settings.project_root.clone();
        // What a shard is built from: the flow and the configuration, without what only
        // the run needs (its arguments, the reusable items of a resumed run); the trace id,
        // for its calls' `TRACEPARENT`.
        let mut shard_meta = crate::value::Map::default();
        if let Some(t) = &trace_id {
            shard_meta.insert("traceId".into(), t.as_str().into());
        }
        let shard_base = RunInput {
            args: "{}".to_owned(),
            meta: crate::value::Value::Object(shard_meta).to_json(),
            config: Config {
                item_states: Default::default(),
                ..config.clone()
            }
            .to_value()
            .to_json(),
            ..input.clone()
        };
        let hook_flow = flow.clone();
        let dry_run = config.settings.dry_run;
        let mut machine = Machine::new(flow, args, config);
        let mut texts = crate::run::driver::PhaseTexts::default();
        // Outputs too large for `run.json` go to files the worker writes with the record.
        let mut outputs = crate::run::store::PendingOutputs::default();
        let mut pending: VecDeque<Event> = VecDeque::from([Event::Start]);
        let mut flights: BTreeMap<u64, Flying<'_>> = BTreeMap::new();
        let mut side = 0u64; // fire-and-forget operations, above every machine op
        let mut asked: BTreeMap<String, u64> = BTreeMap::new();
        let mut early: Vec<ApprovalSignal> = Vec::new();
        let mut temp_dirs: BTreeMap<u64, PathBuf> = BTreeMap::new();
        let mut offset = 0u64;
        let mut finished = None;
        let mut interrupted = false;
        let mut cancelled: std::pin::Pin<Box<dyn Future<Output = Option<String>>>> =
            Box::pin(ctx.cancelled());
        let mut cmds = Vec::new();
        let mut at = machine_now(ctx);
        loop {
            let mut lines = String::new();
            let mut save = false;
            while let Some(what) = pending.pop_front() {
                at = machine_now(ctx);
                ctx.state_mut(|s| s.now = at);
                if let Event::CallEnded { op, .. }
                | Event::ScriptEnded { op, .. }
                | Event::TimerFired { op } = &what
                {
                    flights.remove(op);
                }
                if let Some(t) = traced.as_mut() {
                    t.step(ctx.is_replaying(), at);
                    t.input(&what, at);
                }
                machine.handle_into(Input { at, what }, &mut cmds);
                for c in cmds.drain(..) {
                    if let Some(t) = traced.as_mut() {
                        t.command(&c, at);
                    }
                    match c {
                        Command::StartCall { op, request } => {
                            let tp = trace_id
                                .as_deref()
                                .and_then(|t| crate::run::trace::op_traceparent(t, op));
                            flights.insert(op, call_flight(ctx, &run_id, op, *request, tp));
                        }
                        Command::Cancel { op } => {
                            if let Some((_, Some(t))) = flights.get(&op) {
                                t.cancel();
                            }
                        }
                        Command::StartScript { op, script } => {
                            let token = WorkflowCancellationToken::new();
                            let opts = ActivityOptions::with_start_to_close_timeout(
                                Duration::from_millis(script.timeout_ms) + Duration::from_secs(60),
                            )
                            .activity_id(format!("{run_id}/{}@s{op}", script.phase_id))
                            .heartbeat_timeout(HEARTBEAT_TIMEOUT)
                            .cancellation_type(ActivityCancellationType::WaitCancellationCompleted)
                            .cancellation_token(token.clone())
                            .retry_policy(once())
                            .build();
                            let mut script = *script;
                            script.traceparent = trace_id
                                .as_deref()
                                .and_then(|t| crate::run::trace::op_traceparent(t, op));
                            let fut = ctx.execute_activity(TfcActivities::script, script, opts);
                            flights.insert(
                                op,
                                (
                                    Box::pin(async move {
                                        let result = match fut.await {
                                            Ok(r) => r,
                                            Err(e) => lost_script(&e),
                                        };
                                        Out::Event(Event::ScriptEnded { op, result })
                                    }),
                                    Some(token),
                                ),
                            );
                        }
                        Command::StartTimer { op, ms } => {
                            flights.insert(op, timer_flight(ctx, op, ms));
                        }
                        Command::StartShard { op, shard } => {
                            flights.insert(op, shard_flight(ctx, &shard_base, op, *shard));
                        }
                        Command::EndShard(_) => {}
                        Command::CapShard { op } => {
                            side += 1;
                            let fut = ctx
                                .external_workflow(super::shard::shard_id(&run_id, op), None)
                                .signal(
                                    super::shard::TfcShard::cap,
                                    "the run's spend passed a cap".to_owned(),
                                    Default::default(),
                                );
                            flights.insert(
                                u64::MAX - side,
                                (
                                    Box::pin(async move {
                                        // A shard that already ended has nothing to stop.
                                        let _ = fut.await;
                                        Out::Nothing
                                    }),
                                    None,
                                ),
                            );
                        }
                        Command::CancelTimer { op } => {
                            if let Some((_, Some(t))) = flights.remove(&op) {
                                t.cancel();
                            }
                        }
                        Command::AskApproval {
                            op,
                            phase,
                            deadline,
                            ..
                        } => {
                            if let Some(i) = early.iter().position(|s| s.phase == phase) {
                                let s = early.remove(i);
                                pending.push_back(Event::Approval {
                                    op,
                                    phase: s.phase,
                                    decision: s.decision,
                                    note: s.note,
                                    by_signal: true,
                                });
                            } else {
                                // A decision after the deadline is refused (the
                                // machine's timer lets `onTimeout` decide then).
                                if let Some((ms, on)) = deadline {
                                    ctx.state_mut(|s| {
                                        s.deadlines.insert(phase.clone(), (ms, on.as_str()))
                                    });
                                }
                                asked.insert(phase, op);
                            }
                        }
                        Command::PrepareDir {
                            op,
                            phase,
                            dir,
                            base,
                            run_id: rid,
                        } => {
                            let fut = ctx.execute_activity(
                                TfcActivities::prepare_dir,
                                DirWire {
                                    dir,
                                    base,
                                    phase,
                                    run_id: rid,
                                    project_root: project_root.clone(),
                                },
                                quick(),
                            );
                            flights.insert(
                                op,
                                (
                                    Box::pin(async move {
                                        match fut.await {
                                            Ok(d) => Out::Dir(op, d),
                                            Err(e) => Out::Event(Event::DirReady {
                                                op,
                                                path: Err(format!(
                                                    "the working directory could not be prepared: {e}"
                                                )),
                                                warning: None,
                                            }),
                                        }
                                    }),
                                    None,
                                ),
                            );
                        }
                        Command::ReleaseDir { op } => {
                            if let Some(path) = temp_dirs.remove(&op) {
                                side += 1;
                                let fut =
                                    ctx.execute_activity(TfcActivities::release_dir, path, quick());
                                flights.insert(
                                    u64::MAX - side,
                                    (
                                        Box::pin(async move {
                                            let _ = fut.await;
                                            Out::Nothing
                                        }),
                                        None,
                                    ),
                                );
                            }
                        }
                        Command::ReadContext {
                            op,
                            paths,
                            limit,
                            base,
                            ..
                        } => {
                            let fut = ctx.execute_activity(
                                TfcActivities::pre_read,
                                (paths, limit, base),
                                quick(),
                            );
                            flights.insert(
                                op,
                                (
                                    Box::pin(async move {
                                        let text = fut.await.unwrap_or_default();
                                        Out::Event(Event::ContextRead { op, text })
                                    }),
                                    None,
                                ),
                            );
                        }
                        Command::RunScorer { op, language, code } => {
                            let fut = ctx.execute_activity(
                                TfcActivities::run_scorer,
                                (language, code),
                                quick(),
                            );
                            flights.insert(
                                op,
                                (
                                    Box::pin(async move {
                                        let (pass, detail) = fut.await.unwrap_or_else(|e| {
                                            (false, Some(format!("the scorer could not run: {e}")))
                                        });
                                        Out::Event(Event::ScorerEnded { op, pass, detail })
                                    }),
                                    None,
                                ),
                            );
                        }
                        Command::LoadFlow { op, name, cwd } => {
                            let fut = ctx.execute_activity(
                                TfcActivities::load_flow,
                                (name, cwd),
                                quick(),
                            );
                            flights.insert(
                                op,
                                (
                                    Box::pin(async move {
                                        let text = fut.await.ok().flatten();
                                        Out::Event(Event::FlowLoaded { op, text })
                                    }),
                                    None,
                                ),
                            );
                        }
                        Command::ResolveAgents { op, names, flow } => {
                            let fut = ctx.execute_activity(
                                TfcActivities::resolve_agents,
                                (names, flow.clone()),
                                quick(),
                            );
                            flights.insert(
                                op,
                                (
                                    Box::pin(async move {
                                        let (run_id, backends, error) =
                                            fut.await.unwrap_or_else(|e| {
                                                (
                                                    format!("{flow}-unresolved"),
                                                    Vec::new(),
                                                    Some(format!(
                                                        "the sub-flow's agents could not be resolved: {e}"
                                                    )),
                                                )
                                            });
                                        Out::Event(Event::AgentsResolved {
                                            op,
                                            run_id,
                                            backends,
                                            error,
                                        })
                                    }),
                                    None,
                                ),
                            );
                        }
                        Command::CacheLookup {
                            op,
                            node,
                            parts,
                            fingerprints,
                            run_only,
                            cross_run,
                            ttl_ms,
                            cwd: at,
                        } => {
                            let fut = ctx.execute_activity(
                                TfcActivities::fingerprint,
                                LookupWire {
                                    op,
                                    node,
                                    parts,
                                    fingerprints,
                                    cross_run,
                                    ttl_ms,
                                    cwd: at,
                                    project_root: project_root.clone(),
                                    now: machine_now(ctx),
                                    resume: input.resume.as_ref().filter(|_| run_only).cloned(),
                                },
                                quick(),
                            );
                            flights.insert(
                                op,
                                (
                                    Box::pin(async move {
                                        Out::Event(fut.await.unwrap_or_else(|e| {
                                            Event::CacheChecked {
                                                op,
                                                key: String::new(),
                                                hit: None,
                                                warning: Some(format!(
                                                    "the cache could not be looked up: {e}"
                                                )),
                                            }
                                        }))
                                    }),
                                    None,
                                ),
                            );
                        }
                        Command::CacheStore { key, record } => {
                            if let Some(root) = project_root.clone() {
                                side += 1;
                                let fut = ctx.execute_activity(
                                    TfcActivities::cache_store,
                                    (root, key, record.to_json(), machine_now(ctx)),
                                    quick(),
                                );
                                flights.insert(
                                    u64::MAX - side,
                                    (
                                        Box::pin(async move {
                                            let _ = fut.await;
                                            Out::Nothing
                                        }),
                                        None,
                                    ),
                                );
                            }
                        }
                        Command::Progress(_) => {}
                        Command::Journal(line) => match line {
                            Line::Event(v) => {
                                lines.push_str(&v.to_json());
                                lines.push('\n');
                            }
                            Line::Input(input) => {
                                crate::run::driver::write_input_line(&input, &mut lines);
                                lines.push('\n');
                            }
                            Line::Raw(text) => {
                                lines.push_str(&text);
                                lines.push('\n');
                            }
                        },
                        Command::Save => save = true,
                        Command::Finish(record) => {
                            finished = Some(record);
                            save = true;
                        }
                    }
                }
            }
            if save || !lines.is_empty() {
                let record = save.then(|| {
                    let (value, _) = match &finished {
                        Some(r) => crate::run::driver::stored_value(
                            r,
                            &machine.versions(),
                            Some(&mut outputs),
                            def.as_ref(),
                            &cwd,
                            &meta,
                            &mut texts,
                        ),
                        None => {
                            let (r, versions) = machine.snapshot_mut();
                            crate::run::driver::stored_value(
                                r,
                                &versions,
                                Some(&mut outputs),
                                def.as_ref(),
                                &cwd,
                                &meta,
                                &mut texts,
                            )
                        }
                    };
                    value
                });
                let n = lines.len() as u64;
                let batch = StoreBatch {
                    dir: dir.clone(),
                    offset,
                    lines,
                    record,
                    files: std::mem::take(&mut outputs.files),
                };
                let _ = ctx
                    .execute_local_activity(TfcActivities::store, batch, store_options())
                    .await;
                offset += n;
            }
            if let Some(record) = finished.take() {
                if let Some(t) = traced.take() {
                    t.finish(&record, at);
                }
                // The hook of the run's ending (SPEC §8.10), now that `run.json` is final:
                // an activity of this workflow, so it runs even with no `tfc` following,
                // and again (same `TFC_HOOK_ID`) if its worker is lost.
                let call = crate::run::hooks::plan(&hook_flow, &record, Some(&dir), &cwd)
                    .filter(|_| !dry_run);
                if let Some(call) = call {
                    let opts = ActivityOptions::with_start_to_close_timeout(
                        Duration::from_millis(call.timeout_ms) + Duration::from_secs(60),
                    )
                    .activity_id(format!("{run_id}/hook:{}", call.event.key()))
                    .heartbeat_timeout(HEARTBEAT_TIMEOUT)
                    .cancellation_token(WorkflowCancellationToken::new())
                    .retry_policy(
                        temporalio_common::RetryPolicy::builder()
                            .maximum_attempts(10)
                            .build(),
                    )
                    .build();
                    let wire = HookWire {
                        event: call.event.key().to_owned(),
                        argv: call.argv,
                        env: call
                            .env
                            .into_iter()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect(),
                        cwd: call.cwd,
                        timeout_ms: call.timeout_ms,
                        run_json: dir.join("run.json"),
                    };
                    if let Ok(done) = ctx.execute_activity(TfcActivities::hook, wire, opts).await {
                        let batch = StoreBatch {
                            dir: dir.clone(),
                            offset,
                            lines: format!("{}\n", done.line),
                            record: None,
                            files: Vec::new(),
                        };
                        let _ = ctx
                            .execute_local_activity(TfcActivities::store, batch, store_options())
                            .await;
                    }
                }
                return Ok(record.status.as_str().to_owned());
            }
            if let Some(t) = traced.as_mut() {
                t.flush(at);
            }
            // Wait for the next events: signals first, then cancellation, then operations
            // in id order.
            let woken = wake(
                ctx,
                |s: &TfcRun| !s.inbox.is_empty(),
                &mut cancelled,
                !interrupted,
                &mut flights,
            )
            .await;
            if woken.signalled {
                let signals: Vec<ApprovalSignal> = ctx.state_mut(|s| s.inbox.drain(..).collect());
                for s in signals {
                    match asked.remove(&s.phase) {
                        Some(op) => {
                            // Decided in time: its deadline no longer refuses anything.
                            ctx.state_mut(|st| st.deadlines.remove(&s.phase));
                            pending.push_back(Event::Approval {
                                op,
                                phase: s.phase,
                                decision: s.decision,
                                note: s.note,
                                by_signal: true,
                            });
                        }
                        None => early.push(s),
                    }
                }
            }
            if woken.cancelled {
                interrupted = true;
                pending.push_back(Event::Interrupt);
            }
            for (_, out) in woken.done {
                match out {
                    Out::Event(e) => pending.push_back(e),
                    Out::Dir(op, d) => {
                        if let (Ok(p), true) = (&d.path, d.temp) {
                            temp_dirs.insert(op, p.clone());
                        }
                        pending.push_back(Event::DirReady {
                            op,
                            path: d.path,
                            warning: d.warning,
                        });
                    }
                    Out::Nothing => {}
                }
            }
        }
    }

    /// A decision on an approval the run waits for, or will (`tfc approve`): taken, or
    /// refused once the approval's deadline has passed (its `onTimeout` decided).
    #[update]
    pub fn decide(
        &mut self,
        ctx: &mut SyncWorkflowContext<Self>,
        s: ApprovalSignal,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let now = ctx_now(ctx.workflow_time()).max(self.now);
        if let Some(why) = self.too_late(&s.phase, now) {
            return Err(why.into());
        }
        self.inbox.push_back(s);
        Ok(())
    }

    /// A late decision is refused before it enters the history.
    #[update_validator(decide)]
    fn validate_decide(
        &self,
        _ctx: &WorkflowContextView,
        s: &ApprovalSignal,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        match self.too_late(&s.phase, self.now) {
            Some(why) => Err(why.into()),
            None => Ok(()),
        }
    }

    /// A decision as a signal (no answer goes back; [`TfcRun::decide`] is what `tfc
    /// approve` uses): one after the approval's deadline is dropped.
    #[signal]
    pub fn approval(&mut self, ctx: &mut SyncWorkflowContext<Self>, s: ApprovalSignal) {
        let now = ctx_now(ctx.workflow_time()).max(self.now);
        if self.too_late(&s.phase, now).is_none() {
            self.inbox.push_back(s);
        }
    }
}

/// A shard of a map's calls as child workflow `TfcShard` (SPEC §14.3): its own history.
/// Cancelling it waits for its result (the calls it stopped, the items it never started).
fn shard_flight<'a>(
    ctx: &'a WorkflowContext<TfcRun>,
    run: &RunInput,
    op: u64,
    shard: ShardRequest,
) -> Flying<'a> {
    let token = WorkflowCancellationToken::new();
    let opts = ChildWorkflowOptions::builder()
        .workflow_id(super::shard::shard_id(&run.run_id, op))
        .cancel_type(ChildWorkflowCancellationType::WaitCancellationCompleted)
        .cancellation_token(token.clone())
        .build();
    let slots: Vec<u32> = shard.calls.iter().map(|c| c.slot).collect();
    let started = ctx.start_child_workflow(
        super::shard::TfcShard::run,
        ShardInput {
            run: run.clone(),
            shard,
        },
        opts,
    );
    let flight = Box::pin(async move {
        let outcome = match started.await {
            Ok(child) => child
                .result()
                .await
                .map_err(|e| format!("the shard's child workflow failed: {e}")),
            Err(e) => Err(format!("the shard's child workflow did not start: {e}")),
        };
        // Its items fail with the reason (a shard whose result passed Temporal's payload
        // limit says so here: lower `shard_items`).
        let result = outcome.unwrap_or_else(|why| ShardEnd::all_failed(slots, &why));
        Out::Event(Event::ShardEnded {
            op,
            result: Box::new(result),
        })
    });
    (flight, Some(token))
}

/// Workflow time as epoch ms (0 when unknown).
fn ctx_now(t: Option<std::time::SystemTime>) -> u64 {
    t.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64)
}

fn anyhow_msg(m: &str) -> Box<dyn std::error::Error + Send + Sync> {
    m.to_owned().into()
}

/// Options of a quick I/O activity (the workflow's cancellation reaches the machine, not
/// the activity: the machine decides what stops).
fn quick() -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(120))
        .cancellation_token(WorkflowCancellationToken::new())
        .retry_policy(
            temporalio_common::RetryPolicy::builder()
                .maximum_attempts(3)
                .build(),
        )
        .build()
}

/// Options of the local activity that appends to the run's store (journal lines, `run.json`).
fn store_options() -> LocalActivityOptions {
    LocalActivityOptions::builder()
        .start_to_close_timeout(Duration::from_secs(60))
        .cancellation_token(WorkflowCancellationToken::new())
        .retry_policy(
            temporalio_common::RetryPolicy::builder()
                .maximum_attempts(5)
                .build(),
        )
        .build()
}

/// A script activity that did not return.
fn lost_script(e: &ActivityExecutionError) -> ScriptOutcome {
    match e {
        ActivityExecutionError::Cancelled(_) => ScriptOutcome {
            spawn_error: None,
            end: ScriptEnd::Cancelled,
            ..ScriptOutcome::not_started(String::new())
        },
        other => ScriptOutcome::not_started(worker_lost(&other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_at_or_after_the_deadline_is_refused_with_the_spec_message() {
        let mut run = TfcRun::default();
        let at = 1_796_032_800_000; // 2026-11-30T10:00:00.000Z
        run.deadlines.insert("f/ok".into(), (at, "fail"));
        assert_eq!(run.too_late("f/ok", at - 1), None, "before it, it wins");
        let refusal =
            "approval 'f/ok' expired at 2026-11-30T10:00:00.000Z; its onTimeout (fail) decides";
        assert_eq!(run.too_late("f/ok", at).as_deref(), Some(refusal));
        assert_eq!(run.too_late("f/ok", at + 60_000).as_deref(), Some(refusal));
        // An approval without a deadline (or not asked yet) is never too late.
        assert_eq!(run.too_late("other", u64::MAX), None);
    }
}
