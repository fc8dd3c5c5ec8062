//! Random flow-shaped documents through the whole check: no panic, every span inside the input
//! on char boundaries, and every placeholder diagnostic exactly on its placeholder (escapes in
//! the JSON string included).

use proptest::prelude::*;

use super::{CheckOptions, check_document, check_source};
use crate::diag::Code;
use crate::diag::render::render;
use crate::flow::{Invocation, LowerOptions};
use crate::source::Source;

/// Phase ids: valid, near-misses, reserved characters, Unicode, empty.
const IDS: &[&str] = &[
    "a",
    "b",
    "scan",
    "scna",
    "audit-each",
    "audit_each",
    "x.y",
    "é",
    "",
    "final",
];
const TYPES: &[&str] = &[
    "agent",
    "map",
    "gate",
    "reduce",
    "loop",
    "script",
    "parallel",
    "race",
    "tournament",
    "flow",
    "expand",
    "approval",
    "gaet",
];

/// Mostly valid ids, so the graph and reference rules run (duplicates and missing ids turn
/// them off).
fn some_id() -> impl Strategy<Value = &'static str> + Clone {
    prop_oneof![
        8 => prop::sample::select(&IDS[..5]),
        1 => prop::sample::select(IDS),
    ]
}

/// A piece of a templated string, as it is written inside a JSON string literal.
fn piece() -> impl Strategy<Value = String> {
    let id = some_id();
    prop_oneof![
        Just("text ".to_owned()),
        Just("é日🚀".to_owned()),
        Just("\\n\\t\\\"".to_owned()),
        Just("\\u00e9\\ud83d\\ude80".to_owned()),
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("{ args.x }".to_owned()),
        Just("{previous.output}".to_owned()),
        Just("{item.path}".to_owned()),
        Just("{file}".to_owned()),
        Just("{loop.iteration}".to_owned()),
        Just("{reflexion}".to_owned()),
        Just("{args.dir}".to_owned()),
        Just("{args.dri}".to_owned()),
        Just("${HOME}".to_owned()),
        Just(" | ".to_owned()),
        Just(" == ".to_owned()),
        Just(" != ".to_owned()),
        Just(" && ".to_owned()),
        Just(" = ".to_owned()),
        Just(" contains ".to_owned()),
        Just("(".to_owned()),
        Just("'".to_owned()),
        id.clone().prop_map(|id| format!("{{steps.{id}.output}}")),
        id.clone()
            .prop_map(|id| format!("{{steps.{id}.json.severity}}")),
        id.clone().prop_map(|id| format!("{{steps.{id}.output.x}}")),
        // A placeholder whose letters are written as escapes.
        id.prop_map(|id| {
            let escaped: String = id.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
            format!("{{steps.{escaped}.output}}")
        }),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..6).prop_map(|p| format!("\"{}\"", p.concat()))
}

fn id_list() -> impl Strategy<Value = String> {
    prop::collection::vec(some_id(), 0..3).prop_map(|ids| {
        let quoted: Vec<String> = ids.iter().map(|i| format!("\"{i}\"")).collect();
        format!("[{}]", quoted.join(", "))
    })
}

/// One `"key": value` member of a phase.
fn member() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(TYPES).prop_map(|t| format!("\"type\": \"{t}\"")),
        text().prop_map(|t| format!("\"task\": {t}")),
        text().prop_map(|t| format!("\"when\": {t}")),
        text().prop_map(|t| format!("\"until\": {t}")),
        text().prop_map(|t| format!("\"over\": {t}")),
        text().prop_map(|t| format!("\"run\": {t}")),
        text().prop_map(|t| format!("\"run\": [\"echo\", {t}]")),
        text().prop_map(|t| format!("\"eval\": [{t}]")),
        text().prop_map(|t| format!("\"cwd\": {t}")),
        text().prop_map(|t| format!("\"context\": [{t}]")),
        text().prop_map(|t| format!("\"branches\": [{{\"task\": {t}}}, {{\"task\": \"x\", \"cwd\": {t}}}]")),
        text().prop_map(|t| format!("\"with\": {{\"a\": {t}}}")),
        text().prop_map(|t| format!("\"judge\": {t}")),
        text().prop_map(|t| format!("\"score\": {{\"target\": {t}, \"scorers\": [{{\"type\": \"contains\", \"value\": \"x\"}}]}}")),
        id_list().prop_map(|l| format!("\"dependsOn\": {l}")),
        id_list().prop_map(|l| format!("\"from\": {l}")),
        Just("\"as\": \"file\"".to_owned()),
        Just("\"join\": \"any\"".to_owned()),
        Just("\"final\": true".to_owned()),
        Just("\"output\": \"json\"".to_owned()),
        Just("\"reflexion\": true".to_owned()),
        Just("\"idempotent\": false".to_owned()),
        Just("\"retry\": {\"max\": 2, \"factor\": 3}".to_owned()),
        Just("\"cache\": {\"scope\": \"cross-run\"}".to_owned()),
        Just("\"timeout\": 10".to_owned()),
        Just("\"idleTimeout\": 0".to_owned()),
        Just("\"reduceStrategy\": \"tree\"".to_owned()),
        Just("\"expect\": {\"properties\": {\"severity\": {\"type\": \"string\"}}}".to_owned()),
        Just("\"def\": [{\"id\": \"in\", \"task\": \"{steps.a.output}\"}]".to_owned()),
        Just("\"use\": \"nowhere\"".to_owned()),
        Just("\"dependOn\": [\"a\"]".to_owned()),
        Just("\"agent\": \"Bad Agent\"".to_owned()),
        Just("/* c */ \"optional\": true".to_owned()),
    ]
}

