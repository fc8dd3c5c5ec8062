//! Static checks of a test file against its flow (SPEC §17): node patterns and phase ids that
//! name no phase (T0005, with the nearest id; T0501 where nodes made at run time exist), an
//! item, iteration or judge pattern on a phase that has none (T0006), an approvals key that is
//! no approval (T0007), an expectation that can never hold for the phase's kind (T0008), and a
//! `json` answer that violates the phase's contract (T0502, unless `"violates": true`).

use crate::diag::{Code, Diagnostic, did_you_mean};
use crate::flow::{Def, Flow, Phase, PhaseKind, PhaseType};
use crate::source::Span;

use super::model::{Expect, Named, Reply, TestFile};
use super::pattern::{Pattern, Suffix};

/// Check every test of `file` against `flow`.
pub fn check(file: &TestFile, flow: &Flow) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for t in &file.tests {
        for rule in &t.answers {
            if let Some(p) = resolve(&rule.value.pattern, &rule.name, rule.span, flow, &mut out) {
                answer_kind(p, rule, &mut out);
                contract(p, rule, &mut out);
            }
        }
        for a in &t.approvals {
            approval(&a.name, a.span, flow, &mut out);
        }
        expect(&t.expect, flow, &mut out);
    }
    out
}

/// Does this level of a flow make nodes named only at run time (grafted fragments)?
fn dynamic(flow: &Flow) -> bool {
    flow.phases.iter().any(|p| p.ty() == PhaseType::Expand)
}

/// The phases of `flow` as a list of ids.
fn ids(flow: &Flow) -> impl Iterator<Item = &str> {
    flow.phases.iter().map(|p| p.id.as_str())
}

/// `what` names `name`, which is no phase of `flow` (T0005, or T0501 where nodes are made at
/// run time). `what` leads the message: "pattern 'sub/x'", "'ran'".
fn unknown(name: &str, span: Span, flow: &Flow, what: &str, out: &mut Vec<Diagnostic>) {
    let message = if flow.inline {
        format!("{what}: '{name}' is no phase of the sub-flow")
    } else {
        format!("{what}: '{name}' is no phase of the flow")
    };
    if dynamic(flow) {
        out.push(
            Diagnostic::new(Code::TestPatternMayMatchNothing, message)
            .at(span)
            .with_label("no such phase")
            .help("it can only match a node made at run time (an expand phase's grafted fragment); check the name if that is not meant"),
        );
        return;
    }
    let near = did_you_mean(name, ids(flow));
    out.push(
        Diagnostic::new(Code::TestUnknownNode, message)
            .at(span)
            .with_label("no such phase")
            .help(match near {
                Some(n) => format!("did you mean '{n}'?"),
                None => format!(
                    "the phases are: {}",
                    ids(flow).collect::<Vec<_>>().join(", ")
                ),
            }),
    );
}

fn no_instance(span: Span, message: String, help: String, out: &mut Vec<Diagnostic>) {
    out.push(
        Diagnostic::new(Code::TestNoSuchInstance, message)
            .at(span)
            .with_label("matches no call")
            .help(help),
    );
}

