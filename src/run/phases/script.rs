//! script (SPEC §3.11): `sh -c` for a string `run`, direct exec for an argv array; `input` on
//! stdin; a timeout that stops the whole process group; capped output; never retried. The
//! process itself is run by the process supervisor, like every other child of tfc.

use std::time::Duration;

use super::super::exec::Exec;
use crate::agent::env;
use crate::flow::Run;
use crate::process::{End, Keep, ProcessSpec, StdoutMode, run_process};
use crate::value::{Map, Value};
use crate::value::{js_trim, js_trim_end};

const STDOUT_CAP: usize = 1_048_576;
const STDERR_CAP: usize = 500;

pub async fn run(ex: &mut Exec<'_>) {
    let phase = ex.phase;
    let scope = ex.scope.clone();
    let Some(run) = &phase.script_fields().run else {
        ex.fail(String::new(), "Script error: no 'run' command");
        return;
    };
    let argv: Vec<String> = match &run.value {
        Run::Shell(cmd) => vec!["sh".into(), "-c".into(), cmd.value.clone()],
        Run::Argv(items) => items.iter().map(|t| ex.render("run", t, &scope)).collect(),
    };
    let input = phase
        .script_fields()
        .input
        .as_ref()
        .map(|t| ex.render("input", t, &scope));
    ex.rec.attempts = 1;
    if ex.sh.opts.dry_run && !ex.sh.opts.dry_run_scripts {
        ex.succeed("[dry-run: script not executed]".into());
        return;
    }
    let timeout =
        Duration::from_millis(phase.timeout.as_ref().map_or(60_000.0, |t| t.value) as u64);
    let Some((program, args)) = argv.split_first() else {
        ex.fail(String::new(), "Script error: empty command");
        return;
    };
    let mut spec = ProcessSpec::new(program).args(args);
    spec.cwd = Some(ex.work_dir.clone());
    spec.env = env::parent_env();
    env::set(
        &mut spec.env,
        [
            ("TFC_RUN_ID", ex.sh.run_id.as_str()),
            ("TFC_PHASE_ID", phase.id.as_str()),
        ],
    );
    spec.stdin = input.map(String::into_bytes);
    spec.wall_timeout = Some(timeout);
    spec.kill_on_cancel = true;
    spec.stdout = StdoutMode::Keep(Keep::Head(STDOUT_CAP));
    spec.stderr = Keep::Head(STDERR_CAP);
    // A script's stdout beyond its first MiB is read and dropped (SPEC §3.11), never capped.
    spec.max_output = None;
    let result = run_process(spec, ex.sh.cancel.clone()).await;
    journal(ex, &run.value, &argv, result.as_ref().ok());
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            ex.fail(String::new(), format!("Script error: {e}"));
            return;
        }
    };
    let stdout = result.stdout_text();
    match result.end {
        End::WallTimeout | End::IdleTimeout => {
            ex.rec.timed_out = true;
            ex.fail(
                stdout,
                format!("Script timed out after {}ms", timeout.as_millis()),
            );
        }
        End::Cancelled => ex.fail(stdout, "Aborted"),
        _ if result.code() == 0 => {
            let note = if result.stdout_truncated {
                "\n[stdout truncated at 1 MB]"
            } else {
                ""
            };
            ex.succeed(format!("{}{note}", js_trim_end(&stdout)));
        }
        _ => {
            let mut err = format!("Script exited with code {}", result.code());
            let stderr = result.stderr_text();
            let stderr = js_trim(&stderr);
            if !stderr.is_empty() {
                err.push_str(": ");
                err.push_str(stderr);
            }
            if result.stdout_truncated {
                err.push_str(" [stdout truncated at 1 MB]");
            }
            ex.fail(stdout, err);
        }
    }
}

/// The journal's `script` record.
fn journal(
    ex: &Exec<'_>,
    run: &Run,
    argv: &[String],
    result: Option<&crate::process::ProcessResult>,
) {
    let command = match run {
        Run::Shell(cmd) => Value::from(cmd.value.as_str()),
        Run::Argv(_) => Value::Array(argv.iter().map(|a| Value::from(a.as_str())).collect()),
    };
    let mut m = Map::default();
    m.insert("type".into(), Value::from("script"));
    m.insert("ts".into(), Value::from(super::super::record::now()));
    m.insert("phase".into(), Value::from(ex.phase.id.as_str()));
    m.insert("command".into(), command);
    m.insert(
        "exitCode".into(),
        result.map_or(Value::Null, |r| Value::Number(f64::from(r.code()))),
    );
    m.insert(
        "durationMs".into(),
        result.map_or(Value::Null, |r| Value::Number(r.elapsed.as_millis() as f64)),
    );
    ex.sh.journal(Value::Object(m));
}
