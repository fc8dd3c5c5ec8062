//! `gate` (SPEC §3.5, §3.14): a verdict on upstream work, from deterministic `eval` checks,
//! `score` scorers and an LLM call.

use super::common::{Cx, has, need};
use crate::compile::Condition;
use crate::compile::Template;
use crate::diag::{Code, Diagnostic, did_you_mean};
use crate::flow::enums::{CodeLanguage, Combine, OnBlock, ScorerType};
use crate::flow::fields::FieldDef;
use crate::flow::fields::{FieldType, ObjectKind, f};
use crate::flow::ir::{Contract, Field, Phase, Text};
use crate::flow::lowerer::{Lowerer, PhaseFields};
use crate::json::{Kind, Member, Node, Str};
use crate::source::Span;
use crate::syntax::condition::ConditionError;
use crate::value::format_number;

/// A gate phase.
#[derive(Clone, Debug)]
pub struct Gate {
    /// `eval`: deterministic checks run before the LLM.
    pub eval: Vec<EvalEntry>,
    /// `score`: scorers.
    pub score: Option<Score>,
    /// `onBlock`.
    pub on_block: OnBlock,
}

impl Gate {
    /// The defaults.
    pub const DEFAULT: Gate = Gate {
        eval: Vec::new(),
        score: None,
        on_block: OnBlock::Halt,
    };
}

/// A scoring gate (SPEC §3.14).
#[derive(Clone, Debug)]
pub struct Score {
    /// `target`: the text scored (default `{previous.output}`).
    pub target: Option<Text>,
    /// `scorers`.
    pub scorers: Vec<Scorer>,
    /// `combine`.
    pub combine: Combine,
    /// `weights` (weighted).
    pub weights: Option<Field<Vec<f64>>>,
    /// `threshold`.
    pub threshold: f64,
    /// `judge`: an LLM judge.
    pub judge: Option<ScoreJudge>,
    /// The score object.
    pub span: Span,
}

/// One deterministic scorer.
#[derive(Clone, Debug)]
pub struct Scorer {
    /// `name` (default `<type>-<index>`).
    pub name: String,
    /// The type and its fields.
    pub kind: ScorerKind,
    /// The scorer object.
    pub span: Span,
}

/// A scorer's type with its own fields (the types are [`ScorerType`]).
#[derive(Clone, Debug)]
pub enum ScorerKind {
    /// The target equals `value`.
    ExactMatch {
        /// The expected text.
        value: String,
    },
    /// The target contains `value`.
    Contains {
        /// The expected text.
        value: String,
    },
    /// The target matches `pattern` (or, with `negate`, does not).
    Regex {
        /// The pattern.
        pattern: String,
        /// Pass when it does not match.
        negate: bool,
    },
    /// The target's JSON satisfies `schema`.
    JsonSchema {
        /// The contract (boxed: it is much larger than the other scorers).
        schema: Box<Contract>,
    },
    /// The target's length in characters lies in `min..=max`.
    LengthRange {
        /// The least length.
        min: Option<f64>,
        /// The greatest length.
        max: Option<f64>,
    },
    /// The target compiles as `language`.
    CodeCompiles {
        /// One of [`CodeLanguage::NAMES`].
        language: String,
    },
}

/// `score.judge`.
#[derive(Clone, Debug)]
pub struct ScoreJudge {
    /// `agent`.
    pub agent: Option<Field<String>>,
    /// `task`: what the judge looks for.
    pub task: Option<Text>,
}

/// One gate `eval` entry (SPEC §3.5): a ` contains ` test or a condition.
#[derive(Clone, Debug)]
pub struct EvalEntry {
    /// The entry as written.
    pub src: Str,
    /// What it is.
    pub kind: EvalKind,
}

/// The forms of an `eval` entry.
#[derive(Clone, Debug)]
pub enum EvalKind {
    /// An empty entry: passes.
    Empty,
    /// `LHS contains RHS`: the LHS is a template starting at byte `lhs_start` of the entry.
    Contains {
        /// The left-hand side.
        lhs: Template,
        /// Where it starts in the entry.
        lhs_start: usize,
    },
    /// A condition.
    Condition(Result<Condition, ConditionError>),
}

