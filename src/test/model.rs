//! The test file model (SPEC §17): `*.test.json` read with the span-keeping JSON reader into
//! [`TestFile`], every part keeping its span. Problems of the file's own shape are reported
//! here (T0001 unknown key, T0002 wrong type, T0004 bad node pattern, T0009 bad matcher,
//! T0010 duplicate test name); what needs the flow is `checks.rs`'s.

use crate::agent::Usage;
use crate::diag::{Code, Diagnostic, did_you_mean};
use crate::flow::Contract;
use crate::json::{Kind, Member, Node};
use crate::source::Span;
use crate::value::{Map, Value};

use super::pattern::Pattern;

/// A test file.
#[derive(Clone, Debug, Default)]
pub struct TestFile {
    /// `flow`: a path relative to the test file, or a saved flow's name.
    pub flow: Option<Named<()>>,
    /// `tests`, in file order.
    pub tests: Vec<TestCase>,
    /// `invariants`: expectations every `--property` run must meet (the `expect` syntax),
    /// with the object as written (a shrunk finding's test case repeats it as its `expect`).
    pub invariants: Option<(Expect, Value)>,
}

/// A value with the name it was written under and where.
#[derive(Clone, Debug)]
pub struct Named<T> {
    /// The name (a key, an id, a pattern's text).
    pub name: String,
    /// Where the name is written.
    pub span: Span,
    /// What it names.
    pub value: T,
}

/// One test.
#[derive(Clone, Debug, Default)]
pub struct TestCase {
    /// `name`.
    pub name: String,
    /// The test object.
    pub span: Span,
    /// `args`: the invocation arguments.
    pub args: Map,
    /// `answers`: node pattern → answers, in file order.
    pub answers: Vec<Named<AnswerRule>>,
    /// `approvals`: approval id → decision.
    pub approvals: Vec<Named<Decided>>,
    /// `expect`.
    pub expect: Expect,
    /// `"hooks": true`: the flow's hooks run when the test's run ends (SPEC §8.10).
    pub hooks: bool,
}

/// The answers of one node pattern.
#[derive(Clone, Debug)]
pub struct AnswerRule {
    /// The pattern.
    pub pattern: Pattern,
    /// One answer, or a sequence consumed call by call (the last repeats).
    pub answers: Vec<Answer>,
}

/// One answer to one call.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// What the call gets.
    pub reply: Reply,
    /// `usage`: tokens and cost the call reports.
    pub usage: Option<Usage>,
    /// `"violates": true`: a deliberate contract violation (no T0502).
    pub violates: bool,
    /// The answer's text in the file.
    pub span: Span,
}

/// What a call gets.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// A string: the output.
    Text(String),
    /// `{"json": V}`: V serialised.
    Json(Value),
    /// `{"error": TEXT}`: the call fails with TEXT.
    Error(String),
    /// `{"timeout": true}`: the call times out.
    Timeout,
    /// `{"stdout": TEXT, "exitCode": N}`: a script phase's run.
    Script {
        /// Its standard output.
        stdout: String,
        /// Its exit code.
        exit_code: i32,
    },
}

/// An approval's decision in a test.
#[derive(Clone, Debug, PartialEq)]
pub enum Decided {
    /// `"approve"`.
    Approve,
    /// `"reject"` or `{"reject": "note"}`.
    Reject(Option<String>),
}

/// `expect`: every key optional, all listed must hold.
#[derive(Clone, Debug, Default)]
pub struct Expect {
    /// `status`: the run's status.
    pub status: Option<Named<()>>,
    /// `ran`: each phase `done`.
    pub ran: Vec<Named<()>>,
    /// `skipped`.
    pub skipped: Vec<Named<()>>,
    /// `failed`.
    pub failed: Vec<Named<()>>,
    /// `notRun`: pending or absent.
    pub not_run: Vec<Named<()>>,
    /// `phases`: per-phase expectations.
    pub phases: Vec<Named<PhaseExpect>>,
    /// `output`: the run's final output.
    pub output: Option<Matcher>,
    /// `outputPhase` (`null`: no phase's output appears).
    pub output_phase: Option<(Option<String>, Span)>,
    /// `prompts`: node pattern → matcher on each matching call's prompt.
    pub prompts: Vec<Named<(Pattern, Matcher)>>,
    /// `calls`.
    pub calls: Option<Bound>,
    /// `tokens`.
    pub tokens: Option<Bound>,
    /// `costUSD`.
    pub cost_usd: Option<Bound>,
    /// `warnings`: each matches some run warning.
    pub warnings: Vec<Matcher>,
}

