//! loop (SPEC §3.9): repeat the task until `until` holds, the output converges, or the
//! iterations run out; with `reflexion`, feed a summary of the previous iteration back.

use super::super::call::{CallSpec, call};
use super::super::exec::Exec;
use super::super::record::LoopInfo;
use super::super::scope::Layered;
use crate::agent::Purpose;
use crate::eval::{StepState, eval_until};
use crate::flow::OutputMode;
use crate::value::js_trim;
use crate::value::{Map, Value};

pub const FIRST_ITERATION: &str = "_(first iteration — no prior feedback yet)_";
const AUTO_APPEND_WARNING: &str = "reflexion: true but the task has no {reflexion} placeholder — the summary was auto-appended; add {reflexion} to control placement";

/// How an iteration ended, for the next reflexion summary.
enum Feedback {
    Contract(Vec<String>),
    Error(String),
    Unmet,
}

pub async fn run(ex: &mut Exec<'_>) {
    let phase = ex.phase;
    let max = phase.loop_fields().max_iterations.floor().clamp(1.0, 100.0) as u32;
    let scope = ex.scope.clone();
    let has_placeholder = phase
        .task
        .as_ref()
        .is_some_and(|t| t.template.paths().iter().any(|p| &*p.text == "reflexion"));
    let mut last_success: Option<String> = None;
    let mut last_output = String::new();
    let mut info = LoopInfo {
        iterations: 0,
        stop: "max",
        reflexion: None,
        failures: Vec::new(),
    };
    let mut summary: Option<String> = None;
    let mut last_failed = false;
    for i in 1..=max {
        if ex.sh.cancel.is_cancelled() {
            info.stop = "failed";
            ex.rec.loop_info = Some(info);
            ex.fail(last_success.unwrap_or_default(), "Aborted");
            return;
        }
        if let Some(reason) = ex.sh.meter.over() {
            info.stop = "budget";
            ex.rec.warn(format!(
                "loop stopped before iteration {i}: budget exceeded ({reason})"
            ));
            ex.rec.loop_info = Some(info);
            match last_success {
                Some(out) => {
                    ex.rec.budget_truncated = true;
                    ex.succeed(out);
                }
                None => ex.fail(
                    String::new(),
                    format!(
                        "loop '{}' stopped by the budget before any iteration succeeded",
                        phase.id
                    ),
                ),
            }
            return;
        }
        info.iterations = i;
        let mut locals = Map::default();
        locals.insert("iteration".into(), Value::Number(i as f64));
        locals.insert("lastOutput".into(), Value::from(last_output.as_str()));
        locals.insert("maxIterations".into(), Value::Number(max as f64));
        let mut layered = Layered::new(&scope).with("loop", Value::Object(locals.clone()));
        if phase.loop_fields().reflexion {
            let text = summary
                .clone()
                .unwrap_or_else(|| FIRST_ITERATION.to_owned());
            layered.reflexion = Some(Value::from(text));
        }
        let mut task = match &phase.task {
            Some(t) => ex.render("task", t, &layered),
            None => String::new(),
        };
        if phase.loop_fields().reflexion
            && !has_placeholder
            && let Some(s) = &summary
        {
            task.push_str("\n\n---\n\n");
            task.push_str(s);
            ex.rec.warn(AUTO_APPEND_WARNING);
        }
        if phase.loop_fields().reflexion && summary.is_some() {
            info.reflexion = summary.clone();
        }
        let prompt = ex.prompt(&task);
        let r = call(ex.sh, phase, {
            let mut call_spec = CallSpec::new(
                format!("{}@{i}", phase.id),
                &phase.agent.value,
                prompt,
                Purpose::Task,
            )
            .checked(phase)
            .in_dir(&ex.work_dir)
            .refuse(ex.oversize.clone());
            call_spec.iteration = Some(i);
            call_spec
        })
        .await;
        ex.rec.attempts += r.attempts;
        ex.rec.usage.add(&r.usage);
        ex.rec.timed_out |= r.timed_out;
        if ex.rec.model.is_none() {
            ex.rec.model = r.model.clone();
        }
        for w in &r.warnings {
            ex.rec.warn(w.clone());
        }
        if !r.ok {
            let err = r
                .error
                .clone()
                .unwrap_or_else(|| format!("loop '{}' iteration {i} failed", phase.id));
            info.failures.push((i, err.clone()));
            if info.failures.len() > 20 {
                info.failures.remove(0);
            }
            last_failed = true;
            if !phase.loop_fields().reflexion || r.timed_out || r.aborted {
                info.stop = "failed";
                ex.rec.loop_info = Some(info);
                ex.fail(last_success.unwrap_or_default(), err);
                return;
            }
            let feedback = match err.strip_prefix("Output contract violated:") {
                Some(rest) => Feedback::Contract(
                    rest.lines()
                        .filter_map(|l| l.strip_prefix("- "))
                        .map(str::to_owned)
                        .collect(),
                ),
                None => Feedback::Error(err),
            };
            summary = Some(reflexion_summary(
                i,
                &feedback,
                phase
                    .loop_fields()
                    .until
                    .as_ref()
                    .map_or("", |u| u.as_str()),
                &r.output,
            ));
            continue;
        }
        last_failed = false;
        let prev = std::mem::replace(&mut last_output, r.output.clone());
        last_success = Some(r.output.clone());
        // `until` sees this iteration's locals and the loop's own output as `steps.<self>`.
        let mut until_scope = Layered::new(&scope).with("loop", Value::Object(locals));
        until_scope.own = Some((phase.id.as_str(), StepState::done(r.output.clone())));
        if let Some(until) = &phase.loop_fields().until {
            let o = eval_until(until.as_str(), &until_scope);
            for id in o.read_phases.iter().filter(|id| **id != phase.id) {
                ex.rec.read(id);
            }
            if let Some(e) = &o.error {
                ex.rec.warn(format!(
                    "loop 'until' could not be evaluated (stopped early): {}",
                    e.message
                ));
                info.stop = "until";
                break;
            }
            if o.value {
                info.stop = "until";
                break;
            }
        }
        if phase.loop_fields().convergence && prev == last_output {
            info.stop = "converged";
            break;
        }
        summary = Some(reflexion_summary(
            i,
            &Feedback::Unmet,
            phase
                .loop_fields()
                .until
                .as_ref()
                .map_or("", |u| u.as_str()),
            &r.output,
        ));
    }
    ex.rec.loop_info = Some(info);
    if last_failed {
        if let Some(l) = ex.rec.loop_info.as_mut() {
            l.stop = "failed";
        }
        let err = ex
            .rec
            .loop_info
            .as_ref()
            .and_then(|l| l.failures.last())
            .map(|(_, e)| e.clone())
            .unwrap_or_default();
        ex.fail(last_success.unwrap_or_default(), err);
        return;
    }
    let out = last_success.unwrap_or_default();
    if phase.output == OutputMode::Json {
        ex.store_json(&out);
    }
    ex.succeed(out);
}