/// The fields of a gate phase.
pub(super) const FIELDS: &[FieldDef] = &[
    f(
        "eval",
        FieldType::StringArray,
        "gate: deterministic checks run before the LLM",
    ),
    f(
        "score",
        FieldType::Object(ObjectKind::Score),
        "gate: scorers",
    ),
    f(
        "onBlock",
        FieldType::OneOf(OnBlock::NAMES),
        "gate: halt, or re-run dependencies and retry",
    ),
];

pub(super) fn lower(l: &mut Lowerer, f: &PhaseFields<'_>, cx: &mut Cx<'_>) -> Gate {
    let mut k = Gate::DEFAULT;
    if let Some(list) = l.str_nodes(f, "eval") {
        k.eval = list.into_iter().map(|s| eval_entry(s.clone())).collect();
    }
    if let Some(m) = f.get("score") {
        let score = l.score(m);
        k.score = cx.invalid_if_none(f, "score", score);
    }
    k.on_block = l.word(f, "onBlock").unwrap_or_default();
    k
}

/// E0301 (a task or scorers; no empty eval entry), W0301 (eval and score).
pub(super) fn check(p: &Phase, k: &Gate, out: &mut Vec<Diagnostic>) {
    need(
        p,
        "task' or 'score",
        has(p, "task") || has(p, "score"),
        "add \"task\" (what the gate judges, ending in a VERDICT) or deterministic \"score\" scorers",
        out,
    );
    for (i, entry) in k.eval.iter().enumerate() {
        if matches!(entry.kind, EvalKind::Empty) {
            out.push(
                Diagnostic::new(
                    Code::MissingField,
                    format!("{} (gate) requires a check in every 'eval' entry, but entry {i} is empty", p.id),
                )
                .at(entry.src.span)
                .with_label("an empty entry passes without checking anything")
                .phase(&p.id)
                .help("write a condition, e.g. \"{steps.test.output} contains PASS\", or remove the entry"),
            );
        }
    }
    if !k.eval.is_empty() && k.score.is_some() {
        out.push(
            Diagnostic::new(
                Code::EvalAndScore,
                format!("{}: the gate has both 'eval' and 'score'", p.id),
            )
            .at(p.written["score"])
            .with_label("scorers run only if every eval entry passes")
            .phase(&p.id)
            .label(p.written["eval"], "eval runs first")
            .help("keep one of them, or accept that eval runs first"),
        );
    }
}

