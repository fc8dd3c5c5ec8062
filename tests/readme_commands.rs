//! Every shell command in README.md works as written. The fenced `sh` blocks are extracted;
//! each command must be in the list below (and each listed command in the README), which
//! says how the test runs it: as written, in a scratch project holding a copy of `examples/`
//! and `.tfc/agents/`, with the built `tfc` first on `PATH`, offline; or, for the few that
//! cannot run here, why not. It also keeps the rest of the README true: set-up is two
//! commands, the demo's stderr shown there is what the demo prints (summary line included),
//! and the one Rust block (the library call) is the one `src/lib.rs` compiles as a doc test.

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
        "curl --proto '=https' --tlsv1.2 -LsSf https://github.com/tfc-dev/tfc/releases/latest/download/tfc-cli-installer.sh | sh",
        How::Skip(
            "downloads from the release page; tests/dist_install.rs runs this installer on the \
             locally built archive, offline",
        ),
    ),
    (
        "npx tfc-cli check flow.json",
        How::Skip(
            "fetches from the npm registry; tests/dist_install.rs installs the packed npm \
             packages offline and runs npx tfc",
        ),
    ),
    (
        "uvx --from tfc-cli tfc check flow.json",
        How::Skip("fetches from PyPI; tests/dist_install.rs installs the wheel into a venv"),
    ),
    (
        "pipx install tfc-cli",
        How::Skip("fetches from PyPI; tests/dist_install.rs installs the wheel into a venv"),
    ),
    (
        "cargo binstall tfc-cli",
        How::Skip(
            "downloads from the release page; tests/dist_install.rs checks the binstall \
             metadata against the archive",
        ),
    ),
    (
        "cargo install --locked tfc-cli",
        How::Skip("a release build of the published crate (minutes on two cores)"),
    ),
    (
        "mkdir -p ~/.local/share/bash-completion/completions",
        How::Run(0, ""),
    ),
    (
        "tfc completions bash > ~/.local/share/bash-completion/completions/tfc",
        How::Run(0, ""),
    ),
    ("tfc man --out ~/.local/share/man/man1", How::Run(0, "")),
    (
        "cargo install --locked --path .",
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
        "tfc plan examples/gated-rework.json feature=login",
        How::Run(0, "  total               3   10     40"),
    ),
    (
        "tfc eval when '{steps.triage.json.severity} == high' --ctx examples/triage-context.json",
        How::Run(0, "true"),
    ),
    ("tfc schema > flow.schema.json", How::Run(0, "")),
    (
        "tfc test examples/",
        How::Run(0, "test result: ok. 25 passed; 0 failed; 0 errors"),
    ),
    (
        "tfc check examples/conditional-review.test.json",
        How::Run(0, ""),
    ),
    (
        "tfc test examples/ --filter high-risk --junit junit.xml",
        How::Run(0, "test result: ok. 1 passed"),
    ),
    (
        "tfc test examples/ --coverage",
        How::Run(0, "outcomes 8/8 (100%)"),
    ),
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
    (
        "tfc init --editor vscode",
        How::Run(0, ".vscode/settings.json"),
    ),
    (
        "tfc init --editor neovim --editor helix",
        How::Run(0, ".helix/languages.toml"),
    ),
    (
        "docker run -d -p 16686:16686 -p 4318:4318 jaegertracing/jaeger:latest",
        How::Skip(
            "needs a Docker engine; the export is tested against real receivers in tests/otel_receiver.rs",
        ),
    ),
    (
        "export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318",
        How::Skip(
            "sets a variable for the commands after it (tests/otel_receiver.rs sets it per run)",
        ),
    ),
    (
        "export OTEL_SERVICE_NAME=my-project",
        How::Skip("sets a variable for the commands after it"),
    ),
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
    let skipped = COMMANDS
        .iter()
        .filter(|(_, how)| matches!(how, How::Skip(_)))
        .count();
    assert_eq!(ran, COMMANDS.len() - skipped);
    // What the commands left behind is what the README says they leave.
    let schema = std::fs::read_to_string(dir.join("flow.schema.json")).expect("schema file");
    assert!(schema.contains("\"$schema\""), "{schema}");
    for file in [".mcp.json", ".gemini/settings.json", "opencode.json"] {
        let text = std::fs::read_to_string(dir.join(file)).expect(file);
        assert!(text.contains("\"tfc\""), "{file}: {text}");
    }
    let bash =
        std::fs::read_to_string(dir.join("home/.local/share/bash-completion/completions/tfc"))
            .expect("the bash completion script");
    assert!(bash.contains("_tfc()"), "{bash}");
    assert!(dir.join("home/.local/share/man/man1/tfc-check.1").is_file());
    let codex = std::fs::read_to_string(dir.join("home/.codex/config.toml")).expect("codex");
    assert!(codex.contains("[mcp_servers.tfc]"), "{codex}");
}

