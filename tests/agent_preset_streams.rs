//! The presets end to end through the `Agent` trait, with a stand-in binary (`bin`) that
//! records its argv, stdin and environment and replays a recorded stream from
//! `tests/fixtures/agent-streams/`. The real CLIs are driven in `tests/agent_presets.rs`.

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tfc::agent::presets::{self, PresetConfig};
use tfc::agent::{Agent, Cancel, Outcome, Request, StopReason, ToolPolicy, Usage};

const FAKE: &str = r#"#!/bin/sh
# Stand-in agent CLI: record the call, replay a stream, then maybe linger.
printf '%s\n' "$@" > "$FAKE_DIR/argv"
readlink /proc/self/fd/0 > "$FAKE_DIR/stdin-source"
cat > "$FAKE_DIR/stdin"
env > "$FAKE_DIR/env"
for a in "$@"; do [ -f "$a" ] && cp "$a" "$FAKE_DIR/file-arg" && stat -c %a "$a" > "$FAKE_DIR/file-mode"; done
[ -n "$FAKE_STREAM" ] && cat "$FAKE_STREAM"
[ -n "$FAKE_STDERR" ] && printf '%s\n' "$FAKE_STDERR" >&2
[ -n "$FAKE_AFTER" ] && eval "$FAKE_AFTER"
exit "${FAKE_EXIT:-0}"
"#;

struct Fake {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl Fake {
    fn new() -> Fake {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("fake-cli");
        fs::write(&bin, FAKE).unwrap();
        fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
        Fake { dir, bin }
    }

    /// The preset `name` with the stand-in as its binary. `vars`: FAKE_* settings plus any
    /// other variables of the parent environment.
    fn preset(&self, name: &str, vars: &[(&str, &str)]) -> Arc<dyn Agent> {
        let mut env: Vec<(OsString, OsString)> = vec![
            ("PATH".into(), std::env::var_os("PATH").unwrap()),
            ("FAKE_DIR".into(), self.dir.path().into()),
        ];
        env.extend(vars.iter().map(|(k, v)| (k.into(), v.into())));
        let config = PresetConfig {
            bin: Some(self.bin.to_string_lossy().into_owned()),
            env_allow: vec!["FAKE_*".into()],
            base_env: Some(env),
            kill_grace: Duration::from_millis(300),
            ..PresetConfig::default()
        };
        presets::by_name(name, config).unwrap()
    }

