//! gate (SPEC §3.5, §3.14): deterministic `eval` checks, then scorers, then an LLM verdict;
//! a block halts the run, or with `onBlock: "retry"` re-runs the direct dependencies (the
//! machine's rework) and asks again.

use super::super::contract::check_output;
use super::super::machine::{CallResult, Command, Cx, Exec, Halt, KindEvent, OpKind, Step};
use super::super::record::GateInfo;
use super::super::verdict::{GATE_SUFFIX, Verdict, asks_for_verdict, gate_verdict};
use crate::agent::Purpose;
use crate::eval::eval_gate_entry;
use crate::flow::{Combine, OnBlock, OutputMode, Phase, Score, ScorerKind, kinds};
use crate::value::{Map, Value, format_number};

/// Reworks nest (a re-run dependency may itself be a reworking gate) at most this deep.
const MAX_REWORK_DEPTH: u32 = 3;
/// The gate task's call slot.
const TASK: u32 = 0;
/// The score judge's call slot.
const JUDGE: u32 = 1;

/// How one round of the gate ended.
#[derive(Debug)]
enum Round {
    Pass(String),
    Block(String, Option<String>),
    Failed,
}

/// What the scorers decided.
enum ScoreResult {
    Decided(Round),
    /// Scorers failed and there is no judge: the gate task decides, with this report.
    Fallback(String),
    /// The judge was asked.
    Judging,
}

/// Scorer results of the round in progress.
#[derive(Debug, Default)]
struct Scoring {
    target: String,
    /// Per scorer: pass and detail, once known.
    results: Vec<Option<(bool, Option<String>)>>,
    /// Set once the judge is asked: the scorer report and the results as JSON values.
    report: String,
    values: Vec<(Value, f64)>,
    combined: f64,
}

/// A gate in progress.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    rounds: u32,
    /// A rework (round `rounds + 1`) is running.
    reworking: bool,
    scoring: Scoring,
}

impl Gate {
    pub(crate) fn step(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        k: &kinds::Gate,
        ev: KindEvent,
    ) -> Step {
        let flow = cx.flow();
        let phase = &flow.phases[ex.index];
        let round = match ev {
            KindEvent::Start => self.round(ex, cx, phase, k),
            KindEvent::Scorer(slot, pass, detail) => {
                if let Some(r) = self.scoring.results.get_mut(slot as usize) {
                    *r = Some((pass, detail));
                }
                if self.scoring.results.iter().any(Option::is_none) {
                    return Step::Wait;
                }
                self.scored(ex, cx, phase, k)
            }
            KindEvent::Call(JUDGE, r) => {
                if let Some(msg) = r.crashed {
                    return ex.crash(msg);
                }
                Some(self.judged(ex, k, r))
            }
            KindEvent::Call(_, r) => {
                if let Some(msg) = r.crashed {
                    return ex.crash(msg);
                }
                let ok = r.ok;
                let output = r.output.clone();
                super::common::settle(ex, phase.output == OutputMode::Json, r);
                Some(if !ok {
                    Round::Failed
                } else {
                    let Verdict { pass, reason } = gate_verdict(&output);
                    if pass {
                        Round::Pass(output)
                    } else {
                        Round::Block(output, reason)
                    }
                })
            }
            // Over the budget (or aborted) meanwhile: no new round; the last block stands.
            KindEvent::Reworked(Some(_)) if cx.aborted() || cx.over().is_some() => {
                self.reworking = false;
                return self.block_now(ex, k);
            }
            KindEvent::Reworked(Some(scope)) => {
                ex.scope = scope;
                self.reworking = false;
                self.rounds += 1;
                self.round(ex, cx, phase, k)
            }
            KindEvent::Reworked(None) => {
                self.reworking = false;
                return self.block_now(ex, k);
            }
            _ => None,
        };
        match round {
            None => Step::Wait,
            Some(Round::Failed) => Step::Done(Halt::None),
            Some(Round::Pass(out)) => {
                ex.rec.gate = Some(GateInfo {
                    verdict: "pass",
                    reason: None,
                    rounds: (k.on_block == OnBlock::Retry).then_some(self.rounds),
                });
                ex.succeed(out);
                Step::Done(Halt::None)
            }
            Some(Round::Block(out, reason)) => {
                let max_rounds = phase
                    .retry
                    .as_ref()
                    .map_or(1, |r| r.value.max.floor() as u32);
                let deps: Vec<usize> = phase
                    .depends_on
                    .iter()
                    .filter_map(|d| flow.phases.iter().position(|p| p.id == d.value))
                    .collect();
                // The round's calls are the call cap's: checked last, as it refuses.
                let can_retry = k.on_block == OnBlock::Retry
                    && ex.rework_depth < MAX_REWORK_DEPTH
                    && self.rounds < max_rounds
                    && !deps.is_empty()
                    && !cx.aborted()
                    && cx.refuse_call().is_none();
                // Kept for the block in case the rework cannot happen.
                ex.rec.output = out;
                ex.rec.gate = Some(GateInfo {
                    verdict: "block",
                    reason,
                    rounds: (k.on_block == OnBlock::Retry).then_some(self.rounds),
                });
                if can_retry {
                    self.reworking = true;
                    cx.rework(deps, ex.rework_depth);
                    return Step::Wait;
                }
                self.block_now(ex, k)
            }
        }
    }