/// The fenced blocks of README.md: (language, lines), in order.
fn readme_blocks() -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut open: Option<(String, Vec<String>)> = None;
    for line in text.lines() {
        let t = line.trim();
        match open.as_mut() {
            None => {
                if let Some(lang) = t.strip_prefix("```") {
                    open = Some((lang.to_owned(), Vec::new()));
                }
            }
            Some(_) if t == "```" => out.extend(open.take()),
            Some((_, lines)) => lines.push(line.to_owned()),
        }
    }
    assert!(open.is_none(), "README.md: an unclosed fence");
    out
}

/// A newcomer needs two commands: the bundled example, and the tests.
#[test]
fn setting_up_takes_two_commands() {
    let text = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let setup = text
        .split("## Set-up on a fresh machine")
        .nth(1)
        .and_then(|s| s.split("```sh").nth(1))
        .and_then(|s| s.split("```").next())
        .expect("a sh block under 'Set-up on a fresh machine'");
    let commands: Vec<&str> = setup
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(
        commands,
        [
            "cargo run --release -- run examples/changelog/flow.json --replay examples/changelog/replay.jsonl",
            "cargo test"
        ]
    );
}

/// Every block says its language, and only the Rust one is compiled: `src/lib.rs` includes
/// README.md as a doc test, which compiles every block tagged `rust` (or untagged).
#[test]
fn only_the_rust_block_is_compiled_and_it_shows_the_library_call() {
    let blocks = readme_blocks();
    for (lang, lines) in &blocks {
        assert!(
            ["sh", "json", "text", "toml", "rust", "lua"].contains(&lang.as_str()),
            "a README block tagged {lang:?} (untagged blocks are compiled as Rust): {lines:?}"
        );
    }
    let rust: Vec<&Vec<String>> = blocks
        .iter()
        .filter(|(l, _)| l == "rust")
        .map(|(_, b)| b)
        .collect();
    assert_eq!(rust.len(), 1, "one Rust block");
    let code = rust[0].join("\n");
    assert!(
        code.contains("Interpreter::with_agent(model).eval(source, Map::default())")
            && code.contains("FlowSource::Text {"),
        "{code}"
    );
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).expect("lib.rs");
    assert!(
        lib.contains("#[doc = include_str!(\"../README.md\")]"),
        "src/lib.rs no longer compiles README.md's Rust block"
    );
}

/// A printed line with what differs between runs made the same: the run id (the second word
/// of the summary line, wherever it appears) and the wall time.
fn normalized(line: &str) -> String {
    let mut line = line.to_owned();
    if let Some(rest) = line.strip_prefix("run ") {
        let id = rest.split(' ').next().unwrap_or("").to_owned();
        line = line.replace(&id, "<run id>");
        let mut parts: Vec<String> = line.split(" · ").map(str::to_owned).collect();
        if parts.len() > 1 && parts[1].ends_with('s') {
            parts[1] = "<time>".to_owned();
        }
        line = parts.join(" · ");
    }
    line
}

/// The demo's stderr shown in the README is what the demo prints, its summary line too
/// (wherever the README shows one).
#[test]
fn the_demo_prints_what_the_readme_shows() {
    let dir = common::with_examples("readme-demo-output");
    let out = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args([
            "run",
            "examples/changelog/flow.json",
            "--replay",
            "examples/changelog/replay.jsonl",
        ])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run the demo");
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let printed: Vec<String> = stderr.lines().map(normalized).collect();
    let blocks = readme_blocks();
    let shown = blocks
        .iter()
        .find(|(lang, b)| lang == "text" && b.first().is_some_and(|l| l == "▶ collect running"))
        .map(|(_, b)| b.iter().map(|l| normalized(l)).collect::<Vec<_>>())
        .expect("README shows the demo's stderr");
    assert_eq!(
        shown, printed,
        "README.md's demo output is not what the demo prints"
    );
    let summary = printed.last().expect("a summary line");
    let mut seen = 0;
    for (_, b) in blocks.iter().filter(|(lang, _)| lang == "text") {
        for l in b.iter().filter(|l| l.starts_with("run changelog-")) {
            assert_eq!(&normalized(l), summary, "README.md: {l}");
            seen += 1;
        }
    }
    assert!(seen >= 2, "the summary line is shown twice");
}