    fn recorded(&self, what: &str) -> String {
        fs::read_to_string(self.dir.path().join(what)).unwrap_or_default()
    }
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agent-streams")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn request(prompt: &str) -> Request {
    Request {
        cwd: PathBuf::new(),
        idle_timeout: Some(Duration::from_secs(20)),
        wall_timeout: Some(Duration::from_secs(60)),
        item_index: Some(1),
        ..Request::new("run-7", "review#1", "reviewer", prompt)
    }
}

fn call(agent: &Arc<dyn Agent>, request: Request) -> Outcome {
    smol::block_on(agent.call(request, Cancel::never()))
}

const PARIS: &str = "The capital of France is Paris. (canned by mockllm)";

#[test]
fn recorded_answers_through_every_preset() {
    let fake = Fake::new();
    let cases: [(&str, &str, Usage, Option<&str>); 5] = [
        (
            "claude",
            "claude.jsonl",
            Usage {
                calls: 0,
                input: 3216,
                output: 13,
                cache_read: 1200,
                cache_write: 0,
                cost_usd: Some(0.017005),
                turns: 1,
            },
            Some("claude-opus-4-8"),
        ),
        (
            "codex",
            "codex.jsonl",
            Usage {
                calls: 0,
                input: 8145,
                output: 13,
                cache_read: 1200,
                cache_write: 0,
                cost_usd: None,
                turns: 1,
            },
            None,
        ),
        (
            "gemini",
            "gemini.jsonl",
            Usage {
                calls: 0,
                input: 7235,
                output: 13,
                cache_read: 1200,
                cache_write: 0,
                cost_usd: None,
                turns: 1,
            },
            Some("gemini-2.5-pro"),
        ),
        (
            "opencode",
            "opencode.jsonl",
            Usage {
                calls: 0,
                input: 2445,
                output: 13,
                cache_read: 1200,
                cache_write: 0,
                cost_usd: Some(0.00318625),
                turns: 1,
            },
            None,
        ),
        (
            "pi",
            "pi.jsonl",
            Usage {
                calls: 0,
                input: 620,
                output: 13,
                cache_read: 0,
                cache_write: 0,
                cost_usd: Some(0.0009050000000000001),
                turns: 1,
            },
            Some("mock-model"),
        ),
    ];
    for (name, file, usage, model) in cases {
        let agent = fake.preset(name, &[("FAKE_STREAM", &fixture(file))]);
        let o = call(&agent, request("What is the capital of France?"));
        assert!(o.is_ok(), "{name}: {o:?}");
        assert_eq!(o.output, PARIS, "{name}");
        assert_eq!(o.usage, usage, "{name}");
        assert_eq!(o.model.as_deref(), model, "{name}");
        assert_eq!(o.exit_code, Some(0));
    }
}

#[test]
fn recorded_failures_through_every_preset() {
    let fake = Fake::new();
    let cases = [
        (
            "claude",
            "claude-error.jsonl",
            "1",
            "API Error: 400 simulated bad request",
        ),
        (
            "codex",
            "codex-error.jsonl",
            "1",
            r#"{"error": {"message": "simulated bad request", "type": "invalid_request_error", "param": null, "code": null}}"#,
        ),
        // gemini exits with the HTTP status mod 256.
        (
            "gemini",
            "gemini-error.jsonl",
            "144",
            r#"[API Error: {"error":{"code":400,"message":"simulated bad request","status":"INVALID_ARGUMENT"}}]"#,
        ),
        (
            "opencode",
            "opencode-error.jsonl",
            "1",
            "APIError: simulated bad request (HTTP 400)",
        ),
        // pi exits 0 and says so in the stream.
        ("pi", "pi-error.jsonl", "0", "400 simulated bad request"),
    ];
    for (name, file, code, error) in cases {
        let agent = fake.preset(
            name,
            &[("FAKE_STREAM", &fixture(file)), ("FAKE_EXIT", code)],
        );
        let mut r = request("bad400");
        r.model = Some("configured-model".into());
        let o = call(&agent, r);
        assert_eq!(o.stop, StopReason::Failed, "{name}: {o:?}");
        assert_eq!(o.error.as_deref(), Some(error), "{name}");
        assert_eq!(o.exit_code, Some(code.parse().unwrap()), "{name}");
        // Every preset records a refused request alike: one turn, no tokens, cost unknown
        // (claude and pi print a cost of 0, codex and opencode count no turn of their own).
        assert_eq!(
            o.usage,
            Usage {
                turns: 1,
                ..Usage::default()
            },
            "{name}"
        );
        // The model the stream named (claude's without `[1m]`), else the configured one.
        let model = match name {
            "claude" => "claude-opus-4-8",
            "gemini" => "gemini-2.5-pro",
            "pi" => "mock-model",
            _ => "configured-model",
        };
        assert_eq!(o.model.as_deref(), Some(model), "{name}");
    }
}

#[test]
fn configured_model_when_the_stream_names_none() {
    let fake = Fake::new();
    // codex and opencode never name the model; a claude stream cut before any event that does.
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("claude-bare.jsonl");
    fs::write(
        &bare,
        r#"{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","usage":{"input_tokens":3,"output_tokens":1},"total_cost_usd":0.0001}"#,
    )
    .unwrap();
    for (name, stream, model, recorded) in [
        ("codex", fixture("codex.jsonl"), "gpt-5.5", "gpt-5.5"),
        (
            "opencode",
            fixture("opencode.jsonl"),
            "mock/mock-model",
            "mock/mock-model",
        ),
        (
            "claude",
            bare.to_string_lossy().into_owned(),
            "claude-opus-4-8[1m]",
            "claude-opus-4-8",
        ),
    ] {
        let agent = fake.preset(name, &[("FAKE_STREAM", &stream)]);
        let mut r = request("x");
        let o = call(&agent, r.clone());
        assert!(o.is_ok(), "{name}: {o:?}");
        assert_eq!(o.model, None, "{name}: nothing configured, nothing named");
        r.model = Some(model.into());
        let o = call(&agent, r);
        assert_eq!(o.model.as_deref(), Some(recorded), "{name}");
    }
}

#[test]
fn tool_rounds_through_every_preset() {
    let fake = Fake::new();
    for name in ["claude", "codex", "gemini", "opencode", "pi"] {
        let agent = fake.preset(
            name,
            &[("FAKE_STREAM", &fixture(&format!("{name}-tool.jsonl")))],
        );
        let o = call(&agent, request("Please read hello.txt"));
        assert!(o.is_ok(), "{name}: {o:?}");
        assert_eq!(o.output, "The file says: hello from the workdir", "{name}");
    }
}

#[test]
fn prompt_channels() {
    let fake = Fake::new();
    let mut r = request("Summarise.");
    r.system_prompt = "You are terse.".into();
    r.model = Some("m-1".into());

    let claude = fake.preset("claude", &[]);
    call(&claude, r.clone());
    assert_eq!(fake.recorded("stdin"), "Summarise.");
    assert_eq!(
        fake.recorded("argv"),
        "-p\n--output-format\nstream-json\n--verbose\n--model\nm-1\n\
         --append-system-prompt\nYou are terse.\n"
    );

    for name in ["codex", "gemini", "opencode"] {
        call(&fake.preset(name, &[]), r.clone());
        assert_eq!(
            fake.recorded("stdin"),
            "You are terse.\n\n---\n\nTask: Summarise.",
            "{name}"
        );
        assert_ne!(fake.recorded("stdin-source").trim(), "/dev/null", "{name}");
    }
    assert_eq!(
        fake.recorded("argv"),
        "run\n--format\njson\n-m\nm-1\n--title\ntfc run-7 review#1\n"
    );

    // pi: argv prompt, stdin /dev/null, system prompt in a private file deleted afterwards.
    call(&fake.preset("pi", &[]), r.clone());
    assert_eq!(fake.recorded("stdin-source").trim(), "/dev/null");
    let argv = fake.recorded("argv");
    let args: Vec<&str> = argv.lines().collect();
    assert_eq!(args.last(), Some(&"Task: Summarise."));
    let i = args
        .iter()
        .position(|a| *a == "--append-system-prompt")
        .unwrap();
    assert_eq!(fake.recorded("file-arg"), "You are terse.");
    assert_eq!(fake.recorded("file-mode").trim(), "600");
    assert!(!Path::new(args[i + 1]).exists());
}

#[test]
fn environment_allowlists() {
    let fake = Fake::new();
    let vars = [
        ("HOME", "/home/agent"),
        ("ANTHROPIC_API_KEY", "a"),
        ("OPENAI_API_KEY", "o"),
        ("GEMINI_API_KEY", "g"),
        ("XDG_CONFIG_HOME", "/x"),
        ("SECRET_TOKEN", "s"),
        ("TFC_LEFTOVER", "stale"),
        ("TFC_RUN_ID", "parent"),
    ];
    let env_of = |name: &str| -> Vec<String> {
        call(&fake.preset(name, &vars), request("x"));
        let mut names: Vec<String> = fake
            .recorded("env")
            .lines()
            .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_owned()))
            .filter(|k| !["PWD", "SHLVL", "_", "OLDPWD"].contains(&k.as_str()))
            .collect();
        names.sort();
        names
    };
    let tfc = [
        "TFC_AGENT",
        "TFC_ATTEMPT",
        "TFC_ITEM_INDEX",
        "TFC_NODE",
        "TFC_PHASE_ID",
        "TFC_RUN_ID",
    ];
    let expect = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["FAKE_DIR", "HOME", "PATH", "XDG_CONFIG_HOME"]
            .iter()
            .chain(extra)
            .chain(&tfc)
            .map(|s| s.to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(env_of("claude"), expect(&["ANTHROPIC_API_KEY"]));
    assert_eq!(env_of("codex"), expect(&["OPENAI_API_KEY"]));
    assert_eq!(env_of("gemini"), expect(&["GEMINI_API_KEY"]));
    assert_eq!(
        env_of("opencode"),
        expect(&["ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY"])
    );
    assert_eq!(
        env_of("pi"),
        expect(&[
            "ANTHROPIC_API_KEY",
            "GEMINI_API_KEY",
            "OPENAI_API_KEY",
            "SECRET_TOKEN"
        ])
    );
    assert!(fake.recorded("env").contains("TFC_RUN_ID=run-7\n"));
    assert!(fake.recorded("env").contains("TFC_ITEM_INDEX=1\n"));
}

