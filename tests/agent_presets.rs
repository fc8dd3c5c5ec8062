//! The presets against the REAL agent CLIs, each pointed at the mock model provider of
//! `../shared/mockllm/server.py` on 127.0.0.1 (the set-up of `../shared/mockllm/run-cli.sh`,
//! reproduced here: a fresh HOME per call, config files and environment per CLI, telemetry,
//! update checks and plugin traffic off). Every call goes through the library API
//! (`presets::by_name(..).call(..)`), so argv, stdin, the environment allowlists, the
//! supervisor and the stream parsers are all exercised against the real binaries.
//!
//! Needs the CLIs from npm and python3. Install them once (about 1.3 GB, ~40 s):
//!
//! ```sh
//! mkdir -p /tmp/agent-clis && cd /tmp/agent-clis && npm init -y >/dev/null
//! npm install @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0 \
//!   @google/gemini-cli@0.61.0 opencode-ai@1.18.33 @mariozechner/pi-coding-agent@0.73.1
//! TFC_AGENT_CLIS=/tmp/agent-clis/node_modules/.bin cargo test --test agent_presets
//! ```
//!
//! `.ci/run` does this (into `target/agent-clis`). Without `TFC_AGENT_CLIS`, or without
//! `../shared/mockllm` (override: `TFC_MOCKLLM=DIR`), every test says `SKIPPED` on stderr and
//! passes — or fails, with `TFC_REQUIRE_REAL_PARTS=1` (CI). A CLI missing from the folder is
//! skipped the same way.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
mod mock;
use mock::Mock;
use tfc::agent::presets::{self, PresetConfig};
use tfc::agent::{Agent, Cancel, Outcome, Request, StopReason, ToolPolicy, Usage};

const PARIS: &str = "The capital of France is Paris. (canned by mockllm)";

/// Where the CLIs and the mock are; `None` (with a note) when the tests cannot run here.
struct Setup {
    clis: PathBuf,
    mockllm: PathBuf,
}

/// A note on stderr that `cargo test` shows even for passing tests (the `eprintln!` of a test
/// is captured).
fn note(text: String) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "note: {text}");
}

fn setup(cli: &str) -> Option<Setup> {
    let Some(clis) = std::env::var_os("TFC_AGENT_CLIS").map(PathBuf::from) else {
        common::skip(&format!(
            "{cli}: set TFC_AGENT_CLIS to the npm node_modules/.bin holding the agent CLIs \
             (see tests/agent_presets.rs)"
        ));
        return None;
    };
    let mockllm = std::env::var_os("TFC_MOCKLLM")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/mockllm"));
    if !mockllm.join("server.py").is_file() {
        common::skip(&format!(
            "{cli}: no mock server at {} (set TFC_MOCKLLM)",
            mockllm.display()
        ));
        return None;
    }
    if !clis.join(cli).exists() {
        common::skip(&format!("{cli}: not in {}", clis.display()));
        return None;
    }
    let python = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !python.is_ok_and(|s| s.success()) {
        common::skip(&format!("{cli}: python3 not found"));
        return None;
    }
    Some(Setup { clis, mockllm })
}

fn answers() -> Value {
    json!({
        "default": PARIS,
        "rules": [
            {"match": "bad400", "status": 400, "error": "simulated bad request"},
            {"match": "capital", "answer": PARIS,
             "usage": {"input_tokens": 1000, "output_tokens": 42, "cache_read_input_tokens": 200}}
        ]
    })
}

/// A fresh HOME (with `tmp/`) and work folder for one call.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("home/tmp")).unwrap();
        fs::create_dir_all(dir.path().join("work")).unwrap();
        fs::write(
            dir.path().join("work/hello.txt"),
            "hello from the workdir\n",
        )
        .unwrap();
        Home { dir }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.home().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// The parent environment the preset filters: PATH, HOME, TMPDIR and `vars`.
    fn env(&self, vars: &[(&str, String)]) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = vec![
            ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
            ("HOME".into(), self.home().into()),
            ("TMPDIR".into(), self.home().join("tmp").into()),
            ("LANG".into(), "C.UTF-8".into()),
        ];
        env.extend(vars.iter().map(|(k, v)| (k.into(), v.into())));
        env
    }
}

