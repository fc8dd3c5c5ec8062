//! The three places a flow evaluates a condition (SPEC §3.5, §6): `when`, `until` and gate
//! `eval` entries, each with its own answer to a condition that does not parse.

use super::machine::{Evaluated, add_read_phases, run};
use crate::compile::Template;
use crate::compile::condition::compile_source;
use crate::eval::scope::{Scope, resolve};
use crate::syntax::condition::{ConditionError, refs_before_error};
use crate::value::js_trim;

/// A condition evaluated at a use site.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// `when`: run the phase; `until`: stop the loop; gate entry: the check passed.
    pub value: bool,
    /// The parse error, when the text is not a condition (the value is then the use site's
    /// fallback).
    pub error: Option<ConditionError>,
    /// Resolved placeholder paths, distinct, in first-resolution order.
    pub reads: Vec<String>,
    /// Phase ids read through `steps.ID…` and `previous.output`, distinct, first-read order.
    pub read_phases: Vec<String>,
    /// The operands' placeholder paths that did not resolve (undefined), distinct, in order
    /// of first appearance; empty when the text does not parse.
    pub unresolved: Vec<String>,
}

/// A `when` guard: a parse error is true (fail-open) and reported; empty is true, no error.
pub fn eval_when<S: Scope + ?Sized>(src: &str, scope: &S) -> Outcome {
    eval_or(src, scope, true)
}

/// A loop's `until`: a parse error is true, which stops the loop (fail-safe), and reported.
pub fn eval_until<S: Scope + ?Sized>(src: &str, scope: &S) -> Outcome {
    eval_or(src, scope, true)
}

/// One gate `eval` entry (SPEC §3.5): did it pass? An empty entry passes; `LHS contains RHS`
/// is a substring test; anything else is a condition, whose parse error fails the check.
pub fn eval_gate_entry<S: Scope + ?Sized>(src: &str, scope: &S) -> Outcome {
    const CONTAINS: &str = " contains ";
    match src.find(CONTAINS) {
        Some(at) if at > 0 => {
            let (lhs, rhs) = (js_trim(&src[..at]), js_trim(&src[at + CONTAINS.len()..]));
            let template = Template::parse(lhs);
            let rendered = template.render(scope);
            Outcome {
                value: rendered.missing.is_empty() && rendered.text.contains(rhs),
                error: None,
                reads: template.path_texts(&rendered.reads),
                read_phases: template.read_phases(scope, &rendered.reads),
                unresolved: template.path_texts(&rendered.missing),
            }
        }
        _ => eval_or(src, scope, false),
    }
}

/// Parse and evaluate `src`; a parse error yields `fallback` with the error.
fn eval_or<S: Scope + ?Sized>(src: &str, scope: &S, fallback: bool) -> Outcome {
    match compile_source(src) {
        Ok(program) => {
            let Evaluated {
                value,
                reads,
                read_phases,
            } = run(&program, scope);
            let mut unresolved: Vec<String> = Vec::new();
            for path in &program.refs {
                let text = &*path.text;
                if !reads.iter().any(|r| r == text) && !unresolved.iter().any(|u| u == text) {
                    unresolved.push(text.to_owned());
                }
            }
            Outcome {
                value,
                error: None,
                reads,
                read_phases,
                unresolved,
            }
        }
        Err(error) => {
            // The placeholders read before the error count as reads (SPEC §4.4).
            let mut out = Outcome {
                value: fallback,
                ..Outcome::default()
            };
            for path in refs_before_error(src, &error) {
                if !out.reads.iter().any(|r| **r == *path.text) && resolve(scope, &path).is_some() {
                    out.reads.push(String::from(&*path.text));
                    add_read_phases(scope, &path, &mut out.read_phases);
                }
            }
            out.error = Some(error);
            out
        }
    }
}
