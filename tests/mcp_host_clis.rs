//! The real host CLIs with tfc registered by `tfc init --host` (SPEC §13.4): each CLI, pointed
//! at the mock provider (`../shared/mockllm/server.py` on 127.0.0.1) whose scripted answer
//! calls tfc's `tfc_check` tool, must list tfc's tools in its request to the mock, run the
//! call through `tfc mcp`, and send the tool result — tfc's diagnostics — back to the mock.
//!
//! Needs `TFC_AGENT_CLIS` (the npm `node_modules/.bin` holding the CLIs; `.ci/run` installs
//! them) and python3; without them each test says SKIPPED and passes (fails with
//! TFC_REQUIRE_REAL_PARTS=1, as in CI), as the preset tests do.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
mod mock;
use mock::Mock;

/// The CLI's binary and the mock's folder, or `None` (with a note) when either is missing.
fn setup(cli: &str) -> Option<(PathBuf, PathBuf)> {
    let Some(clis) = std::env::var_os("TFC_AGENT_CLIS").map(PathBuf::from) else {
        common::skip(&format!(
            "{cli} with tfc mcp: set TFC_AGENT_CLIS to the npm node_modules/.bin holding the \
             agent CLIs"
        ));
        return None;
    };
    let mockllm = std::env::var_os("TFC_MOCKLLM")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/mockllm"));
    let bin = clis.join(cli);
    if !bin.exists() || !mockllm.join("server.py").is_file() {
        common::skip(&format!(
            "{cli} with tfc mcp: no {} or no mock server",
            bin.display()
        ));
        return None;
    }
    let python = Command::new("python3").arg("--version").output();
    if !python.is_ok_and(|o| o.status.success()) {
        common::skip(&format!("{cli} with tfc mcp: python3 not found"));
        return None;
    }
    Some((bin, mockllm))
}

/// A project with a flow that has one check error, a fresh HOME, and tfc registered with
/// `host` by `tfc init --host` (after `before` prepared the home, e.g. a codex config that
/// init must merge into).
fn project(name: &str, host: &str) -> (PathBuf, PathBuf) {
    project_with(name, host, |_| {})
}

fn project_with(name: &str, host: &str, before: impl FnOnce(&Path)) -> (PathBuf, PathBuf) {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&base);
    let (proj, home) = (base.join("proj"), base.join("home"));
    fs::create_dir_all(proj.join(".tfc")).unwrap();
    fs::create_dir_all(home.join("tmp")).unwrap();
    fs::write(
        proj.join("flow.json"),
        r#"{"name": "broken", "phases": [{"id": "a", "task": "x", "dependsOn": ["ghost"]}]}"#,
    )
    .unwrap();
    before(&home);
    let out = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(["init", "--host", host])
        .current_dir(&proj)
        .env("HOME", &home)
        .env("CODEX_HOME", home.join(".codex"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (proj, home)
}

/// Run the CLI with the prompt on stdin; its stdout.
fn run_cli(bin: &Path, args: &[&str], cwd: &Path, env: &[(&str, OsString)]) -> String {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start the CLI");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(b"Please check the flow.\n");
    }
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Every string anywhere in a JSON value, joined (to find a tool result in any API's shape).
fn all_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(a) => a.iter().for_each(|x| all_text(x, out)),
        Value::Object(o) => o.values().for_each(|x| all_text(x, out)),
        _ => {}
    }
}

/// The mock saw tfc's tools offered, and a later request carried tfc's diagnostics back.
fn assert_round_trip(mock: &Mock, tool_marker: &str, cli_output: &str) {
    let requests = mock.requests();
    let offered = requests.iter().any(|r| {
        let mut t = String::new();
        all_text(&r["body"]["tools"], &mut t);
        t.contains(tool_marker)
    });
    assert!(
        offered,
        "no request listed tfc's tools ({} requests)\n{cli_output}",
        requests.len()
    );
    let returned = requests.iter().any(|r| {
        let mut t = String::new();
        all_text(&r["body"], &mut t);
        t.contains("unknown phase 'ghost'") && t.contains("E0103")
    });
    assert!(
        returned,
        "no request carried tfc_check's diagnostics back to the model\n{cli_output}"
    );
}

