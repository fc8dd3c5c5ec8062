//! A budget below what a run needs (SPEC §7.2 W0103): `maxTokens`/`maxUSD` against the
//! estimate of §7.2, `maxCalls` against the plan's minimum number of calls; and the note for a
//! `maxCalls` a run may reach (SPEC §18). `tfc check` and `tfc plan` report the same words.

use crate::diag::{Code, Diagnostic};
use crate::flow::{Flow, PhaseKind};
use crate::value::format_number;

use super::model::{Calls, Count};

/// W0103 for each cap of `flow`'s budget below the minimum: `min_calls` is asked for only when
/// the budget sets `maxCalls`.
pub fn below_minimum(flow: &Flow, min_calls: impl FnOnce() -> Count) -> Vec<Diagnostic> {
    let cap = flow.budget.as_ref().and_then(|b| b.value.max_calls);
    below_minimum_with(flow, cap, min_calls)
}

/// [`below_minimum`] with the call cap `max_calls` in place of the budget's (`--max-calls`).
pub fn below_minimum_with(
    flow: &Flow,
    max_calls: Option<u64>,
    min_calls: impl FnOnce() -> Count,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Some(cap) = max_calls
        && let Some(min) = min_calls()
        && cap < min
    {
        out.push(
            Diagnostic::new(
                Code::BudgetBelowMinimum,
                format!(
                    "Budget cap ({cap} calls) is below the minimum of {min} agent call(s) any run of this flow makes: the run will stop early"
                ),
            )
            .at(flow.budget.as_ref().map_or(flow.span, |b| b.span))
            .with_label(format!("maxCalls {cap}"))
            .help(format!("raise maxCalls to at least {min} (`tfc plan` counts the calls of each phase), or expect the run to pause at its budget")),
        );
    }
    let Some(b) = &flow.budget else {
        return out;
    };
    if b.value.max_usd.is_some() || b.value.max_tokens.is_some() {
        let estimate: f64 = flow
            .phases
            .iter()
            .map(|p| match &p.kind {
                PhaseKind::Loop(k) => k.max_iterations.min(10.0),
                PhaseKind::Tournament(k) => (k.variants + 1.0).min(10.0),
                _ => 1.0,
            })
            .sum();
        let n = flow.phases.len();
        if let Some(m) = b.value.max_tokens.filter(|m| *m > 0.0 && estimate > *m) {
            out.push(
                Diagnostic::new(
                    Code::BudgetBelowMinimum,
                    format!("Budget cap ({} tokens) is below the estimated minimum of ~{} tokens for {n} phase(s): the run will stop early", format_number(m), format_number(estimate)),
                )
                .at(b.span)
                .with_label(format!("maxTokens {}", format_number(m)))
                .help("raise maxTokens, or expect the run to pause at its budget"),
            );
        }
        if let Some(m) = b
            .value
            .max_usd
            .filter(|m| *m > 0.0 && estimate * 0.001 > *m)
        {
            out.push(
                Diagnostic::new(
                    Code::BudgetBelowMinimum,
                    format!("Budget cap (${}) is below the estimated minimum of ~${:.3} for {n} phase(s): the run will stop early", format_number(m), estimate * 0.001),
                )
                .at(b.span)
                .with_label(format!("maxUSD {}", format_number(m)))
                .help("raise maxUSD, or expect the run to pause at its budget"),
            );
        }
    }
    out
}

/// The note for a `maxCalls` cap between the fewest calls and the most (or the most with
/// every retry): the run may meet it.
pub fn reachable(cap: u64, calls: Calls) -> Option<String> {
    let min = calls.min?;
    if cap < min {
        return None;
    }
    let reaches = |n: Count| n.is_none_or(|n| cap < n);
    (reaches(calls.max) || reaches(calls.worst)).then(|| {
        format!("the run may stop at its budget after {cap} calls (maxCalls {cap}; the plan counts {min} to {} calls, {} with every retry)",
            show(calls.max), show(calls.worst))
    })
}

/// A count as the text output shows it: `?` when unknown.
pub fn show(n: Count) -> String {
    n.map_or_else(|| "?".to_owned(), |n| n.to_string())
}
