//! Per-phase rules (SPEC §7.2 E03xx, E04xx, W03xx, W0205) common to every kind: fields written
//! on a type that does not use them (from the written keys alone), retries, timeouts, caches,
//! contracts, working directories, string defs. Each kind's own rules live beside its type in
//! `flow/kinds/`.

use crate::diag::{Code, Diagnostic};
use crate::flow::kinds;
use crate::flow::{CacheScope, Cwd, Def, Field, Flow, OutputMode, Phase, PhaseKind, PhaseType};
use crate::source::Span;

use PhaseType as T;

/// Does a type use a field?
type UsedBy = fn(PhaseType) -> bool;

/// Common fields that only some types use (W0308 elsewhere): the types that use each. The
/// type-specific fields' users come from the kinds' own field tables (`flow/kinds/`).
const COMMON_FOR_SOME: &[(&str, UsedBy)] = &[
    ("concurrency", |t| {
        matches!(t, T::Map | T::Parallel | T::Tournament)
    }),
    ("task", PhaseType::reads_task),
];

/// Type-specific fields with a dedicated diagnostic off their types (E0302, W0302, W0306),
/// not the generic W0308.
const DEDICATED: &[&str] = &[
    "score",
    "reflexion",
    "run",
    "input",
    "until",
    "maxIterations",
    "convergence",
    "batchSize",
];

