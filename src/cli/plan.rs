//! `tfc plan FLOW [K=V]…`: how many agent calls, tokens and dollars a run can take, per phase
//! and in total, before anything runs (SPEC §18). The plan on stdout (a table, or JSON with
//! `--format json`); a flow with errors or bad arguments prints the check's diagnostics on
//! stderr and exits 2.

use std::path::Path;

use clap::{Args, ValueEnum};

use super::{Color, Exit, usage_error};
use tfc::agent::PlanEnv;
use tfc::check::{CheckOptions, check_source};
use tfc::diag::render::render_file;
use tfc::flow::{Flow, Invocation, LowerOptions, effective_args, resolve_invocation};
use tfc::plan::{Options, Plan, plan, to_json, to_text};
use tfc::project::{SavedFlows, locate_flow};
use tfc::source::Source;

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The flow file, or a saved flow's name.
    #[arg(value_name = "FLOW")]
    flow: String,
    /// Invocation arguments: NAME=VALUE (one bare VALUE binds to the first declared arg).
    #[arg(value_name = "K=V")]
    pairs: Vec<String>,
    /// Invocation arguments as a JSON object (K=V pairs override it).
    #[arg(long = "args", value_name = "JSON")]
    args_json: Option<String>,
    /// Plan every map with N items (else the `over` source's minItems/maxItems).
    #[arg(long, value_name = "N")]
    items: Option<u64>,
    /// The output tokens of one call: counts output tokens, and the cost of agents with a price.
    #[arg(long = "output-tokens", value_name = "N")]
    output_tokens: Option<u64>,
    /// `text`: a table; `json`: the plan as JSON (stable for tools).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Colour in the diagnostics of a flow with errors.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// `tfc plan`.
pub fn run(a: PlanArgs) -> Exit {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let invocation = match super::input::invocation(&a.pairs, a.args_json.as_deref()) {
        Ok(inv) => inv,
        Err(m) => return usage_error(m),
    };
    let Some((path, stem)) = locate_flow(&a.flow, &cwd) else {
        return usage_error(format!(
            "cannot read flow '{}': no such file, and no saved flow of that name",
            a.flow
        ));
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => return usage_error(format!("cannot read flow '{}': {e}", path.display())),
    };
    let source = Source::new(path.display().to_string(), text);
    let saved = SavedFlows::new(&cwd);
    let checked = check_source(
        &source.text,
        &LowerOptions {
            default_name: Some(stem),
        },
        &CheckOptions {
            args: Some(&invocation),
            loader: Some(&saved),
            cwd: Some(cwd.clone()),
            ..CheckOptions::default()
        },
    );
    let has_errors = checked.has_errors();
    let Some(flow) = checked.flow.filter(|_| !has_errors) else {
        let errors: Vec<_> = checked
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .cloned()
            .collect();
        say!("{}", render_file(&errors, &source, a.color.enabled()));
        sayln!("error: the flow has errors; no plan was made");
        return Exit::Usage;
    };
    let p = plan_of(&flow, &invocation, a.items, a.output_tokens, None, &cwd);
    match a.format {
        Format::Text => out!("{}", to_text(&p)),
        Format::Json => outln!("{}", to_json(&p).to_pretty_json()),
    }
    Exit::Ok
}

/// The plan of a checked flow for this invocation, with the project's saved flows, files and
/// prices (shared with `tfc run --plan`).
pub(super) fn plan_of(
    flow: &Flow,
    invocation: &Invocation,
    items: Option<u64>,
    output_tokens: Option<u64>,
    max_calls: Option<u64>,
    cwd: &Path,
) -> Plan {
    let (given, _) = resolve_invocation(flow, invocation);
    let args = effective_args(flow, given);
    plan(
        flow,
        &Options {
            items,
            output_tokens,
            args: Some(&args),
            max_calls,
        },
        &PlanEnv::load(cwd),
    )
}
