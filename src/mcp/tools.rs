//! `tools/call`: a tool name and its arguments to a `CallToolResult`.

use serde_json::Value;

use super::call::{Args, Call, ToolError, tool_result};
use super::runs::Runner;
use super::{eval, flows, plan, testing};

/// Is `name` one of the server's tools?
pub fn exists(name: &str) -> bool {
    super::schema::tools().iter().any(|t| t["name"] == name)
}

/// Run tool `name` (which [`exists`]) and build its result; bad arguments are an
/// `isError` result naming the argument.
pub fn call(runner: &Runner, name: &str, arguments: Option<&Value>, call: &Call) -> Value {
    let outcome = Args::new(arguments).and_then(|args| {
        let root = runner.root.as_path();
        match name {
            "tfc_check" => flows::tool_check(args, root),
            "tfc_graph" => flows::tool_graph(args, root),
            "tfc_plan" => plan::tool_plan(args, root),
            "tfc_flows" => flows::tool_flows(args, root),
            "tfc_save" => flows::tool_save(args, root),
            "tfc_eval" => eval::tool_eval(args),
            "tfc_test" => testing::tool_test(args, root),
            "tfc_run" => runner.tool_run(args, call),
            "tfc_resume" => runner.tool_resume(args, call),
            "tfc_fork" => runner.tool_fork(args, call),
            "tfc_status" => runner.tool_status(args),
            "tfc_wait" => runner.tool_wait(args, call),
            "tfc_cancel" => runner.tool_cancel(args, call),
            "tfc_runs" => runner.tool_runs(args),
            "tfc_show" => runner.tool_show(args),
            other => Err(ToolError::new(format!("no tool '{other}'"))),
        }
    });
    tool_result(outcome)
}