fn names(types: &[PhaseType]) -> String {
    types
        .iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every per-phase rule: the kind's own (`flow/kinds/`) and the common ones below.
pub fn phase_rules(flow: &Flow, p: &Phase, check_def: DefChecker<'_>, out: &mut Vec<Diagnostic>) {
    if p.invalid.contains(&"type") {
        return;
    }
    kinds::dispatch::check_kind(p, out);
    if type_rules_apply(p) {
        not_allowed(p, out);
        ignored(p, out);
    }
    timing(flow, p, out);
    caching(flow, p, out);
    cwd(flow, p, out);
    string_def(p, check_def, out);
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
    if !p.idempotent && matches!(p.ty(), T::Approval | T::Flow) {
        out.push(
            Diagnostic::new(
                Code::IdempotentNoOp,
                format!(
                    "{}: 'idempotent: false' has no effect on {} phase",
                    p.id,
                    p.ty().with_article()
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

/// Could [`not_allowed`] or [`ignored`] have anything to say: was some key written that is
/// not a common field every type uses alike? (Most phases write only those: this skips ~40
/// key searches per phase.)
fn type_rules_apply(p: &Phase) -> bool {
    p.written.iter().any(|(k, _)| match k {
        "id" | "type" | "agent" | "dependsOn" | "from" | "join" | "when" | "output" | "model"
        | "thinking" | "tools" | "cwd" | "context" | "contextLimit" | "final" | "optional"
        | "shareContext" | "cache" | "idempotent" => false,
        "task" => !p.reads_field("task"),
        _ => true,
    })
}

/// E0302: fields that are errors off their types.
fn not_allowed(p: &Phase, out: &mut Vec<Diagnostic>) {
    // The help text is built only when the field is denied (this runs for every phase).
    let mut deny = |field: &str, allowed: &[PhaseType], why: &str, help: &dyn Fn() -> String| {
        if let Some(&span) = p.written.get(field)
            && !allowed.contains(&p.ty())
        {
            out.push(
                Diagnostic::new(
                    Code::FieldNotAllowed,
                    format!(
                        "{}: '{field}' is not allowed on {} phase{why}",
                        p.id,
                        p.ty().with_article()
                    ),
                )
                .at(span)
                .with_label(format!("not allowed on {}", p.ty().with_article()))
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
    if reflexion_on(p) || p.ty() == T::Loop {
        deny("reflexion", &[T::Loop], "", &|| {
            only("reflexion", &[T::Loop])
        });
    }
    deny("run", &[T::Script], "", &|| only("run", &[T::Script]));
    deny("input", &[T::Script], "", &|| only("input", &[T::Script]));
    const EXPECT: &[PhaseType] = &[T::Agent, T::Gate, T::Reduce, T::Loop, T::Map];
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
        // An approval's `timeout` is its deadline (SPEC §8.8).
        T::Approval,
    ];
    deny(
        "timeout",
        TIMED,
        " (it has no agent call to time out)",
        &|| "remove it; set 'timeout' on the phases of the sub-flow instead".to_owned(),
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
            !reflexion_on(p) && p.ty() != T::Loop,
            "loop",
        ),
        (
            "retry",
            "\"retry\": {\"max\": 0}",
            neutral_retry(p) && p.ty() == T::Script,
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
                        p.ty().with_article()
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
        if let (Some(span), false) = (written_at(p, field), p.ty() == T::Loop) {
            out.push(
                Diagnostic::new(
                    Code::LoopOnlyField,
                    format!(
                        "{}: '{field}' only applies to loop phases; it is ignored on {} phase",
                        p.id,
                        p.ty().with_article()
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
        matches!(&p.kind, PhaseKind::Reduce(r) if r.is_tree()),
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
            .help(if p.ty() == T::Reduce {
                "remove it, or set \"reduceStrategy\": \"tree\""
            } else {
                "remove it: only a reduce with \"reduceStrategy\": \"tree\" batches its inputs"
            }),
        );
    }
    if let (Some(span), false) = (written_at(p, "idleTimeout"), p.ty().runs_agents()) {
        out.push(
            Diagnostic::new(
                Code::IdleTimeoutIgnored,
                format!(
                    "{}: 'idleTimeout' has no effect on {} phase (it runs no agent)",
                    p.id,
                    p.ty().with_article()
                ),
            )
            .at(span)
            .with_label("ignored")
            .phase(&p.id)
            .help("remove it; the idle watchdog applies to phases that run agents"),
        );
    }
    let ignored_field = |field: &str, users: &[PhaseType], span: Span| {
        Diagnostic::new(
            Code::FieldIgnored,
            format!(
                "{}: '{field}' has no effect on {} phase",
                p.id,
                p.ty().with_article()
            ),
        )
        .at(span)
        .with_label("ignored")
        .phase(&p.id)
        .help(format!(
            "remove it ('{field}' is used by: {})",
            names(users)
        ))
    };
    for (field, uses) in COMMON_FOR_SOME {
        if let (Some(span), false) = (written_at(p, field), uses(p.ty())) {
            let users: Vec<PhaseType> = PhaseType::ALL
                .iter()
                .copied()
                .filter(|t| uses(*t))
                .collect();
            out.push(ignored_field(field, &users, span));
        }
    }
    for (field, span) in p.written.iter() {
        if DEDICATED.contains(&field) || kinds::table::is_field_of(p.ty(), field) {
            continue;
        }
        let users: Vec<PhaseType> = PhaseType::ALL
            .iter()
            .copied()
            .filter(|t| kinds::table::is_field_of(*t, field))
            .collect();
        if !users.is_empty() {
            out.push(ignored_field(field, &users, span));
        }
    }
}

/// Was `reflexion` asked for: `true` on a loop, or written as `true` on another type?
fn reflexion_on(p: &Phase) -> bool {
    match &p.kind {
        PhaseKind::Loop(l) => l.reflexion,
        _ => p.written.is_true("reflexion"),
    }
}

/// The span of a written key.
fn written_at(p: &Phase, field: &str) -> Option<Span> {
    p.written.get(field).copied()
}

/// The whole check of a sub-flow definition, passed in by the checker: a def is checked by the
/// checker itself, and handing it in keeps this file from importing its parent.
pub type DefChecker<'a> = &'a dyn Fn(&Flow) -> Vec<Diagnostic>;

/// E0308: a string `def` that can never be a definition. A string def is interpolated and then
/// safeParsed at run time (SPEC §3.8, §3.13), and every problem is fail-open: the phase ends
/// `done` with an empty output, so a mistake such as `"def": "review.json"` silently does
/// nothing. Only a string without any placeholder is judged here: its run-time text is exactly
/// what is written, so the run-time outcome is known now. A string with a placeholder — one
/// whole `{steps.plan.output}`, or a JSON text with values spliced in — may produce a
/// definition (safeParse even finds JSON inside prose), so it is left to the run.
fn string_def(p: &Phase, check_def: DefChecker<'_>, out: &mut Vec<Diagnostic>) {
    let Some(Field {
        value: Def::Template(text),
        span,
        ..
    }) = p.def()
    else {
        return;
    };
    if !matches!(p.ty(), T::Flow | T::Expand) || text.template.has_placeholders() {
        return;
    }
    let Err((why, label)) = fixed_def(text.as_str(), &p.id, check_def) else {
        return;
    };
    let written = text.as_str().trim();
    let help = if let Some(fixed) = crate::flow::spaced_placeholder(written) {
        format!("a placeholder has no spaces inside its braces: write \"def\": \"{fixed}\"")
    } else if label == NOT_JSON && !written.is_empty() && !written.contains(char::is_whitespace) {
        // A file or flow name: `def` takes the definition itself.
        let stem = written.rsplit('/').next().unwrap_or(written);
        let stem = stem.strip_suffix(".json").unwrap_or(stem);
        if p.ty() == T::Flow {
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
fn fixed_def(
    text: &str,
    phase: &str,
    check_def: DefChecker<'_>,
) -> Result<(), (String, &'static str)> {
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
    for d in check_def(&flow) {
        if d.is_error() {
            return Err(invalid(&d));
        }
    }
    Ok(())
}

/// E0404, W0311: watchdogs and backoff.
fn timing(flow: &Flow, p: &Phase, out: &mut Vec<Diagnostic>) {
    let idle = p
        .idle_timeout
        .as_deref()
        .or(flow.idle_timeout.as_ref())
        .map(|f| f.value);
    if idle == Some(0.0)
        && p.ty().runs_agents()
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
            p.ty(),
            T::Gate | T::Approval | T::Loop | T::Tournament | T::Script | T::Race | T::Expand
        ) {
            out.push(
                Diagnostic::new(
                    Code::CrossRunNotAllowed,
                    format!(
                        "{}: {} phase cannot use the cross-run cache",
                        p.id,
                        p.ty().with_article()
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
        && !matches!(p.ty(), T::Approval | T::Flow)
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

/// E0410: `{args.X}` working directories (branch directories: `flow/kinds/`).
fn cwd(flow: &Flow, p: &Phase, out: &mut Vec<Diagnostic>) {
    let mut bad = |span: Span, msg: String, help: &str| {
        out.push(crate::flow::kinds::common::invalid_cwd(p, span, msg, help));
    };
    if let Some(Field {
        value: Cwd::Arg(name),
        span,
        ..
    }) = p.cwd.as_deref()
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
}

#[cfg(test)]
mod tests;
