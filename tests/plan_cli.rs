//! `tfc plan` and `tfc run --plan` through the real binary: the table, the JSON, exit 2 on bad
//! input, prices from the configuration, saved sub-flows, and a `--plan` run that starts
//! nothing without a terminal unless `--yes`.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{Outcome, scratch};

const FLOW: &str = r#"{
  "name": "review",
  "budget": {"maxCalls": 5},
  "phases": [
    {"id": "list", "task": "List the changed files.", "output": "json",
     "expect": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3}},
    {"id": "each", "type": "map", "dependsOn": ["list"], "over": "{steps.list.json}", "task": "Review {item}."},
    {"id": "lint", "type": "flow", "use": "lint", "dependsOn": ["each"]},
    {"id": "ok", "type": "gate", "dependsOn": ["lint"], "onBlock": "retry", "task": "Good?", "final": true}
  ]
}"#;

const LINT: &str = r#"{"phases": [{"id": "scan", "task": "Scan."}, {"id": "fix", "dependsOn": ["scan"], "task": "Fix."}]}"#;

const CONFIG: &str = r#"default_backend = "local"
[backends.local]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
price = { input_per_mtok = 1.0, output_per_mtok = 2.0 }
"#;

/// A project with the flow, a saved flow `lint` and a priced backend.
fn project(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("review.json"), FLOW).unwrap();
    std::fs::create_dir_all(dir.join(".tfc/flows")).unwrap();
    std::fs::write(dir.join(".tfc/flows/lint.json"), LINT).unwrap();
    std::fs::write(dir.join(".tfc/config.toml"), CONFIG).unwrap();
    dir
}