/// Expectations on one phase.
#[derive(Clone, Debug, Default)]
pub struct PhaseExpect {
    /// `status`.
    pub status: Option<(String, Span)>,
    /// `output`.
    pub output: Option<Matcher>,
    /// `json`: deep equality with the phase's parsed output.
    pub json: Option<(Value, Span)>,
    /// `verdict`: `pass` or `block`.
    pub verdict: Option<(String, Span)>,
    /// `iterations`.
    pub iterations: Option<(f64, Span)>,
    /// `items`: how many, or each item's status.
    pub items: Option<(ItemsExpect, Span)>,
    /// `attempts`.
    pub attempts: Option<(f64, Span)>,
    /// `cacheHit`.
    pub cache_hit: Option<(bool, Span)>,
    /// `skipReason`.
    pub skip_reason: Option<Matcher>,
}

/// `items`: a count, or the statuses in index order.
#[derive(Clone, Debug, PartialEq)]
pub enum ItemsExpect {
    /// How many items.
    Count(f64),
    /// Each item's status.
    Statuses(Vec<String>),
}

/// A number, exact or bounded.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    /// At least.
    pub min: Option<f64>,
    /// At most.
    pub max: Option<f64>,
    /// Where it is written.
    pub span: Span,
}

/// A matcher on a text.
#[derive(Clone, Debug)]
pub struct Matcher {
    /// What it checks.
    pub kind: MatcherKind,
    /// Where it is written.
    pub span: Span,
}

/// What a [`Matcher`] checks.
#[derive(Clone, Debug)]
pub enum MatcherKind {
    /// A string or `{"equals"}`: the whole text.
    Equals(String),
    /// `{"contains"}`.
    Contains(String),
    /// `{"regex"}` (Rust `regex` syntax).
    Regex(regex::Regex),
    /// `{"json": V}`: deep equality after safeParse.
    Json(Value),
    /// `{"schema": CONTRACT}` (§3.15).
    Schema(Box<Contract>),
    /// `{"not": matcher}`.
    Not(Box<Matcher>),
}

const FILE_KEYS: &[&str] = &["flow", "tests", "invariants"];
const TEST_KEYS: &[&str] = &["name", "args", "answers", "approvals", "expect", "hooks"];
const ANSWER_KEYS: &[&str] = &[
    "json", "error", "timeout", "usage", "violates", "stdout", "exitCode",
];
const USAGE_KEYS: &[&str] = &["input", "output", "costUSD"];
const EXPECT_KEYS: &[&str] = &[
    "status",
    "ran",
    "skipped",
    "failed",
    "notRun",
    "phases",
    "output",
    "outputPhase",
    "prompts",
    "calls",
    "tokens",
    "costUSD",
    "warnings",
];
/// The keys of an expectation on one phase (`expect.phases.<id>`); which fit which kind of
/// phase: [`expectation_fits`](super::expectation_fits).
pub const PHASE_KEYS: &[&str] = &[
    "status",
    "output",
    "json",
    "verdict",
    "iterations",
    "items",
    "attempts",
    "cacheHit",
    "skipReason",
];
const MATCHER_KEYS: &[&str] = &["equals", "contains", "regex", "json", "schema", "not"];
const BOUND_KEYS: &[&str] = &["min", "max"];
const RUN_STATUSES: &[&str] = &["completed", "failed", "paused", "blocked"];
const PHASE_STATUSES: &[&str] = &["pending", "done", "failed", "skipped"];

/// Reads a test file's tree, collecting problems.
#[derive(Default)]
pub(crate) struct Reader {
    pub(crate) diags: Vec<Diagnostic>,
}

impl Reader {
    fn wrong(&mut self, node: &Node, what: &str, expected: &str, help: &str) {
        self.diags.push(
            Diagnostic::new(
                Code::TestWrongType,
                format!("{what} must be {expected}, found {}", node.type_name()),
            )
            .at(node.span)
            .with_label(format!("expected {expected}"))
            .help(help.to_owned()),
        );
    }