/// Collapse whitespace runs, JS-trim, and cut to `max` chars (`max − 1` + `…`).
fn squeeze(text: &str, max: usize) -> String {
    let collapsed = text
        .split(crate::value::is_js_whitespace)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let t = js_trim(&collapsed);
    if t.chars().count() > max {
        let mut s: String = t.chars().take(max - 1).collect();
        s.push('…');
        s
    } else {
        t.to_owned()
    }
}

/// The summary of iteration `i` that the next iteration sees (SPEC §3.9, exact layout).
fn reflexion_summary(i: u32, feedback: &Feedback, until: &str, output: &str) -> String {
    let mut lines = vec![format!("## Reflexion: iteration {i} (prior)")];
    match feedback {
        Feedback::Contract(diags) => {
            lines.push("- Outcome: FAILED — output contract violated".into());
            lines.push("- Contract diagnostics:".into());
            lines.extend(diags.iter().map(|d| format!("  - {}", squeeze(d, 200))));
        }
        Feedback::Error(e) => {
            lines.push("- Outcome: FAILED — subagent error".into());
            lines.push(format!("- Error: {}", squeeze(e, 400)));
        }
        Feedback::Unmet => {
            lines.push("- Outcome: succeeded, but the stop condition was not met".into());
            lines.push(format!(
                "- Stop condition still false: `{}`",
                squeeze(until, 200)
            ));
        }
    }
    lines.push("- Fix the issues above in this iteration.".into());
    let head = lines.join("\n");
    let head_len = head.chars().count();
    if head_len > 2000 {
        let mut h: String = head.chars().take(1999).collect();
        h.push('…');
        return h;
    }
    let o = js_trim(output);
    let o_len = o.chars().count();
    let room = 2000i64 - head_len as i64 - 37;
    if o_len == 0 || room < 40 {
        return head;
    }
    let room = room as usize;
    let snippet = if o_len <= room {
        o.to_owned()
    } else {
        let marker = format!("\n…[truncated {} chars]…\n", o_len - room);
        let u = room as i64 - marker.chars().count() as i64;
        if u < 20 {
            o.chars().take(room).collect()
        } else {
            let u = u as usize;
            let front = (0.65 * u as f64).floor() as usize;
            let back = u - front;
            let chars: Vec<char> = o.chars().collect();
            let mut s: String = chars[..front].iter().collect();
            s.push_str(&marker);
            s.extend(&chars[o_len - back..]);
            s
        }
    };
    format!("{head}\n- Prior output (truncated):\n```\n{snippet}\n```")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_layouts() {
        let s = reflexion_summary(
            1,
            &Feedback::Unmet,
            "{steps.fix.json.passed}   ==\ntrue",
            "  out  ",
        );
        assert_eq!(
            s,
            "## Reflexion: iteration 1 (prior)\n- Outcome: succeeded, but the stop condition was not met\n- Stop condition still false: `{steps.fix.json.passed} == true`\n- Fix the issues above in this iteration.\n- Prior output (truncated):\n```\nout\n```"
        );
        let s = reflexion_summary(
            2,
            &Feedback::Contract(vec!["$.a: required key is missing".into()]),
            "x",
            "",
        );
        assert_eq!(
            s,
            "## Reflexion: iteration 2 (prior)\n- Outcome: FAILED — output contract violated\n- Contract diagnostics:\n  - $.a: required key is missing\n- Fix the issues above in this iteration."
        );
        let long = "e".repeat(500);
        let s = reflexion_summary(3, &Feedback::Error(long), "x", "");
        assert!(s.contains(&format!("- Error: {}…", "e".repeat(399))));
    }

    #[test]
    fn long_output_is_cut_in_the_middle() {
        let out: String = (0..5000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let s = reflexion_summary(1, &Feedback::Unmet, "x", &out);
        assert!(s.chars().count() <= 2000, "{}", s.chars().count());
        assert!(s.contains("…[truncated "));
        assert!(s.ends_with("\n```"));
    }
}
