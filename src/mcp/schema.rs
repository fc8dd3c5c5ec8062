//! The tool list of `tools/list` (SPEC §13.2): each tool's description, `annotations`
//! (`readOnlyHint`), `inputSchema` (every property described) and `outputSchema` (JSON
//! Schema, the draft MCP names: 2020-12 keywords only).

use serde_json::{Value, json};

/// What the `flow` argument is (a string holding the document's JSON text is accepted too).
const FLOW_DOC: &str =
    "The flow document itself, as a JSON object (its JSON text as a string is read the same way).";

/// The flow-naming arguments shared by `tfc_check`, `tfc_run` and `tfc_graph`.
fn flow_props() -> serde_json::Map<String, Value> {
    let v = json!({
        "path": {"type": "string", "description": "A flow file, relative to the server's root (pass exactly one of path, name, flow)."},
        "name": {"type": "string", "pattern": "^[A-Za-z0-9._-]+$", "description": "A saved flow's name (.tfc/flows/<name>.json; see tfc_flows)."},
        "flow": {"type": "object", "description": FLOW_DOC},
    });
    match v {
        Value::Object(m) => m,
        _ => unreachable!("a literal object"),
    }
}

fn object(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

fn with_flow(extra: Value) -> Value {
    let mut props = flow_props();
    if let Value::Object(m) = extra {
        props.extend(m);
    }
    object(Value::Object(props), &[])
}

fn nullable(t: &str) -> Value {
    json!({"type": [t, "null"]})
}

fn usage() -> Value {
    json!({"type": ["object", "null"], "properties": {
        "input": {"type": "number"}, "output": {"type": "number"},
        "cacheRead": {"type": "number"}, "cacheWrite": {"type": "number"},
        "costUSD": {"type": ["number", "null"]}, "turns": {"type": "number"}}})
}

fn diagnostics() -> Value {
    json!({"type": "array", "items": {"type": "object",
        "properties": {"severity": {"type": "string"}, "code": {"type": "string"},
                       "message": {"type": "string"}},
        "required": ["severity", "code", "message"]}})
}

/// `tfc_status`'s result (also `tfc_wait`'s, and `tfc_run`'s with `wait`).
fn status() -> Value {
    let count = json!({"type": "integer", "minimum": 0});
    json!({"type": "object", "properties": {
        "runId": {"type": "string"}, "flow": {"type": "string"},
        "status": {"type": "string", "enum": ["completed", "failed", "blocked", "paused", "running", "interrupted"]},
        "reason": nullable("string"), "parentRunId": nullable("string"),
        "phases": {"type": "object", "properties": {"pending": count, "running": count, "done": count, "failed": count, "skipped": count},
                   "required": ["pending", "running", "done", "failed", "skipped"]},
        "pendingApprovals": {"type": "array", "items": {"type": "string"}},
        "approvalDeadlines": {"type": "object", "additionalProperties": {"type": "string"}},
        "usage": usage(), "calls": count, "finalOutput": {"type": "string"}, "recordPath": {"type": "string"}},
        "required": ["runId", "flow", "status", "reason", "phases", "pendingApprovals", "usage"]})
}

/// `tfc_plan`'s result: the plan of SPEC §18.
fn plan_schema() -> Value {
    let count = json!({"type": ["integer", "null"], "minimum": 0});
    let calls = json!({"type": "object", "properties": {"min": count, "max": count, "worst": count},
        "required": ["min", "max", "worst"]});
    let range = |t: &str| json!({"type": ["object", "null"], "properties": {"min": nullable(t), "max": nullable(t)}});
    let strings = json!({"type": "array", "items": {"type": "string"}});
    json!({"type": "object", "properties": {
        "flow": {"type": "string"},
        "phases": {"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "string"}, "kind": {"type": "string"}, "calls": calls,
            "promptTokens": {"type": "integer"}, "dynamic": {"type": "boolean"},
            "children": {"type": "array"}}, "required": ["id", "kind", "calls", "promptTokens", "dynamic"]}},
        "total": {"type": "object", "properties": {"calls": calls, "inputTokens": range("integer"),
            "outputTokens": range("integer"), "costUSD": range("number")},
            "required": ["calls", "inputTokens", "outputTokens", "costUSD"]},
        "caps": {"type": "object", "properties": {"maxCalls": nullable("integer"),
            "maxTokens": nullable("number"), "maxUSD": nullable("number")}},
        "assumptions": strings, "warnings": strings},
        "required": ["flow", "phases", "total", "caps", "assumptions", "warnings"]})
}

/// `tfc_run`/`tfc_resume`: the started run, or (with `wait`) its status.
fn started() -> Value {
    json!({"type": "object", "properties": {
        "runId": {"type": "string"}, "status": {"type": "string"},
        "recordPath": {"type": "string"}, "logPath": {"type": "string"}},
        "required": ["runId", "status"]})
}

