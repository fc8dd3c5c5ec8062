//! The test driver: runs the real run [`Machine`] on a virtual clock (SPEC §17). It does what
//! the local driver does with the machine's commands — agent calls through the
//! [`Agent`](crate::agent::Agent) seam (the answering backend), scripts through the process
//! supervisor, context files, working directories — except that nothing waits for time:
//! a timer (retry backoff) fires as soon as nothing else is left to do, with the clock moved
//! to its deadline. No store, no cache, no approval prompt: undecided approvals pause.
//! Journal event lines (emitted only for `--coverage`: the machine's decisions) go to the
//! coverage recorder, nowhere else.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

use crate::agent::{CancelSource, ResolvedAgent, Roster};
use crate::run::RunRecord;
use crate::run::driver::{
    code_compiles, load_saved_flow, perform_call, prepare_call, resolve_agents, run_script,
};
use crate::run::machine::{Command, Event, Input, Line, Machine, ScriptEnd, ScriptOutcome};

use super::answer::Answering;
use super::coverage::Recorder;
use super::model::Reply;

/// The clock's start: 2026-01-01T00:00:00Z (a fixed moment, so records compare).
pub(crate) const EPOCH_MS: u64 = 1_767_225_600_000;

/// More inputs than any test needs: a run still going past this is stuck.
const MAX_INPUTS: usize = 1_000_000;

/// Everything one test run needs besides the machine.
pub(crate) struct World<'a> {
    pub agents: HashMap<String, ResolvedAgent>,
    pub roster: Arc<dyn Roster>,
    pub answering: &'a Answering,
    pub project_root: Option<PathBuf>,
    /// `--coverage`: what the run reaches, from the calls it starts and its journal lines.
    pub coverage: Option<Recorder<'a>>,
}