/// The phase a pattern ends on (none for `*` and for what cannot be checked statically),
/// reporting what cannot match.
fn resolve<'f>(
    pattern: &Pattern,
    text: &str,
    span: Span,
    top: &'f Flow,
    out: &mut Vec<Diagnostic>,
) -> Option<&'f Phase> {
    let mut flow = top;
    let n = pattern.segments.len();
    for (i, seg) in pattern.segments.iter().enumerate() {
        let name = seg.phase.as_deref()?;
        let Some(p) = flow.phases.iter().find(|p| p.id == name) else {
            unknown(name, span, flow, &format!("pattern '{text}'"), out);
            return None;
        };
        let kind = p.ty().as_str();
        match &seg.suffix {
            Suffix::None => {}
            Suffix::Index(_) | Suffix::AnyIndex => {
                let count = match p.ty() {
                    PhaseType::Map => None,
                    PhaseType::Parallel | PhaseType::Race => Some(p.branches().len()),
                    PhaseType::Tournament => match &p.kind {
                        PhaseKind::Tournament(k) if k.branches.is_empty() => {
                            Some(k.variants.max(0.0) as usize)
                        }
                        _ => Some(p.branches().len()),
                    },
                    _ => {
                        no_instance(
                            span,
                            format!("'{text}': phase '{name}' ({kind}) has no items or branches"),
                            format!(
                                "only map, parallel, race and tournament phases have `#N` nodes; write '{name}' for its calls"
                            ),
                            out,
                        );
                        return None;
                    }
                };
                if let (Suffix::Index(k), Some(c)) = (&seg.suffix, count)
                    && *k as usize >= c
                {
                    no_instance(
                        span,
                        format!(
                            "'{text}': phase '{name}' has {c} branches, numbered 0 to {}",
                            c.saturating_sub(1)
                        ),
                        format!("write '{name}#{}' or '{name}#*'", c.saturating_sub(1)),
                        out,
                    );
                    return None;
                }
            }
            Suffix::Iter(k) if p.ty() == PhaseType::Loop => {
                if *k == 0 {
                    no_instance(
                        span,
                        format!("'{text}': iterations are numbered from 1"),
                        format!("write '{name}@1' for the first iteration"),
                        out,
                    );
                    return None;
                }
            }
            Suffix::AnyIter if p.ty() == PhaseType::Loop => {}
            Suffix::Iter(_) | Suffix::AnyIter => {
                no_instance(
                    span,
                    format!("'{text}': phase '{name}' ({kind}) has no iterations"),
                    format!("only loop phases have `@N` nodes; write '{name}' for its calls"),
                    out,
                );
                return None;
            }
            Suffix::Label(l) => {
                let ok = match l.as_str() {
                    "judge" => p.judge_agent().is_some() || p.ty() == PhaseType::Tournament,
                    _ => p.ty() == PhaseType::Reduce,
                };
                if !ok {
                    let has = if l == "judge" {
                        "has no judge"
                    } else {
                        "has no call of that name"
                    };
                    no_instance(
                        span,
                        format!("'{text}': phase '{name}' ({kind}) {has}"),
                        "a judge is `<tournament>#judge`; tree-reduce batches are `<reduce>#round-R-batch-B`".into(),
                        out,
                    );
                    return None;
                }
            }
        }
        if i + 1 == n {
            return Some(p);
        }
        match (&p.kind, p.def().map(|d| &d.value)) {
            (PhaseKind::Flow(_), Some(Def::Inline(child))) => flow = child,
            // A saved or generated flow: what is under it is known only at run time.
            (PhaseKind::Flow(_) | PhaseKind::Expand(_), _) => return None,
            _ => {
                no_instance(
                    span,
                    format!(
                        "'{text}': phase '{name}' ({kind}) is not a sub-flow: no node is under it"
                    ),
                    format!("write '{name}' for its calls"),
                    out,
                );
                return None;
            }
        }
    }
    None
}

/// T0011: a script phase answered like an agent call (the script would run for real, the
/// answer unused), or an agent call answered like a script.
fn answer_kind(p: &Phase, rule: &Named<super::model::AnswerRule>, out: &mut Vec<Diagnostic>) {
    if p.ty() == PhaseType::Approval {
        out.push(
            Diagnostic::new(
                Code::TestAnswerKind,
                format!(
                    "phase '{}' is an approval: it makes no agent call to answer",
                    p.id
                ),
            )
            .at(rule.span)
            .with_label("never used")
            .help(format!(
                r#"decide it under "approvals": {{"{}": "approve"}} (or "reject")"#,
                p.id
            )),
        );
        return;
    }
    let script = p.ty() == PhaseType::Script;
    for a in &rule.value.answers {
        if matches!(a.reply, Reply::Script { .. }) == script {
            continue;
        }
        let (message, help) = if script {
            (
                format!(
                    "phase '{}' is a script: this answer would never be used",
                    p.id
                ),
                r#"answer a script with {"stdout": "...", "exitCode": 0}, or leave it out to run the script for real"#,
            )
        } else {
            (
                format!(
                    r#"phase '{}' is {} phase: {{"stdout", "exitCode"}} answers only scripts"#,
                    p.id,
                    article(p.ty().as_str())
                ),
                r#"answer an agent call with a string, {"json": V}, {"error": "..."} or {"timeout": true}"#,
            )
        };
        out.push(
            Diagnostic::new(Code::TestAnswerKind, message)
                .at(a.span)
                .with_label("the wrong kind of answer")
                .help(help),
        );
    }
}

/// T0502: a `json` answer that the answered phase's contract rejects.
fn contract(p: &Phase, rule: &Named<super::model::AnswerRule>, out: &mut Vec<Diagnostic>) {
    let Some(c) = p.expect.as_deref() else {
        return;
    };
    if matches!(
        rule.value.pattern.segments.last().map(|s| &s.suffix),
        Some(Suffix::Label(_))
    ) {
        return; // a judge's or batch's answer is not the phase's output
    }
    for a in &rule.value.answers {
        let Reply::Json(v) = &a.reply else {
            continue;
        };
        if a.violates {
            continue;
        }
        if let Err(violations) = crate::run::contract::check_output(c, &v.to_json()) {
            out.push(
                Diagnostic::new(
                    Code::TestAnswerViolatesContract,
                    format!(
                        "this answer violates the contract of phase '{}': {}",
                        p.id,
                        violations.join("; ")
                    ),
                )
                .at(a.span)
                .with_label("fails `expect`")
                .help("the call will fail its contract (and be retried per `retry`); if that is what the test is for, add \"violates\": true to the answer"),
            );
        }
    }
}