/// `tfc args…` in `dir`, stdin not a terminal, no user configuration.
fn tfc(dir: &Path, args: &[&str]) -> Outcome {
    let out = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("HOME", dir.join("no-home"))
        .env("XDG_CONFIG_HOME", dir.join("no-home"))
        .env_remove("TFC_CONFIG")
        .env_remove("TFC_BACKEND")
        .stdin(Stdio::null())
        .output()
        .expect("run tfc");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn text_plan_is_a_table() {
    let dir = project("plan_text");
    let o = tfc(&dir, &["plan", "review.json"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(
        o.stdout,
        "plan of 'review': agent calls if every call succeeds (min to max), and with every retry (worst)

  phase   kind   min  max  worst  prompt tokens
  list    agent    1    1      4  ~6
  each    map      1    3     12  ~2 + run-time values
  lint    flow     2    2      8  ~2
    scan  agent    1    1      4  ~2
    fix   agent    1    1      4  ~1
  ok      gate     1    4     16  ~42
  total            5   10     40

  input tokens   ~53 to ~102  (static prompt text; values inserted at run time not counted)
  output tokens  ?
  cost           ?
  budget         maxCalls 5

? assumptions:
  - output tokens and cost: pass --output-tokens N (the tokens of one answer) to count them

warnings:
  - the run may stop at its budget after 5 calls (maxCalls 5; the plan counts 5 to 10 calls, 40 with every retry)
"
    );
    assert_eq!(o.stderr, "");
}

#[test]
fn json_plan_has_the_stable_shape_and_prices_calls() {
    let dir = project("plan_json");
    let o = tfc(
        &dir,
        &[
            "plan",
            "review.json",
            "--format",
            "json",
            "--items",
            "2",
            "--output-tokens",
            "100",
        ],
    );
    assert_eq!(o.code, 0, "{o:?}");
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("JSON");
    assert_eq!(v["flow"], "review");
    assert_eq!(
        v["phases"][1],
        serde_json::json!({"id": "each", "kind": "map", "calls": {"min": 2, "max": 2, "worst": 8},
                           "promptTokens": 2, "dynamic": true})
    );
    assert_eq!(v["phases"][2]["children"][0]["id"], "scan");
    let total = &v["total"];
    assert_eq!(
        total["calls"],
        serde_json::json!({"min": 6, "max": 9, "worst": 36})
    );
    assert_eq!(
        total["outputTokens"],
        serde_json::json!({"min": 600, "max": 900})
    );
    // Input tokens at $1/M plus 100 output tokens a call at $2/M.
    let min_in = total["inputTokens"]["min"].as_f64().unwrap();
    let cost = total["costUSD"]["min"].as_f64().unwrap();
    assert!(
        (cost - (min_in + 600.0 * 2.0) / 1e6).abs() < 1e-12,
        "{total}"
    );
    assert_eq!(
        v["caps"],
        serde_json::json!({"maxCalls": 5, "maxTokens": null, "maxUSD": null})
    );
    assert_eq!(v["assumptions"], serde_json::json!([]));
}

#[test]
fn bad_input_exits_2_with_the_check_diagnostics() {
    let dir = project("plan_bad");
    std::fs::write(
        dir.join("broken.json"),
        r#"{"phases": [{"id": "a", "task": "x", "dependsOn": ["nope"]}]}"#,
    )
    .unwrap();
    let o = tfc(&dir, &["plan", "broken.json"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert_eq!(o.stdout, "");
    assert!(o.stderr.contains("[E0103]"), "{}", o.stderr);
    assert!(o.stderr.contains("no plan was made"), "{}", o.stderr);

    let o = tfc(&dir, &["plan", "missing.json"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("cannot read flow 'missing.json'"),
        "{}",
        o.stderr
    );

    let o = tfc(&dir, &["plan", "review.json", "--args", "[1]"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("--args must be a JSON object"),
        "{}",
        o.stderr
    );

    std::fs::write(
        dir.join("typed.json"),
        r#"{"args": {"n": {"type": "number", "required": true}}, "phases": [{"id": "a", "task": "{args.n}"}]}"#,
    )
    .unwrap();
    let o = tfc(&dir, &["plan", "typed.json", "n=many"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stderr.contains("[E0502]"), "{}", o.stderr);
}

#[test]
fn run_with_plan_runs_nothing_without_a_terminal_unless_yes() {
    let dir = project("plan_run");
    std::fs::write(
        dir.join("one.json"),
        r#"{"name": "one", "phases": [{"id": "a", "task": "say hi"}]}"#,
    )
    .unwrap();
    // The agent command would leave a mark if it ran.
    let agent = "sh -c 'touch called; echo hi'";
    let o = tfc(&dir, &["run", "one.json", "--plan", "--agent-cmd", agent]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stderr.contains("plan of 'one'"), "{}", o.stderr);
    assert!(o.stderr.contains("nothing was run"), "{}", o.stderr);
    assert_eq!(o.stdout, "");
    assert!(!dir.join("called").exists());
    assert!(!dir.join(".tfc/runs").exists());

    let o = tfc(
        &dir,
        &["run", "one.json", "--plan", "--yes", "--agent-cmd", agent],
    );
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stderr.contains("plan of 'one'"), "{}", o.stderr);
    assert_eq!(o.stdout, "hi\n");
    assert!(dir.join("called").exists());
}

/// On a terminal (a pseudo-terminal from `script`), `--plan` asks: `n` starts nothing, `y`
/// runs.
#[test]
fn run_with_plan_asks_on_a_terminal() {
    if Command::new("script").arg("--version").output().is_err() {
        common::skip("`script` (util-linux) is not installed");
        return;
    }
    let dir = project("plan_tty");
    std::fs::write(
        dir.join("one.json"),
        r#"{"name": "one", "phases": [{"id": "a", "task": "say hi"}]}"#,
    )
    .unwrap();
    let on_a_terminal = |answer: &str| {
        let mut child = Command::new("script")
            .args(["-qfec"])
            .arg(format!(
                "exec {} run one.json --plan --agent-cmd \"sh -c 'touch called; echo hi'\"",
                env!("CARGO_BIN_EXE_tfc")
            ))
            .arg("/dev/null")
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .env("HOME", dir.join("no-home"))
            .env("XDG_CONFIG_HOME", dir.join("no-home"))
            .env_remove("TFC_CONFIG")
            .env_remove("TFC_BACKEND")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run script");
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(answer.as_bytes()).expect("answer");
        drop(stdin);
        let out = child.wait_with_output().expect("wait for script");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, screen) = on_a_terminal("n\n");
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("plan of 'one'"), "{screen}");
    assert!(
        screen.contains("Start the run? [y/N] not started"),
        "{screen}"
    );
    assert!(!dir.join("called").exists());
    let (code, screen) = on_a_terminal("y\n");
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("hi"), "{screen}");
    assert!(dir.join("called").exists());
}