/// Drive `machine` to its end; `Err` is an internal problem (the run could not end).
pub(crate) fn drive(mut machine: Machine, world: &mut World<'_>) -> Result<RunRecord, String> {
    let mut now = EPOCH_MS;
    let mut queue: VecDeque<Event> = VecDeque::from([Event::Start]);
    let mut timers: BTreeSet<(u64, u64)> = BTreeSet::new();
    let mut dirs = HashMap::new();
    let mut finished = None;
    let mut inputs = 0usize;
    while finished.is_none() {
        let what = match queue.pop_front() {
            Some(e) => e,
            None => match timers.pop_first() {
                Some((at, op)) => {
                    now = now.max(at);
                    Event::TimerFired { op }
                }
                None => return Err("the run waits for nothing but has not ended".into()),
            },
        };
        inputs += 1;
        if inputs > MAX_INPUTS {
            return Err(format!("the run did not end within {MAX_INPUTS} steps"));
        }
        for c in machine.handle(Input { at: now, what }) {
            match c {
                Command::StartCall { op, request } => {
                    let (node, attempt) = (request.node.clone(), request.attempt);
                    if let Some(c) = &mut world.coverage {
                        c.call(&node, &request.phase_id, attempt);
                    }
                    let resolved = world.agents.get(&request.agent);
                    let end = match prepare_call(resolved, world.roster.as_ref(), *request) {
                        Ok(p) => smol::block_on(perform_call(p, Arc::new(CancelSource::new()))),
                        Err(end) => end,
                    };
                    queue.push_back(Event::CallEnded {
                        op,
                        node,
                        attempt,
                        end,
                    });
                }
                Command::StartScript { op, script } => {
                    let result = match world.answering.next(&script.node, true) {
                        Some(a) => match a.reply {
                            Reply::Script { stdout, exit_code } => ScriptOutcome {
                                spawn_error: None,
                                end: ScriptEnd::Exited,
                                code: exit_code,
                                stdout,
                                stdout_truncated: false,
                                stderr: String::new(),
                                elapsed_ms: 0,
                            },
                            // A sequence that mixes script and call answers.
                            _ => ScriptOutcome::not_started(format!(
                                "tfc test: script '{}' is answered with an agent call's answer, not {{\"stdout\", \"exitCode\"}}",
                                script.node
                            )),
                        },
                        None => smol::block_on(run_script(*script, CancelSource::new().token())),
                    };
                    queue.push_back(Event::ScriptEnded { op, result });
                }
                Command::StartTimer { op, ms } => {
                    timers.insert((now.saturating_add(ms), op));
                }
                Command::CancelTimer { op } => timers.retain(|(_, o)| *o != op),
                // Calls and scripts end before the next input: nothing is in flight to stop.
                Command::Cancel { .. } => {}
                Command::AskApproval { op, phase, .. } => {
                    // Never asked (the machine is told not to); decided "reject" if it were.
                    queue.push_back(Event::Approval {
                        op,
                        phase,
                        decision: crate::run::machine::Decision::Reject,
                        note: Some("tfc test: approvals are decided by the test".into()),
                        by_signal: false,
                    });
                }
                Command::PrepareDir {
                    op,
                    phase,
                    dir,
                    base,
                    run_id,
                } => {
                    let r = smol::block_on(crate::run::workdir::prepare(
                        &dir,
                        &base,
                        &phase,
                        &run_id,
                        world.project_root.as_deref(),
                    ));
                    let what = match r {
                        Ok((d, warning)) => {
                            let path = Ok(d.path().to_path_buf());
                            dirs.insert(op, d);
                            Event::DirReady { op, path, warning }
                        }
                        Err(e) => Event::DirReady {
                            op,
                            path: Err(e),
                            warning: None,
                        },
                    };
                    queue.push_back(what);
                }
                Command::ReleaseDir { op } => {
                    dirs.remove(&op);
                }
                Command::ReadContext {
                    op,
                    paths,
                    limit,
                    base,
                    ..
                } => {
                    let text = crate::run::workdir::read_context(&base, &paths, limit);
                    queue.push_back(Event::ContextRead { op, text });
                }
                Command::RunScorer { op, language, code } => {
                    let (pass, detail) = smol::block_on(code_compiles(&language, &code));
                    queue.push_back(Event::ScorerEnded { op, pass, detail });
                }
                Command::LoadFlow { op, name, cwd } => {
                    let text = load_saved_flow(&name, &cwd);
                    queue.push_back(Event::FlowLoaded { op, text });
                }
                Command::ResolveAgents { op, names, flow } => {
                    let (backends, error) =
                        resolve_agents(names, &mut world.agents, world.roster.as_ref());
                    queue.push_back(Event::AgentsResolved {
                        op,
                        run_id: format!("{flow}-test"),
                        backends,
                        error,
                    });
                }
                // No cache: every lookup misses (the key is still computed, for the record).
                Command::CacheLookup {
                    op,
                    node,
                    parts,
                    fingerprints,
                    ttl_ms,
                    cwd,
                    ..
                } => {
                    let e = crate::run::resume::look_up(crate::run::resume::Lookup {
                        op,
                        node: &node,
                        parts,
                        fingerprints: &fingerprints,
                        resumed: None,
                        store: None,
                        ttl_ms,
                        cwd: &cwd,
                        now,
                    });
                    queue.push_back(e);
                }
                Command::StartShard { op, shard } => {
                    let result = crate::run::machine::ShardEnd::all_failed(
                        shard.calls.iter().map(|c| c.slot),
                        "internal error: a test run was asked to run a shard",
                    );
                    queue.push_back(Event::ShardEnded {
                        op,
                        result: Box::new(result),
                    });
                }
                Command::Finish(record) => finished = Some(*record),
                Command::Journal(Line::Event(v)) => {
                    if let Some(c) = &mut world.coverage {
                        c.journal(&v);
                    }
                }
                Command::CacheStore { .. }
                | Command::EndShard(_)
                | Command::CapShard { .. }
                | Command::Progress(_)
                | Command::Journal(_)
                | Command::Save => {}
            }
        }
    }
    Ok(finished.expect("the loop ends when the run has"))
}