/// T0007: an approvals key must name an approval phase (`sub/child` inside an inline
/// sub-flow).
fn approval(key: &str, span: Span, top: &Flow, out: &mut Vec<Diagnostic>) {
    let mut flow = top;
    let parts: Vec<&str> = key.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        let Some(p) = flow.phases.iter().find(|p| p.id == *part) else {
            break;
        };
        if i + 1 == parts.len() {
            if p.ty() == PhaseType::Approval {
                return;
            }
            out.push(
                Diagnostic::new(
                    Code::TestNotAnApproval,
                    format!(
                        "'{key}' is {} phase, not an approval",
                        article(p.ty().as_str())
                    ),
                )
                .at(span)
                .with_label("not an approval")
                .help(approval_help(flow, key)),
            );
            return;
        }
        match p.def().map(|d| &d.value) {
            Some(Def::Inline(child)) if p.ty() == PhaseType::Flow => flow = child,
            Some(_) => return, // known only at run time
            None => break,
        }
    }
    out.push(
        Diagnostic::new(
            Code::TestNotAnApproval,
            format!("'{key}' names no approval phase of the flow"),
        )
        .at(span)
        .with_label("no such approval")
        .help(approval_help(flow, key)),
    );
}

/// `a gate`, `an agent`.
fn article(kind: &str) -> String {
    let an = kind.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {kind}", if an { "an" } else { "a" })
}

fn approval_help(flow: &Flow, key: &str) -> String {
    let approvals: Vec<&str> = flow
        .phases
        .iter()
        .filter(|p| p.ty() == PhaseType::Approval)
        .map(|p| p.id.as_str())
        .collect();
    let own = key.rsplit('/').next().unwrap_or(key);
    match did_you_mean(own, approvals.iter().copied()) {
        Some(n) => format!("did you mean '{n}'?"),
        None if approvals.is_empty() && flow.inline => "the sub-flow has no approval phase".into(),
        None if approvals.is_empty() => "the flow has no approval phase".into(),
        None => format!("the approvals are: {}", approvals.join(", ")),
    }
}

/// Phase ids in `expect`, and expectations the phase's kind can never meet.
fn expect(e: &Expect, flow: &Flow, out: &mut Vec<Diagnostic>) {
    let lists = [
        ("ran", &e.ran),
        ("skipped", &e.skipped),
        ("failed", &e.failed),
        ("notRun", &e.not_run),
    ];
    for (what, list) in lists {
        for id in list {
            if !flow.phases.iter().any(|p| p.id == id.name) {
                unknown(&id.name, id.span, flow, &format!("'{what}'"), out);
            }
        }
    }
    if let Some((Some(id), span)) = &e.output_phase
        && !flow.phases.iter().any(|p| p.id == *id)
    {
        unknown(id, *span, flow, "'outputPhase'", out);
    }
    for p in &e.prompts {
        resolve(&p.value.0, &p.name, p.span, flow, out);
    }
    for pe in &e.phases {
        let Some(p) = flow.phases.iter().find(|p| p.id == pe.name) else {
            unknown(&pe.name, pe.span, flow, "'phases'", out);
            continue;
        };
        let ty = p.ty();
        let mut never = |span: Span, key: &str, kinds: &str| {
            out.push(
                Diagnostic::new(
                    Code::TestImpossibleExpectation,
                    format!(
                        "'{key}' can never hold for phase '{}': it is {} phase",
                        p.id,
                        article(ty.as_str())
                    ),
                )
                .at(span)
                .with_label(format!("only {kinds} have it"))
                .help(format!(
                    "remove '{key}', or expect it of a phase that has it"
                )),
            );
        };
        let v = &pe.value;
        if let Some((_, span)) = &v.verdict
            && !expectation_fits("verdict", ty)
        {
            never(*span, "verdict", "gates (and rejected approvals)");
        }
        if let Some((_, span)) = &v.iterations
            && !expectation_fits("iterations", ty)
        {
            never(*span, "iterations", "loops");
        }
        if let Some((_, span)) = &v.items
            && !expectation_fits("items", ty)
        {
            never(*span, "items", "map, parallel and race phases");
        }
    }
}

