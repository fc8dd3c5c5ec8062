//! gate (SPEC §3.5, §3.14): deterministic `eval` checks, then scorers, then an LLM verdict;
//! a block halts the run, or with `onBlock: "retry"` re-runs the direct dependencies and
//! asks again.

use super::super::call::{CallSpec, call};
use super::super::contract::check_output;
use super::super::ctx::{Event, Halt};
use super::super::exec::Exec;
use super::super::record::GateInfo;
use super::super::verdict::{GATE_SUFFIX, Verdict, asks_for_verdict, gate_verdict};
use crate::agent::Purpose;
use crate::eval::eval_gate_entry;
use crate::flow::{Combine, OnBlock, OutputMode, Score, ScorerKind};
use crate::value::{Map, Value, format_number};

/// Reworks nest (a re-run dependency may itself be a reworking gate) at most this deep.
const MAX_REWORK_DEPTH: u32 = 3;

/// How one round of the gate ended.
enum Round {
    Pass(String),
    Block(String, Option<String>),
    Failed,
}

pub async fn run(ex: &mut Exec<'_>) -> Halt {
    let phase = ex.phase;
    let max_rounds = phase
        .retry
        .as_ref()
        .map_or(1, |r| r.value.max.floor() as u32);
    let mut rounds = 0u32;
    loop {
        match round(ex).await {
            Round::Failed => return Halt::None,
            Round::Pass(out) => {
                ex.rec.gate = Some(GateInfo {
                    verdict: "pass",
                    reason: None,
                    rounds: (phase.gate_fields().on_block == OnBlock::Retry).then_some(rounds),
                });
                ex.succeed(out);
                return Halt::None;
            }
            Round::Block(out, reason) => {
                let can_retry = phase.gate_fields().on_block == OnBlock::Retry
                    && ex.rework_depth < MAX_REWORK_DEPTH
                    && rounds < max_rounds
                    && !ex.sh.cancel.is_cancelled()
                    && ex.sh.meter.over().is_none();
                let reworked = can_retry && rework(ex).await;
                if !reworked {
                    ex.rec.gate = Some(GateInfo {
                        verdict: "block",
                        reason: reason.clone(),
                        rounds: (phase.gate_fields().on_block == OnBlock::Retry).then_some(rounds),
                    });
                    ex.succeed(out);
                    return Halt::Block(reason);
                }
                rounds += 1;
            }
        }
    }
}

/// Ask the coordinator to re-run the gate's direct `dependsOn` phases; on success the gate's
/// view of the run is refreshed. `false` when the rework could not happen or a phase failed.
async fn rework(ex: &mut Exec<'_>) -> bool {
    let deps: Vec<usize> = ex
        .phase
        .depends_on
        .iter()
        .filter_map(|d| ex.sh.flow.phases.iter().position(|p| p.id == d.value))
        .collect();
    if deps.is_empty() {
        return false;
    }
    let (tx, rx) = async_channel::bounded(1);
    if ex
        .sh
        .events
        .send(Event::Rework {
            gate: ex.index,
            depth: ex.rework_depth,
            deps,
            reply: tx,
        })
        .await
        .is_err()
    {
        return false;
    }
    match rx.recv().await {
        Ok(Some(scope)) => {
            ex.scope = scope;
            true
        }
        _ => false,
    }
}

async fn round(ex: &mut Exec<'_>) -> Round {
    let phase = ex.phase;
    if !phase.gate_fields().eval.is_empty() {
        let scope = ex.scope.clone();
        let mut all = true;
        for entry in &phase.gate_fields().eval {
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
            return Round::Pass("PASS (eval checks passed — no LLM call)".into());
        }
    }
    let mut report_suffix = String::new();
    if let Some(score) = &phase.gate_fields().score {
        match scored(ex, score).await {
            ScoreResult::Decided(r) => return r,
            ScoreResult::Fallback(report) => {
                if phase.task.is_none() {
                    return Round::Block(
                        format!(
                            "BLOCK (deterministic scorers failed — no LLM fallback)\n\n{report}"
                        ),
                        None,
                    );
                }
                report_suffix = format!("\n\nScorer report:\n{report}");
            }
        }
    }
    let scope = ex.scope.clone();
    let mut task = match &phase.task {
        Some(t) => ex.render("task", t, &scope),
        None => String::new(),
    };
    task.push_str(&report_suffix);
    let json_contract = phase.output == OutputMode::Json && phase.expect.is_some();
    if !json_contract
        && !phase
            .task
            .as_ref()
            .is_some_and(|t| asks_for_verdict(t.as_str()))
    {
        task.push_str(GATE_SUFFIX);
    }
    let prompt = ex.prompt(&task);
    let r = call(
        ex.sh,
        phase,
        CallSpec::new(phase.id.clone(), &phase.agent.value, prompt, Purpose::Gate)
            .checked(phase)
            .in_dir(&ex.work_dir)
            .refuse(ex.oversize.clone()),
    )
    .await;
    let ok = r.ok;
    let output = r.output.clone();
    super::settle(ex, r);
    if !ok {
        return Round::Failed;
    }
    let Verdict { pass, reason } = gate_verdict(&output);
    if pass {
        Round::Pass(output)
    } else {
        Round::Block(output, reason)
    }
}

enum ScoreResult {
    Decided(Round),
    /// Scorers failed and there is no judge: the gate task decides, with this report.
    Fallback(String),
}

