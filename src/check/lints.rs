//! Graph lints (SPEC §7.2 W0103–W0105, W0309): budget below the minimum, parallel fan-outs
//! wider than the flow's concurrency, opposing guards. Never promoted by strict mode except
//! W0309, which is a field warning.

use std::collections::BTreeSet;

use crate::diag::{Code, Diagnostic};
use crate::flow::{Flow, PhaseType};
use crate::value::format_number;

pub fn budget(flow: &Flow, out: &mut Vec<Diagnostic>) {
    let Some(b) = &flow.budget else { return };
    if b.value.max_usd.is_none() && b.value.max_tokens.is_none() {
        out.push(
            Diagnostic::new(Code::EmptyBudget, "'budget' sets no cap")
                .at(b.span)
                .help("set \"maxUSD\" and/or \"maxTokens\", or remove 'budget' (it also forces one phase at a time)"),
        );
        return;
    }
    let estimate: f64 = flow
        .phases
        .iter()
        .map(|p| match p.ty {
            PhaseType::Loop => p.max_iterations.min(10.0),
            PhaseType::Tournament => (p.variants + 1.0).min(10.0),
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
            .help("raise maxUSD, or expect the run to pause at its budget"),
        );
    }
}

pub fn branch_width(flow: &Flow, out: &mut Vec<Diagnostic>) {
    let width = flow.effective_concurrency();
    for p in &flow.phases {
        if p.ty == PhaseType::Parallel && p.concurrency.is_none() && p.branches.len() > width {
            out.push(
                Diagnostic::new(
                    Code::BranchesExceedConcurrency,
                    format!(
                        "{}: {} branches but the flow runs at most {width} at once",
                        p.id,
                        p.branches.len()
                    ),
                )
                .at(p.written.get("branches").copied().unwrap_or(p.id_span))
                .phase(&p.id)
                .help("add a per-phase \"concurrency\" to say how many branches may run together"),
            );
        }
    }
}

/// Two guarded phases on the same dependencies testing the same placeholders, one with `==`
/// and one with `!=`: exactly one of them runs (if/else routing), so the other is always
/// skipped; worth a look when that was not the intent.
pub fn opposing_guards(flow: &Flow, out: &mut Vec<Diagnostic>) {
    type Key = (Vec<String>, BTreeSet<String>);
    // Per key, the first phase left unmatched with `!=` and with `==`: one lookup per phase.
    let mut seen: std::collections::HashMap<Key, [Option<usize>; 2], foldhash::fast::RandomState> =
        Default::default();
    for (i, p) in flow.phases.iter().enumerate() {
        let Some(when) = &p.when else { continue };
        let Ok(cond) = &when.parsed else { continue };
        let text = when.as_str();
        let eq = text.contains("==") && !text.contains("!=");
        let ne = text.contains("!=") && !text.contains("==");
        if !(eq || ne) {
            continue;
        }
        let mut deps: Vec<String> = p.depends_on.iter().map(|d| d.value.clone()).collect();
        deps.sort();
        let refs: BTreeSet<String> = cond.refs().map(|(_, r)| r.text.to_string()).collect();
        let key = (deps, refs);
        let slots = seen.entry(key).or_default();
        if let Some(j) = slots[usize::from(!eq)] {
            let other = &flow.phases[j];
            out.push(
                Diagnostic::new(
                    Code::OpposingGuards,
                    format!("'{}' and '{}' have opposing guards: exactly one of them runs and the other is always skipped", other.id, p.id),
                )
                .at(when.src.span)
                .phase(&p.id)
                .label(other.when.as_ref().map_or(other.id_span, |w| w.src.span), "the opposing guard")
                .help("if this is if/else routing, join the branches with a phase that has \"join\": \"any\""),
            );
        } else {
            slots[usize::from(eq)].get_or_insert(i);
        }
    }
}