impl Lowerer {
    /// A gate's `score` (E0409 for every problem).
    pub(super) fn score(&mut self, m: &Member) -> Option<Score> {
        let bad = |l: &mut Lowerer, span: Span, msg: String, label: &str, help: &str| {
            l.push(
                Diagnostic::new(Code::InvalidScore, msg)
                    .at(span)
                    .with_label(label.to_owned())
                    .help(help.to_owned()),
            );
        };
        let Kind::Object(members) = &m.value.kind else {
            bad(
                self,
                m.value.span,
                format!("score must be an object, found {}", m.value.type_name()),
                "expected an object",
                "write \"score\": {\"scorers\": [{\"type\": \"contains\", \"value\": \"…\"}]}",
            );
            return None;
        };
        let f = self.fields(members, ObjectKind::Score, |_| false);
        let mut ok = true;
        let target = match f.get("target").map(|t| (t, &t.value.kind)) {
            Some((_, Kind::String(s))) if Template::parse(&s.value).has_placeholders() => {
                Some(Text::new(s.clone()))
            }
            Some((t, _)) => {
                ok = false;
                bad(
                    self,
                    t.value.span,
                    "score.target must be a string holding a placeholder".into(),
                    "no placeholder here",
                    "reference the text to score, e.g. \"target\": \"{steps.draft.output}\" (the default is {previous.output})",
                );
                None
            }
            None => None,
        };
        let mut scorers = Vec::new();
        let mut scorer_count = 0;
        match f.get("scorers").map(|s| (s, &s.value.kind)) {
            Some((_, Kind::Array(items))) if !items.is_empty() => {
                scorer_count = items.len();
                for (i, item) in items.iter().enumerate() {
                    match self.scorer(item, i) {
                        Some(s) => scorers.push(s),
                        None => ok = false,
                    }
                }
            }
            Some((s, _)) => {
                ok = false;
                bad(
                    self,
                    s.value.span,
                    "score.scorers must be a non-empty array of scorers".into(),
                    "expected at least one scorer",
                    "e.g. \"scorers\": [{\"type\": \"contains\", \"value\": \"…\"}]",
                );
            }
            None => {
                ok = false;
                bad(
                    self,
                    m.value.span,
                    "score requires 'scorers': a non-empty array".into(),
                    "no 'scorers'",
                    "add \"scorers\": [{\"type\": \"contains\", \"value\": \"…\"}]",
                );
            }
        }
        let combine = match f
            .get("combine")
            .map(|c| (c, c.value.as_str().and_then(|s| Combine::parse(&s.value))))
        {
            None => Combine::All,
            Some((_, Some(c))) => c,
            Some((c, None)) => {
                ok = false;
                bad(
                    self,
                    c.value.span,
                    format!("score.combine must be one of {}", Combine::NAMES.join(", ")),
                    "expected all, any or weighted",
                    "use \"all\" (every scorer passes), \"any\" (one passes) or \"weighted\" (with \"weights\")",
                );
                Combine::All
            }
        };
        let threshold = match f.get("threshold").map(|t| (t, &t.value.kind)) {
            None => 0.5,
            Some((_, Kind::Number(n))) if *n > 0.0 && *n <= 1.0 => *n,
            Some((t, _)) => {
                ok = false;
                bad(
                    self,
                    t.value.span,
                    "score.threshold must be a number in (0, 1]".into(),
                    "expected a number above 0 and at most 1",
                    "scores run from 0 to 1; e.g. \"threshold\": 0.7",
                );
                0.5
            }
        };
        let judge = match f.get("judge") {
            None => None,
            Some(jm) => match &jm.value.kind {
                Kind::Object(jmembers) => {
                    let jf = self.fields(jmembers, ObjectKind::Judge, |_| false);
                    let task = self.text(&jf, "task");
                    if task.is_none() && !jf.contains_key("task") {
                        ok = false;
                        bad(
                            self,
                            jm.value.span,
                            "score.judge requires 'task'".into(),
                            "no 'task'",
                            "tell the judge what to look for: \"judge\": {\"task\": \"Is the summary accurate?\"}",
                        );
                    }
                    Some(ScoreJudge {
                        agent: self.agent_name(&jf, "agent", ""),
                        task,
                    })
                }
                _ => {
                    ok = false;
                    bad(
                        self,
                        jm.value.span,
                        "score.judge must be an object {\"task\": …}".into(),
                        "expected an object",
                        "write \"judge\": {\"task\": \"…\", \"agent\": \"…\"}",
                    );
                    None
                }
            },
        };
        let weights = match f.get("weights") {
            None => None,
            Some(wm) => match &wm.value.kind {
                Kind::Array(items) => {
                    let ws: Vec<f64> = items
                        .iter()
                        .filter_map(|i| match i.kind {
                            Kind::Number(n) => Some(n),
                            _ => None,
                        })
                        .collect();
                    if ws.len() != items.len() || ws.iter().any(|w| *w <= 0.0 || !w.is_finite()) {
                        ok = false;
                        bad(
                            self,
                            wm.value.span,
                            "score.weights must be numbers > 0".into(),
                            "expected positive numbers",
                            "give each scorer a positive weight, e.g. \"weights\": [2, 1]",
                        );
                        None
                    } else {
                        Some(Field::new(ws, wm.key.span, wm.value.span))
                    }
                }
                _ => {
                    ok = false;
                    bad(
                        self,
                        wm.value.span,
                        "score.weights must be an array of numbers".into(),
                        "expected an array",
                        "give each scorer a positive weight, e.g. \"weights\": [2, 1]",
                    );
                    None
                }
            },
        };
        // Counted over the scorers as written, so a broken scorer does not hide a wrong count.
        let want = scorer_count + usize::from(judge.is_some());
        let judge_note = if judge.is_some() {
            " plus one for the judge"
        } else {
            ""
        };
        if combine == Combine::Weighted && scorer_count > 0 {
            match &weights {
                None if !f.contains_key("weights") => {
                    ok = false;
                    bad(
                        self,
                        f["combine"].value.span,
                        format!(
                            "score.combine \"weighted\" needs 'weights': one per scorer{judge_note} ({want})"
                        ),
                        "weighted without weights",
                        &format!("add \"weights\" with {want} positive numbers"),
                    );
                }
                Some(w) if w.value.len() != want => {
                    ok = false;
                    bad(
                        self,
                        w.span,
                        format!(
                            "score.weights has {} but needs {want} (one per scorer{judge_note})",
                            match w.value.len() {
                                1 => "1 entry".to_owned(),
                                n => format!("{n} entries"),
                            },
                        ),
                        &format!("expected {want} weights"),
                        &format!(
                            "give exactly {want} weights, in scorer order{}",
                            if judge.is_some() {
                                ", the judge's last"
                            } else {
                                ""
                            }
                        ),
                    );
                }
                _ => {}
            }
        }
        ok.then_some(Score {
            target,
            scorers,
            combine,
            weights,
            threshold,
            judge,
            span: m.value.span,
        })
    }

