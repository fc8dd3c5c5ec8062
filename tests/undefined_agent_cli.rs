//! W0701 (an agent without a definition file) end to end: `tfc check` reports it when the
//! configured backend would make `tfc run` warn, and `tfc run` says it in one line.

mod common;

use std::path::Path;
use std::process::Command;

use common::{Outcome, root, scratch};

/// `tfc args…` in `dir`, with no user configuration and no `TFC_BACKEND`.
fn tfc_at(dir: &Path, args: &[&str]) -> Outcome {
    let out = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("HOME", dir.join("no-home"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("TFC_BACKEND")
        .output()
        .expect("run tfc");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

const FLOW: &str = r#"{"name": "w", "phases": [
    {"id": "a", "agent": "scout", "task": "A"},
    {"id": "b", "agent": "scout", "dependsOn": ["a"], "task": "B"},
    {"id": "c", "type": "parallel", "dependsOn": ["b"], "branches": [
        {"task": "C1", "agent": "writer"}, {"task": "C2", "agent": "scout"}]},
    {"id": "d", "agent": "critic", "dependsOn": ["c"], "task": "D"}
]}"#;

fn project(name: &str, configured: bool) -> std::path::PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc/agents")).expect("create .tfc");
    std::fs::write(dir.join("flow.json"), FLOW).expect("write flow");
    std::fs::write(
        dir.join(".tfc/agents/critic.md"),
        "---\nname: critic\ndescription: reviews\n---\nYou review.\n",
    )
    .expect("write definition");
    if configured {
        let agent = root().join("tests/fixtures/agents/scripted.sh");
        std::fs::write(
            dir.join(".tfc/config.toml"),
            format!(
                "default_backend = \"mine\"\n[backends.mine]\nkind = \"command\"\ncommand = [{:?}]\n",
                agent.to_str().expect("utf-8")
            ),
        )
        .expect("write config");
    }
    dir
}

#[test]
fn check_reports_what_run_would_and_run_says_it_once() {
    let dir = project("w0701-configured", true);
    let out = tfc_at(&dir, &["check", "flow.json"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stderr.matches("[W0701]").count(), 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("agent 'scout' has no definition file; it runs with an empty system prompt"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("agent 'writer'"), "{}", out.stderr);
    assert!(!out.stderr.contains("'critic'"), "{}", out.stderr);
    assert!(
        out.stderr.contains("ok: 0 errors, 2 warnings"),
        "{}",
        out.stderr
    );
    let json = tfc_at(&dir, &["check", "flow.json", "--format", "json"]);
    assert_eq!(
        json.stdout.matches(r#""code":"W0701""#).count(),
        2,
        "{json:?}"
    );
    // Allowed: silent.
    let allowed = tfc_at(&dir, &["check", "flow.json", "--allow", "W0701"]);
    assert!(!allowed.stderr.contains("W0701"), "{}", allowed.stderr);

    let run = tfc_at(&dir, &["run", "flow.json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().filter(|l| l.contains("W0701")).collect();
    assert_eq!(
        lines,
        [
            "warning[W0701]: agents without a definition file run with an empty system prompt: scout (first used by 'a'), writer (first used by 'c'); add .tfc/agents/<name>.md for each (`name:` and `description:` frontmatter)"
        ]
    );
    assert!(!run.stderr.contains('╭'), "no report boxes: {}", run.stderr);
}

#[test]
fn without_a_configured_backend_check_says_nothing() {
    // What would serve the agents is not known to `tfc check` (auto-detection, flags).
    let dir = project("w0701-unconfigured", false);
    let out = tfc_at(&dir, &["check", "flow.json"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!out.stderr.contains("W0701"), "{}", out.stderr);
    // A dry run never warns.
    let run = tfc_at(&dir, &["run", "flow.json", "--dry-run"]);
    assert!(!run.stderr.contains("W0701"), "{}", run.stderr);
}