fn phase() -> impl Strategy<Value = String> {
    (
        prop::option::weighted(0.95, some_id()),
        prop::collection::vec(member(), 0..5),
    )
        .prop_map(|(id, members)| {
            let mut all: Vec<String> = id.map(|i| format!("\"id\": \"{i}\"")).into_iter().collect();
            all.extend(members);
            format!("{{{}}}", all.join(", "))
        })
}

fn document() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(phase(), 0..6),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(phases, wrapped, args)| {
            let list = format!("[\n  {}\n]", phases.join(",\n  "));
            if !wrapped {
                return list;
            }
            let args = if args {
                r#""args": {"dir": {"type": "relative-path", "default": "src"}, "n": {"type": "number", "required": true}}, "strictInterpolation": true,"#
            } else {
                ""
            };
            format!("// flow\n{{{args} \"phases\": {list}}}")
        })
}

/// The codes whose primary span is a placeholder inside a string.
const ON_PLACEHOLDER: &[Code] = &[
    Code::UnreachableReference,
    Code::UnknownReference,
    Code::SelfReference,
    Code::OutputSubpath,
    Code::ScriptPlaceholder,
    Code::LocalOutOfScope,
    Code::ArgNotProvided,
    Code::ContractMissingProperty,
];

fn check_invariants(text: &str) -> Result<(), TestCaseError> {
    let inv = Invocation::default();
    let lower = LowerOptions::default();
    let runs = [
        CheckOptions::default(),
        CheckOptions {
            strict: Some(false),
            args: Some(&inv),
            ..CheckOptions::default()
        },
    ];
    let source = Source::new("p.json", text);
    // Lowering each phase as soon as it is read (its part of the tree then dropped, its hot
    // strings moved into the IR) is lowering the whole tree: the same IR, the same findings.
    let streamed = check_source(text, &lower, &runs[0]);
    let whole = check_document(text, &lower, &runs[0]);
    prop_assert_eq!(
        format!("{:?}", streamed.diagnostics),
        format!("{:?}", whole.diagnostics)
    );
    prop_assert_eq!(format!("{:?}", streamed.flow), format!("{:?}", whole.flow));
    for opts in &runs {
        for d in check_source(text, &lower, opts).diagnostics {
            let spans = d.span.into_iter().chain(d.labels.iter().map(|l| l.span));
            for span in spans {
                prop_assert!(span.start <= span.end, "{d:?}");
                prop_assert!(span.end as usize <= text.len(), "{d:?}");
                prop_assert!(text.is_char_boundary(span.start as usize), "{d:?}");
                prop_assert!(text.is_char_boundary(span.end as usize), "{d:?}");
            }
            if ON_PLACEHOLDER.contains(&d.code)
                && let Some(span) = d.span
            {
                // The raw text decodes (as JSON string content) to exactly one placeholder.
                let raw = &text[span.range()];
                let decoded: String = serde_json::from_str(&format!("\"{raw}\""))
                    .map_err(|e| TestCaseError::fail(format!("{raw:?}: {e} in {d:?}")))?;
                prop_assert!(
                    decoded.starts_with('{') && decoded.ends_with('}'),
                    "{raw:?} for {d:?}"
                );
                // One placeholder: a template's `{path}`, or a condition's REF from `{` to
                // the next `}` (whose content may itself hold a `{`).
                prop_assert_eq!(decoded.matches('}').count(), 1, "{:?}", raw);
            }
            let _ = render(&d, &source, false);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_flows_keep_every_span_exact(text in document()) {
        check_invariants(&text)?;
    }

    #[test]
    fn cut_flows_do_not_panic(text in document(), cut in 0usize..400) {
        // Truncated documents exercise the reader's recovery and partial trees.
        let mut at = cut.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        check_invariants(&text[..at])?;
    }
}
