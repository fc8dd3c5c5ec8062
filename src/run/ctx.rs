//! What a caller tells a run (its options and progress sink), and the panic guard the
//! driver wraps every backend call in.

use std::path::PathBuf;
use std::sync::Arc;

use super::machine::RunSettings;

/// How a run behaves (flags of `tfc run`, or the library caller's choices).
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// The options the machine follows as given (dry run, approvals, concurrency, …).
    pub settings: RunSettings,
    /// Ask on the terminal for undecided approvals.
    pub interactive: bool,
    /// `--max-usd`: overrides the flow's budget.
    pub max_usd: Option<f64>,
    /// `--max-tokens`: overrides the flow's budget.
    pub max_tokens: Option<f64>,
    /// `--max-calls`: overrides the flow's `budget.maxCalls` (SPEC §8.7).
    pub max_calls: Option<u64>,
    /// The invocation directory (relative `cwd`s and context paths resolve against it).
    pub cwd: Option<PathBuf>,
    /// Run id to use (tests); generated when `None`.
    pub run_id: Option<String>,
    /// Told about every phase transition (the CLI's progress lines).
    pub progress: Option<ProgressSink>,
    /// `[limits] max_output_bytes`: a call that returns more fails (default 16 MiB; process
    /// backends stop reading and kill the process once over it).
    pub max_output_bytes: Option<usize>,
    /// `[limits] max_prompt_bytes`: a prompt that would weigh more fails its phase without a
    /// call (default 16 MiB).
    pub max_prompt_bytes: Option<usize>,
    /// `--incremental` (`Some(true)`) / `--no-incremental` (`Some(false)`): overrides the
    /// flow's `incremental` (SPEC §10.5).
    pub incremental: Option<bool>,
    /// The run resumes another (SPEC §10.4): what it may reuse and carries over.
    pub resume: Option<Arc<super::resume::Carried>>,
    /// How the caller chose backends, kept in `run.json` as `launch` (resume uses it again).
    pub launch: Option<crate::value::Value>,
    /// Export the run as an OpenTelemetry trace (`None`: nothing is recorded or sent).
    pub telemetry: Option<Arc<crate::telemetry::Telemetry>>,
    /// The caller's span (`TRACEPARENT`): the run's trace is a child of it.
    pub trace_parent: Option<crate::telemetry::SpanContext>,
}

impl RunOptions {
    /// The effective cap on an answer's size.
    pub fn max_output(&self) -> usize {
        self.max_output_bytes
            .unwrap_or(crate::process::DEFAULT_MAX_OUTPUT)
    }

    /// The effective cap on a prompt's size.
    pub fn max_prompt(&self) -> usize {
        self.max_prompt_bytes
            .unwrap_or(crate::agent::DEFAULT_MAX_PROMPT)
    }
}

/// Run a future, turning a panic inside it (a bug in tfc or in an in-process backend) into an
/// error message instead of taking the whole run down.
pub async fn caught<T>(fut: impl std::future::Future<Output = T>) -> Result<T, String> {
    futures_lite::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(fut))
        .await
        .map_err(|payload| {
            payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a phase worker panicked".to_owned())
        })
}

/// One phase transition, for progress displays.
#[derive(Clone, Debug)]
pub struct ProgressNote<'a> {
    /// Node path of the phase (`id`, or `flowPhase/id` in a sub-flow).
    pub phase: &'a str,
    /// `running`, `done`, `failed`, `skipped`, `pending`; or `warning`: a run-time surprise
    /// told as it happens (an unresolved placeholder left intact, a `when` that did not
    /// parse, a violated output contract), its full text in `detail`. The phase's record
    /// keeps its own warning as well.
    pub status: &'a str,
    /// The error, skip reason, a short note, or the warning.
    pub detail: Option<&'a str>,
    /// Agent calls so far, as [`crate::run::summary`] counts them (a script's run is none).
    pub attempts: u32,
    /// Billable tokens so far.
    pub tokens: u64,
    /// Cost so far, when known.
    pub cost_usd: Option<f64>,
    /// Items, loop iterations, gate verdicts and rework rounds, reuse.
    pub facts: &'a super::machine::Facts,
}

/// A callback for progress notes.
#[derive(Clone)]
pub struct ProgressSink(pub Arc<dyn Fn(&ProgressNote<'_>) + Send + Sync>);

impl ProgressSink {
    /// Tell the sink one progress command of the machine.
    pub(crate) fn tell(&self, p: &super::machine::Progress) {
        (self.0)(&ProgressNote {
            phase: &p.phase,
            status: p.status,
            detail: p.detail.as_deref(),
            attempts: p.attempts,
            tokens: p.tokens,
            cost_usd: p.cost_usd,
            facts: &p.facts,
        });
    }
}

impl ProgressSink {
    /// Tell the sink a warning about `what` (a phase, or `hooks.onFail`) outside the
    /// machine's notes: a hook that did not succeed.
    pub(crate) fn warn(&self, what: &str, warning: &str) {
        let facts = super::machine::Facts::default();
        (self.0)(&ProgressNote {
            phase: what,
            status: "warning",
            detail: Some(warning),
            attempts: 0,
            tokens: 0,
            cost_usd: None,
            facts: &facts,
        });
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}
