//! `tfc mcp` over pipes: the protocol (SPEC §13.1) and the tools that need no run (§13.2).

#[path = "mcp/client.rs"]
mod client;

use std::time::Duration;

use client::{Server, err, ok, project};
use serde_json::json;

#[test]
fn initialize_negotiates_the_revision() {
    let root = project("mcp_init");
    for (asked, answered) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2099-01-01", "2025-06-18"),
    ] {
        let mut s = Server::spawn(&root);
        let r = s.request(
            1,
            "initialize",
            json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        assert_eq!(r["result"]["protocolVersion"], answered, "{r}");
        let caps = &r["result"]["capabilities"];
        assert!(
            caps["tools"].is_object() && caps["logging"].is_object(),
            "{r}"
        );
        assert_eq!(r["result"]["serverInfo"]["name"], "tfc");
        assert_eq!(s.finish(), 0, "EOF ends the server with exit 0");
    }
}

#[test]
fn bad_lines_get_errors_and_the_server_keeps_serving() {
    let root = project("mcp_errors");
    let mut s = Server::start(&root);
    s.send_line("this is not json");
    let e = s.response(0, Duration::from_millis(10));
    assert!(e.is_none());
    // The parse error has id null: find it among the messages.
    s.send(2, "ping", json!({}));
    let pong = s
        .response(2, Duration::from_secs(10))
        .expect("ping after garbage");
    assert_eq!(pong["result"], json!({}));
    let parse_error = s
        .seen
        .iter()
        .find(|m| m["error"]["code"] == -32700)
        .unwrap_or_else(|| panic!("no -32700 among {:?}", s.seen));
    assert!(parse_error["id"].is_null());
    let r = s.request(3, "no/such/method", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let r = s.request(
        4,
        "tools/call",
        json!({"name": "tfc_nope", "arguments": {}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    s.send_line(r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#);
    let r = s
        .response(5, Duration::from_secs(10))
        .expect("invalid request answered");
    assert_eq!(r["error"]["code"], -32600, "{r}");
    s.send_line(r#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#);
    // Bad arguments are a tool result naming the argument, not a protocol error.
    let res = s.call(7, "tfc_status", json!({"runId": 42}));
    assert!(err(&res).contains("'runId'"), "{res}");
    let res = s.call(
        8,
        "tfc_eval",
        json!({"mode": "when", "text": "true", "colour": 1}),
    );
    assert!(err(&res).contains("'colour'"), "{res}");
    let res = s.call(9, "tfc_check", json!({}));
    assert!(err(&res).contains("'path'"), "{res}");
    let r = s.request(10, "logging/setLevel", json!({"level": "warning"}));
    assert_eq!(r["result"], json!({}), "{r}");
    let r = s.request(11, "ping", json!({}));
    assert_eq!(r["result"], json!({}));
    assert_eq!(s.finish(), 0);
}

#[test]
fn tools_list_has_every_tool_with_schemas() {
    let root = project("mcp_list");
    let mut s = Server::start(&root);
    let r = s.request(2, "tools/list", json!({}));
    let tools = r["result"]["tools"].as_array().expect("tools").clone();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "tfc_check",
            "tfc_run",
            "tfc_status",
            "tfc_wait",
            "tfc_cancel",
            "tfc_resume",
            "tfc_fork",
            "tfc_runs",
            "tfc_show",
            "tfc_graph",
            "tfc_plan",
            "tfc_flows",
            "tfc_save",
            "tfc_eval",
            "tfc_test"
        ]
    );
    for t in &tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert_eq!(t["outputSchema"]["type"], "object", "{t}");
    }
}

/// What a host shows a model and a user: every input property says what it is, the tools that
/// change nothing say so (`annotations.readOnlyHint`, MCP tool annotations), and no text points
/// at a document users do not have.
#[test]
fn every_tool_argument_is_described_and_read_only_tools_say_so() {
    let root = project("mcp_annotations");
    let mut s = Server::start(&root);
    let r = s.request(2, "tools/list", json!({}));
    let tools = r["result"]["tools"].as_array().expect("tools").clone();
    let read_only = [
        "tfc_check",
        "tfc_eval",
        "tfc_runs",
        "tfc_show",
        "tfc_flows",
        "tfc_graph",
        "tfc_plan",
        "tfc_status",
        "tfc_wait",
    ];
    for t in &tools {
        let name = t["name"].as_str().expect("name");
        let props = t["inputSchema"]["properties"]
            .as_object()
            .expect("properties");
        for (arg, schema) in props {
            let d = schema["description"].as_str().unwrap_or("");
            assert!(d.len() > 10, "{name}.{arg} has no description: {schema}");
        }
        assert_eq!(
            t["annotations"]["readOnlyHint"].as_bool(),
            Some(read_only.contains(&name)),
            "{name}: {t}"
        );
        let text = t.to_string();
        assert!(
            !text.contains("SPEC") && !text.contains('§'),
            "{name}: {text}"
        );
    }
    assert_eq!(
        tools
            .iter()
            .filter(|t| t["annotations"]["readOnlyHint"] == true)
            .count(),
        read_only.len()
    );
}

/// Many hosts send an object argument as its JSON text: `flow` given as a string holding the
/// document is read like the document (comments and trailing commas allowed, as in a flow
/// file, with positions into that text); a string that is not a document is a clear error
/// that says what to pass instead.
#[test]
fn a_flow_given_as_json_text_is_read_like_the_document() {
    let root = project("mcp_flow_string");
    let mut s = Server::start(&root);
    let c = ok(&s.call(2, "tfc_check", json!({"flow": GOOD})));
    assert_eq!(c, json!({"ok": true, "diagnostics": []}));
    let jsonc = "// a comment\n{\"phases\": [{\"id\": \"a\", \"task\": \"x\",},],}";
    let c = ok(&s.call(3, "tfc_check", json!({"flow": jsonc})));
    assert_eq!(c["ok"], true, "{c}");
    let g = ok(&s.call(4, "tfc_graph", json!({"flow": GOOD})));
    assert!(
        g["text"].as_str().unwrap().contains("p_draft --> p_polish"),
        "{g}"
    );

    // Text that does not parse: the check says where.
    let res = s.call(5, "tfc_check", json!({"flow": "{\"phases\": [}"}));
    let c = ok(&res);
    assert_eq!(c["ok"], false, "{c}");
    assert_eq!(c["diagnostics"][0]["severity"], "error", "{c}");

    // Not a document at all: an argument error naming the other ways to name a flow.
    for not_a_doc in ["review", "flows/review.json", "", "[1, 2]", "42"] {
        let e = err(&s.call(6, "tfc_check", json!({"flow": not_a_doc})));
        assert!(e.starts_with("argument 'flow': "), "{e}");
        assert!(e.contains("'path'") && e.contains("'name'"), "{e}");
    }
    let e = err(&s.call(7, "tfc_check", json!({"flow": 42})));
    assert!(e.starts_with("argument 'flow': "), "{e}");

    // tfc_save keeps the text as written; tfc_run starts it.
    let saved = ok(&s.call(8, "tfc_save", json!({"name": "viatext", "flow": jsonc})));
    assert_eq!(saved["name"], "viatext", "{saved}");
    let text = std::fs::read_to_string(root.join(".tfc/flows/viatext.json")).unwrap();
    assert!(text.starts_with("// a comment\n"), "{text}");
    let c = ok(&s.call(9, "tfc_check", json!({"name": "viatext"})));
    assert_eq!(c["ok"], true, "{c}");
    let run = ok(&s.call(
        10,
        "tfc_run",
        json!({"flow": jsonc, "backend": "echo", "wait": true, "timeoutMs": 20000}),
    ));
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["finalOutput"], "x", "{run}");
}

const GOOD: &str = r#"{"name": "review", "description": "Review a change.",
  "args": {"topic": {"type": "string", "default": "rust"}},
  "phases": [
    {"id": "draft", "task": "Write about {args.topic}."},
    {"id": "polish", "dependsOn": ["draft"], "task": "Polish: {steps.draft.output}"}]}"#;

#[test]
fn check_graph_eval_save_and_flows() {
    let root = project("mcp_flow_tools");
    std::fs::create_dir_all(root.join("flows")).unwrap();
    std::fs::write(root.join("flows/review.json"), GOOD).unwrap();
    std::fs::write(
        root.join("flows/bad.json"),
        r#"{"phases": [{"id": "a", "task": "x", "dependsOn": ["ghost"]}]}"#,
    )
    .unwrap();
    let mut s = Server::start(&root);

    let c = ok(&s.call(2, "tfc_check", json!({"path": "flows/review.json"})));
    assert_eq!(c, json!({"ok": true, "diagnostics": []}));
    let res = s.call(3, "tfc_check", json!({"path": "flows/bad.json"}));
    let c = ok(&res);
    assert_eq!(c["ok"], false);
    assert_eq!(c["diagnostics"][0]["severity"], "error", "{c}");
    assert!(
        res["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("ghost"),
        "the text renders the diagnostics: {res}"
    );
    // The same diagnostics as `tfc check --format json`.
    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(["check", "--format", "json", "flows/bad.json"])
        .current_dir(&root)
        .output()
        .unwrap();
    let cli: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(cli["diagnostics"][0]["code"], c["diagnostics"][0]["code"]);
    assert_eq!(
        cli["diagnostics"][0]["message"],
        c["diagnostics"][0]["message"]
    );
    // A document argument, and check arguments.
    let doc: serde_json::Value = serde_json::from_str(GOOD).unwrap();
    let c = ok(&s.call(4, "tfc_check", json!({"flow": doc, "args": {"nope": 1}})));
    assert_eq!(c["ok"], false, "an undeclared arg is an error: {c}");

    // Paths outside the root and bad saved-flow names are refused.
    let e = err(&s.call(5, "tfc_check", json!({"path": "../outside.json"})));
    assert!(e.contains("outside the root"), "{e}");
    let e = err(&s.call(6, "tfc_check", json!({"name": "../x"})));
    assert!(e.contains("not a saved-flow name"), "{e}");
    let e = err(&s.call(7, "tfc_check", json!({"path": "a.json", "name": "b"})));
    assert!(e.contains("exactly one"), "{e}");

    let g = ok(&s.call(8, "tfc_graph", json!({"path": "flows/review.json"})));
    assert!(
        g["text"].as_str().unwrap().starts_with("flowchart TD"),
        "{g}"
    );
    assert!(
        g["text"].as_str().unwrap().contains("p_draft --> p_polish"),
        "{g}"
    );

    let e = ok(&s.call(
        9,
        "tfc_eval",
        json!({"mode": "template", "text": "hi {args.who}", "ctx": {"args": {"who": "there"}}}),
    ));
    assert_eq!(e["output"], "hi there");
    let e = ok(&s.call(
        10,
        "tfc_eval",
        json!({"mode": "json", "text": "x {\"a\": 1} y"}),
    ));
    assert_eq!(e["value"], json!({"a": 1}));

    // Save: errors refuse, a good flow lands in .tfc/flows and is listed.
    let bad: serde_json::Value =
        serde_json::from_str(r#"{"phases": [{"id": "a", "task": "{steps.zz.output}"}]}"#).unwrap();
    let res = s.call(11, "tfc_save", json!({"name": "broken", "flow": bad}));
    assert!(err(&res).contains("not saved"), "{res}");
    assert!(!root.join(".tfc/flows/broken.json").exists());
    let e = err(&s.call(12, "tfc_save", json!({"name": "a/b", "flow": doc})));
    assert!(e.contains("'name'"), "{e}");
    let saved = ok(&s.call(13, "tfc_save", json!({"name": "review", "flow": doc})));
    assert_eq!(saved["replaced"], false);
    assert!(root.join(".tfc/flows/review.json").is_file());
    let f = ok(&s.call(14, "tfc_flows", json!({})));
    assert_eq!(f["flows"][0]["name"], "review", "{f}");
    assert_eq!(f["flows"][0]["scope"], "project");
    assert_eq!(f["flows"][0]["description"], "Review a change.");
    assert_eq!(f["flows"][0]["args"][0]["name"], "topic");
    let c = ok(&s.call(15, "tfc_check", json!({"name": "review"})));
    assert_eq!(c["ok"], true);
    assert_eq!(s.finish(), 0);
}

/// `tfc_test` runs test files under the root, or tests given inline with their flow, and
/// answers with the objects of `tfc test --format json`; it writes no run.
#[test]
fn tfc_test_runs_test_files_and_inline_tests() {
    let root = project("mcp_test_tool");
    std::fs::create_dir_all(root.join("flows")).unwrap();
    std::fs::write(root.join("flows/review.json"), GOOD).unwrap();
    std::fs::write(
        root.join("flows/review.test.json"),
        r#"{"flow": "review.json", // the flow beside it
            "tests": [{"name": "every call answered", "answers": {"*": "fine"},
                       "expect": {"status": "completed", "output": "fine"}}]}"#,
    )
    .unwrap();
    let mut s = Server::start(&root);
    let r = ok(&s.call(2, "tfc_test", json!({})));
    assert_eq!(
        (&r["ok"], &r["passed"], &r["failed"], &r["errors"]),
        (&json!(true), &json!(1), &json!(0), &json!(0)),
        "{r}"
    );
    assert_eq!(
        r["tests"],
        json!([{"file": "flows/review.test.json", "name": "every call answered",
                "result": "ok", "status": "completed"}])
    );
    let res = s.call(
        3,
        "tfc_test",
        json!({"path": "flows/review.json",
               "tests": [{"name": "wrong output", "answers": {"*": "fine"}, "expect": {"output": "great"}}]}),
    );
    let r = ok(&res);
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(r["tests"][0]["failures"][0]["expected"], "\"great\"", "{r}");
    assert!(
        res["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("test result: FAILED. 0 passed; 1 failed"),
        "{res}"
    );
    let res = s.call(4, "tfc_test", json!({"paths": ["nowhere"]}));
    assert!(err(&res).contains("'paths'"), "{res}");
    assert!(!root.join(".tfc/runs").exists(), "a test wrote a run");
    assert_eq!(s.finish(), 0);
}

/// `tfc_plan` returns the plan `tfc plan --format json` prints; a flow with errors is a tool
/// error with the check's report.
#[test]
fn plan_counts_calls_before_anything_runs() {
    let root = project("mcp_plan");
    let mut s = Server::start(&root);
    let flow = json!({"name": "loop", "phases": [
        {"id": "l", "type": "loop", "task": "again", "until": "{loop.iteration} >= 2", "maxIterations": 3},
        {"id": "m", "type": "map", "dependsOn": ["l"], "over": "{steps.l.output}", "task": "{item}"}]});
    let p = ok(&s.call(
        2,
        "tfc_plan",
        json!({"flow": flow, "items": 2, "outputTokens": 10}),
    ));
    assert_eq!(p["flow"], "loop");
    assert_eq!(
        p["phases"][0]["calls"],
        json!({"min": 1, "max": 3, "worst": 12})
    );
    assert_eq!(
        p["total"]["calls"],
        json!({"min": 3, "max": 5, "worst": 20})
    );
    assert_eq!(p["total"]["outputTokens"], json!({"min": 30, "max": 50}));
    let unknown = ok(&s.call(3, "tfc_plan", json!({"flow": flow})));
    assert_eq!(unknown["total"]["calls"]["max"], json!(null));
    assert!(
        unknown["assumptions"][0]
            .as_str()
            .unwrap()
            .contains("--items N"),
        "{unknown}"
    );
    let bad = json!({"phases": [{"id": "a", "task": "x", "dependsOn": ["zz"]}]});
    let e = err(&s.call(4, "tfc_plan", json!({"flow": bad})));
    assert!(e.contains("no plan was made") && e.contains("E0103"), "{e}");
    let e = err(&s.call(5, "tfc_plan", json!({"flow": flow, "items": -1})));
    assert!(e.contains("'items'"), "{e}");
    assert_eq!(s.finish(), 0);
}
