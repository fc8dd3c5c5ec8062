//! loop (SPEC §3.9): repeat the task until `until` holds, the output converges, or the
//! iterations run out; with `reflexion`, feed a summary of the previous iteration back. One
//! iteration at a time: each is a call the machine makes, each result an event here.

use super::super::machine::{CallResult, Cx, Exec, Halt, KindEvent, Step};
use super::super::record::LoopInfo;
use super::super::scope::Layered;
use crate::agent::Purpose;
use crate::eval::{StepState, eval_until};
use crate::flow::{OutputMode, Phase, kinds};
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

/// A loop in progress.
#[derive(Debug)]
pub(crate) struct Loop {
    max: u32,
    i: u32,
    last_success: Option<String>,
    last_output: String,
    info: LoopInfo,
    summary: Option<String>,
    last_failed: bool,
    /// This iteration's locals (`loop.*`), for `until`.
    locals: Map,
}

impl Default for Loop {
    fn default() -> Loop {
        Loop {
            max: 1,
            i: 0,
            last_success: None,
            last_output: String::new(),
            info: LoopInfo {
                iterations: 0,
                stop: "max",
                reflexion: None,
                failures: Vec::new(),
            },
            summary: None,
            last_failed: false,
            locals: Map::default(),
        }
    }
}

impl Loop {
    /// The iteration running (or the last one started), for progress displays.
    pub(crate) fn iteration(&self) -> u32 {
        self.i
    }

    pub(crate) fn step(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        k: &kinds::Loop,
        ev: KindEvent,
    ) -> Step {
        let flow = cx.flow();
        let phase = &flow.phases[ex.index];
        match ev {
            KindEvent::Start => {
                self.max = k.max_iterations.floor().clamp(1.0, 100.0) as u32;
                self.iterate(ex, cx, phase, k)
            }
            KindEvent::Call(_, r) => self.ended(ex, cx, phase, k, r),
            _ => Step::Wait,
        }
    }

