//! Every shell command in README.md works as written. The fenced `sh` blocks are extracted;
//! each command must be in the list below (and each listed command in the README), which
//! says how the test runs it: as written, in a scratch project holding a copy of `examples/`
//! and `.tfc/agents/`, with the built `tfc` first on `PATH`, offline; or, for the few that
//! cannot run here, why not.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{root, scratch};

/// How the test exercises one README command.
enum How {
    /// Run as written: the exit code, and a text stdout must contain ("" = anything).
    Run(i32, &'static str),
    /// Run with a part replaced by what only exists at test time (a run id).
    Replace(&'static str, fn(&Path) -> String, i32, &'static str),
    /// Run as this command instead (the README's `cargo run --release --` is the built binary).
    As(&'static str, i32, &'static str),
    /// Not run, and why.
    Skip(&'static str),
}

/// In the order the test runs them (later commands read the runs earlier ones made).
const COMMANDS: &[(&str, How)] = &[
    (
        "cargo test",
        How::Skip("the test suite itself (this test is part of it)"),
    ),
    (
        "cargo install --path .",
        How::Skip(
            "a release build of this crate (minutes on two cores); every test here runs the \
             binary it installs",
        ),
    ),
    ("tfc run flow.json --incremental", How::Run(5, "")),
    ("tfc resume last --approve deploy", How::Run(0, "shipped")),
    (
        "cargo run --release -- run examples/changelog/flow.json --replay examples/changelog/replay.jsonl",
        How::As(
            "tfc run examples/changelog/flow.json --replay examples/changelog/replay.jsonl",
            0,
            "# 2.0.0",
        ),
    ),
    ("tfc check examples/changelog/flow.json", How::Run(0, "")),
    (
        "tfc graph examples/changelog/flow.json",
        How::Run(0, "flowchart"),
    ),
    (
        "tfc run examples/changelog/flow.json --replay examples/changelog/replay.jsonl",
        How::Run(0, "## Breaking changes"),
    ),
    (
        "tfc eval when '{steps.triage.json.severity} == high' --ctx examples/triage-context.json",
        How::Run(0, "true"),
    ),
    ("tfc schema > flow.schema.json", How::Run(0, "")),
    // No claude or codex CLI on this PATH: the run stops before anything executes.
    (
        "tfc run examples/changelog/flow.json --backend claude",
        How::Run(3, ""),
    ),
    (
        "tfc run examples/changelog/flow.json --backend codex",
        How::Run(3, ""),
    ),
    (
        "tfc run examples/changelog/flow.json --agent-cmd \"my-agent --quiet\"",
        How::Run(0, "# 2.0.0"),
    ),
    (
        "tfc run examples/changelog/flow.json --dry-run=scripts",
        How::Run(0, "Classify commit"),
    ),
    ("tfc runs", How::Run(0, "changelog")),
    (
        "tfc runs changelog --status failed --limit 5 --format json",
        How::Run(0, "[]"),
    ),
    ("tfc show last", How::Run(0, "notes")),
    (
        "tfc show changelog-mx4 notes",
        How::Replace("changelog-mx4", newest_changelog_prefix, 0, "# 2.0.0"),
    ),
    ("tfc show last notes --limit 200", How::Run(0, "more chars")),
    ("tfc list", How::Run(0, "")),
    ("tfc init", How::Run(0, "")),
    ("tfc doctor", How::Run(0, "")),
    ("tfc init --host claude --host codex", How::Run(0, "")),
    ("tfc init --host claude --dry-run", How::Run(0, "")),
    ("tfc init --host claude", How::Run(0, "")),
    ("tfc init --host codex", How::Run(0, "")),
    ("tfc init --host gemini", How::Run(0, "")),
    ("tfc init --host opencode", How::Run(0, "")),
    ("tfc init --host pi", How::Run(0, "")),
];

/// The commands of README.md's `sh` blocks: one a line, comments and blank lines dropped.
fn readme_commands() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in text.lines() {
        let t = line.trim();
        if !in_sh {
            in_sh = t == "```sh";
            continue;
        }
        if t.starts_with("```") {
            in_sh = false;
            continue;
        }
        // A comment starts at a `#` after whitespace (no command here has one in it).
        let cmd = match t.find(" #") {
            Some(i) => t[..i].trim_end(),
            None => t,
        };
        if !cmd.is_empty() && !cmd.starts_with('#') && !out.iter().any(|c| c == cmd) {
            out.push(cmd.to_owned());
        }
    }
    out
}

#[test]
fn the_list_is_the_readme() {
    let readme = readme_commands();
    assert!(readme.len() >= 20, "{readme:#?}");
    for c in &readme {
        assert!(
            COMMANDS.iter().any(|(k, _)| k == c),
            "README command not exercised by this test: {c}"
        );
    }
    for (k, _) in COMMANDS {
        assert!(
            readme.iter().any(|c| c == k),
            "listed here but not in the README: {k}"
        );
    }
}

/// The id prefix of the newest changelog run, unique among the project's runs.
fn newest_changelog_prefix(dir: &Path) -> String {
    let runs = dir.join(".tfc/runs/changelog");
    let mut ids: Vec<(std::time::SystemTime, String)> = std::fs::read_dir(&runs)
        .expect("changelog runs")
        .flatten()
        .map(|e| {
            let t = e.metadata().and_then(|m| m.modified()).expect("mtime");
            (t, e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    ids.sort();
    let id = ids.pop().expect("a changelog run").1;
    id[..id.len() - 2].to_owned()
}

/// The scratch project: the examples, the agent definitions, a flow with an approval named
/// `deploy`, a config whose default backend is a command, and `bin/` with `tfc` and
/// `my-agent` (the demo agent).
fn project() -> (PathBuf, PathBuf) {
    let dir = scratch("readme-commands");
    let copy = |from: &Path, to: &Path| {
        let st = Command::new("cp")
            .arg("-R")
            .arg(from)
            .arg(to)
            .status()
            .expect("cp");
        assert!(st.success(), "copy {}", from.display());
    };
    copy(&root().join("examples"), &dir.join("examples"));
    std::fs::create_dir_all(dir.join(".tfc")).expect(".tfc");
    copy(&root().join(".tfc/agents"), &dir.join(".tfc/agents"));
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name":"deploy-flow","phases":[
 {"id":"build","task":"build it"},
 {"id":"deploy","type":"approval","dependsOn":["build"],"task":"ship?"},
 {"id":"ship","dependsOn":["deploy"],"task":"shipped","final":true}
]}"#,
    )
    .expect("flow.json");
    std::fs::write(
        dir.join(".tfc/config.toml"),
        "default_backend = \"echo\"\n[backends.echo]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"cat >/dev/null; echo shipped\"]\n",
    )
    .expect("config");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_tfc"), bin.join("tfc")).expect("link tfc");
    let agent = bin.join("my-agent");
    std::fs::copy(root().join("examples/changelog/demo-agent.sh"), &agent).expect("my-agent");
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::create_dir_all(dir.join("home")).expect("home");
    (dir, bin)
}

fn sh(dir: &Path, bin: &Path, cmd: &str) -> (i32, String, String) {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("HOME", dir.join("home"))
        .env("CODEX_HOME", dir.join("home/.codex"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    let out = c.output().expect("run sh");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_readme_command_runs_as_documented() {
    let (dir, bin) = project();
    let mut ran = 0;
    for (cmd, how) in COMMANDS {
        let (line, code, want) = match how {
            How::Skip(why) => {
                eprintln!("not run: {cmd}: {why}");
                continue;
            }
            How::Run(code, want) => ((*cmd).to_owned(), *code, *want),
            How::As(instead, code, want) => ((*instead).to_owned(), *code, *want),
            How::Replace(part, with, code, want) => (cmd.replace(part, &with(&dir)), *code, *want),
        };
        let (got, stdout, stderr) = sh(&dir, &bin, &line);
        assert_eq!(got, code, "{line}\nstdout:\n{stdout}\nstderr:\n{stderr}");
        assert!(
            stdout.contains(want),
            "{line}: {want:?} not on stdout:\n{stdout}\nstderr:\n{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{line}: {stderr}");
        ran += 1;
    }
    assert_eq!(ran, COMMANDS.len() - 2);
    // What the commands left behind is what the README says they leave.
    let schema = std::fs::read_to_string(dir.join("flow.schema.json")).expect("schema file");
    assert!(schema.contains("\"$schema\""), "{schema}");
    for file in [".mcp.json", ".gemini/settings.json", "opencode.json"] {
        let text = std::fs::read_to_string(dir.join(file)).expect(file);
        assert!(text.contains("\"tfc\""), "{file}: {text}");
    }
    let codex = std::fs::read_to_string(dir.join("home/.codex/config.toml")).expect("codex");
    assert!(codex.contains("[mcp_servers.tfc]"), "{codex}");
}
