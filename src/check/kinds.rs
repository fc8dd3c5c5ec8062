//! Per-phase rules (SPEC §7.2 E03xx, E04xx, W03xx, W0205): required and misplaced fields per
//! phase type, conflicting fields, retries, timeouts, caches, contracts, working directories.

use crate::diag::{Code, Diagnostic};
use crate::flow::{
    CacheScope, Cwd, Def, Field, Flow, OutputMode, Phase, PhaseType, ReduceStrategy, Run,
};
use crate::source::Span;

use PhaseType as T;

/// Type-specific fields that have no effect elsewhere (W0308), with the types that use them.
/// Fields with a dedicated diagnostic (score, reflexion, run, input, expect, timeout, until,
/// maxIterations, convergence, batchSize, idleTimeout) are checked on their own.
const TYPE_SPECIFIC: &[(&str, &[PhaseType])] = &[
    ("branches", &[T::Parallel, T::Race, T::Tournament]),
    ("over", &[T::Map]),
    ("as", &[T::Map]),
    ("eval", &[T::Gate]),
    ("onBlock", &[T::Gate]),
    ("reduceStrategy", &[T::Reduce]),
    ("use", &[T::Flow]),
    ("def", &[T::Flow, T::Expand]),
    ("with", &[T::Flow]),
    ("variants", &[T::Tournament]),
    ("mode", &[T::Tournament]),
    ("judge", &[T::Tournament]),
    ("judgeAgent", &[T::Tournament]),
    ("cancelLosers", &[T::Race]),
    ("expandMode", &[T::Expand]),
    ("maxNodes", &[T::Expand]),
    ("concurrency", &[T::Map, T::Parallel, T::Tournament]),
    (
        "task",
        &[
            T::Agent,
            T::Map,
            T::Gate,
            T::Reduce,
            T::Approval,
            T::Loop,
            T::Tournament,
        ],
    ),
];

/// `a gate`, `an agent`.
fn a_type(ty: PhaseType) -> String {
    let t = ty.as_str();
    let article = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {t}")
}

