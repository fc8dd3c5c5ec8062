//! `tfc plan` (SPEC §18): how many agent calls a run of a checked flow can make, per phase and
//! in total, before anything is called — the fewest (`min`), the most when every call
//! succeeds at once (`max`) and the most with every retry (`worst`); the static prompt tokens
//! of those calls, and output tokens and dollars when the invocation says how long answers are
//! and the agents have a price. What cannot be known is `None` (`null` / `?`), never a guess,
//! and the assumption that would settle it is listed.
//!
//! Files: `model.rs` (the plan's types), `count.rs` (the calls of each kind of phase, and
//! sub-flows), `items.rs` (how many items a map has), `prompt.rs` (static prompt sizes),
//! `caps.rs` (W0103 and the budget notes, shared with `tfc check`), `output.rs` (the table and
//! the JSON).
//!
//! ```
//! use tfc::flow::{LowerOptions, lower_source};
//! use tfc::plan::{NoEnv, Options, plan};
//!
//! let flow = lower_source(r#"{"phases": [
//!   {"id": "draft", "type": "loop", "task": "Improve it", "until": "{loop.iteration} >= 3",
//!    "maxIterations": 5},
//!   {"id": "pick", "type": "tournament", "dependsOn": ["draft"], "task": "Title?", "variants": 3}
//! ]}"#, &LowerOptions::default()).flow.unwrap();
//! let p = plan(&flow, &Options::default(), &NoEnv);
//! assert_eq!((p.total.calls.min, p.total.calls.max), (Some(1 + 4), Some(5 + 4)));
//! assert_eq!(p.total.calls.worst, Some(5 * 4 + 4 * 4));
//! ```

mod caps;
mod count;
mod items;
mod model;
mod output;
mod prompt;
#[cfg(test)]
mod tests;

pub use caps::{below_minimum, below_minimum_with, show as show_count};
pub use count::{Env, NoEnv, Options, attempts};
pub use model::{Calls, Caps, Count, Group, MinMax, PhasePlan, Plan, Price, Total};
pub use output::{to_json, to_text};

use crate::flow::Flow;

/// The plan of `flow` (checked, without errors) for this invocation.
pub fn plan(flow: &Flow, opts: &Options<'_>, env: &dyn Env) -> Plan {
    let mut planner = count::Planner::new(env, opts.items);
    let phases = planner.flow(flow, "", opts.args);
    let calls = count::total_calls(&phases);
    let (tmin, tmax) = count::input_tokens(&phases);
    let mut assumptions: Vec<String> = planner.assumptions.into_iter().collect();
    let (output_tokens, cost_usd) = match opts.output_tokens {
        None => {
            assumptions.push("output tokens and cost: pass --output-tokens N (the tokens of one answer) to count them".to_owned());
            (None, None)
        }
        Some(n) => {
            let out = MinMax {
                min: calls.min.map(|c| c.saturating_mul(n)),
                max: calls.max.map(|c| c.saturating_mul(n)),
            };
            (Some(out), cost(&phases, n, env, &mut assumptions))
        }
    };
    let mut caps = flow.budget.as_ref().map_or_else(Caps::default, |b| Caps {
        max_calls: b.value.max_calls,
        max_tokens: b.value.max_tokens,
        max_usd: b.value.max_usd,
    });
    caps.max_calls = opts.max_calls.or(caps.max_calls);
    // The flow's `lint.allow` silences W0103 here as in `tfc check`.
    let mut warnings: Vec<String> = below_minimum_with(flow, caps.max_calls, || calls.min)
        .iter()
        .filter(|d| !flow.lint_allow.contains(&d.code))
        .map(|d| format!("[{}] {}", d.code.as_str(), d.message))
        .collect();
    if let Some(note) = caps.max_calls.and_then(|c| caps::reachable(c, calls)) {
        warnings.push(note);
    }
    Plan {
        flow: flow.name.clone(),
        phases,
        total: Total {
            calls,
            input_tokens: MinMax {
                min: tmin,
                max: tmax,
            },
            output_tokens,
            cost_usd,
        },
        caps,
        assumptions,
        warnings,
    }
}

/// The fewest calls any run of `flow` makes when every call succeeds (what `maxCalls` is
/// measured against); `None` when some phase's calls are unknown.
pub fn min_calls(flow: &Flow, env: &dyn Env) -> Count {
    let mut planner = count::Planner::new(env, None);
    count::total_calls(&planner.flow(flow, "", None)).min
}

/// Input and output priced per agent: `None` (and why, in `assumptions`) when an agent that
/// makes calls has no price.
fn cost(
    phases: &[PhasePlan],
    output_tokens: u64,
    env: &dyn Env,
    assumptions: &mut Vec<String>,
) -> Option<MinMax<f64>> {
    let mut prices: Vec<(&str, Option<Price>)> = Vec::new();
    let mut min = Some(0.0);
    let mut max = Some(0.0);
    let mut priced = true;
    for g in phases.iter().flat_map(|p| &p.groups) {
        if g.calls.max == Some(0) {
            continue;
        }
        let price = match prices.iter().find(|(a, _)| *a == g.agent) {
            Some((_, p)) => *p,
            None => {
                let p = match env.price(&g.agent) {
                    Ok(p) => Some(p),
                    Err(why) => {
                        assumptions.push(format!("cost: {why}"));
                        None
                    }
                };
                prices.push((&g.agent, p));
                p
            }
        };
        let Some(price) = price else {
            priced = false;
            continue;
        };
        let per_call = (g.tokens() as f64 * price.input_per_mtok
            + output_tokens as f64 * price.output_per_mtok)
            / 1_000_000.0;
        let add = |sum: Option<f64>, n: Count| Some(sum? + n? as f64 * per_call);
        min = add(min, g.calls.min);
        max = add(max, g.calls.max);
    }
    priced.then_some(MinMax { min, max })
}