    fn scorer(&mut self, node: &Node, i: usize) -> Option<Scorer> {
        const TYPES: &[&str] = ScorerType::NAMES;
        let at = format!("score.scorers[{i}]");
        let bad = |l: &mut Lowerer, span: Span, msg: String, label: &str, help: String| {
            l.push(
                Diagnostic::new(Code::InvalidScore, msg)
                    .at(span)
                    .with_label(label.to_owned())
                    .help(help),
            );
        };
        let Kind::Object(members) = &node.kind else {
            bad(
                self,
                node.span,
                format!("{at} must be an object, found {}", node.type_name()),
                "expected a scorer object",
                "write {\"type\": \"contains\", \"value\": \"…\"}".to_owned(),
            );
            return None;
        };
        let f = self.fields(members, ObjectKind::Scorer, |_| false);
        let ty = match f.get("type").map(|t| (t, t.value.as_str())) {
            Some((_, Some(s))) => s.value.clone(),
            Some((t, None)) => {
                bad(
                    self,
                    t.value.span,
                    format!("{at}.type must be a string"),
                    "expected a string",
                    format!("scorer types: {}", TYPES.join(", ")),
                );
                return None;
            }
            None => {
                bad(
                    self,
                    node.span,
                    format!("{at} requires 'type'"),
                    "no 'type'",
                    format!("scorer types: {}", TYPES.join(", ")),
                );
                return None;
            }
        };
        let Some(scorer_type) = ScorerType::parse(&ty) else {
            let help = match did_you_mean(&ty, TYPES.iter().copied()) {
                Some(s) => format!("did you mean '{s}'?"),
                None => format!("scorer types: {}", TYPES.join(", ")),
            };
            bad(
                self,
                f["type"].value.span,
                format!("{at}.type: unknown scorer type '{ty}'"),
                "unknown scorer type",
                help,
            );
            return None;
        };
        let allowed = scorer_type.fields();
        let mut ok = true;
        for (key, m) in &f {
            if !["type", "name"].contains(key) && !allowed.contains(key) {
                ok = false;
                bad(
                    self,
                    m.key.span,
                    format!("{at}.{key} does not apply to a {ty} scorer"),
                    "not used by this scorer type",
                    format!("a {ty} scorer takes: {}", allowed.join(", ")),
                );
            }
        }
        let string = |l: &mut Lowerer, key: &str| -> Option<String> {
            match f.get(key).map(|m| (m, m.value.as_str())) {
                Some((_, Some(s))) => Some(s.value.clone()),
                Some((m, None)) => {
                    bad(
                        l,
                        m.value.span,
                        format!("{at}.{key} must be a string"),
                        "expected a string",
                        format!("write \"{key}\": \"…\""),
                    );
                    None
                }
                None => {
                    bad(
                        l,
                        node.span,
                        format!("{at}.{key} is required for a {ty} scorer"),
                        &format!("no '{key}'"),
                        format!("add \"{key}\": \"…\""),
                    );
                    None
                }
            }
        };
        let kind = match scorer_type {
            ScorerType::ExactMatch => {
                string(self, "value").map(|value| ScorerKind::ExactMatch { value })
            }
            ScorerType::Contains => {
                string(self, "value").map(|value| ScorerKind::Contains { value })
            }
            ScorerType::Regex => {
                let negate = match f.get("negate").map(|m| (m, &m.value.kind)) {
                    None => false,
                    Some((_, Kind::Bool(b))) => *b,
                    Some((m, _)) => {
                        ok = false;
                        bad(
                            self,
                            m.value.span,
                            format!("{at}.negate must be true or false"),
                            "expected true or false",
                            "write \"negate\": true to pass when the pattern does not match"
                                .to_owned(),
                        );
                        false
                    }
                };
                string(self, "pattern").map(|pattern| ScorerKind::Regex { pattern, negate })
            }
            ScorerType::JsonSchema => match f.get("schema") {
                Some(m) => {
                    self.contract(m, &format!("{at}.schema"))
                        .map(|schema| ScorerKind::JsonSchema {
                            schema: Box::new(schema),
                        })
                }
                None => {
                    bad(
                        self,
                        node.span,
                        format!("{at}.schema is required for a json-schema scorer"),
                        "no 'schema'",
                        "add a contract: \"schema\": {\"type\": \"object\", \"required\": [\"…\"]}"
                            .to_owned(),
                    );
                    None
                }
            },
            ScorerType::LengthRange => {
                let num = |key: &str| match f.get(key).map(|m| &m.value.kind) {
                    Some(Kind::Number(n)) => Ok(Some(*n)),
                    None => Ok(None),
                    Some(_) => Err(key.to_owned()),
                };
                match (num("min"), num("max")) {
                    (Ok(min), Ok(max)) => {
                        if let (Some(lo), Some(hi)) = (min, max)
                            && lo > hi
                        {
                            ok = false;
                            bad(
                                self,
                                f["min"].value.span.to(f["max"].value.span),
                                format!(
                                    "{at}: min {} > max {}",
                                    format_number(lo),
                                    format_number(hi)
                                ),
                                "no length fits this range",
                                "swap the two bounds, or fix the one that is wrong".to_owned(),
                            );
                        }
                        Some(ScorerKind::LengthRange { min, max })
                    }
                    (Err(k), _) | (_, Err(k)) => {
                        bad(
                            self,
                            f[k.as_str()].value.span,
                            format!("{at}.{k} must be a number"),
                            "expected a number",
                            format!("write a length in characters, e.g. \"{k}\": 200"),
                        );
                        None
                    }
                }
            }
            ScorerType::CodeCompiles => match string(self, "language") {
                Some(l) if CodeLanguage::parse(&l).is_some() => {
                    Some(ScorerKind::CodeCompiles { language: l })
                }
                Some(_) => {
                    bad(
                        self,
                        f["language"].value.span,
                        format!("{at}.language must be javascript or typescript"),
                        "unsupported language",
                        "use \"javascript\" or \"typescript\"".to_owned(),
                    );
                    None
                }
                None => None,
            },
        };
        let name = f
            .get("name")
            .and_then(|m| m.value.as_str())
            .map_or_else(|| format!("{ty}-{i}"), |s| s.value.clone());
        match kind {
            Some(kind) if ok => Some(Scorer {
                name,
                kind,
                span: node.span,
            }),
            _ => None,
        }
    }
}