/// The preset `cli`, configured like `run-cli.sh` does it, for one call in `home`.
fn preset(setup: &Setup, cli: &str, mock: &Mock, home: &Home) -> Arc<dyn Agent> {
    let url = &mock.url;
    let extra_args = Vec::new();
    let mut env_allow = Vec::new();
    let vars: Vec<(&str, String)> = match cli {
        "claude" => {
            env_allow = [
                "DISABLE_AUTOUPDATER",
                "DISABLE_TELEMETRY",
                "DISABLE_ERROR_REPORTING",
            ]
            .map(String::from)
            .into();
            vec![
                ("ANTHROPIC_BASE_URL", url.clone()),
                ("ANTHROPIC_API_KEY", "sk-ant-mock-key".into()),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
                ("CLAUDE_CODE_MAX_RETRIES", "0".into()),
                ("DISABLE_AUTOUPDATER", "1".into()),
                ("DISABLE_TELEMETRY", "1".into()),
                ("DISABLE_ERROR_REPORTING", "1".into()),
            ]
        }
        "codex" => {
            let codex_home = home.home().join(".codex");
            home.write(
                ".codex/config.toml",
                &format!(
                    "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n\
                     check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n\n\
                     [otel]\nexporter = \"none\"\nmetrics_exporter = \"none\"\n\n\
                     [features]\nplugins = false\n\n[model_providers.mock]\nname = \"mock\"\n\
                     base_url = \"{url}/v1\"\nenv_key = \"CODEX_MOCK_API_KEY\"\n\
                     wire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n"
                ),
            );
            vec![
                ("CODEX_HOME", codex_home.to_string_lossy().into_owned()),
                ("CODEX_MOCK_API_KEY", "sk-mock-key".into()),
            ]
        }
        "gemini" => {
            home.write(
                ".gemini/settings.json",
                r#"{"security": {"auth": {"selectedType": "gemini-api-key"}},
 "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
 "privacy": {"usageStatisticsEnabled": false},
 "telemetry": {"enabled": false}}"#,
            );
            vec![
                ("GEMINI_API_KEY", "mock-gemini-key".into()),
                ("GOOGLE_GEMINI_BASE_URL", url.clone()),
                ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
            ]
        }
        "opencode" => {
            // opencode npm-installs a plugin in the background on every start: point its
            // registry at the mock (which answers 404).
            home.write(".npmrc", &format!("registry={url}/npm-registry/\n"));
            // No `--title` here: the preset passes its own (else opencode asks the model again).
            let config = json!({
                "autoupdate": false, "share": "disabled", "model": "mock/mock-model",
                "provider": {"mock": {
                    "npm": "@ai-sdk/openai-compatible", "name": "Mock (OpenAI chat)",
                    "options": {"baseURL": format!("{url}/v1"), "apiKey": "mock-key"},
                    "models": {"mock-model": {"name": "Mock Model",
                        "cost": {"input": 1.25, "output": 10},
                        "limit": {"context": 400000, "output": 128000}}}}}
            });
            vec![
                ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
                ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
                ("OPENCODE_DISABLE_SHARE", "1".into()),
                ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".into()),
                ("OPENCODE_DISABLE_CLAUDE_CODE", "1".into()),
                ("OPENCODE_CONFIG_CONTENT", config.to_string()),
            ]
        }
        "pi" => {
            let models = json!({"providers": {"mock": {
                "baseUrl": format!("{url}/v1"), "api": "openai-completions", "apiKey": "mock-key",
                "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
                "models": [{"id": "mock-model", "name": "Mock", "reasoning": false,
                    "input": ["text"], "contextWindow": 128000, "maxTokens": 16000,
                    "cost": {"input": 1.25, "output": 10, "cacheRead": 0.125, "cacheWrite": 0}}]}}});
            home.write(".pi/agent/models.json", &models.to_string());
            vec![
                ("PI_OFFLINE", "1".into()),
                ("PI_SKIP_VERSION_CHECK", "1".into()),
            ]
        }
        _ => unreachable!(),
    };
    let config = PresetConfig {
        bin: Some(setup.clis.join(cli).to_string_lossy().into_owned()),
        extra_args,
        env_allow,
        base_env: Some(home.env(&vars)),
        ..PresetConfig::default()
    };
    presets::by_name(cli, config).unwrap()
}

fn request(cli: &str, home: &Home, prompt: &str) -> Request {
    Request {
        system_prompt: "You answer in one short sentence. SYSMARK-7".into(),
        model: match cli {
            // `-m` skips gemini's router model.
            "gemini" => Some("gemini-2.5-pro".into()),
            // The model of codex's config.toml, named so that tfc knows it.
            "codex" => Some("gpt-5.5".into()),
            "opencode" | "pi" => Some("mock/mock-model".into()),
            _ => None,
        },
        cwd: home.work(),
        idle_timeout: Some(Duration::from_secs(120)),
        wall_timeout: Some(Duration::from_secs(240)),
        ..Request::new("run-real", "ask", "asker", prompt)
    }
}