    /// The rework round a progress display shows: the one running, else the last done.
    pub(crate) fn live_round(&self) -> u32 {
        self.rounds + u32::from(self.reworking)
    }

    /// End with the block of the last round.
    fn block_now(&mut self, ex: &mut Exec, k: &kinds::Gate) -> Step {
        let reason = ex.rec.gate.as_ref().and_then(|g| g.reason.clone());
        ex.rec.gate = Some(GateInfo {
            verdict: "block",
            reason: reason.clone(),
            rounds: (k.on_block == OnBlock::Retry).then_some(self.rounds),
        });
        let out = std::mem::take(&mut ex.rec.output);
        ex.succeed(out);
        Step::Done(Halt::Block(reason))
    }

    /// One round: `eval` checks, scorers, the gate task. `None` while waiting.
    fn round(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
        k: &kinds::Gate,
    ) -> Option<Round> {
        ex.rec.gate = None;
        if !k.eval.is_empty() {
            let scope = ex.scope.clone();
            let mut all = true;
            for entry in &k.eval {
                let o = eval_gate_entry(entry.src.value.as_str(), &scope);
                for id in &o.read_phases {
                    ex.rec.read(id);
                }
                if !o.value {
                    all = false;
                    break;
                }
            }
            if all {
                return Some(Round::Pass(
                    "PASS (eval checks passed — no LLM call)".into(),
                ));
            }
        }
        let Some(score) = &k.score else {
            self.task(ex, cx, phase, String::new());
            return None;
        };
        let scope = ex.scope.clone();
        let target = match &score.target {
            Some(t) => {
                let r = t.template.render(&scope);
                for id in t.template.read_phases(&scope, &r.reads) {
                    ex.rec.read(&id);
                }
                (r.missing.is_empty()).then_some(r.text)
            }
            None => scope
                .previous
                .as_ref()
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        let Some(target) = target else {
            ex.rec
                .warn("score.target did not resolve — the gate passes (fail-open)");
            return Some(Round::Pass(
                "PASS (score.target did not resolve — fail-open)".into(),
            ));
        };
        self.scoring = Scoring {
            results: score
                .scorers
                .iter()
                .map(|s| pure_scorer(&s.kind, &target))
                .collect(),
            target,
            ..Scoring::default()
        };
        let mut asked = false;
        for (slot, s) in score.scorers.iter().enumerate() {
            if let ScorerKind::CodeCompiles { language } = &s.kind {
                let (language, code) = (language.clone(), self.scoring.target.clone());
                cx.io(slot as u32, OpKind::Other, |op| Command::RunScorer {
                    op,
                    language,
                    code,
                });
                asked = true;
            }
        }
        if asked {
            return None;
        }
        self.scored(ex, cx, phase, k)
    }

    /// Every scorer of the round has answered.
    fn scored(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
        k: &kinds::Gate,
    ) -> Option<Round> {
        let Some(score) = &k.score else {
            return None;
        };
        match decide(ex, cx, phase, score, &mut self.scoring) {
            ScoreResult::Decided(r) => Some(r),
            ScoreResult::Judging => None,
            ScoreResult::Fallback(report) => {
                if phase.task.is_none() {
                    return Some(Round::Block(
                        format!(
                            "BLOCK (deterministic scorers failed — no LLM fallback)\n\n{report}"
                        ),
                        None,
                    ));
                }
                self.task(ex, cx, phase, format!("\n\nScorer report:\n{report}"));
                None
            }
        }
    }

    /// Ask the gate task for a verdict.
    fn task(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, phase: &Phase, suffix: String) {
        let scope = ex.scope.clone();
        let mut task = match &phase.task {
            Some(t) => ex.render(cx, "task", t, &scope),
            None => String::new(),
        };
        task.push_str(&suffix);
        let json_contract = phase.output == OutputMode::Json && phase.expect.is_some();
        if !json_contract
            && !phase
                .task
                .as_ref()
                .is_some_and(|t| asks_for_verdict(t.as_str()))
        {
            task.push_str(GATE_SUFFIX);
        }
        let prompt = ex.prompt(cx, &task);
        let spec = ex
            .spec(phase.id.clone(), &phase.agent.value, prompt, Purpose::Gate)
            .checked(phase);
        cx.call(ex, TASK, spec);
    }

    /// The score judge answered.
    fn judged(&mut self, ex: &mut Exec, k: &kinds::Gate, r: CallResult) -> Round {
        let Some(score) = &k.score else {
            return Round::Failed;
        };
        let sc = std::mem::take(&mut self.scoring);
        ex.rec.attempts += r.attempts;
        ex.rec.usage.add(&r.usage);
        let (jpass, jscore, reason) = if r.ok {
            judge_reply(&r.output)
        } else {
            (false, 0.0, r.error.clone())
        };
        let mut jm = Map::default();
        jm.insert("score".into(), Value::Number(jscore));
        jm.insert(
            "verdict".into(),
            Value::from(if jpass { "pass" } else { "block" }),
        );
        let (final_pass, final_combined) = match score.combine {
            Combine::Weighted => {
                let c = combine(score, &sc.values, Some(jscore.clamp(0.0, 1.0)));
                (c >= score.threshold, c)
            }
            _ => (jpass, sc.combined),
        };
        ex.rec.json = Some(score_json(
            score,
            &sc.values,
            if final_pass { "pass" } else { "block" },
            final_combined,
            Some(Value::Object(jm)),
        ));
        let out = if r.ok {
            r.output
        } else {
            format!(
                "BLOCK (judge failed: {})\n\n{}",
                reason.clone().unwrap_or_default(),
                sc.report
            )
        };
        if final_pass {
            Round::Pass(out)
        } else {
            Round::Block(out, reason)
        }
    }
}

/// Decide on the scorers' results: pass, block, fall back to the task, or ask the judge.
fn decide(
    ex: &mut Exec,
    cx: &mut Cx<'_>,
    phase: &Phase,
    score: &Score,
    sc: &mut Scoring,
) -> ScoreResult {
    let mut lines = Vec::new();
    sc.values.clear();
    for (s, r) in score.scorers.iter().zip(&sc.results) {
        let (pass, detail) = r.clone().unwrap_or((false, None));
        let v = if pass { 1.0 } else { 0.0 };
        lines.push(
            format!(
                "- {}: {} ({})",
                s.name,
                if pass { "pass" } else { "fail" },
                format_number(v)
            ) + &detail
                .as_ref()
                .map(|d| format!(" — {d}"))
                .unwrap_or_default(),
        );
        let mut m = Map::default();
        m.insert("name".into(), Value::from(s.name.as_str()));
        m.insert("pass".into(), Value::Bool(pass));
        m.insert("score".into(), Value::Number(v));
        sc.values.push((Value::Object(m), v));
    }
    let report = lines.join("\n");
    let combined = combine(score, &sc.values, None);
    let pass = combined >= score.threshold;
    if pass && (score.judge.is_none() || score.combine == Combine::Weighted) {
        ex.rec.json = Some(score_json(score, &sc.values, "pass", combined, None));
        return ScoreResult::Decided(Round::Pass("PASS (scorers passed — no LLM call)".into()));
    }
    let Some(judge) = &score.judge else {
        ex.rec.json = Some(score_json(score, &sc.values, "block", combined, None));
        return ScoreResult::Fallback(report);
    };
    if cx.aborted() || cx.refuse_call().is_some() {
        ex.rec.json = Some(score_json(score, &sc.values, "block", combined, None));
        return ScoreResult::Decided(Round::Block(
            format!("BLOCK (judge skipped: run aborted or budget exceeded)\n\n{report}"),
            None,
        ));
    }
    let scope = ex.scope.clone();
    let jtask = match &judge.task {
        Some(t) => ex.render(cx, "score.judge.task", t, &scope),
        None => String::new(),
    };
    let text = format!(
        "{jtask}\n\nTarget:\n```\n{}\n```\n\nScorer report:\n{report}\n\nReply with JSON {{\"score\": <0..1>, \"verdict\": \"pass\"|\"block\", \"reason\": \"<why>\"}}.",
        sc.target
    );
    let prompt = ex.prompt(cx, &text);
    let agent = judge
        .agent
        .as_ref()
        .map_or_else(|| phase.agent.value.clone(), |a| a.value.clone());
    let spec = ex.spec(
        format!("{}#judge", phase.id),
        &agent,
        prompt,
        Purpose::Judge,
    );
    sc.report = report;
    sc.combined = combined;
    cx.call(ex, JUDGE, spec);
    ScoreResult::Judging
}

fn combine(score: &Score, results: &[(Value, f64)], judge: Option<f64>) -> f64 {
    let weights: Vec<f64> = score
        .weights
        .as_ref()
        .map_or_else(|| vec![1.0; score.scorers.len() + 1], |w| w.value.clone());
    match score.combine {
        Combine::All => f64::from(results.iter().all(|(_, s)| *s >= 1.0)),
        Combine::Any => f64::from(results.iter().any(|(_, s)| *s >= 1.0)),
        Combine::Weighted => {
            let mut num: f64 = results.iter().zip(&weights).map(|((_, s), w)| s * w).sum();
            let mut den: f64 = weights.iter().take(results.len()).sum();
            if score.judge.is_some() {
                let jw = weights.get(results.len()).copied().unwrap_or(1.0);
                den += jw;
                num += judge.unwrap_or(0.0) * jw;
            }
            if den > 0.0 { num / den } else { 0.0 }
        }
    }
}

fn score_json(
    score: &Score,
    results: &[(Value, f64)],
    verdict: &str,
    combined: f64,
    judge: Option<Value>,
) -> Value {
    let mut m = Map::default();
    m.insert("verdict".into(), Value::from(verdict));
    m.insert("combined".into(), Value::Number(combined));
    m.insert(
        "results".into(),
        Value::Array(results.iter().map(|(v, _)| v.clone()).collect()),
    );
    m.insert("threshold".into(), Value::Number(score.threshold));
    if let Some(j) = judge {
        m.insert("judge".into(), j);
    }
    Value::Object(m)
}

/// A judge reply: JSON `verdict`, else numeric `score` (≥ 0.5 passes), else `SCORE:` /
/// `VERDICT:` markers; unparseable ⇒ block with score 0.
fn judge_reply(reply: &str) -> (bool, f64, Option<String>) {
    if let Some(Value::Object(o)) = &crate::eval::safe_parse::safe_parse(reply).value {
        let reason = o.get("reason").and_then(Value::as_str).map(str::to_owned);
        let sc = o.get("score").and_then(|s| match s {
            Value::Number(n) => Some(*n),
            Value::String(s) => Some(crate::value::js_number_value(s)).filter(|n| n.is_finite()),
            _ => None,
        });
        if let Some(Value::String(_)) = o.get("verdict") {
            let v = gate_verdict(reply);
            return (
                v.pass,
                sc.unwrap_or(if v.pass { 1.0 } else { 0.0 }),
                v.reason.or(reason),
            );
        }
        if let Some(s) = sc {
            return (s >= 0.5, s, reason);
        }
    }
    let re = regex::Regex::new(r"(?i)SCORE\s*[:=]\s*([0-9]*\.?[0-9]+)").expect("static pattern");
    if let Some(c) = re.captures_iter(reply).last() {
        let s: f64 = c[1].parse().unwrap_or(0.0);
        return (s >= 0.5, s, None);
    }
    let v = gate_verdict(reply);
    if v.reason.as_deref() == Some(super::super::verdict::UNPARSEABLE_VERDICT) {
        return (false, 0.0, v.reason);
    }
    (v.pass, if v.pass { 1.0 } else { 0.0 }, v.reason)
}

/// A deterministic scorer's pass and detail; `None` for `code-compiles`, which the driver
/// runs.
fn pure_scorer(kind: &ScorerKind, target: &str) -> Option<(bool, Option<String>)> {
    Some(match kind {
        ScorerKind::ExactMatch { value } => (target == value, None),
        ScorerKind::Contains { value } => (target.contains(value.as_str()), None),
        ScorerKind::Regex { pattern, negate } => match regex::Regex::new(pattern) {
            Ok(re) => (re.is_match(target) != *negate, None),
            Err(e) => (false, Some(format!("bad pattern: {e}"))),
        },
        ScorerKind::JsonSchema { schema } => match check_output(schema, target) {
            Ok(()) => (true, None),
            Err(v) => (false, Some(v.join("; "))),
        },
        ScorerKind::LengthRange { min, max } => {
            let n = target.chars().count() as f64;
            let ok = min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m);
            (ok, Some(format!("{} chars", format_number(n))))
        }
        ScorerKind::CodeCompiles { .. } => return None,
    })
}