#[test]
fn read_only_tools_reach_the_cli() {
    let fake = Fake::new();
    let mut r = request("x");
    r.tools = ToolPolicy::ReadOnly(vec!["read".into(), "grep".into()]);
    call(&fake.preset("opencode", &[]), r.clone());
    assert!(
        fake.recorded("env")
            .contains(r#"OPENCODE_PERMISSION={"*":"deny","read":"allow""#)
    );
    call(&fake.preset("codex", &[]), r.clone());
    assert!(fake.recorded("argv").contains("-s\nread-only\n"));
    r.tools = ToolPolicy::Mutating(vec!["bash".into()]);
    call(&fake.preset("codex", &[]), r.clone());
    assert!(fake.recorded("argv").contains("-s\nworkspace-write\n"));
}

#[test]
fn exit_without_the_terminal_event() {
    let fake = Fake::new();
    let dir = tempfile::tempdir().unwrap();
    for (name, file, lines, event) in [
        ("claude", "claude.jsonl", 2, "result"),
        ("codex", "codex.jsonl", 3, "turn.completed"),
        ("gemini", "gemini.jsonl", 4, "result"),
        ("opencode", "opencode.jsonl", 2, "step_finish"),
        ("pi", "pi.jsonl", 10, "agent_end"),
    ] {
        let text = fs::read_to_string(fixture(file)).unwrap();
        let cut: Vec<&str> = text.lines().take(lines).collect();
        let path = dir.path().join(file);
        fs::write(&path, cut.join("\n") + "\n").unwrap();
        let agent = fake.preset(name, &[("FAKE_STREAM", path.to_str().unwrap())]);
        let o = call(&agent, request("x"));
        assert_eq!(o.stop, StopReason::Failed, "{name}");
        assert_eq!(
            o.error,
            Some(format!("process exited without {event}")),
            "{name}"
        );
    }
}

#[test]
fn non_zero_exit_without_events_names_stderr() {
    let fake = Fake::new();
    let agent = fake.preset(
        "gemini",
        &[
            ("FAKE_EXIT", "41"),
            ("FAKE_STDERR", "Invalid auth method selected."),
        ],
    );
    let o = call(&agent, request("x"));
    assert_eq!(o.stop, StopReason::Failed);
    let error = o.error.unwrap();
    assert!(
        error.ends_with("fake-cli exited with code 41: Invalid auth method selected."),
        "{error}"
    );
    assert_eq!(o.stderr, "Invalid auth method selected.\n");
    // A complete stream with a non-zero exit is still a failure.
    let agent = fake.preset(
        "claude",
        &[
            ("FAKE_STREAM", &fixture("claude.jsonl")),
            ("FAKE_EXIT", "1"),
        ],
    );
    let o = call(&agent, request("x"));
    assert_eq!(o.stop, StopReason::Failed);
    assert!(
        o.error
            .unwrap()
            .ends_with("exited with code 1 after `result`")
    );
    assert_eq!(o.output, PARIS);
}

#[test]
fn protocol_errors_stop_the_process() {
    let fake = Fake::new();
    let dir = tempfile::tempdir().unwrap();
    let malformed = dir.path().join("malformed.jsonl");
    fs::write(
        &malformed,
        "{\"type\":\"turn.started\"}\nWarning: not JSON\n",
    )
    .unwrap();
    let after = dir.path().join("after.jsonl");
    fs::write(
        &after,
        fs::read_to_string(fixture("codex.jsonl")).unwrap() + "{\"type\":\"turn.started\"}\n",
    )
    .unwrap();
    let long = dir.path().join("long.jsonl");
    fs::write(
        &long,
        format!("{{\"type\":\"x\",\"pad\":\"{}\"}}\n", "a".repeat(1 << 20)),
    )
    .unwrap();
    for (path, want) in [
        (&malformed, "malformed event line: Warning: not JSON"),
        (
            &after,
            "output after the terminal `turn.completed` event: {\"type\":\"turn.started\"}",
        ),
        (&long, "wrote a stdout line longer than 1048576 bytes"),
    ] {
        let agent = fake.preset(
            "codex",
            &[
                ("FAKE_STREAM", path.to_str().unwrap()),
                ("FAKE_AFTER", "sleep 1000"),
            ],
        );
        let started = Instant::now();
        let o = call(&agent, request("x"));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(o.stop, StopReason::ProtocolError, "{o:?}");
        assert!(o.error.as_deref().unwrap().ends_with(want), "{o:?}");
    }
}

#[test]
fn pi_is_reaped_after_agent_end() {
    let fake = Fake::new();
    let agent = fake.preset(
        "pi",
        &[
            ("FAKE_STREAM", &fixture("pi.jsonl")),
            ("FAKE_AFTER", "sleep 1000"),
        ],
    );
    let started = Instant::now();
    let o = call(&agent, request("x"));
    let took = started.elapsed();
    assert!(o.is_ok(), "{o:?}");
    assert_eq!(o.output, PARIS);
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(4),
        "{took:?}"
    );
}

