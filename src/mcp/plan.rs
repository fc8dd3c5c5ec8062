//! `tfc_plan` (SPEC §18): the plan of a flow as `tfc plan --format json` prints it, before
//! anything runs; a flow with errors is a tool error carrying the check's report.

use std::path::Path;

use serde_json::Value;

use super::call::{Args, ToolError, ToolOutput};
use super::flows::{check, check_report, flow_input, to_wire};
use crate::agent::PlanEnv;
use crate::flow::{Invocation, effective_args, resolve_invocation};
use crate::plan::{Options, plan, to_json, to_text};

/// `tfc_plan`.
pub fn tool_plan(mut args: Args, root: &Path) -> Result<ToolOutput, ToolError> {
    let input = flow_input(&mut args, root)?;
    let flow_args = args.opt_object("args")?;
    let items = args.opt_u64("items", 0)?;
    let output_tokens = args.opt_u64("outputTokens", 0)?;
    args.finish(&["path", "name", "flow", "args", "items", "outputTokens"])?;
    let checked = check(&input, root, flow_args.as_ref(), None);
    let flow = match &checked.flow {
        Some(flow) if !checked.has_errors() => flow,
        _ => {
            let (report, text) = check_report(&checked, &input.source);
            return Err(ToolError {
                message: format!("the flow has errors: no plan was made\n{text}"),
                detail: Some(report),
            });
        }
    };
    let invocation = Invocation {
        json: flow_args
            .map(|a| {
                crate::value::Value::from(&Value::Object(a))
                    .into_object()
                    .unwrap_or_default()
            })
            .unwrap_or_default(),
        ..Invocation::default()
    };
    let (given, _) = resolve_invocation(flow, &invocation);
    let flow_args = effective_args(flow, given);
    let p = plan(
        flow,
        &Options {
            items,
            output_tokens,
            args: Some(&flow_args),
            max_calls: None,
        },
        &PlanEnv::load(root),
    );
    Ok(ToolOutput::new(to_wire(&to_json(&p)), to_text(&p)))
}