#[test]
fn claude_runs_tfc_check_through_tfc_mcp() {
    let Some((bin, mockllm)) = setup("claude") else {
        return;
    };
    let (proj, home) = project("host_claude", "claude");
    let answers = json!({"default": "OK", "rules": [{
        "match": "check the flow", "api": "anthropic", "text": "Checking.",
        "tool": {"name": "mcp__tfc__tfc_check", "input": {"path": "flow.json"}},
        "then": "The flow has an error."}]});
    let mock = Mock::start(&mockllm, home.parent().unwrap(), &answers);
    let out = run_cli(
        &bin,
        &[
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--allowedTools",
            "mcp__tfc__tfc_check",
        ],
        &proj,
        &[
            ("HOME", home.clone().into()),
            ("TMPDIR", home.join("tmp").into()),
            ("ANTHROPIC_BASE_URL", mock.url.clone().into()),
            ("ANTHROPIC_API_KEY", "sk-ant-mock-key".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("CLAUDE_CODE_MAX_RETRIES", "0".into()),
        ],
    );
    assert_round_trip(&mock, "mcp__tfc__tfc_check", &out);
    assert!(out.contains("The flow has an error."), "{out}");
}

#[test]
fn gemini_runs_tfc_check_through_tfc_mcp() {
    let Some((bin, mockllm)) = setup("gemini") else {
        return;
    };
    let (proj, home) = project("host_gemini", "gemini");
    // The user's settings: API-key auth against the mock, no update checks or statistics
    // (the project's .gemini/settings.json, written by tfc init, holds the MCP server).
    fs::create_dir_all(home.join(".gemini")).unwrap();
    fs::write(
        home.join(".gemini/settings.json"),
        r#"{"security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
            "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}}"#,
    )
    .unwrap();
    let answers = json!({"default": "OK", "rules": [{
        "match": "check the flow", "api": "gemini", "text": "Checking.",
        "tool": {"name": "mcp_tfc_tfc_check", "input": {"path": "flow.json"}},
        "then": "The flow has an error."}]});
    let mock = Mock::start(&mockllm, home.parent().unwrap(), &answers);
    // Headless gemini offers only tools that need no confirmation: allow tfc_check.
    let out = run_cli(
        &bin,
        &[
            "--output-format",
            "stream-json",
            "-m",
            "gemini-2.5-pro",
            "--allowed-tools",
            "mcp_tfc_tfc_check",
        ],
        &proj,
        &[
            ("HOME", home.clone().into()),
            ("TMPDIR", home.join("tmp").into()),
            ("GEMINI_API_KEY", "mock-gemini-key".into()),
            ("GOOGLE_GEMINI_BASE_URL", mock.url.clone().into()),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
        ],
    );
    assert_round_trip(&mock, "mcp_tfc_tfc_check", &out);
    assert!(out.contains(r#""tool_name":"mcp_tfc_tfc_check""#), "{out}");
}

/// codex defers MCP tools behind `tool_search`, or (for a model without it) offers them as a
/// `namespace` tool, whose calls carry the namespace: the mock provider answers only plain
/// function calls, so this test stops at what it can prove — codex read the `[mcp_servers.tfc]`
/// that `tfc init --host codex` merged into its existing config, started `tfc mcp`, and listed
/// tfc's tools to the model.
#[test]
fn codex_lists_tfc_tools_from_the_registered_server() {
    let Some((bin, mockllm)) = setup("codex") else {
        return;
    };
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("host_codex");
    let _ = fs::remove_dir_all(&base);
    fs::create_dir_all(&base).unwrap();
    let mock = Mock::start(&mockllm, &base, &json!({"default": "OK"}));
    let url = mock.url.clone();
    let (proj, home) = project_with("host_codex/p", "codex", |home| {
        fs::create_dir_all(home.join(".codex")).unwrap();
        fs::write(
            home.join(".codex/config.toml"),
            format!(
                "# the mock provider\nmodel = \"mock-model\"\nmodel_provider = \"mock\"\n\
                 check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n\n\
                 [otel]\nexporter = \"none\"\nmetrics_exporter = \"none\"\n\n\
                 [features]\nplugins = false\n\n[model_providers.mock]\nname = \"mock\"\n\
                 base_url = \"{url}/v1\"\nenv_key = \"CODEX_MOCK_API_KEY\"\n\
                 wire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n"
            ),
        )
        .unwrap();
    });
    let config = fs::read_to_string(home.join(".codex/config.toml")).unwrap();
    assert!(
        config.starts_with("# the mock provider\n"),
        "merged, not replaced: {config}"
    );
    assert!(config.contains("[mcp_servers.tfc]"), "{config}");
    let out = run_cli(
        &bin,
        &[
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-s",
            "read-only",
            "-",
        ],
        &proj,
        &[
            ("HOME", home.clone().into()),
            ("TMPDIR", home.join("tmp").into()),
            ("CODEX_HOME", home.join(".codex").into()),
            ("CODEX_MOCK_API_KEY", "sk-mock-key".into()),
        ],
    );
    let requests = mock.requests();
    let listed = requests.iter().any(|r| {
        let mut t = String::new();
        all_text(&r["body"]["tools"], &mut t);
        t.contains("mcp__tfc") && t.contains("tfc_check") && t.contains("tfc_wait")
    });
    assert!(
        listed,
        "codex did not list tfc's tools ({} requests)\n{out}",
        requests.len()
    );
}

#[test]
fn opencode_runs_tfc_check_through_tfc_mcp() {
    let Some((bin, mockllm)) = setup("opencode") else {
        return;
    };
    let (proj, home) = project("host_opencode", "opencode");
    let answers = json!({"default": "OK", "rules": [{
        "match": "check the flow", "api": "chat", "text": "Checking.",
        "tool": {"name": "tfc_tfc_check", "input": {"path": "flow.json"}},
        "then": "The flow has an error."}]});
    let mock = Mock::start(&mockllm, home.parent().unwrap(), &answers);
    // opencode npm-installs a plugin at every start: its registry is the mock (404).
    fs::write(
        home.join(".npmrc"),
        format!("registry={}/npm-registry/\n", mock.url),
    )
    .unwrap();
    // The provider comes from the environment; the MCP server from the project's
    // opencode.json that tfc init wrote.
    let provider = json!({"autoupdate": false, "share": "disabled", "model": "mock/mock-model",
        "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
            "options": {"baseURL": format!("{}/v1", mock.url), "apiKey": "mock-key"},
            "models": {"mock-model": {"name": "Mock Model",
                                      "limit": {"context": 400000, "output": 128000}}}}}});
    let out = run_cli(
        &bin,
        &["run", "--format", "json", "--title", "mock-session"],
        &proj,
        &[
            ("HOME", home.clone().into()),
            ("TMPDIR", home.join("tmp").into()),
            ("OPENCODE_CONFIG_CONTENT", provider.to_string().into()),
            ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
            ("OPENCODE_DISABLE_SHARE", "1".into()),
            ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".into()),
            ("OPENCODE_DISABLE_CLAUDE_CODE", "1".into()),
        ],
    );
    assert_round_trip(&mock, "tfc_tfc_check", &out);
}