#[test]
fn timeouts_missing_binary_and_huge_argv_prompts() {
    let fake = Fake::new();
    let dir = tempfile::tempdir().unwrap();
    let half = dir.path().join("half.jsonl");
    let text = fs::read_to_string(fixture("opencode-tool.jsonl")).unwrap();
    let first: Vec<&str> = text.lines().take(2).collect();
    fs::write(&half, first.join("\n") + "\n").unwrap();
    let agent = fake.preset(
        "opencode",
        &[
            ("FAKE_STREAM", half.to_str().unwrap()),
            ("FAKE_AFTER", "sleep 1000"),
        ],
    );
    let mut r = request("x");
    r.idle_timeout = Some(Duration::from_millis(300));
    let o = call(&agent, r);
    assert_eq!(o.stop, StopReason::IdleTimeout);
    assert_eq!(o.output, "Reading it now.");

    let missing = presets::by_name(
        "claude",
        PresetConfig {
            bin: Some("tfc-no-such-claude".into()),
            ..PresetConfig::default()
        },
    )
    .unwrap();
    let o = call(&missing, request("x"));
    assert_eq!(o.stop, StopReason::BackendMissing);
    assert!(o.error.unwrap().contains("tfc-no-such-claude"));

    let fake = Fake::new();
    let o = call(&fake.preset("pi", &[]), request(&"x".repeat(200 * 1024)));
    assert_eq!(o.stop, StopReason::Failed);
    assert_eq!(
        o.error.as_deref(),
        Some("prompt too large for argv (204806 bytes); use a stdin-capable backend")
    );
    assert_eq!(fake.recorded("argv"), "", "pi must not have been started");
}