    /// Start the next iteration, or end the loop.
    fn iterate(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, phase: &Phase, k: &kinds::Loop) -> Step {
        if self.i >= self.max {
            return self.finish(ex, phase);
        }
        let i = self.i + 1;
        if cx.aborted() {
            self.info.stop = "failed";
            ex.rec.loop_info = Some(self.info.clone());
            ex.fail(self.last_success.take().unwrap_or_default(), "Aborted");
            return Step::Done(Halt::None);
        }
        if let Some(reason) = cx.refuse_call() {
            self.info.stop = "budget";
            ex.rec.warn(format!(
                "loop stopped before iteration {i}: budget exceeded ({reason})"
            ));
            ex.rec.loop_info = Some(self.info.clone());
            match self.last_success.take() {
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
            return Step::Done(Halt::None);
        }
        self.i = i;
        self.info.iterations = i;
        let has_placeholder = phase
            .task
            .as_ref()
            .is_some_and(|t| t.template.paths().iter().any(|p| &*p.text == "reflexion"));
        let mut locals = Map::default();
        locals.insert("iteration".into(), Value::Number(i as f64));
        locals.insert("lastOutput".into(), Value::from(self.last_output.as_str()));
        locals.insert("maxIterations".into(), Value::Number(self.max as f64));
        let scope = ex.scope.clone();
        let mut layered = Layered::new(&scope).with("loop", Value::Object(locals.clone()));
        self.locals = locals;
        if k.reflexion {
            let text = self
                .summary
                .clone()
                .unwrap_or_else(|| FIRST_ITERATION.to_owned());
            layered.reflexion = Some(Value::from(text));
        }
        let mut task = match &phase.task {
            Some(t) => ex.render(cx, "task", t, &layered),
            None => String::new(),
        };
        if k.reflexion
            && !has_placeholder
            && let Some(s) = &self.summary
        {
            task.push_str("\n\n---\n\n");
            task.push_str(s);
            ex.rec.warn(AUTO_APPEND_WARNING);
        }
        if k.reflexion && self.summary.is_some() {
            self.info.reflexion = self.summary.clone();
        }
        let prompt = ex.prompt(cx, &task);
        let mut spec = ex
            .spec(
                format!("{}@{i}", phase.id),
                &phase.agent.value,
                prompt,
                Purpose::Task,
            )
            .checked(phase);
        spec.iteration = Some(i);
        cx.call(ex, 0, spec);
        Step::Wait
    }

    fn ended(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
        k: &kinds::Loop,
        r: CallResult,
    ) -> Step {
        if let Some(msg) = r.crashed {
            return ex.crash(msg);
        }
        let i = self.i;
        ex.rec.attempts += r.attempts;
        ex.rec.usage.add(&r.usage);
        ex.rec.timed_out |= r.timed_out;
        if ex.rec.model.is_none() {
            ex.rec.model = r.model.clone();
        }
        for w in &r.warnings {
            ex.rec.warn(w.clone());
        }
        let until = k.until.as_ref().map_or("", |u| u.as_str());
        if !r.ok {
            let err = r
                .error
                .clone()
                .unwrap_or_else(|| format!("loop '{}' iteration {i} failed", phase.id));
            self.info.failures.push((i, err.clone()));
            if self.info.failures.len() > 20 {
                self.info.failures.remove(0);
            }
            self.last_failed = true;
            if !k.reflexion || r.timed_out || r.aborted {
                self.info.stop = "failed";
                ex.rec.loop_info = Some(self.info.clone());
                ex.fail(self.last_success.take().unwrap_or_default(), err);
                return Step::Done(Halt::None);
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
            self.summary = Some(reflexion_summary(i, &feedback, until, &r.output));
            return self.iterate(ex, cx, phase, k);
        }
        self.last_failed = false;
        let prev = std::mem::replace(&mut self.last_output, r.output.clone());
        self.last_success = Some(r.output.clone());
        // `until` sees this iteration's locals and the loop's own output as `steps.<self>`.
        if let Some(u) = &k.until {
            let scope = ex.scope.clone();
            let mut until_scope =
                Layered::new(&scope).with("loop", Value::Object(std::mem::take(&mut self.locals)));
            until_scope.own = Some((phase.id.as_str(), StepState::done(r.output.clone())));
            let o = eval_until(u.as_str(), &until_scope);
            for id in o.read_phases.iter().filter(|id| **id != phase.id) {
                ex.rec.read(id);
            }
            if let Some(e) = &o.error {
                ex.rec.warn(format!(
                    "loop 'until' could not be evaluated (stopped early): {}",
                    e.message
                ));
                self.info.stop = "until";
                return self.finish(ex, phase);
            }
            if o.value {
                self.info.stop = "until";
                return self.finish(ex, phase);
            }
        }
        if k.convergence && prev == self.last_output {
            self.info.stop = "converged";
            return self.finish(ex, phase);
        }
        self.summary = Some(reflexion_summary(i, &Feedback::Unmet, until, &r.output));
        self.iterate(ex, cx, phase, k)
    }

    /// The iterations ran out or a stop condition held.
    fn finish(&mut self, ex: &mut Exec, phase: &Phase) -> Step {
        let mut info = self.info.clone();
        if self.last_failed {
            info.stop = "failed";
            let err = info
                .failures
                .last()
                .map(|(_, e)| e.clone())
                .unwrap_or_default();
            ex.rec.loop_info = Some(info);
            ex.fail(self.last_success.take().unwrap_or_default(), err);
            return Step::Done(Halt::None);
        }
        ex.rec.loop_info = Some(info);
        let out = self.last_success.take().unwrap_or_default();
        if phase.output == OutputMode::Json {
            ex.store_json(&out);
        }
        ex.succeed(out);
        Step::Done(Halt::None)
    }
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