/// Can the expectation `key` (of `expect.phases.<id>`) ever hold for a phase of type `ty`?
/// (`verdict` only on gates and approvals, `iterations` on loops, `items` on map, parallel
/// and race phases; every other key on any phase.)
pub fn expectation_fits(key: &str, ty: PhaseType) -> bool {
    match key {
        "verdict" => matches!(ty, PhaseType::Gate | PhaseType::Approval),
        "iterations" => ty == PhaseType::Loop,
        "items" => matches!(ty, PhaseType::Map | PhaseType::Parallel | PhaseType::Race),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_source};
    use crate::flow::LowerOptions;
    use crate::test::model::Reader;

    const FLOW: &str = r#"{"name": "f", "phases": [
        {"id": "triage", "task": "t", "output": "json",
         "expect": {"type": "object", "required": ["severity"]}},
        {"id": "review", "type": "map", "over": "{steps.triage.json.files}", "task": "r {item}",
         "dependsOn": ["triage"]},
        {"id": "fix", "type": "loop", "task": "f", "maxIterations": 3, "until": "false",
         "dependsOn": ["review"]},
        {"id": "gate", "type": "gate", "task": "ok? VERDICT", "dependsOn": ["fix"]},
        {"id": "publish", "type": "approval", "task": "ship?", "dependsOn": ["gate"]},
        {"id": "sub", "type": "flow", "dependsOn": ["publish"],
         "def": {"phases": [{"id": "inner", "task": "i"}]}}
    ]}"#;

    fn codes(test: &str) -> Vec<(String, String)> {
        let checked = check_source(FLOW, &LowerOptions::default(), &CheckOptions::default());
        assert!(!checked.has_errors(), "{:?}", checked.diagnostics);
        let flow = checked.flow.unwrap();
        let text = format!(r#"{{"flow": "f.json", "tests": [{test}]}}"#);
        let node = crate::json::parse(&text).root.unwrap();
        let mut r = Reader::default();
        let file = r.file(&node);
        assert!(r.diags.is_empty(), "{:?}", r.diags);
        check(&file, &flow)
            .into_iter()
            .map(|d| (d.code.as_str().to_owned(), d.help.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn patterns_that_fit_the_flow_are_quiet() {
        let d = codes(
            r#"{"name": "ok", "answers": {"triage": {"json": {"severity": "high"}},
                "review#*": "r", "review#3": "x", "fix@2": "DONE", "fix@*": "d", "gate": "VERDICT: PASS",
                "sub/inner": "i", "sub/*": "j", "sub": "k", "*": "any"},
                "approvals": {"publish": "approve"},
                "expect": {"ran": ["triage"], "phases": {"gate": {"verdict": "pass"},
                           "fix": {"iterations": 2}, "review": {"items": 2}},
                           "prompts": {"review#0": {"contains": "r"}}}}"#,
        );
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn unknown_phases_get_the_nearest_id() {
        let d = codes(
            r#"{"name": "t", "answers": {"traige": "x", "sub/inne": "y"}, "expect": {"ran": ["gat"]}}"#,
        );
        assert_eq!(
            d,
            [
                ("T0005".into(), "did you mean 'triage'?".into()),
                ("T0005".into(), "did you mean 'inner'?".into()),
                ("T0005".into(), "did you mean 'gate'?".into()),
            ]
        );
    }

    #[test]
    fn instances_a_phase_does_not_have() {
        let d = codes(
            r#"{"name": "t", "answers": {"triage#0": "x", "review@1": "y", "fix@0": "z",
                "gate#judge": "w", "triage/x": "v"}}"#,
        );
        let got: Vec<&str> = d.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(got, ["T0006"; 5], "{d:?}");
    }

    #[test]
    fn approvals_and_impossible_expectations() {
        let d = codes(
            r#"{"name": "t", "approvals": {"gate": "approve", "publsh": "reject"},
                "expect": {"phases": {"triage": {"verdict": "pass", "iterations": 1, "items": 1}}}}"#,
        );
        let got: Vec<&str> = d.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(got, ["T0007", "T0007", "T0008", "T0008", "T0008"], "{d:?}");
        assert_eq!(d[1].1, "did you mean 'publish'?");
    }

    #[test]
    fn script_answers_only_for_scripts() {
        let d = codes(
            r#"{"name": "t", "answers": {"triage": {"stdout": "x", "exitCode": 0}, "publish": "yes"}}"#,
        );
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].0, "T0011");
        assert_eq!(
            d[1].1,
            r#"decide it under "approvals": {"publish": "approve"} (or "reject")"#
        );
    }

    #[test]
    fn json_answers_against_the_contract() {
        let d = codes(
            r#"{"name": "t", "answers": {"triage": [{"json": {"x": 1}}, {"json": {"x": 1}, "violates": true}, "not json is fine"]}}"#,
        );
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].0, "T0502");
    }
}