/// Classify one gate `eval` entry.
fn eval_entry(src: Str) -> EvalEntry {
    let text = src.value.as_str();
    let kind = if crate::value::js_trim(text).is_empty() {
        EvalKind::Empty
    } else if let Some(at) = text.find(" contains ").filter(|&i| i > 0) {
        let lhs_raw = &text[..at];
        let lead = lhs_raw.len()
            - lhs_raw
                .trim_start_matches(crate::value::is_js_whitespace)
                .len();
        let lhs = crate::value::js_trim(lhs_raw);
        EvalKind::Contains {
            lhs: Template::parse(lhs),
            lhs_start: lead,
        }
    } else {
        EvalKind::Condition(Condition::parse(text))
    };
    EvalEntry { src, kind }
}

#[cfg(test)]
mod tests {
    use crate::check::testing::check;

    #[test]
    fn weights_are_counted_over_every_scorer() {
        let text = r#"[{"id": "g", "type": "gate", "task": "x", "score": {"combine": "weighted",
            "weights": [1], "scorers": [{"type": "contains", "value": "a"}, {"type": "regex"}]}}]"#;
        let messages: Vec<String> = check(text).into_iter().map(|d| d.message).collect();
        assert_eq!(
            messages,
            [
                "score.weights has 1 entry but needs 2 (one per scorer)",
                "score.scorers[1].pattern is required for a regex scorer"
            ]
        );
    }
}