/// Whether a tool changes nothing (MCP tool annotations: `readOnlyHint`): it reads flows,
/// the run store or its arguments only. The others start, stop or write something.
#[derive(Clone, Copy, PartialEq)]
enum Effect {
    ReadOnly,
    Changes,
}

fn tool(
    name: &str,
    title: &str,
    description: &str,
    effect: Effect,
    input: Value,
    output: Value,
) -> Value {
    json!({"name": name, "title": title, "description": description,
           "annotations": {"readOnlyHint": effect == Effect::ReadOnly},
           "inputSchema": input, "outputSchema": output})
}

/// Every tool, in a stable order.
pub fn tools() -> Vec<Value> {
    let approve = json!({"type": "array", "items": {"type": "string"},
        "description": "Approval phases to approve (their ids; node paths inside sub-flows)."});
    let reject = json!({"type": "array", "items": {"type": "string"},
        "description": "Approval phases to reject (their ids; node paths inside sub-flows)."});
    let approve_all = json!({"type": "boolean", "description": "Approve every approval phase."});
    let run_id =
        json!({"type": "string", "description": "A run id, a unique prefix of one, or 'last'."});
    let timeout = json!({"type": "integer", "minimum": 0, "description": "How long to wait, in ms (default 600000)."});
    let max_usd = json!({"type": "number", "minimum": 0,
        "description": "Cost cap in USD; the run pauses when it is passed (a resumed run: the total, the parent's spend included)."});
    let max_tokens = json!({"type": "number", "minimum": 0,
        "description": "Token cap; the run pauses when it is passed (a resumed run: the total, the parent's spend included)."});
    let wait = json!({"type": "boolean", "default": false,
        "description": "Wait for the run to end (up to timeoutMs, sending progress) and return its status instead of its id."});
    let flow_args = json!({"type": "object",
        "description": "Invocation arguments: {name: value}, as declared by the flow's args."});
    vec![
        tool(
            "tfc_check",
            "Check a flow",
            "Statically check a taskflow flow (the whole graph, every placeholder and condition) without running anything. Returns {ok, diagnostics} as `tfc check --format json`.",
            Effect::ReadOnly,
            with_flow(
                json!({"args": {"type": "object", "description": "Invocation arguments to check against."},
                              "strict": {"type": "boolean", "description": "Report interpolation warnings as errors."}}),
            ),
            json!({"type": "object", "properties": {"ok": {"type": "boolean"}, "diagnostics": diagnostics()},
                    "required": ["ok", "diagnostics"]}),
        ),
        tool(
            "tfc_run",
            "Run a flow",
            "Check a flow, then start it as a background run that outlives this server. Returns {runId, status, recordPath} at once; with wait=true, waits (progress notifications) up to timeoutMs and returns tfc_status's result.",
            Effect::Changes,
            with_flow(json!({"args": flow_args,
                              "backend": {"type": "string", "description": "Serve every agent with this configured backend."},
                              "approve": approve, "approveAll": approve_all,
                              "maxUsd": max_usd, "maxTokens": max_tokens,
                              "wait": wait, "timeoutMs": timeout})),
            json!({"anyOf": [started(), status()], "type": "object"}),
        ),
        tool(
            "tfc_status",
            "Status of a run",
            "The status of a run from its record: phase counts, pending approvals, usage, and the final output once it ended.",
            Effect::ReadOnly,
            object(json!({"runId": run_id}), &["runId"]),
            status(),
        ),
        tool(
            "tfc_wait",
            "Wait for a run",
            "Wait until a run ends (or timeoutMs passes) and return its status; sends progress notifications when the request carries a progress token.",
            Effect::ReadOnly,
            object(json!({"runId": run_id, "timeoutMs": timeout}), &["runId"]),
            status(),
        ),
        tool(
            "tfc_cancel",
            "Cancel a run",
            "Interrupt a running run like Ctrl-C: it ends paused (reason interrupted) and can be resumed with tfc_resume.",
            Effect::Changes,
            object(json!({"runId": run_id}), &["runId"]),
            status(),
        ),
        tool(
            "tfc_resume",
            "Resume a run",
            "Fork and continue a failed, paused or interrupted run in the background (as `tfc resume`). Returns the new run's {runId, status, recordPath}, or with wait=true its status.",
            Effect::Changes,
            object(
                json!({"runId": run_id, "approve": approve, "reject": reject,
                           "reason": {"type": "string", "description": "The note recorded with the rejections."},
                           "maxUsd": max_usd, "maxTokens": max_tokens,
                           "wait": wait, "timeoutMs": timeout}),
                &["runId"],
            ),
            json!({"anyOf": [started(), status()], "type": "object"}),
        ),
        tool(
            "tfc_fork",
            "Fork a run",
            "Start a new run from any ended run (as `tfc fork`): re-run phases (from), replace outputs (set) or arguments (args); every other finished phase is copied, never paid for again. A refused fork (unknown phase, an output breaking its contract) starts nothing. With plan=true, returns what would be copied and what would run, and starts nothing.",
            Effect::Changes,
            object(
                json!({"runId": run_id,
                       "from": {"type": "array", "items": {"type": "string"}, "description": "Re-run these phases and their descendants."},
                       "set": {"type": "object", "additionalProperties": true,
                               "description": "Phase id (or P#i for one map item) → its output (a string, or any JSON value written as JSON); only its descendants run again."},
                       "args": {"type": "object", "description": "Argument overrides (the parent's arguments otherwise); what reads a changed argument runs again."},
                       "maxUsd": max_usd, "maxTokens": max_tokens,
                       "maxCalls": {"type": "integer", "minimum": 1, "description": "Agent call cap; the copied phases' calls count toward it."},
                       "plan": {"type": "boolean", "default": false, "description": "Only say what would be copied and what would run."},
                       "wait": wait, "timeoutMs": timeout}),
                &["runId"],
            ),
            json!({"anyOf": [started(), status(),
                   {"type": "object", "properties": {"runId": {"type": "string"}, "phases": {"type": "array"}}, "required": ["runId", "phases"]}],
                   "type": "object"}),
        ),
        tool(
            "tfc_runs",
            "List runs",
            "The project's runs, newest first, as `tfc runs --format json`.",
            Effect::ReadOnly,
            object(
                json!({"flow": {"type": "string", "description": "Only the runs of this flow (its name)."},
                           "status": {"type": "string", "enum": ["completed", "failed", "blocked", "paused", "running", "interrupted"],
                                      "description": "Only the runs with this status."},
                           "limit": {"type": "integer", "minimum": 1, "default": 20, "description": "At most this many runs, the newest."}}),
                &[],
            ),
            json!({"type": "object", "properties": {"runs": {"type": "array", "items": {"type": "object",
                 "properties": {"runId": {"type": "string"}, "flow": {"type": "string"}, "status": {"type": "string"},
                                "reason": nullable("string"), "parentRunId": nullable("string"),
                                "startedAt": nullable("string"), "endedAt": nullable("string"), "usage": usage()},
                 "required": ["runId", "flow", "status"]}}}, "required": ["runs"]}),
        ),
        tool(
            "tfc_show",
            "Show a run or a phase",
            "A run's record (as `tfc show --format json`), or one phase of it with the prompts it sent; long texts cut at limit chars.",
            Effect::ReadOnly,
            object(
                json!({"runId": run_id, "phase": {"type": "string", "description": "Show this phase (its id) with its prompts, instead of the whole run."},
                           "limit": {"type": "integer", "minimum": 1, "default": 4000, "description": "Cut prompts and outputs at this many characters."}}),
                &["runId"],
            ),
            json!({"type": "object", "properties": {"status": {"type": "string"}}, "required": ["status"]}),
        ),
        tool(
            "tfc_graph",
            "Draw a flow",
            "The flow's graph as Mermaid text (or an SVG drawing, also sent as an image, or Graphviz dot), check problems marked.",
            Effect::ReadOnly,
            with_flow(
                json!({"format": {"type": "string", "enum": super::flows::GRAPH_FORMATS, "default": "mermaid",
                                  "description": "mermaid (text), svg (a drawing, also sent as an image) or dot (Graphviz text)."},
                              "direction": {"type": "string", "enum": ["td", "lr"], "default": "td",
                                  "description": "Top-down (td) or left-to-right (lr)."}}),
            ),
            json!({"type": "object", "properties": {"format": {"type": "string"}, "text": {"type": "string"},
                    "ok": {"type": "boolean"}, "diagnostics": diagnostics()}, "required": ["format", "text", "ok"]}),
        ),
        tool(
            "tfc_plan",
            "Plan a flow's cost",
            "Before anything runs: how many agent calls a run of the flow can make, per phase and in total (min, max, worst with every retry), their static prompt tokens, and with outputTokens the output tokens and cost of agents with a price. Unknown values are null, with the assumption that would settle them. As `tfc plan --format json`.",
            Effect::ReadOnly,
            with_flow(json!({"args": flow_args,
                              "items": {"type": "integer", "minimum": 0, "description": "Plan every map with this many items (else its source's minItems/maxItems)."},
                              "outputTokens": {"type": "integer", "minimum": 0, "description": "The output tokens of one call: counts output tokens, and the cost of agents with a price."}})),
            plan_schema(),
        ),
        tool(
            "tfc_flows",
            "List saved flows",
            "The saved flows (project first, then the user's), with descriptions and declared arguments, as `tfc list`.",
            Effect::ReadOnly,
            object(json!({}), &[]),
            json!({"type": "object", "properties": {"flows": {"type": "array", "items": {"type": "object",
                 "properties": {"name": {"type": "string"}, "scope": {"type": "string", "enum": ["project", "user"]},
                                "path": {"type": "string"}, "description": nullable("string"),
                                "args": {"type": "array"}, "shadowed": {"type": "boolean"}},
                 "required": ["name", "scope", "path", "args"]}}}, "required": ["flows"]}),
        ),
        tool(
            "tfc_save",
            "Save a flow",
            "Check a flow document and save it as .tfc/flows/<name>.json (scope project) or in the user's config (scope user). A flow with errors is not saved.",
            Effect::Changes,
            object(
                json!({"name": {"type": "string", "pattern": "^[A-Za-z0-9._-]+$",
                                "description": "The saved flow's name: letters, digits, '.', '_' and '-'."},
                           "flow": {"type": "object", "description": FLOW_DOC},
                           "scope": {"type": "string", "enum": ["project", "user"], "default": "project",
                                     "description": "project: .tfc/flows/ of the root; user: the user's config folder."}}),
                &["name", "flow"],
            ),
            json!({"type": "object", "properties": {"name": {"type": "string"}, "scope": {"type": "string"},
                    "path": {"type": "string"}, "replaced": {"type": "boolean"}, "diagnostics": diagnostics()},
                    "required": ["name", "scope", "path", "replaced"]}),
        ),
        tool(
            "tfc_eval",
            "Evaluate a template or condition",
            "Evaluate a template, condition or safeParse against an eval context, as `tfc eval <mode> --format json`.",
            Effect::ReadOnly,
            object(
                json!({"mode": {"type": "string", "enum": crate::eval::modes::Mode::ALL.map(|m| m.as_str()),
                                "description": "template, value, when, until or gate (text is an expression); json or array (text is parsed)."},
                           "text": {"type": "string", "description": "The template or expression; for json/array the text to parse."},
                           "ctx": {"type": "object", "description": "The eval context: {args, steps, previousOutput, locals, reflexion}."}}),
                &["mode", "text"],
            ),
            json!({"type": "object"}),
        ),
        tool(
            "tfc_test",
            "Test flows without tokens",
            "Run flows' tests as `tfc test` does: each test runs the real flow with every agent call answered by the test (no backend, no tokens, no run written). Either the *.test.json files under paths (default: the root), or tests given inline with their flow (path, name or flow). Script phases run for real unless a test answers them. Returns {ok, passed, failed, errors, tests, diagnostics}; tests are the objects of `tfc test --format json`.",
            Effect::Changes,
            with_flow(json!({
                "paths": {"type": "array", "items": {"type": "string"},
                          "description": "Test files, or directories to search for *.test.json, relative to the root (default: the root)."},
                "tests": {"type": "array", "items": {"type": "object"},
                          "description": "Inline tests (the elements of a test file's tests: {name, args?, answers, approvals?, expect}) of the flow named by path, name or flow."},
                "filter": {"type": "string", "description": "Run only the tests whose name contains this text."},
                "missing": {"type": "string", "enum": ["fail", "stub"], "default": "fail",
                            "description": "A call no answer matches: fail the test, or answer it as a dry run does."}})),
            json!({"type": "object", "properties": {
                "ok": {"type": "boolean"}, "passed": {"type": "integer", "minimum": 0},
                "failed": {"type": "integer", "minimum": 0}, "errors": {"type": "integer", "minimum": 0},
                "tests": {"type": "array", "items": {"type": "object", "properties": {
                    "file": {"type": "string"}, "name": {"type": "string"},
                    "result": {"type": "string", "enum": ["ok", "failed", "error"]},
                    "status": {"type": "string"}, "error": {"type": "string"},
                    "failures": {"type": "array", "items": {"type": "object", "properties": {
                        "expectation": {"type": "string"}, "expected": {"type": "string"},
                        "actual": {"type": "string"}, "diff": {"type": "string"}},
                        "required": ["expectation", "expected", "actual"]}}},
                    "required": ["file", "name", "result"]}},
                "diagnostics": diagnostics()},
                "required": ["ok", "passed", "failed", "errors", "tests", "diagnostics"]}),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_object_schemas() {
        let tools = tools();
        assert_eq!(tools.len(), 15);
        for t in &tools {
            assert_eq!(t["inputSchema"]["type"], "object", "{}", t["name"]);
            assert_eq!(t["outputSchema"]["type"], "object", "{}", t["name"]);
            assert!(t["description"].as_str().is_some_and(|d| d.len() > 20));
            assert!(
                t["annotations"]["readOnlyHint"].is_boolean(),
                "{}",
                t["name"]
            );
        }
    }
}
