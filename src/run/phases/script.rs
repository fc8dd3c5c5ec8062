//! script (SPEC §3.11): `sh -c` for a string `run`, direct exec for an argv array; `input` on
//! stdin; a timeout that stops the whole process group; capped output; never retried. The
//! machine decides the command; the driver runs the process.

use super::super::machine::{
    Command, Cx, Exec, Halt, KindEvent, OpKind, ScriptEnd, ScriptOutcome, ScriptRequest, Step,
};
use crate::flow::{Phase, Run, kinds};
use crate::value::{Map, Value};
use crate::value::{js_trim, js_trim_end};

/// A script in progress: its command line, for the journal.
#[derive(Debug, Default)]
pub(crate) struct Script {
    argv: Vec<String>,
}

impl Script {
    pub(crate) fn step(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        k: &kinds::Script,
        ev: KindEvent,
    ) -> Step {
        let flow = cx.flow();
        let phase = &flow.phases[ex.index];
        match ev {
            KindEvent::Start => start(self, ex, cx, phase, k),
            KindEvent::Script(result) => ended(self, ex, cx, phase, k, result),
            _ => Step::Wait,
        }
    }
}

fn argv(ex: &mut Exec, cx: &mut Cx<'_>, k: &kinds::Script) -> Option<Vec<String>> {
    let scope = ex.scope.clone();
    let run = k.run.as_ref()?;
    Some(match &run.value {
        Run::Shell(cmd) => vec!["sh".into(), "-c".into(), cmd.value.clone()],
        Run::Argv(items) => items
            .iter()
            .map(|t| ex.render(cx, "run", t, &scope))
            .collect(),
    })
}

fn start(s: &mut Script, ex: &mut Exec, cx: &mut Cx<'_>, phase: &Phase, k: &kinds::Script) -> Step {
    let Some(argv) = argv(ex, cx, k) else {
        ex.fail(String::new(), "Script error: no 'run' command");
        return Step::Done(Halt::None);
    };
    let scope = ex.scope.clone();
    let input = k.input.as_ref().map(|t| ex.render(cx, "input", t, &scope));
    ex.rec.attempts = 1;
    if cx.cfg().settings.dry_run && !cx.cfg().settings.dry_run_scripts {
        ex.succeed("[dry-run: script not executed]".into());
        return Step::Done(Halt::None);
    }
    if argv.is_empty() {
        ex.fail(String::new(), "Script error: empty command");
        return Step::Done(Halt::None);
    }
    let script = ScriptRequest {
        argv,
        input,
        cwd: ex.work_dir.to_path_buf(),
        timeout_ms: timeout_ms(phase),
        run_id: cx.cfg().run_id.clone(),
        phase_id: phase.id.clone(),
        node: cx.node(&phase.id),
        traceparent: None,
    };
    if cx.cfg().journaling {
        s.argv = script.argv.clone();
    }
    cx.io(0, OpKind::Script, |op| Command::StartScript {
        op,
        script: Box::new(script),
    });
    Step::Wait
}

fn timeout_ms(phase: &Phase) -> u64 {
    phase.timeout.as_ref().map_or(60_000.0, |t| t.value) as u64
}

fn ended(
    s: &mut Script,
    ex: &mut Exec,
    cx: &mut Cx<'_>,
    phase: &Phase,
    k: &kinds::Script,
    result: ScriptOutcome,
) -> Step {
    journal(s, cx, phase, k, &result);
    if let Some(e) = result.spawn_error {
        ex.fail(String::new(), format!("Script error: {e}"));
        return Step::Done(Halt::None);
    }
    let stdout = result.stdout;
    match result.end {
        ScriptEnd::Timeout => {
            ex.rec.timed_out = true;
            ex.fail(
                stdout,
                format!("Script timed out after {}ms", timeout_ms(phase)),
            );
        }
        ScriptEnd::Cancelled => ex.fail(stdout, "Aborted"),
        ScriptEnd::Exited if result.code == 0 => {
            let note = if result.stdout_truncated {
                "\n[stdout truncated at 1 MB]"
            } else {
                ""
            };
            ex.succeed(format!("{}{note}", js_trim_end(&stdout)));
        }
        ScriptEnd::Exited => {
            let mut err = format!("Script exited with code {}", result.code);
            let stderr = js_trim(&result.stderr);
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
    Step::Done(Halt::None)
}

/// The journal's `script` record.
fn journal(s: &Script, cx: &mut Cx<'_>, phase: &Phase, k: &kinds::Script, result: &ScriptOutcome) {
    if !cx.cfg().journaling {
        return;
    }
    let command = match k.run.as_ref().map(|r| &r.value) {
        Some(Run::Shell(cmd)) => Value::from(cmd.value.as_str()),
        _ => Value::Array(s.argv.iter().map(|a| Value::from(a.as_str())).collect()),
    };
    let ran = result.spawn_error.is_none();
    let mut m = Map::default();
    m.insert("type".into(), Value::from("script"));
    m.insert("ts".into(), Value::from(cx.ts()));
    m.insert("phase".into(), Value::from(phase.id.as_str()));
    m.insert("command".into(), command);
    m.insert(
        "exitCode".into(),
        if ran {
            Value::Number(f64::from(result.code))
        } else {
            Value::Null
        },
    );
    m.insert(
        "durationMs".into(),
        if ran {
            Value::Number(result.elapsed_ms as f64)
        } else {
            Value::Null
        },
    );
    cx.journal_value(Value::Object(m));
}