async fn scored(ex: &mut Exec<'_>, score: &Score) -> ScoreResult {
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
        return ScoreResult::Decided(Round::Pass(
            "PASS (score.target did not resolve — fail-open)".into(),
        ));
    };
    let mut results = Vec::new();
    let mut lines = Vec::new();
    for s in &score.scorers {
        let (pass, detail) = run_scorer(&s.kind, &target).await;
        let sc = if pass { 1.0 } else { 0.0 };
        lines.push(
            format!(
                "- {}: {} ({})",
                s.name,
                if pass { "pass" } else { "fail" },
                format_number(sc)
            ) + &detail
                .as_ref()
                .map(|d| format!(" — {d}"))
                .unwrap_or_default(),
        );
        let mut m = Map::default();
        m.insert("name".into(), Value::from(s.name.as_str()));
        m.insert("pass".into(), Value::Bool(pass));
        m.insert("score".into(), Value::Number(sc));
        results.push((Value::Object(m), sc));
    }
    let report = lines.join("\n");
    let weights: Vec<f64> = score
        .weights
        .as_ref()
        .map_or_else(|| vec![1.0; score.scorers.len() + 1], |w| w.value.clone());
    let combine = |judge: Option<f64>| -> f64 {
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
    };
    let combined = combine(None);
    let pass = combined >= score.threshold;
    let json = |verdict: &str, combined: f64, judge: Option<Value>| {
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
    };
    if pass && (score.judge.is_none() || score.combine == Combine::Weighted) {
        ex.rec.json = Some(json("pass", combined, None));
        return ScoreResult::Decided(Round::Pass("PASS (scorers passed — no LLM call)".into()));
    }
    let Some(judge) = &score.judge else {
        ex.rec.json = Some(json("block", combined, None));
        return ScoreResult::Fallback(report);
    };
    if ex.sh.meter.over().is_some() || ex.sh.cancel.is_cancelled() {
        ex.rec.json = Some(json("block", combined, None));
        return ScoreResult::Decided(Round::Block(
            format!("BLOCK (judge skipped: run aborted or budget exceeded)\n\n{report}"),
            None,
        ));
    }
    let jtask = match &judge.task {
        Some(t) => ex.render("score.judge.task", t, &scope),
        None => String::new(),
    };
    let text = format!(
        "{jtask}\n\nTarget:\n```\n{target}\n```\n\nScorer report:\n{report}\n\nReply with JSON {{\"score\": <0..1>, \"verdict\": \"pass\"|\"block\", \"reason\": \"<why>\"}}."
    );
    let prompt = ex.prompt(&text);
    let agent = judge
        .agent
        .as_ref()
        .map_or_else(|| ex.phase.agent.value.clone(), |a| a.value.clone());
    let r = call(
        ex.sh,
        ex.phase,
        CallSpec::new(
            format!("{}#judge", ex.phase.id),
            &agent,
            prompt,
            Purpose::Judge,
        )
        .in_dir(&ex.work_dir)
        .refuse(ex.oversize.clone()),
    )
    .await;
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
            let c = combine(Some(jscore.clamp(0.0, 1.0)));
            (c >= score.threshold, c)
        }
        _ => (jpass, combined),
    };
    ex.rec.json = Some(json(
        if final_pass { "pass" } else { "block" },
        final_combined,
        Some(Value::Object(jm)),
    ));
    let out = if r.ok {
        r.output
    } else {
        format!(
            "BLOCK (judge failed: {})\n\n{report}",
            reason.clone().unwrap_or_default()
        )
    };
    ScoreResult::Decided(if final_pass {
        Round::Pass(out)
    } else {
        Round::Block(out, reason)
    })
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

/// One deterministic scorer: pass and an optional detail.
async fn run_scorer(kind: &ScorerKind, target: &str) -> (bool, Option<String>) {
    match kind {
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
        ScorerKind::CodeCompiles { language } => code_compiles(language, target).await,
    }
}

/// `node --check` / `tsc --noEmit` on a temp file, 30 s; a missing tool fails.
async fn code_compiles(language: &str, code: &str) -> (bool, Option<String>) {
    let (ext, program, args): (&str, &str, &[&str]) = if language == "typescript" {
        ("ts", "tsc", &["--noEmit"])
    } else {
        ("js", "node", &["--check"])
    };
    let dir = std::env::temp_dir().join(format!(
        "tfc-score-{}-{}",
        std::process::id(),
        crate::run::store::random_hex(6)
    ));
    if std::fs::create_dir_all(&dir).is_err() {
        return (false, Some("cannot create a temp dir".into()));
    }
    let file = dir.join(format!("candidate.{ext}"));
    let _ = std::fs::write(&file, code);
    let mut cmd = smol::process::Command::new(program);
    cmd.args(args)
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let result = match cmd.spawn() {
        Err(e) => (false, Some(format!("{program} not available: {e}"))),
        Ok(child) => {
            let waited = futures_lite::future::or(async { Some(child.output().await) }, async {
                smol::Timer::after(std::time::Duration::from_secs(30)).await;
                None
            })
            .await;
            match waited {
                Some(Ok(out)) if out.status.success() => (true, None),
                Some(Ok(out)) => (
                    false,
                    Some(
                        String::from_utf8_lossy(&out.stderr)
                            .lines()
                            .next()
                            .unwrap_or("does not compile")
                            .to_owned(),
                    ),
                ),
                Some(Err(e)) => (false, Some(e.to_string())),
                None => (false, Some("timed out after 30 s".into())),
            }
        }
    };
    let _ = std::fs::remove_dir_all(&dir);
    result
}