fn names(types: &[PhaseType]) -> String {
    types
        .iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn phase_rules(flow: &Flow, p: &Phase, out: &mut Vec<Diagnostic>) {
    if p.invalid.contains(&"type") {
        return;
    }
    required(p, out);
    not_allowed(p, out);
    ignored(p, out);
    script(p, out);
    timing(flow, p, out);
    caching(flow, p, out);
    cwd(flow, p, out);
    string_def(p, out);
    if p.ty == T::Reduce && p.reduce_strategy == ReduceStrategy::Tree {
        let calls = tree_calls(
            p.from.len(),
            p.batch_size.as_ref().map_or(2, |b| b.value as usize),
        );
        if calls > 256 {
            out.push(
                Diagnostic::new(Code::TreeReduceCap, format!("{}: a tree reduce of {} inputs in batches of {} makes {calls} calls (limit 256)", p.id, p.from.len(), p.batch_size.as_ref().map_or(2.0, |b| b.value)))
                    .at(p.written.get("reduceStrategy").copied().unwrap_or(p.id_span))
                    .with_label(format!("{calls} calls"))
                    .phase(&p.id)
                    .help("raise batchSize or split the inputs over several reduce phases"),
            );
        }
    }
    if p.expect.is_some() && p.output != OutputMode::Json && !p.invalid.contains(&"expect") {
        out.push(
            Diagnostic::new(
                Code::ExpectNeedsJson,
                format!("{}: 'expect' needs \"output\": \"json\"", p.id),
            )
            .at(p.written["expect"])
            .with_label("the output is text, not parsed JSON")
            .phase(&p.id)
            .help(
                "add \"output\": \"json\" so the output is parsed before the contract is checked",
            ),
        );
    }
    if p.ty == T::Gate && !p.eval.is_empty() && p.score.is_some() {
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
    if !p.idempotent && matches!(p.ty, T::Approval | T::Flow) {
        out.push(
            Diagnostic::new(
                Code::IdempotentNoOp,
                format!(
                    "{}: 'idempotent: false' has no effect on {} phase",
                    p.id,
                    a_type(p.ty)
                ),
            )
            .at(p.written["idempotent"])
            .with_label("no effect here")
            .phase(&p.id)
            .help("remove it; it applies to phases that call agents or scripts"),
        );
    }
    if !p.id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') && !p.id.contains('_') {
        let mut suggestion = String::new();
        for c in p.id.chars() {
            if c.is_ascii_alphanumeric() {
                suggestion.push(c);
            } else if !suggestion.is_empty() && !suggestion.ends_with('-') {
                suggestion.push('-');
            }
        }
        let suggestion = suggestion.trim_end_matches('-');
        let help = if suggestion.is_empty() || !p.id.is_ascii() {
            "rename it using ASCII letters, digits and '-' only".to_owned()
        } else {
            format!("rename it using letters, digits and '-' only, e.g. \"{suggestion}\"")
        };
        out.push(
            Diagnostic::new(Code::UnreferenceableId, format!("phase id '{}' cannot be referenced: placeholders accept only letters, digits and '-'", p.id))
                .at(p.id_span)
                .with_label("{steps.…} cannot name this phase")
                .phase(&p.id)
                .help(help),
        );
    }
}

/// E0301: what each type cannot run without.
fn required(p: &Phase, out: &mut Vec<Diagnostic>) {
    // A `task` or `until` that is empty (or only whitespace) is as good as missing: the agent
    // would get no prompt, the loop no condition.
    let blank = |k: &str| match k {
        "task" => p.task.as_ref().is_some_and(|t| is_blank(t.as_str())),
        "until" => p.until.as_ref().is_some_and(|c| is_blank(c.as_str())),
        _ => false,
    };
    let has = |k: &str| (p.has(k) && !blank(k)) || p.invalid.contains(&k);
    let mut need = |field: &str, present: bool, help: &str| {
        if present {
            return;
        }
        // Written but empty (`"run": []`, `"branches": []`): point at it.
        let written = field
            .split("' or '")
            .find_map(|f| p.written.get(f).map(|s| (f, *s)));
        let argv_program_empty = matches!(
            p.run.as_ref().map(|r| &r.value),
            Some(Run::Argv(argv)) if !argv.is_empty()
        );
        let (span, label) = match written {
            Some(("run", span)) if argv_program_empty => {
                (span, "the program (first element) is empty".to_owned())
            }
            Some((f, span)) => {
                // An empty string: point at the string itself.
                let value = match f {
                    "task" => p.task.as_ref().map(|t| t.src.span),
                    "until" => p.until.as_ref().map(|c| c.src.span),
                    _ => None,
                };
                (value.unwrap_or(span), format!("'{f}' is empty"))
            }
            None => (
                p.id_span,
                format!("{} phase has no '{field}'", a_type(p.ty)),
            ),
        };
        let but = match written {
            Some(_) => format!(", but {label}"),
            None => String::new(),
        };
        out.push(
            Diagnostic::new(
                Code::MissingField,
                format!("{} ({}) requires '{field}'{but}", p.id, p.ty.as_str()),
            )
            .at(span)
            .phase(&p.id)
            .with_label(label)
            .help(help.to_owned()),
        );
    };
    const TASK: &str = "add \"task\": the prompt for the agent";
    match p.ty {
        T::Agent => need("task", has("task"), TASK),
        T::Loop => {
            need("task", has("task"), TASK);
            need(
                "until",
                has("until"),
                "add \"until\": the condition that ends the loop, e.g. \"{loop.iteration} >= 3\"",
            );
        }
        T::Map => {
            need(
                "task",
                has("task"),
                "add \"task\": the prompt run for each element",
            );
            need(
                "over",
                has("over"),
                "add \"over\": the array to fan out over, e.g. \"{steps.list.json}\"",
            );
        }
        T::Reduce => {
            need(
                "task",
                has("task"),
                "add \"task\": how to combine the inputs ({previous.output})",
            );
            need(
                "from",
                !p.from.is_empty() || p.invalid.contains(&"from"),
                "add \"from\": the phases whose outputs are combined",
            );
        }
        T::Gate => need(
            "task' or 'score",
            has("task") || has("score"),
            "add \"task\" (what the gate judges, ending in a VERDICT) or deterministic \"score\" scorers",
        ),
        T::Parallel | T::Race => need(
            "branches",
            !p.branches.is_empty() || p.invalid.contains(&"branches"),
            "add \"branches\": [{\"task\": \"…\"}, {\"task\": \"…\"}]",
        ),
        T::Tournament => need(
            "task' or 'branches",
            has("task") || has("branches"),
            "add \"task\" (run as several variants) or \"branches\" (one task each)",
        ),
        T::Flow => need(
            "use' or 'def",
            has("use") || has("def"),
            "add \"use\": \"<saved flow>\" or an inline \"def\": {\"phases\": […]}",
        ),
        T::Expand => need(
            "def",
            has("def"),
            "add \"def\": the phases to expand, inline or as a template string",
        ),
        T::Script => {
            let ok = match p.run.as_ref().map(|r| &r.value) {
                Some(Run::Shell(_)) => true,
                Some(Run::Argv(argv)) => argv.first().is_some_and(|a| !a.as_str().is_empty()),
                None => p.invalid.contains(&"run"),
            };
            need(
                "run",
                ok,
                "add \"run\": a shell command string, or an argv array whose first element is the program",
            );
        }
        T::Approval => {}
    }
    for b in &p.branches {
        if !matches!(p.ty, T::Parallel | T::Race | T::Tournament) {
            break;
        }
        let (span, label) = match &b.task {
            None => (b.span, "this branch has no 'task'"),
            Some(t) if is_blank(t.as_str()) => (t.src.span, "this branch's 'task' is empty"),
            Some(_) => continue,
        };
        out.push(
            Diagnostic::new(
                Code::MissingField,
                format!(
                    "{} ({}) requires a non-empty 'task' in every branch",
                    p.id,
                    p.ty.as_str()
                ),
            )
            .at(span)
            .with_label(label)
            .phase(&p.id)
            .help("add \"task\": the prompt for this branch"),
        );
    }
    if p.ty == T::Gate {
        for (i, entry) in p.eval.iter().enumerate() {
            if matches!(entry.kind, crate::flow::EvalKind::Empty) {
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
    }
    if p.has("use") && p.has("def") && p.ty == T::Flow {
        out.push(
            Diagnostic::new(
                Code::ConflictingFields,
                format!(
                    "{}: a flow phase takes exactly one of 'use' and 'def'",
                    p.id
                ),
            )
            .at(p.written["def"])
            .with_label("'def' is given")
            .phase(&p.id)
            .label(p.written["use"], "'use' is given too")
            .help("keep 'use' for a saved flow or 'def' for an inline one"),
        );
    }
    let few = match p.ty {
        T::Race => !p.branches.is_empty() && p.branches.len() < 2,
        T::Tournament => {
            p.has("branches") && p.branches.len() < 2 && !p.invalid.contains(&"branches")
        }
        _ => false,
    };
    if few {
        out.push(
            Diagnostic::new(
                Code::TooFewBranches,
                format!(
                    "{}: a {} needs at least 2 branches, found {}",
                    p.id,
                    p.ty.as_str(),
                    p.branches.len()
                ),
            )
            .at(p.written["branches"])
            .with_label(format!("{} branch{}", p.branches.len(), if p.branches.len() == 1 { "" } else { "es" }))
            .phase(&p.id)
            .help(if p.ty == T::Race {
                "add another branch to race against, or use an agent phase for a single task"
            } else {
                "add another branch, or drop 'branches' and let 'variants' copies of the task compete"
            }),
        );
    }
}

/// Empty once JS-trimmed.
fn is_blank(text: &str) -> bool {
    crate::value::js_trim(text).is_empty()
}

/// E0302: fields that are errors off their types.
fn not_allowed(p: &Phase, out: &mut Vec<Diagnostic>) {
    // The help text is built only when the field is denied (this runs for every phase).
    let mut deny = |field: &str, allowed: &[PhaseType], why: &str, help: &dyn Fn() -> String| {
        if let Some(&span) = p.written.get(field)
            && !allowed.contains(&p.ty)
        {
            out.push(
                Diagnostic::new(
                    Code::FieldNotAllowed,
                    format!(
                        "{}: '{field}' is not allowed on {} phase{why}",
                        p.id,
                        a_type(p.ty)
                    ),
                )
                .at(span)
                .with_label(format!("not allowed on {}", a_type(p.ty)))
                .phase(&p.id)
                .help(help()),
            );
        }
    };
    let only = |field: &str, types: &[PhaseType]| {
        format!(
            "remove '{field}', or change the phase's type ('{field}' is accepted by: {})",
            names(types)
        )
    };
    deny("score", &[T::Gate], "", &|| only("score", &[T::Gate]));
    // `"reflexion": false` off a loop asks for what the phase does anyway: a W0308 in
    // `ignored`, not an error. Only a value that asks for something the type cannot do is.
    if p.reflexion || p.ty == T::Loop {
        deny("reflexion", &[T::Loop], "", &|| {
            only("reflexion", &[T::Loop])
        });
    }
    deny("run", &[T::Script], "", &|| only("run", &[T::Script]));
    deny("input", &[T::Script], "", &|| only("input", &[T::Script]));
    const EXPECT: &[PhaseType] = &[T::Agent, T::Gate, T::Reduce, T::Loop];
    deny("expect", EXPECT, "", &|| only("expect", EXPECT));
    const TIMED: &[PhaseType] = &[
        T::Agent,
        T::Parallel,
        T::Map,
        T::Gate,
        T::Reduce,
        T::Loop,
        T::Tournament,
        T::Script,
        T::Race,
        T::Expand,
    ];
    deny(
        "timeout",
        TIMED,
        " (it has no agent call to time out)",
        &|| {
            if p.ty == T::Flow {
                "remove it; set 'timeout' on the phases of the sub-flow instead".to_owned()
            } else {
                "remove it: an approval waits for a person as long as it takes".to_owned()
            }
        },
    );
    const RETRIED: &[PhaseType] = &[
        T::Agent,
        T::Parallel,
        T::Map,
        T::Gate,
        T::Reduce,
        T::Approval,
        T::Flow,
        T::Loop,
        T::Tournament,
        T::Race,
        T::Expand,
    ];
    // `"retry": {"max": 0}` on a script asks for no retry, which is what a script gets.
    if !neutral_retry(p) {
        deny("retry", RETRIED, " (scripts are never retried)", &|| {
            "remove it, and let the command retry itself if it must (e.g. a shell loop)".to_owned()
        });
    }
    if p.ty == T::Script && p.output == OutputMode::Json {
        out.push(
            Diagnostic::new(
                Code::FieldNotAllowed,
                format!(
                    "{}: \"output\": \"json\" is not allowed on a script phase",
                    p.id
                ),
            )
            .at(p.written["output"])
            .with_label("not allowed on a script")
            .phase(&p.id)
            .help(
                "remove it and reference {steps.ID.json} downstream: it safeParses the script's stdout",
            ),
        );
    }
    if matches!(p.ty, T::Race | T::Tournament) {
        for b in &p.branches {
            if let Some(c) = &b.cwd {
                out.push(
                    Diagnostic::new(
                        Code::FieldNotAllowed,
                        format!(
                            "{}: a branch 'cwd' is allowed only in parallel phases",
                            p.id
                        ),
                    )
                    .at(c.key)
                    .with_label(format!("not allowed in {} branch", a_type(p.ty)))
                    .phase(&p.id)
                    .help("remove it, and set the phase's own 'cwd' instead"),
                );
            }
        }
    }
}

/// `retry` written with `max: 0`: no retry at all.
fn neutral_retry(p: &Phase) -> bool {
    p.retry.as_ref().is_some_and(|r| r.value.max == 0.0)
}

/// W0302, W0306, W0307, W0308: fields that do nothing on this type.
fn ignored(p: &Phase, out: &mut Vec<Diagnostic>) {
    // Fields that are errors off their types (E0302) when they ask for something, but only
    // ignored when written with their neutral value.
    let neutral = [
        (
            "reflexion",
            "\"reflexion\": false",
            !p.reflexion && p.ty != T::Loop,
            "loop",
        ),
        (
            "retry",
            "\"retry\": {\"max\": 0}",
            neutral_retry(p) && p.ty == T::Script,
            "every type but script",
        ),
    ];
    for (field, written, applies, used_by) in neutral {
        if let (Some(span), true) = (written_at(p, field), applies) {
            out.push(
                Diagnostic::new(
                    Code::FieldIgnored,
                    format!(
                        "{}: {written} has no effect on {} phase",
                        p.id,
                        a_type(p.ty)
                    ),
                )
                .at(span)
                .with_label("ignored (already the behaviour)")
                .phase(&p.id)
                .help(format!("remove it ('{field}' is used by: {used_by})")),
            );
        }
    }
    for field in ["until", "maxIterations", "convergence"] {
        if let (Some(span), false) = (written_at(p, field), p.ty == T::Loop) {
            out.push(
                Diagnostic::new(
                    Code::LoopOnlyField,
                    format!(
                        "{}: '{field}' only applies to loop phases; it is ignored on {} phase",
                        p.id,
                        a_type(p.ty)
                    ),
                )
                .at(span)
                .with_label("ignored")
                .phase(&p.id)
                .help("remove it, or make the phase \"type\": \"loop\""),
            );
        }
    }
    if let (Some(span), false) = (
        written_at(p, "batchSize"),
        p.reduce_strategy == ReduceStrategy::Tree && p.ty == T::Reduce,
    ) {
        out.push(
            Diagnostic::new(
                Code::BatchsizeIgnored,
                format!(
                    "{}: 'batchSize' is used only by a reduce with \"reduceStrategy\": \"tree\"",
                    p.id
                ),
            )
            .at(span)
            .with_label("ignored by a one-shot reduce")
            .phase(&p.id)
            .help(if p.ty == T::Reduce {
                "remove it, or set \"reduceStrategy\": \"tree\""
            } else {
                "remove it: only a reduce with \"reduceStrategy\": \"tree\" batches its inputs"
            }),
        );
    }
    if let (Some(span), false) = (written_at(p, "idleTimeout"), p.ty.runs_agents()) {
        out.push(
            Diagnostic::new(
                Code::IdleTimeoutIgnored,
                format!(
                    "{}: 'idleTimeout' has no effect on {} phase (it runs no agent)",
                    p.id,
                    a_type(p.ty)
                ),
            )
            .at(span)
            .with_label("ignored")
            .phase(&p.id)
            .help("remove it; the idle watchdog applies to phases that run agents"),
        );
    }
    for (field, types) in TYPE_SPECIFIC {
        if let (Some(span), false) = (written_at(p, field), types.contains(&p.ty)) {
            out.push(
                Diagnostic::new(
                    Code::FieldIgnored,
                    format!(
                        "{}: '{field}' has no effect on {} phase",
                        p.id,
                        a_type(p.ty)
                    ),
                )
                .at(span)
                .with_label("ignored")
                .phase(&p.id)
                .help(format!(
                    "remove it ('{field}' is used by: {})",
                    names(types)
                )),
            );
        }
    }
}

/// The span of a written key.
fn written_at(p: &Phase, field: &str) -> Option<Span> {
    p.written.get(field).copied()
}

/// E0205, W0312: shell scripts; W0313: an argv that hands a shell a command string.
fn script(p: &Phase, out: &mut Vec<Diagnostic>) {
    if p.ty != T::Script {
        return;
    }
    let src = match p.run.as_ref().map(|r| &r.value) {
        Some(Run::Shell(src)) => src,
        Some(Run::Argv(argv)) => return shell_argv(p, argv, out),
        None => return,
    };
    let template = crate::compile::Template::parse(&src.value);
    for r in template.refs() {
        let at = r.span.range();
        let text = &src.value[at.clone()];
        // `${HOME}`: shell syntax, not meant as a placeholder at all.
        let help = if src.value[..at.start].ends_with('$') {
            format!(
                "write ${} without braces: {{…}} in a string 'run' reads as a placeholder",
                text.trim_start_matches('{').trim_end_matches('}')
            )
        } else {
            format!(
                "use the array form, where each element is interpolated (\"run\": [\"cmd\", \"{text}\"]), or pass the data on stdin with \"input\""
            )
        };
        out.push(
            Diagnostic::new(
                Code::ScriptPlaceholder,
                format!(
                    "{}: a string 'run' is passed to sh -c as written and cannot hold placeholders",
                    p.id
                ),
            )
            .at(src.file_span(at))
            .phase(&p.id)
            .with_label("not interpolated in a shell string")
            .help(help),
        );
    }
    if let Some(at) = unquoted_pipe(&src.value)
        && !src.value.contains("pipefail")
    {
        out.push(
                Diagnostic::new(Code::ScriptPipefail, format!("{}: the pipeline's exit code is only its last command's", p.id))
                    .at(src.file_span(at..at + 1))
                    .phase(&p.id)
                    .with_label("a failure before this pipe is ignored")
                    .help("start the command with \"set -o pipefail; \" so any failing stage fails the script"),
            );
    }
}

/// E0308: a string `def` that can never be a definition. A string def is interpolated and then
/// safeParsed at run time (SPEC §3.8, §3.13), and every problem is fail-open: the phase ends
/// `done` with an empty output, so a mistake such as `"def": "review.json"` silently does
/// nothing. Only a string without any placeholder is judged here: its run-time text is exactly
/// what is written, so the run-time outcome is known now. A string with a placeholder — one
/// whole `{steps.plan.output}`, or a JSON text with values spliced in — may produce a
/// definition (safeParse even finds JSON inside prose), so it is left to the run.
fn string_def(p: &Phase, out: &mut Vec<Diagnostic>) {
    let Some(Field {
        value: Def::Template(text),
        span,
        ..
    }) = &p.def
    else {
        return;
    };
    if !matches!(p.ty, T::Flow | T::Expand) || text.template.has_placeholders() {
        return;
    }
    let Err((why, label)) = fixed_def(text.as_str(), &p.id) else {
        return;
    };
    let written = text.as_str().trim();
    let help = if let Some(fixed) = crate::flow::spaced_placeholder(written) {
        format!("a placeholder has no spaces inside its braces: write \"def\": \"{fixed}\"")
    } else if label == NOT_JSON && !written.is_empty() && !written.contains(char::is_whitespace) {
        // A file or flow name: `def` takes the definition itself.
        let stem = written.rsplit('/').next().unwrap_or(written);
        let stem = stem.strip_suffix(".json").unwrap_or(stem);
        if p.ty == T::Flow {
            format!(
                "'def' takes the definition itself, not a file: to run a saved flow write \"use\": \"{stem}\" (it is looked up in .tfc/flows/), or inline the flow: \"def\": {{\"phases\": [...]}}"
            )
        } else {
            "'def' takes the definition itself, not a file: inline it (\"def\": {\"phases\": [...]}), or produce it upstream and reference it (\"def\": \"{steps.plan.output}\")".to_owned()
        }
    } else {
        "write the definition as a JSON object (\"def\": {\"phases\": [...]}), or as a placeholder that produces it at run time (\"def\": \"{steps.plan.output}\")".to_owned()
    };
    out.push(
        Diagnostic::new(
            Code::InvalidDef,
            format!(
                "{}: the string 'def' has no placeholder and {why}, so the phase would do nothing and finish with an empty output",
                p.id
            ),
        )
        .at(*span)
        .with_label(label)
        .phase(&p.id)
        .help(help),
    );
}

const NOT_JSON: &str = "not JSON, and no placeholder";

/// What the run would make of a fixed def text (the steps of the run's own reading): `Err`
/// with the reason and a label when it would end in a `defError`.
fn fixed_def(text: &str, phase: &str) -> Result<(), (String, &'static str)> {
    let Some(value) = crate::eval::safe_parse::safe_parse(text).value else {
        return Err(("does not parse as JSON".into(), NOT_JSON));
    };
    let not_a_flow = || {
        (
            "is not a Taskflow, a phases array or {\"phases\": [...]}".to_owned(),
            "not a flow definition",
        )
    };
    if !matches!(
        value,
        crate::value::Value::Object(_) | crate::value::Value::Array(_)
    ) {
        return Err(not_a_flow());
    }
    let json = value.to_json();
    let root = crate::json::parse(&json).root.ok_or_else(not_a_flow)?;
    let lowered = crate::flow::lower(
        &root,
        &crate::flow::LowerOptions {
            default_name: Some(format!("{phase}-inline")),
        },
    );
    let invalid = |d: &Diagnostic| {
        (
            format!("fails validation ([{}] {})", d.code.as_str(), d.message),
            "an invalid flow definition",
        )
    };
    if let Some(d) = lowered.diagnostics.iter().find(|d| d.is_error()) {
        return Err(invalid(d));
    }
    let flow = lowered.flow.ok_or_else(not_a_flow)?;
    let problems =
        crate::check::dynamic_limits(&flow, 1)
            .into_iter()
            .chain(crate::check::check_flow(
                &flow,
                &crate::check::CheckOptions::default(),
            ));
    for d in problems {
        if d.is_error() {
            return Err(invalid(&d));
        }
    }
    Ok(())
}

/// The shells whose `-c` takes a command string (also by path, `/bin/sh`, or through `env`).
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];

/// W0313: `["sh", "-c", "echo {args.x}"]` interpolates the value into the text a shell parses,
/// which reopens the injection that the array form exists to close (SPEC §3.11). Only the
/// command string itself is flagged: the elements after it are the shell's positional
/// parameters (`$0`, `$1`, …), which is exactly where a value belongs. The warning is (S) like
/// every W03xx: strict mode is for flows that want no interpolation surprises, and this is one.
fn shell_argv(p: &Phase, argv: &[crate::flow::Text], out: &mut Vec<Diagnostic>) {
    let words: Vec<&str> = argv.iter().map(crate::flow::Text::as_str).collect();
    let Some(command) = shell_command(&words) else {
        return;
    };
    let text = &argv[command];
    let shell = argv[..command]
        .iter()
        .map(|a| a.as_str().rsplit('/').next().unwrap_or_default())
        .find(|a| SHELLS.contains(a))
        .unwrap_or("sh");
    let (param, example) = if shell == "fish" {
        ("$argv[1]", "[\"fish\", \"-c\", \"echo $argv[1]\", \"{…}\"]")
    } else {
        (
            "\"$1\"",
            "[\"sh\", \"-c\", \"echo \\\"$1\\\"\", \"sh\", \"{…}\"]",
        )
    };
    for r in text.template.refs() {
        let placeholder = &text.as_str()[r.span.range()];
        out.push(
            Diagnostic::new(
                Code::ShellPlaceholder,
                format!(
                    "{}: {placeholder} is interpolated into the command string of {shell} -c, which the shell parses: a value with quotes, ';' or '$(…)' runs as code",
                    p.id
                ),
            )
            .at(text.file_span(r.span))
            .phase(&p.id)
            .with_label(format!("parsed by {shell} as shell code"))
            .help(format!(
                "pass the value as a separate argv element after the command string and use {param} in it, e.g. {example}; or send it on stdin with \"input\""
            )),
        );
    }
}

/// The index of the command string in an argv that runs a shell with `-c`: the program (after
/// an optional `env` with its options and `NAME=value` settings) is a shell, one of its
/// options is `-c` or a cluster holding it (`-lc`, `-ec`), and the command string is the first
/// operand after it (`-o`/`+o`/`-O`/`+O` take a value; `--` ends the options).
fn shell_command(argv: &[&str]) -> Option<usize> {
    let base = |i: usize| argv[i].rsplit('/').next().unwrap_or_default();
    let mut i = 0;
    if argv.is_empty() {
        return None;
    }
    if base(0) == "env" {
        i = 1;
        while i < argv.len() {
            let a = argv[i];
            if a == "-u" || a == "-C" || a == "--unset" || a == "--chdir" {
                i += 2;
            } else if a.starts_with('-') || (a.contains('=') && !a.starts_with('=')) {
                i += 1;
            } else {
                break;
            }
        }
    }
    if i >= argv.len() || !SHELLS.contains(&base(i)) {
        return None;
    }
    let mut seen_c = false;
    i += 1;
    while i < argv.len() {
        let a = argv[i];
        if a == "--" {
            i += 1;
            break;
        }
        let cluster = a.len() > 1
            && (a.starts_with('-') || a.starts_with('+'))
            && !a.starts_with("--")
            && a[1..].bytes().all(|b| b.is_ascii_alphabetic());
        if a.starts_with("--") {
            // A long option (`--norc`, `--login`); bash takes `--rcfile FILE`.
            i += if a == "--rcfile" || a == "--init-file" {
                2
            } else {
                1
            };
            continue;
        }
        if !cluster {
            break;
        }
        seen_c |= a.starts_with('-') && a[1..].contains('c');
        i += if a[1..].ends_with(['o', 'O']) { 2 } else { 1 };
    }
    (seen_c && i < argv.len()).then_some(i)
}

/// The byte offset of the first `|` outside quotes that is not part of `||`.
fn unquoted_pipe(cmd: &str) -> Option<usize> {
    let b = cmd.as_bytes();
    let (mut single, mut double) = (false, false);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if !single => i += 1,
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'|' if !single && !double => {
                if b.get(i + 1) == Some(&b'|') {
                    i += 1;
                } else if i == 0 || b[i - 1] != b'|' {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// E0404, W0311: watchdogs and backoff.
fn timing(flow: &Flow, p: &Phase, out: &mut Vec<Diagnostic>) {
    let idle = p
        .idle_timeout
        .as_ref()
        .or(flow.idle_timeout.as_ref())
        .map(|f| f.value);
    if idle == Some(0.0)
        && p.ty.runs_agents()
        && p.timeout.is_none()
        && !p.invalid.contains(&"timeout")
    {
        let at = p.idle_timeout.as_ref().map_or(p.id_span, |f| f.span);
        out.push(
            Diagnostic::new(Code::UnboundedPhase, format!("{}: the idle watchdog is off (idleTimeout 0) and the phase has no 'timeout': a hung agent would run forever", p.id))
                .at(at)
                .with_label("no timeout and no idle watchdog")
                .phase(&p.id)
                .help("add \"timeout\" (ms) to this phase, or re-enable the idle watchdog"),
        );
    }
    if let Some(r) = &p.retry
        && let (Some(span), None) = (r.value.factor_span, r.value.backoff_ms)
    {
        out.push(
                Diagnostic::new(Code::FactorIgnored, format!("{}: retry.factor has no effect without retry.backoffMs (2000 ms × 2^attempt applies)", p.id))
                    .at(span)
                    .with_label("ignored without backoffMs")
                    .phase(&p.id)
                    .help("add \"backoffMs\" (the first delay, in ms) to use your own curve, or remove 'factor'"),
            );
    }
}

/// E0406, W0304, W0305.
fn caching(flow: &Flow, p: &Phase, out: &mut Vec<Diagnostic>) {
    let scope = p.cache.as_ref().and_then(|c| c.value.scope.as_ref());
    if let Some(s) = scope.filter(|s| s.value == CacheScope::CrossRun) {
        if matches!(
            p.ty,
            T::Gate | T::Approval | T::Loop | T::Tournament | T::Script | T::Race | T::Expand
        ) {
            out.push(
                Diagnostic::new(
                    Code::CrossRunNotAllowed,
                    format!(
                        "{}: {} phase cannot use the cross-run cache",
                        p.id,
                        a_type(p.ty)
                    ),
                )
                .at(s.span)
                .with_label("not allowed here")
                .phase(&p.id)
                .help("use \"scope\": \"run-only\": this type's result depends on more than its inputs"),
            );
        } else if !p.idempotent {
            out.push(
                Diagnostic::new(Code::IdempotentOverridesCache, format!("{}: 'idempotent: false' phases are never cached; the cross-run scope has no effect", p.id))
                    .at(s.span)
                    .with_label("has no effect")
                    .phase(&p.id)
                    .label(p.written["idempotent"], "never cached because of this")
                    .help("remove the cache scope, or drop 'idempotent: false' if repeating the phase is safe"),
            );
        }
    }
    if !p.idempotent
        && flow.incremental
        && scope.is_none()
        && !p.invalid.contains(&"cache")
        && !matches!(p.ty, T::Approval | T::Flow)
    {
        out.push(
            Diagnostic::new(Code::IdempotentIncremental, format!("{}: in an incremental flow this 'idempotent: false' phase is excluded from caching and re-runs every time", p.id))
                .at(p.written["idempotent"])
                .with_label("never cached")
                .phase(&p.id)
                .help("intended for side effects; set \"cache\": {\"scope\": \"off\"} to say so explicitly"),
        );
    }
}

/// E0410: `{args.X}` working directories and branch directories.
fn cwd(flow: &Flow, p: &Phase, out: &mut Vec<Diagnostic>) {
    let mut bad = |span: Span, msg: String, help: &str| {
        out.push(
            Diagnostic::new(Code::InvalidCwd, format!("{}: {msg}", p.id))
                .at(span)
                .with_label("invalid working directory")
                .phase(&p.id)
                .help(help.to_owned()),
        );
    };
    if let Some(Field {
        value: Cwd::Arg(name),
        span,
        ..
    }) = &p.cwd
    {
        match flow.args.get(name) {
            None => bad(
                *span,
                format!("'cwd' uses {{args.{name}}} but '{name}' is not declared"),
                "declare it: \"args\": {\"dir\": {\"type\": \"relative-path\"}}",
            ),
            Some(a) if a.ty != Some(crate::flow::ArgType::RelativePath) => bad(
                *span,
                format!("'cwd' uses {{args.{name}}}, which is not a relative-path arg"),
                "declare the arg with \"type\": \"relative-path\"",
            ),
            _ => {}
        }
        if p.cache
            .as_ref()
            .and_then(|c| c.value.scope.as_ref())
            .is_some_and(|s| s.value == CacheScope::CrossRun)
        {
            bad(
                *span,
                "a {args.X} 'cwd' cannot be combined with the cross-run cache".into(),
                "drop the cross-run cache scope",
            );
        }
        if p.retry.as_ref().is_some_and(|r| r.value.max > 0.0) {
            bad(
                *span,
                "a {args.X} 'cwd' cannot be combined with retry.max > 0".into(),
                "set retry.max to 0",
            );
        }
    }
    let keyword_cwd = matches!(
        p.cwd.as_ref().map(|c| &c.value),
        Some(Cwd::Temp | Cwd::Dedicated | Cwd::Worktree | Cwd::Arg(_))
    );
    for b in &p.branches {
        let Some(c) = &b.cwd else { continue };
        let dynamic = crate::compile::Template::parse(&c.value).has_placeholders()
            || matches!(c.value.as_str(), "temp" | "dedicated" | "worktree");
        if dynamic {
            bad(
                c.span,
                format!(
                    "a branch 'cwd' must be a literal path, found \"{}\"",
                    c.value
                ),
                "use a plain relative path",
            );
        } else if keyword_cwd && p.ty == T::Parallel {
            bad(
                c.span,
                "a branch 'cwd' cannot be used under a phase whose 'cwd' is a keyword or {args.X}"
                    .into(),
                "remove the branch cwd or the phase cwd",
            );
        }
    }
}

/// Calls a tree reduce makes over `n` inputs in batches of `b`.
pub fn tree_calls(n: usize, b: usize) -> usize {
    let b = b.max(2);
    let (mut left, mut calls) = (n, 0);
    while left >= 2 {
        let round = left.div_ceil(b);
        calls += round;
        left = round;
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_call_counts() {
        assert_eq!(tree_calls(0, 2), 0);
        assert_eq!(tree_calls(1, 2), 0);
        assert_eq!(tree_calls(2, 2), 1);
        assert_eq!(tree_calls(5, 2), 3 + 2 + 1);
        assert_eq!(tree_calls(300, 300), 1);
    }

    #[test]
    fn pipes_outside_quotes() {
        assert_eq!(unquoted_pipe("a | b"), Some(2));
        assert_eq!(unquoted_pipe("a || b"), None);
        assert_eq!(unquoted_pipe("echo '|' \"|\""), None);
        assert_eq!(unquoted_pipe("a \\| b"), None);
    }
    #[test]
    fn shell_command_strings_are_found() {
        let at = |items: &[&str]| shell_command(items);
        assert_eq!(at(&["sh", "-c", "echo x"]), Some(2));
        assert_eq!(at(&["/bin/bash", "-lc", "echo x"]), Some(2));
        assert_eq!(at(&["bash", "-e", "-o", "pipefail", "-c", "x"]), Some(5));
        assert_eq!(at(&["bash", "-c", "-e", "x", "name"]), Some(3));
        assert_eq!(at(&["zsh", "-ec", "--", "x"]), Some(3));
        assert_eq!(at(&["env", "sh", "-c", "x"]), Some(3));
        assert_eq!(
            at(&["/usr/bin/env", "-i", "A=1", "dash", "-c", "x"]),
            Some(5)
        );
        assert_eq!(at(&["fish", "-c", "x"]), Some(2));
        assert_eq!(at(&["bash", "--norc", "-c", "x"]), Some(3));
        // No shell, no -c, or nothing after it.
        assert_eq!(at(&["python3", "-c", "x"]), None);
        assert_eq!(at(&["sh", "script.sh", "-c"]), None);
        assert_eq!(at(&["bash", "-c"]), None);
        assert_eq!(at(&["env"]), None);
        assert_eq!(at(&[]), None);
    }
}

#[cfg(test)]
mod flow_tests {
    use crate::check::testing::{check, codes, find, spans};

    #[test]
    fn string_defs_without_placeholders_must_be_definitions() {
        let def = |ty: &str, def: &str| {
            let text = format!(r#"[{{"id": "sub", "type": "{ty}", "def": {def}}}]"#);
            check(&text)
                .into_iter()
                .find(|d| d.code.as_str() == "E0308")
                .map(|d| {
                    assert_eq!(&text[d.span.unwrap().range()], def);
                    (d.message, d.help.unwrap_or_default())
                })
        };
        let (message, help) = def("flow", r#""review.json""#).expect("a file name");
        assert!(message.contains("does not parse as JSON"), "{message}");
        assert!(help.contains(r#""use": "review""#), "{help}");
        let (_, help) = def("expand", r#""flows/fragment.json""#).expect("a file name");
        assert!(help.contains(r#""def": {"phases": [...]}"#), "{help}");
        assert!(!help.contains("\"use\""), "{help}");
        let (_, help) = def("flow", r#""{ steps.plan.output }""#).expect("a spaced placeholder");
        assert!(help.contains(r#""def": "{steps.plan.output}""#), "{help}");
        let (message, _) = def("flow", r#""42""#).expect("a number");
        assert!(message.contains("is not a Taskflow"), "{message}");
        let (message, _) = def("flow", r#""[{\"id\": \"x\"}]""#).expect("no task");
        assert!(message.contains("fails validation ([E0301]"), "{message}");
        assert!(def("flow", r#""""#).is_some());
        // Placeholders decide at run time; a fixed valid definition is fine.
        for ok in [
            r#""{steps.plan.output}""#,
            r#""Use this plan: {steps.plan.output}""#,
            r#""{\"phases\": [{\"id\": \"x\", \"task\": \"{args.topic}\"}]}""#,
            r#""[{\"id\": \"x\", \"task\": \"t\"}]""#,
        ] {
            assert_eq!(def("flow", ok), None, "{ok}");
        }
        // Off flow/expand, 'def' is only ignored (W0308).
        assert_eq!(def("agent", r#""review.json""#), None);
    }

    #[test]
    fn empty_required_strings_are_missing() {
        let text = r#"[{"id": "a", "task": " "},
            {"id": "l", "type": "loop", "dependsOn": ["a"], "task": "t", "until": ""},
            {"id": "g", "type": "gate", "dependsOn": ["l"], "task": "t", "eval": ["{steps.l.output} contains x", ""]},
            {"id": "p", "type": "parallel", "dependsOn": ["g"], "branches": [{"task": "x"}, {"task": ""}]}]"#;
        assert_eq!(
            spans(text),
            [
                ("E0301", r#"" ""#.to_owned()),
                ("E0301", r#""""#.to_owned()),
                ("E0301", r#""""#.to_owned()),
                ("E0301", r#""""#.to_owned()),
            ]
        );
        let diags = check(text);
        assert_eq!(
            diags[0].message,
            "a (agent) requires 'task', but 'task' is empty"
        );
        assert_eq!(
            diags[1].message,
            "l (loop) requires 'until', but 'until' is empty"
        );
        assert!(
            diags[2].message.contains("entry 1 is empty"),
            "{}",
            diags[2].message
        );
        assert_eq!(
            diags[3].label.as_deref(),
            Some("this branch's 'task' is empty")
        );
        // A gate judged by scorers needs no task, empty or not.
        let scored = r#"[{"id": "g", "type": "gate", "task": "", "score": {"target": "{args.x}", "scorers": [{"type": "contains", "value": "ok"}]}}]"#;
        assert!(!codes(scored).contains(&"E0301"), "{:?}", codes(scored));
    }

    #[test]
    fn neutral_values_of_foreign_fields_are_only_ignored() {
        let text = r#"[{"id": "a", "task": "t", "reflexion": false},
            {"id": "s", "type": "script", "dependsOn": ["a"], "run": "true", "retry": {"max": 0}}]"#;
        assert_eq!(
            spans(text),
            [
                ("W0308", r#""reflexion""#.to_owned()),
                ("W0308", r#""retry""#.to_owned())
            ]
        );
        assert_eq!(
            find(&check(text), "W0308").message,
            "a: \"reflexion\": false has no effect on an agent phase"
        );
        // Values that ask for something stay errors; on their own types they are fine.
        let text = r#"[{"id": "a", "task": "t", "reflexion": true},
            {"id": "s", "type": "script", "dependsOn": ["a"], "run": "true", "retry": {"max": 1}},
            {"id": "l", "type": "loop", "dependsOn": ["s"], "task": "t", "until": "{loop.iteration} >= 2", "reflexion": false, "retry": {"max": 0}}]"#;
        assert_eq!(codes(text), ["E0302", "E0302"]);
    }

    #[test]
    fn placeholders_in_a_shell_command_string_warn() {
        let text = r#"[{"id": "s", "type": "script",
            "run": ["sh", "-c", "echo {args.x} && ls {args.dir}", "sh", "{args.y}"]}]"#;
        assert_eq!(
            spans(text),
            [
                ("W0313", "{args.x}".to_owned()),
                ("W0313", "{args.dir}".to_owned())
            ]
        );
        let d = find(&check(text), "W0313");
        assert!(!d.is_error());
        assert!(
            d.help
                .unwrap()
                .contains(r#""sh", "-c", "echo \"$1\"", "sh""#)
        );
        // The safe forms: the value as its own element, or no shell at all.
        for ok in [
            r#"[{"id": "s", "type": "script", "run": ["sh", "-c", "echo \"$1\"", "sh", "{args.x}"]}]"#,
            r#"[{"id": "s", "type": "script", "run": ["echo", "{args.x}"]}]"#,
            r#"[{"id": "s", "type": "script", "run": ["python3", "-c", "print('{args.x}')"]}]"#,
        ] {
            assert!(codes(ok).is_empty(), "{ok}: {:?}", codes(ok));
        }
        // Strict mode makes it an error.
        let strict = format!(r#"{{"strictInterpolation": true, "phases": {text}}}"#);
        assert!(find(&check(&strict), "W0313").is_error());
    }

    #[test]
    fn empty_run_is_reported_at_the_run() {
        let text = r#"[{"id": "lint", "type": "script", "run": []}]"#;
        assert_eq!(spans(text), [("E0301", r#""run""#.to_owned())]);
        let d = find(&check(text), "E0301");
        assert_eq!(d.label.as_deref(), Some("'run' is empty"));
    }

    #[test]
    fn types_take_the_right_article() {
        let d = find(
            &check(r#"[{"id": "a", "task": "x", "reflexion": true}]"#),
            "E0302",
        );
        assert_eq!(d.message, "a: 'reflexion' is not allowed on an agent phase");
    }

    #[test]
    fn shell_variables_get_their_own_help() {
        let text = r#"[{"id": "s", "type": "script", "run": "ls ${HOME} {args.dir}"}]"#;
        let diags = check(text);
        let helps: Vec<_> = diags.iter().map(|d| d.help.clone().unwrap()).collect();
        assert!(
            helps[0].starts_with("write $HOME without braces"),
            "{helps:?}"
        );
        assert!(
            helps[1].contains(r#""run": ["cmd", "{args.dir}"]"#),
            "{helps:?}"
        );
    }

    #[test]
    fn ignored_fields_are_not_checked_for_references() {
        // 'until' on an agent and 'over' on an agent do nothing: only the W03xx for them.
        let text = r#"[{"id": "a", "task": "x", "until": "{steps.a.output} == x", "over": "{steps.zz.json}"}]"#;
        assert_eq!(codes(text), ["W0302", "W0308"]);
    }

    #[test]
    fn an_invalid_cache_is_not_also_a_missing_scope() {
        let text = r#"{"incremental": true, "phases": [{"id": "a", "task": "x", "idempotent": false, "cache": {"scope": "never"}}]}"#;
        assert_eq!(codes(text), ["E0405"]);
        let text =
            r#"{"incremental": true, "phases": [{"id": "a", "task": "x", "idempotent": false}]}"#;
        assert_eq!(codes(text), ["W0305"]);
    }

    #[test]
    fn unreferenceable_ids_get_a_suggestion() {
        let d = find(&check(r#"[{"id": "scan.v2", "task": "x"}]"#), "W0205");
        assert_eq!(
            d.help.as_deref(),
            Some("rename it using letters, digits and '-' only, e.g. \"scan-v2\"")
        );
    }
}