fn call(agent: &Arc<dyn Agent>, request: Request) -> Outcome {
    let started = Instant::now();
    let o = smol::block_on(agent.call(request, Cancel::never()));
    eprintln!(
        "{}: {:?} in {:.1}s, usage {:?}, model {:?}, error {:?}",
        agent.name(),
        o.stop,
        started.elapsed().as_secs_f64(),
        o.usage,
        o.model,
        o.error
    );
    o
}

/// Names of the tools the CLI offered the model, from the logged requests that matched `rule`.
fn offered_tools(mock: &Mock) -> Vec<String> {
    let mut names: Vec<String> = mock
        .requests()
        .iter()
        .filter(|r| r["rule"] == 1)
        .flat_map(|r| r["body"]["tools"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| {
            t["name"]
                .as_str()
                .or_else(|| t["function"]["name"].as_str())
                .map(str::to_owned)
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// How many model requests (any wire API; not the npm-registry stand-in) the mock has seen.
fn model_requests(mock: &Mock) -> usize {
    mock.requests()
        .iter()
        .filter(|r| {
            ["anthropic", "responses", "chat", "gemini"].contains(&r["api"].as_str().unwrap_or(""))
        })
        .count()
}

/// One line per logged request: API, path and the start of the last user message.
fn request_summary(mock: &Mock) -> String {
    mock.requests()
        .iter()
        .map(|r| {
            let asked: String = r["last_user"]
                .as_str()
                .unwrap_or("")
                .chars()
                .take(80)
                .collect();
            format!("\n  {} {} {asked:?}", r["api"], r["path"])
        })
        .collect()
}

/// The cost is `micro_usd` millionths of a dollar (up to float noise).
fn assert_cost(o: &Outcome, micro_usd: f64) {
    let cost = o.usage.cost_usd.expect("a cost");
    assert!(
        (cost - micro_usd / 1e6).abs() < 1e-12,
        "{cost} != {micro_usd}e-6"
    );
}

/// One answer and one HTTP 400 through the preset `cli`; `check` gets the answer's outcome,
/// `failed` the failure's.
fn answer_and_failure(
    cli: &str,
    tools: ToolPolicy,
    check: impl Fn(&Outcome, &Mock),
    failed: impl Fn(&Outcome),
) {
    let Some(setup) = setup(cli) else { return };
    let mock_dir = tempfile::tempdir().unwrap();
    let mock = Mock::start(&setup.mockllm, mock_dir.path(), &answers());

    let home = Home::new();
    let agent = preset(&setup, cli, &mock, &home);
    let mut r = request(cli, &home, "What is the capital of France?");
    r.tools = tools;
    let o = call(&agent, r);
    assert!(o.is_ok(), "{cli}: {o:?}");
    assert_eq!(o.output, PARIS, "{cli}");
    assert_eq!(o.exit_code, Some(0));
    // Every provider request is accounted for: one per recorded turn, none hidden (opencode
    // asks for a session title unless given one).
    let answered = model_requests(&mock);
    note(format!("{cli}: {answered} model request(s) for the answer"));
    assert_eq!(answered, 1, "{cli}: {}", request_summary(&mock));
    assert_eq!(o.usage.turns, 1, "{cli}");
    // The prompt and the system prompt reached the model.
    let asked: Vec<Value> = mock
        .requests()
        .into_iter()
        .filter(|r| r["rule"] == 1)
        .collect();
    assert!(!asked.is_empty(), "{cli}: no request matched the prompt");
    assert!(
        asked
            .iter()
            .all(|r| r["body"].to_string().contains("SYSMARK-7")),
        "{cli}: system prompt missing from the request"
    );
    check(&o, &mock);

    let home = Home::new();
    let agent = preset(&setup, cli, &mock, &home);
    let o = call(&agent, request(cli, &home, "Please fail: bad400"));
    assert_eq!(o.stop, StopReason::Failed, "{cli}: {o:?}");
    let error = o.error.clone().unwrap_or_default();
    assert!(error.contains("simulated bad request"), "{cli}: {error}");
    // The refused request: one request, one turn, no tokens, cost unknown — alike everywhere.
    let refused = model_requests(&mock) - answered;
    note(format!("{cli}: {refused} model request(s) for the failure"));
    assert_eq!(refused, 1, "{cli}: {}", request_summary(&mock));
    assert_eq!(
        o.usage,
        Usage {
            turns: 1,
            ..Usage::default()
        },
        "{cli}"
    );
    // The model the stream named, else the configured one; never absent when either knows.
    let configured = request(cli, &home, "").model;
    assert!(
        o.model.is_some() || configured.is_none(),
        "{cli}: no model recorded"
    );
    failed(&o);
}

#[test]
fn claude() {
    let read_only = ToolPolicy::ReadOnly(vec!["Read".into(), "Grep".into(), "Glob".into()]);
    answer_and_failure(
        "claude",
        read_only,
        |o, mock| {
            assert_eq!(o.usage.input, 1000);
            assert_eq!(o.usage.output, 42);
            assert_eq!(o.usage.cache_read, 200);
            assert_eq!(o.usage.turns, 1);
            // claude prices the default model itself: $5 / $25 / $0.50 (cache read) per M.
            assert_cost(o, 1000.0 * 5.0 + 42.0 * 25.0 + 200.0 * 0.5);
            assert_eq!(o.model.as_deref(), Some("claude-opus-4-8"));
            // The read-only list is enforced: nothing else is offered to the model.
            assert_eq!(offered_tools(mock), ["Glob", "Grep", "Read"]);
        },
        |o| {
            // From `system/init`, which says `claude-opus-4-8[1m]`.
            assert_eq!(o.model.as_deref(), Some("claude-opus-4-8"));
        },
    );
}

#[test]
fn codex() {
    answer_and_failure(
        "codex",
        ToolPolicy::Default,
        |o, _| {
            // codex counts cached tokens in its input tokens.
            assert_eq!(o.usage.input, 1200);
            assert_eq!(o.usage.output, 42);
            assert_eq!(o.usage.cache_read, 200);
            assert_eq!(o.usage.cost_usd, None);
            // codex names no model: the configured one is recorded.
            assert_eq!(o.model.as_deref(), Some("gpt-5.5"));
        },
        |o| {
            assert_eq!(o.model.as_deref(), Some("gpt-5.5"));
        },
    );
}

#[test]
fn gemini() {
    answer_and_failure(
        "gemini",
        ToolPolicy::Default,
        |o, _| {
            // gemini counts cached tokens in its input tokens.
            assert_eq!(o.usage.input, 1200);
            assert_eq!(o.usage.output, 42);
            assert_eq!(o.usage.cache_read, 200);
            assert_eq!(o.usage.cost_usd, None);
            assert_eq!(o.model.as_deref(), Some("gemini-2.5-pro"));
        },
        |o| {
            assert_eq!(o.model.as_deref(), Some("gemini-2.5-pro"));
        },
    );
}

#[test]
fn opencode() {
    let read_only = ToolPolicy::ReadOnly(vec!["read".into()]);
    answer_and_failure(
        "opencode",
        read_only,
        |o, mock| {
            assert_eq!(o.usage.input, 1000);
            assert_eq!(o.usage.output, 42);
            assert_eq!(o.usage.cache_read, 200);
            // The configured prices: $1.25 / $10 per M, no cache-read price.
            assert_cost(o, 1000.0 * 1.25 + 42.0 * 10.0);
            let tools = offered_tools(mock);
            assert!(
                tools
                    .iter()
                    .all(|t| ["read", "grep", "glob", "list"].contains(&t.as_str())),
                "{tools:?}"
            );
            // opencode names no model: the configured one is recorded.
            assert_eq!(o.model.as_deref(), Some("mock/mock-model"));
        },
        |o| {
            assert_eq!(o.model.as_deref(), Some("mock/mock-model"));
        },
    );
}

#[test]
fn pi() {
    answer_and_failure(
        "pi",
        ToolPolicy::Default,
        |o, _| {
            assert_eq!(o.usage.input, 1000);
            assert_eq!(o.usage.output, 42);
            assert_eq!(o.usage.cache_read, 200);
            // The configured prices: $1.25 / $10 / $0.125 (cache read) per M.
            assert_cost(o, 1000.0 * 1.25 + 42.0 * 10.0 + 200.0 * 0.125);
            assert_eq!(o.model.as_deref(), Some("mock-model"));
        },
        |o| {
            assert_eq!(o.model.as_deref(), Some("mock-model"));
        },
    );
}