    /// The members of an object whose keys must be in `known` (T0001 for the others, with a
    /// did-you-mean); `None` (and T0002) when `node` is no object.
    fn object<'a>(
        &mut self,
        node: &'a Node,
        what: &str,
        known: &[&str],
        help: &str,
    ) -> Option<Vec<&'a Member>> {
        let Kind::Object(members) = &node.kind else {
            self.wrong(node, what, "an object", help);
            return None;
        };
        let mut out = Vec::with_capacity(members.len());
        for m in members {
            if known.contains(&m.key.value.as_str()) {
                out.push(m);
                continue;
            }
            let near = did_you_mean(&m.key.value, known.iter().copied());
            self.diags.push(
                Diagnostic::new(
                    Code::TestUnknownKey,
                    format!("unknown key '{}' in {what}", m.key.value),
                )
                .at(m.key.span)
                .with_label("unknown key")
                .help(match near {
                    Some(n) => format!("did you mean '{n}'?"),
                    None => format!("the keys of {what} are: {}", known.join(", ")),
                }),
            );
        }
        Some(out)
    }

    fn string(&mut self, node: &Node, what: &str, help: &str) -> Option<String> {
        match node.as_str() {
            Some(s) => Some(s.value.clone()),
            None => {
                self.wrong(node, what, "a string", help);
                None
            }
        }
    }

    fn number(&mut self, node: &Node, what: &str, help: &str) -> Option<f64> {
        match node.kind {
            Kind::Number(n) if n.is_finite() => Some(n),
            _ => {
                self.wrong(node, what, "a number", help);
                None
            }
        }
    }

    /// A string out of `allowed` (T0002 with the nearest otherwise).
    fn one_of(&mut self, node: &Node, what: &str, allowed: &[&str]) -> Option<String> {
        let s = self.string(node, what, &format!("write one of {}", allowed.join(", ")))?;
        if allowed.contains(&s.as_str()) {
            return Some(s);
        }
        let near = did_you_mean(&s, allowed.iter().copied());
        self.diags.push(
            Diagnostic::new(
                Code::TestWrongType,
                format!("{what} must be one of {}, found '{s}'", allowed.join(", ")),
            )
            .at(node.span)
            .with_label("not an allowed value")
            .help(match near {
                Some(n) => format!("did you mean '{n}'?"),
                None => format!("write one of {}", allowed.join(", ")),
            }),
        );
        None
    }

    /// Read a whole file.
    pub(crate) fn file(&mut self, root: &Node) -> TestFile {
        let mut file = TestFile::default();
        let Some(members) = self.object(
            root,
            "the test file",
            FILE_KEYS,
            "a test file is an object {\"flow\": \"x.flow.json\", \"tests\": [...]}",
        ) else {
            return file;
        };
        for m in &members {
            match m.key.value.as_str() {
                "flow" => {
                    if let Some(s) = self.string(
                        &m.value,
                        "'flow'",
                        "name the flow file (relative to this file) or a saved flow",
                    ) {
                        file.flow = Some(Named {
                            name: s,
                            span: m.value.span,
                            value: (),
                        });
                    }
                }
                "tests" => match &m.value.kind {
                    Kind::Array(items) => {
                        for t in items {
                            if let Some(case) = self.test(t) {
                                file.tests.push(case);
                            }
                        }
                    }
                    _ => self.wrong(
                        &m.value,
                        "'tests'",
                        "an array",
                        "write \"tests\": [{\"name\": \"...\", \"answers\": {...}, \"expect\": {...}}]",
                    ),
                },
                "invariants" => {
                    let e = self.expect_as(&m.value, "'invariants'");
                    file.invariants = Some((e, m.value.to_value()));
                }
                _ => {}
            }
        }
        if file.flow.is_none() && !members.iter().any(|m| m.key.value == "flow") {
            self.diags.push(
                Diagnostic::new(Code::TestWrongType, "the test file names no flow")
                    .at(Span::new(root.span.start, root.span.start + 1))
                    .with_label("'flow' is missing")
                    .help("add \"flow\": \"<file>.json\" (relative to this file) or a saved flow's name"),
            );
        }
        let mut seen: Vec<(&str, Span)> = Vec::new();
        for t in &file.tests {
            if let Some((_, first)) = seen.iter().find(|(n, _)| *n == t.name) {
                self.diags.push(
                    Diagnostic::new(
                        Code::TestDuplicateName,
                        format!("two tests are named '{}'", t.name),
                    )
                    .at(t.span)
                    .with_label("second test of that name")
                    .label(*first, "first defined here")
                    .help("give each test its own name (--filter and reports find tests by name)"),
                );
            } else {
                seen.push((&t.name, t.span));
            }
        }
        file
    }

    /// One element of `tests`.
    pub(crate) fn test(&mut self, node: &Node) -> Option<TestCase> {
        let members = self.object(
            node,
            "a test",
            TEST_KEYS,
            "a test is an object {\"name\": \"...\", \"answers\": {...}, \"expect\": {...}}",
        )?;
        let mut case = TestCase {
            span: node.span,
            ..TestCase::default()
        };
        let mut named = false;
        for m in members {
            let v = &m.value;
            match m.key.value.as_str() {
                "name" => {
                    if let Some(s) = self.string(v, "a test's 'name'", "name the test") {
                        case.name = s;
                        case.span = v.span;
                        named = true;
                    }
                }
                "args" => match &v.to_value() {
                    Value::Object(map) => case.args = map.clone(),
                    _ => self.wrong(
                        v,
                        "'args'",
                        "an object",
                        "write the invocation arguments as {\"name\": value}",
                    ),
                },
                "answers" if !matches!(v.kind, Kind::Object(_)) => self.wrong(
                    v,
                    "'answers'",
                    "an object",
                    "write \"answers\": {\"node-pattern\": \"the output\"}",
                ),
                "approvals" => self.approvals(v, &mut case),
                "expect" => case.expect = self.expect(v),
                "hooks" => match v.kind {
                    Kind::Bool(b) => case.hooks = b,
                    _ => self.wrong(
                        v,
                        "'hooks'",
                        "true or false",
                        "write \"hooks\": true to run the flow's hooks when this test's run ends",
                    ),
                },
                _ => {}
            }
        }
        // `answers`: any key is a pattern, so the members are read here, not through `object`.
        if let Some(Kind::Object(members)) = node.get("answers").map(|n| &n.kind) {
            for m in members {
                self.answer_rule(m, &mut case);
            }
        }
        if !named {
            self.diags.push(
                Diagnostic::new(Code::TestWrongType, "a test has no 'name'")
                    .at(Span::new(node.span.start, node.span.start + 1))
                    .with_label("'name' is missing")
                    .help("add \"name\": \"what this test shows\""),
            );
        }
        Some(case)
    }

    fn pattern(&mut self, key: &crate::json::Str) -> Option<Pattern> {
        match Pattern::parse(&key.value) {
            Ok(p) => Some(p),
            Err(e) => {
                self.diags.push(
                    Diagnostic::new(Code::TestInvalidPattern, format!("invalid node pattern {e}"))
                        .at(key.span)
                        .with_label("not a node pattern")
                        .help("write a phase id (`triage`), an item (`review#0`, `review#*`), an iteration (`fix@2`, `fix@*`), a judge (`pick#judge`), a sub-flow node (`sub/inner`, `sub/*`) or `*`"),
                );
                None
            }
        }
    }

    fn answer_rule(&mut self, m: &Member, case: &mut TestCase) {
        let pattern = self.pattern(&m.key);
        let answers: Vec<Answer> = match &m.value.kind {
            Kind::Array(items) if items.is_empty() => {
                self.wrong(
                    &m.value,
                    &format!("the answers of '{}'", m.key.value),
                    "a non-empty array",
                    "give at least one answer; the last one repeats",
                );
                return;
            }
            Kind::Array(items) => items.iter().filter_map(|a| self.answer(a)).collect(),
            _ => self.answer(&m.value).into_iter().collect(),
        };
        if let (Some(pattern), false) = (pattern, answers.is_empty()) {
            case.answers.push(Named {
                name: m.key.value.clone(),
                span: m.key.span,
                value: AnswerRule { pattern, answers },
            });
        }
    }

    fn answer(&mut self, node: &Node) -> Option<Answer> {
        const HELP: &str = "an answer is a string, {\"json\": V}, {\"error\": \"text\"}, {\"timeout\": true} or, for a script, {\"stdout\": \"text\", \"exitCode\": 0}";
        if let Some(s) = node.as_str() {
            return Some(Answer {
                reply: Reply::Text(s.value.clone()),
                usage: None,
                violates: false,
                span: node.span,
            });
        }
        if !matches!(node.kind, Kind::Object(_)) {
            self.wrong(node, "an answer", "a string or an object", HELP);
            return None;
        }
        let members = self.object(node, "an answer", ANSWER_KEYS, HELP)?;
        let get = |k: &str| members.iter().find(|m| m.key.value == k).map(|m| &m.value);
        let kinds: Vec<&str> = ["json", "error", "timeout", "stdout"]
            .into_iter()
            .filter(|k| get(k).is_some())
            .collect();
        if kinds.len() != 1 {
            self.diags.push(
                Diagnostic::new(
                    Code::TestWrongType,
                    if kinds.is_empty() {
                        "an answer object must have one of 'json', 'error', 'timeout', 'stdout'"
                            .to_owned()
                    } else {
                        format!("an answer has both '{}' and '{}'", kinds[0], kinds[1])
                    },
                )
                .at(node.span)
                .with_label("not an answer")
                .help(HELP),
            );
            return None;
        }
        let reply = match kinds[0] {
            "json" => Reply::Json(get("json")?.to_value()),
            "error" => Reply::Error(self.string(get("error")?, "'error'", HELP)?),
            "timeout" => match get("timeout")?.kind {
                Kind::Bool(true) => Reply::Timeout,
                _ => {
                    self.wrong(get("timeout")?, "'timeout'", "true", HELP);
                    return None;
                }
            },
            _ => {
                let stdout = self.string(get("stdout")?, "'stdout'", HELP)?;
                let exit_code = match get("exitCode") {
                    Some(n) => self.number(n, "'exitCode'", "an exit code such as 0")? as i32,
                    None => 0,
                };
                Reply::Script { stdout, exit_code }
            }
        };
        if let Some(e) = get("exitCode")
            && !matches!(reply, Reply::Script { .. })
        {
            self.diags.push(
                Diagnostic::new(
                    Code::TestWrongType,
                    "'exitCode' belongs to a script answer (with 'stdout')",
                )
                .at(e.span)
                .with_label("no 'stdout' beside it")
                .help(HELP),
            );
        }
        let usage = match get("usage") {
            Some(u) => Some(self.usage(u)?),
            None => None,
        };
        let violates = match get("violates").map(|v| &v.kind) {
            None => false,
            Some(Kind::Bool(b)) => *b,
            Some(_) => {
                self.wrong(
                    get("violates")?,
                    "'violates'",
                    "a boolean",
                    "write \"violates\": true",
                );
                false
            }
        };
        Some(Answer {
            reply,
            usage,
            violates,
            span: node.span,
        })
    }

    fn usage(&mut self, node: &Node) -> Option<Usage> {
        const HELP: &str = "write \"usage\": {\"input\": 100, \"output\": 20, \"costUSD\": 0.01}";
        let members = self.object(node, "'usage'", USAGE_KEYS, HELP)?;
        let mut u = Usage::default();
        for m in members {
            let what = format!("'usage.{}'", m.key.value);
            let n = self.number(&m.value, &what, HELP)?;
            if n < 0.0 {
                self.wrong(&m.value, &what, "a number ≥ 0", HELP);
                return None;
            }
            match m.key.value.as_str() {
                "input" => u.input = n as u64,
                "output" => u.output = n as u64,
                _ => u.cost_usd = Some(n),
            }
        }
        Some(u)
    }

    fn approvals(&mut self, node: &Node, case: &mut TestCase) {
        const HELP: &str = "decide each approval with \"approve\", \"reject\" or {\"reject\": \"note\"}; an unlisted approval stays pending";
        let Kind::Object(members) = &node.kind else {
            self.wrong(node, "'approvals'", "an object", HELP);
            return;
        };
        for m in members {
            let decided = match &m.value.kind {
                Kind::String(s) if s.value == "approve" => Some(Decided::Approve),
                Kind::String(s) if s.value == "reject" => Some(Decided::Reject(None)),
                Kind::Object(_) => self
                    .object(&m.value, "an approval decision", &["reject"], HELP)
                    .and_then(|ms| ms.first().map(|r| &r.value))
                    .and_then(|r| self.string(r, "'reject'", HELP))
                    .map(|note| Decided::Reject(Some(note))),
                _ => {
                    self.diags.push(
                        Diagnostic::new(
                            Code::TestWrongType,
                            format!("the decision of approval '{}' is not one", m.key.value),
                        )
                        .at(m.value.span)
                        .with_label("not a decision")
                        .help(HELP),
                    );
                    None
                }
            };
            if let Some(d) = decided {
                case.approvals.push(Named {
                    name: m.key.value.clone(),
                    span: m.key.span,
                    value: d,
                });
            }
        }
    }

    fn ids(&mut self, node: &Node, what: &str) -> Vec<Named<()>> {
        let help = format!("write \"{what}\": [\"phase-id\", ...]");
        let Kind::Array(items) = &node.kind else {
            self.wrong(node, &format!("'{what}'"), "an array of phase ids", &help);
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|i| {
                let s = self.string(i, &format!("an element of '{what}'"), &help)?;
                Some(Named {
                    name: s,
                    span: i.span,
                    value: (),
                })
            })
            .collect()
    }

    /// An `expect` block.
    pub(crate) fn expect(&mut self, node: &Node) -> Expect {
        self.expect_as(node, "'expect'")
    }

    /// An `expect`-syntax block called `what` in messages (`'expect'`, `'invariants'`).
    fn expect_as(&mut self, node: &Node, what: &str) -> Expect {
        let mut e = Expect::default();
        let Some(members) = self.object(
            node,
            what,
            EXPECT_KEYS,
            "write \"expect\": {\"status\": \"completed\", \"output\": {\"contains\": \"...\"}}",
        ) else {
            return e;
        };
        for m in members {
            let v = &m.value;
            match m.key.value.as_str() {
                "status" => {
                    if let Some(s) = self.one_of(v, "'status'", RUN_STATUSES) {
                        e.status = Some(Named {
                            name: s,
                            span: v.span,
                            value: (),
                        });
                    }
                }
                "ran" => e.ran = self.ids(v, "ran"),
                "skipped" => e.skipped = self.ids(v, "skipped"),
                "failed" => e.failed = self.ids(v, "failed"),
                "notRun" => e.not_run = self.ids(v, "notRun"),
                "phases" => {
                    let Kind::Object(phases) = &v.kind else {
                        self.wrong(
                            v,
                            "'phases'",
                            "an object",
                            "write \"phases\": {\"phase-id\": {\"status\": \"done\"}}",
                        );
                        continue;
                    };
                    for p in phases {
                        let pe = self.phase_expect(&p.value, &p.key.value);
                        e.phases.push(Named {
                            name: p.key.value.clone(),
                            span: p.key.span,
                            value: pe,
                        });
                    }
                }
                "output" => e.output = self.matcher(v),
                "outputPhase" => match &v.kind {
                    Kind::Null => e.output_phase = Some((None, v.span)),
                    _ => {
                        if let Some(s) = self.string(v, "'outputPhase'", "name a phase, or null") {
                            e.output_phase = Some((Some(s), v.span));
                        }
                    }
                },
                "prompts" => {
                    let Kind::Object(ps) = &v.kind else {
                        self.wrong(
                            v,
                            "'prompts'",
                            "an object",
                            "write \"prompts\": {\"node\": {\"contains\": \"...\"}}",
                        );
                        continue;
                    };
                    for p in ps {
                        let pattern = self.pattern(&p.key);
                        let matcher = self.matcher(&p.value);
                        if let (Some(pattern), Some(matcher)) = (pattern, matcher) {
                            e.prompts.push(Named {
                                name: p.key.value.clone(),
                                span: p.key.span,
                                value: (pattern, matcher),
                            });
                        }
                    }
                }
                "calls" => e.calls = self.bound(v, "'calls'"),
                "tokens" => e.tokens = self.bound(v, "'tokens'"),
                "costUSD" => e.cost_usd = self.bound(v, "'costUSD'"),
                "warnings" => match &v.kind {
                    Kind::Array(items) => {
                        e.warnings = items.iter().filter_map(|i| self.matcher(i)).collect()
                    }
                    _ => self.wrong(
                        v,
                        "'warnings'",
                        "an array of matchers",
                        "write \"warnings\": [{\"contains\": \"...\"}]",
                    ),
                },
                _ => {}
            }
        }
        e
    }

    fn phase_expect(&mut self, node: &Node, id: &str) -> PhaseExpect {
        let mut pe = PhaseExpect::default();
        let Some(members) = self.object(
            node,
            &format!("the expectations of phase '{id}'"),
            PHASE_KEYS,
            "write {\"status\": \"done\", \"output\": {\"contains\": \"...\"}}",
        ) else {
            return pe;
        };
        for m in members {
            let v = &m.value;
            let what = format!("'phases.{id}.{}'", m.key.value);
            match m.key.value.as_str() {
                "status" => pe.status = self.one_of(v, &what, PHASE_STATUSES).map(|s| (s, v.span)),
                "output" => pe.output = self.matcher(v),
                "json" => pe.json = Some((v.to_value(), v.span)),
                "verdict" => {
                    pe.verdict = self
                        .one_of(v, &what, &["pass", "block"])
                        .map(|s| (s, v.span))
                }
                "iterations" => {
                    pe.iterations = self
                        .number(v, &what, "the number of iterations, e.g. 2")
                        .map(|n| (n, v.span))
                }
                "attempts" => {
                    pe.attempts = self
                        .number(v, &what, "the number of agent calls, e.g. 1")
                        .map(|n| (n, v.span))
                }
                "items" => match &v.kind {
                    Kind::Number(n) => pe.items = Some((ItemsExpect::Count(*n), v.span)),
                    Kind::Array(list) => {
                        let statuses: Vec<String> = list
                            .iter()
                            .filter_map(|s| self.one_of(s, &what, PHASE_STATUSES))
                            .collect();
                        if statuses.len() == list.len() {
                            pe.items = Some((ItemsExpect::Statuses(statuses), v.span));
                        }
                    }
                    _ => self.wrong(
                        v,
                        &what,
                        "a number or an array of statuses",
                        "write the item count (3) or each item's status ([\"done\", \"failed\"])",
                    ),
                },
                "cacheHit" => match v.kind {
                    Kind::Bool(b) => pe.cache_hit = Some((b, v.span)),
                    _ => self.wrong(v, &what, "a boolean", "write true or false"),
                },
                "skipReason" => pe.skip_reason = self.matcher(v),
                _ => {}
            }
        }
        pe
    }

    fn bound(&mut self, node: &Node, what: &str) -> Option<Bound> {
        const HELP: &str = "write a number (exact) or {\"min\": 1, \"max\": 10}";
        if let Kind::Number(n) = node.kind {
            return Some(Bound {
                min: Some(n),
                max: Some(n),
                span: node.span,
            });
        }
        let members = self.object(node, what, BOUND_KEYS, HELP)?;
        let mut b = Bound {
            min: None,
            max: None,
            span: node.span,
        };
        for m in members {
            let n = self.number(&m.value, &format!("{what}.{}", m.key.value), HELP)?;
            if m.key.value == "min" {
                b.min = Some(n);
            } else {
                b.max = Some(n);
            }
        }
        Some(b)
    }

    /// A matcher: a string (equals) or an object with one matcher key.
    pub(crate) fn matcher(&mut self, node: &Node) -> Option<Matcher> {
        const HELP: &str = "a matcher is a string (equals), {\"equals\": \"...\"}, {\"contains\": \"...\"}, {\"regex\": \"...\"}, {\"json\": V}, {\"schema\": CONTRACT} or {\"not\": matcher}";
        let kind = match &node.kind {
            Kind::String(s) => MatcherKind::Equals(s.value.clone()),
            Kind::Object(_) => {
                let members = self.object(node, "a matcher", MATCHER_KEYS, HELP)?;
                let [m] = members.as_slice() else {
                    self.diags.push(
                        Diagnostic::new(Code::TestInvalidMatcher, "a matcher has exactly one key")
                            .at(node.span)
                            .with_label(format!("{} keys", members.len()))
                            .help(HELP),
                    );
                    return None;
                };
                let v = &m.value;
                match m.key.value.as_str() {
                    "equals" => MatcherKind::Equals(self.string(v, "'equals'", HELP)?),
                    "contains" => MatcherKind::Contains(self.string(v, "'contains'", HELP)?),
                    "regex" => {
                        let text = self.string(v, "'regex'", HELP)?;
                        match regex::Regex::new(&text) {
                            Ok(r) => MatcherKind::Regex(r),
                            Err(e) => {
                                let first = e.to_string();
                                let first = first.lines().last().unwrap_or("").trim();
                                let first =
                                    first.strip_prefix("error: ").unwrap_or(first).to_owned();
                                self.diags.push(
                                    Diagnostic::new(
                                        Code::TestInvalidMatcher,
                                        format!("invalid regex: {first}"),
                                    )
                                    .at(v.span)
                                    .with_label("not a regex")
                                    .help("write a Rust `regex` pattern (escape `\\` as `\\\\` in JSON)"),
                                );
                                return None;
                            }
                        }
                    }
                    "json" => MatcherKind::Json(v.to_value()),
                    "schema" => {
                        let mut l = crate::flow::lowerer::Lowerer::default();
                        let c = l.contract(m, "schema");
                        let bad = !l.diags.is_empty();
                        for mut d in l.diags {
                            d.code = Code::TestInvalidMatcher;
                            d.severity = crate::diag::Severity::Error;
                            self.diags.push(d);
                        }
                        if bad {
                            return None;
                        }
                        MatcherKind::Schema(Box::new(c?))
                    }
                    _ => MatcherKind::Not(Box::new(self.matcher(v)?)),
                }
            }
            _ => {
                self.diags.push(
                    Diagnostic::new(
                        Code::TestInvalidMatcher,
                        format!(
                            "a matcher must be a string or an object, found {}",
                            node.type_name()
                        ),
                    )
                    .at(node.span)
                    .with_label("not a matcher")
                    .help(HELP),
                );
                return None;
            }
        };
        Some(Matcher {
            kind,
            span: node.span,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (TestFile, Vec<Diagnostic>) {
        let parsed = crate::json::parse(text);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let mut r = Reader::default();
        let f = r.file(&parsed.root.unwrap());
        (f, r.diags)
    }

    #[test]
    fn a_whole_file_reads_with_every_part() {
        let (f, d) = read(
            r#"{"flow": "f.json", // comment
               "tests": [{"name": "t", "args": {"mode": "x"},
                 "answers": {"a": "text", "b#*": [{"json": {"k": 1}}, {"error": "overloaded"}],
                             "c": {"timeout": true, "usage": {"input": 5, "costUSD": 0.5}},
                             "s": {"stdout": "hi", "exitCode": 3}},
                 "approvals": {"ok": "approve", "no": {"reject": "why"}},
                 "expect": {"status": "completed", "ran": ["a"], "calls": {"max": 3},
                            "phases": {"a": {"verdict": "pass", "items": ["done"]}},
                            "output": {"not": {"regex": "^x"}}, "outputPhase": null}}]}"#,
        );
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(f.flow.as_ref().unwrap().name, "f.json");
        let t = &f.tests[0];
        assert_eq!(t.answers.len(), 4);
        assert_eq!(t.answers[1].value.answers.len(), 2);
        assert_eq!(
            t.answers[1].value.answers[1].reply,
            Reply::Error("overloaded".into())
        );
        assert_eq!(t.answers[2].value.answers[0].reply, Reply::Timeout);
        assert_eq!(
            t.answers[2].value.answers[0].usage.unwrap().cost_usd,
            Some(0.5)
        );
        assert_eq!(
            t.answers[3].value.answers[0].reply,
            Reply::Script {
                stdout: "hi".into(),
                exit_code: 3
            }
        );
        assert_eq!(t.approvals[1].value, Decided::Reject(Some("why".into())));
        assert_eq!(t.expect.calls.as_ref().unwrap().max, Some(3.0));
        assert!(matches!(
            t.expect.output.as_ref().unwrap().kind,
            MatcherKind::Not(_)
        ));
        assert_eq!(t.expect.output_phase.as_ref().unwrap().0, None);
    }

    #[test]
    fn shape_problems_have_codes_and_spans() {
        let (_, d) = read(
            r#"{"flow": "f.json", "test": 1, "tests": [{"name": "t", "expct": {},
                 "answers": {"a#": "x", "b": 3, "c": {"json": 1, "error": "e"}},
                 "expect": {"output": {"regex": "("}, "status": "complete"}},
                 {"name": "t"}]}"#,
        );
        let mut d = d;
        d.sort_by_key(|d| d.span.map(|s| s.start));
        let codes: Vec<(&str, &str)> = d
            .iter()
            .map(|d| (d.code.as_str(), d.message.as_str()))
            .collect();
        assert_eq!(
            codes,
            [
                ("T0001", "unknown key 'test' in the test file"),
                ("T0001", "unknown key 'expct' in a test"),
                (
                    "T0004",
                    "invalid node pattern 'a#': nothing after the marker (write `a#0`, `a#*` or `a@1`)"
                ),
                (
                    "T0002",
                    "an answer must be a string or an object, found number"
                ),
                ("T0002", "an answer has both 'json' and 'error'"),
                ("T0009", "invalid regex: unclosed group"),
                (
                    "T0002",
                    "'status' must be one of completed, failed, paused, blocked, found 'complete'"
                ),
                ("T0010", "two tests are named 't'"),
            ],
        );
        assert_eq!(d[0].help.as_deref(), Some("did you mean 'tests'?"));
        assert_eq!(d[1].help.as_deref(), Some("did you mean 'expect'?"));
        assert_eq!(d[6].help.as_deref(), Some("did you mean 'completed'?"));
        assert!(d.iter().all(|d| d.span.is_some()));
    }

    #[test]
    fn invariants_read_with_the_expect_syntax() {
        let (f, d) = read(
            r#"{"flow": "f.json", "tests": [], "invariants": {"calls": {"max": 4}, "stauts": "completed"}}"#,
        );
        assert_eq!(
            f.invariants.as_ref().unwrap().0.calls.as_ref().unwrap().max,
            Some(4.0)
        );
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].message, "unknown key 'stauts' in 'invariants'");
        assert_eq!(d[0].help.as_deref(), Some("did you mean 'status'?"));
    }
}
