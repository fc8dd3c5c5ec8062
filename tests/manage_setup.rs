//! `tfc list`, `tfc init` and `tfc doctor`, end to end (SPEC §11.4, §13.4): saved flows of the
//! project and the user (`XDG_CONFIG_HOME`), a starter configuration written once and kept,
//! and what doctor sees with a fake `PATH`. Also: the command tfc names when no backend is
//! found (`tfc init`) exists and does what the message says.

mod common;
mod manage;

use manage::{Project, golden, script};

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn list_shows_project_and_user_flows_with_their_args() {
    let p = Project::new("manage-list");
    p.write(
        ".tfc/flows/review.json",
        r#"// a saved flow may be JSONC
{
  "name": "review",
  "description": "Review a change\nand report.",
  "args": {
    "pr": {"type": "number", "required": true, "description": "the PR number"},
    "depth": {"type": "enum", "values": ["quick", "deep", 3], "default": "quick"},
    "dry": {"type": "boolean", "default": false},
    "note": {"default": "none"},
  },
  "phases": [{"id": "a", "task": "t"}],
}"#,
    );
    p.write(".tfc/flows/broken.json", "{\"phases\": [");
    p.write(".tfc/flows/not a flow.json", "{}");
    p.write(".tfc/flows/readme.txt", "not a flow");
    let user = p.xdg.join("tfc/flows");
    std::fs::create_dir_all(&user).expect("mkdir");
    std::fs::write(
        user.join("review.json"),
        r#"{"description": "the user's review", "phases": [{"id": "a", "task": "t"}]}"#,
    )
    .expect("write");
    std::fs::write(
        user.join("changelog.json"),
        r#"{"description": "Release notes", "args": {"since": {"type": "string"}}, "phases": [{"id": "a", "task": "t"}]}"#,
    )
    .expect("write");

    let out = p.tfc(&["list"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    golden("list.txt", &out.stdout);
    assert!(out.stderr.contains("warning: saved flow"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("warning: saved flow .tfc/flows/broken.json: is not valid JSON"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("`tfc check .tfc/flows/broken.json` shows where")
    );

    let v = json(&p.tfc(&["list", "--format", "json"]).stdout);
    let flows = v.as_array().expect("array");
    let names: Vec<(&str, &str)> = flows
        .iter()
        .map(|f| {
            (
                f["name"].as_str().expect("name"),
                f["scope"].as_str().expect("scope"),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("broken", "project"),
            ("review", "project"),
            ("changelog", "user"),
            ("review", "user")
        ]
    );
    assert!(flows[0]["error"].as_str().is_some());
    assert_eq!(flows[1]["args"][0]["name"], "pr");
    assert_eq!(flows[1]["args"][0]["type"], "number");
    assert_eq!(flows[1]["args"][1]["default"], "quick");
    assert_eq!(flows[3]["shadowed"], true);
    // The listed name runs as printed.
    let out = p.tfc(&["check", "review"]);
    assert_eq!(out.code, 0, "{}", out.stderr);

    let empty = Project::new("manage-list-empty");
    let out = empty.tfc(&["list"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    assert!(out.stderr.contains("no saved flows"), "{}", out.stderr);
}

#[test]
fn init_writes_a_starter_config_once() {
    let mut p = Project::new("manage-init");
    let bin = p.base.join("bin");
    script(&bin, "codex", "echo codex-cli 0.171.0");
    script(&bin, "gemini", "echo 0.61.0");
    p.path = format!("{}:/usr/bin:/bin", bin.display());

    // Nothing written in a dry run.
    let out = p.tfc(&["init", "--dry-run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("would create .tfc/config.toml:\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("would create .tfc/agents/default.md:\n"),
        "{}",
        out.stdout
    );
    assert!(!p.dir.join(".tfc/config.toml").exists());

    // Without --host, tfc registers itself with every host CLI on PATH (SPEC §13.4).
    let out = p.tfc(&["init"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "created .tfc/config.toml\ncreated .tfc/agents/default.md\ncreated .tfc/.gitignore\ncreated {}\ncreated .gemini/settings.json\n",
            p.home.join(".codex/config.toml").display()
        )
    );
    let config = std::fs::read_to_string(p.dir.join(".tfc/config.toml")).expect("config");
    let masked = p.mask(&config);
    golden("init-config.toml", &masked);
    assert!(config.contains("default_backend = \"codex\""), "{config}");
    let table: toml::Table = config.parse().expect("valid TOML");
    assert_eq!(
        table["backends"]["gemini"]["preset"].as_str(),
        Some("gemini")
    );
    let agent = std::fs::read_to_string(p.dir.join(".tfc/agents/default.md")).expect("agent");
    assert!(
        agent.starts_with("---\nname: default\ndescription: "),
        "{agent}"
    );

    // Again: nothing changes, every file is named.
    std::fs::write(p.dir.join(".tfc/config.toml"), "# mine\n").expect("edit");
    let out = p.tfc(&["init"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "kept .tfc/config.toml (already present)\nkept .tfc/agents/default.md (already present)\nkept .tfc/.gitignore (already present)\nkept {} (already present)\nkept .gemini/settings.json (already present)\n",
            p.home.join(".codex/config.toml").display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(p.dir.join(".tfc/config.toml")).expect("config"),
        "# mine\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.dir.join(".tfc/agents/default.md")).expect("agent"),
        agent
    );
}

#[test]
fn the_no_backend_message_names_init_and_init_works_as_printed() {
    let mut p = Project::new("manage-init-hint");
    let empty_bin = p.base.join("empty-bin");
    std::fs::create_dir_all(&empty_bin).expect("mkdir");
    p.path = format!("{}:/usr/bin:/bin", empty_bin.display());
    p.write(
        "flow.json",
        r#"{"name": "f", "phases": [{"id": "a", "task": "hi"}]}"#,
    );
    let out = p.tfc(&["run", "flow.json"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("run `tfc init` to write a .tfc/config.toml"),
        "{}",
        out.stderr
    );

    let out = p.tfc(&["init"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("created .tfc/config.toml"),
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("no agent CLI"), "{}", out.stderr);
    // The written file is a valid configuration: naming a backend in it makes the run work.
    let config = std::fs::read_to_string(p.dir.join(".tfc/config.toml")).expect("config");
    let config = config.replace(
        "# [backends.mine]\n# kind = \"command\"\n# command = [\"my-agent\", \"--quiet\"]",
        "[backends.mine]\nkind = \"command\"\ncommand = [\"cat\"]",
    );
    let config = config.replace("# default_backend = \"mine\"", "default_backend = \"mine\"");
    std::fs::write(p.dir.join(".tfc/config.toml"), config).expect("write");
    let out = p.tfc(&["run", "flow.json"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "hi\n"),
        "{}",
        out.stderr
    );
    // And `tfc doctor`, which init's note names, reads it.
    let out = p.tfc(&["doctor"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("    mine (default): command cat; /usr/bin/cat found\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn doctor_reports_presets_config_and_store() {
    let mut p = Project::new("manage-doctor");
    let bin = p.base.join("bin");
    script(&bin, "claude", "echo '2.1.197 (Claude Code)'");
    script(&bin, "codex", "echo 'unknown option' >&2; exit 2");
    script(&bin, "pi", "echo; echo '  pi 0.9.1  '");
    p.path = bin.display().to_string();
    std::fs::create_dir_all(p.home.join(".gemini")).expect("mkdir");
    std::fs::write(p.home.join(".gemini/settings.json"), "{}").expect("write");
    p.write(
        ".tfc/config.toml",
        "default_backend = \"cl\"\n[backends.cl]\npreset = \"claude\"\n[backends.web]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"WEB_KEY\"\n[backends.tool]\nkind = \"command\"\ncommand = [\"no-such-agent\"]\n",
    );
    manage::Fake::new("flow", 1_796_032_800_000, "aaaaaa", "completed").write(&p.dir);
    manage::Fake::new("flow", 1_796_032_900_000, "bbbbbb", "failed").write(&p.dir);
    let out = p.tfc(&["doctor"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Store sizes vary with the records; mask the one number.
    let text = p.mask(&out.stdout);
    let text: String = text
        .lines()
        .map(|l| match l.find("runs: 2 runs (1 completed, 1 failed), ") {
            Some(i) => format!("{}runs: 2 runs (1 completed, 1 failed), <SIZE>", &l[..i]),
            None => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    golden("doctor.txt", &format!("{text}\n"));

    // An invalid configuration: exit 2, the file and the problem named.
    p.write(".tfc/config.toml", "[backends.x]\npreset = \"nope\"\n");
    let out = p.tfc(&["doctor"]);
    assert_eq!(out.code, 2);
    assert!(out.stdout.contains("error: "), "{}", out.stdout);
    assert!(out.stdout.contains("config.toml"), "{}", out.stdout);
    assert!(
        out.stderr.contains("the configuration is invalid"),
        "{}",
        out.stderr
    );
}

/// `git` in `dir`, which must succeed; its stdout.
fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// After `tfc init` in a git repository, `git add .` stages the configuration, the agents and
/// the saved flows, and none of what runs leave in `.tfc/` (records, journals, prompts and
/// outputs, the cache, phases' working folders and worktrees). A second `tfc init` changes
/// nothing; a `.tfc/.gitignore` of the user's own keeps its lines and gains the missing ones.
#[test]
fn init_keeps_run_files_out_of_git() {
    let p = Project::new("manage-init-gitignore");
    git(&p.dir, &["init", "-q"]);
    let out = p.tfc(&["init"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("created .tfc/.gitignore\n"),
        "{}",
        out.stdout
    );
    let ignore = std::fs::read_to_string(p.dir.join(".tfc/.gitignore")).expect(".gitignore");
    for file in [
        ".tfc/runs/demo/demo-mx1-abcdef/run.json",
        ".tfc/runs/demo/demo-mx1-abcdef/journal.jsonl",
        ".tfc/cache/0123456789abcdef.json",
        ".tfc/work/demo-mx1-abcdef/build/notes.txt",
        ".tfc/worktrees/demo-mx1-abcdef/fix/src.rs",
        ".tfc/flows/release.json",
        "flow.json",
    ] {
        let path = p.dir.join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, "{}\n").expect("write");
    }
    git(&p.dir, &["add", "."]);
    let status = git(&p.dir, &["status", "--porcelain", "--untracked-files=all"]);
    let staged: Vec<&str> = status
        .lines()
        .filter_map(|l| l.strip_prefix("A  "))
        .collect();
    assert_eq!(
        staged,
        [
            ".tfc/.gitignore",
            ".tfc/agents/default.md",
            ".tfc/config.toml",
            ".tfc/flows/release.json",
            "flow.json"
        ],
        "{status}"
    );
    assert_eq!(status.lines().count(), staged.len(), "{status}");

    // Again: kept, unchanged.
    let out = p.tfc(&["init"]);
    assert!(
        out.stdout
            .contains("kept .tfc/.gitignore (already present)\n"),
        "{}",
        out.stdout
    );
    assert_eq!(
        std::fs::read_to_string(p.dir.join(".tfc/.gitignore")).expect(".gitignore"),
        ignore
    );

    // A file of the user's own: its lines stay, the missing ones are added once.
    std::fs::write(p.dir.join(".tfc/.gitignore"), "*.bak\n/runs/").expect("write");
    let out = p.tfc(&["init"]);
    assert!(
        out.stdout.contains("updated .tfc/.gitignore\n"),
        "{}",
        out.stdout
    );
    let merged = std::fs::read_to_string(p.dir.join(".tfc/.gitignore")).expect(".gitignore");
    assert!(merged.starts_with("*.bak\n/runs/\n"), "{merged}");
    for line in ["/cache/", "/work/", "/worktrees/"] {
        assert_eq!(merged.lines().filter(|l| *l == line).count(), 1, "{merged}");
    }
    assert_eq!(
        merged.lines().filter(|l| *l == "/runs/").count(),
        1,
        "{merged}"
    );
    let out = p.tfc(&["init"]);
    assert!(
        out.stdout
            .contains("kept .tfc/.gitignore (already present)\n"),
        "{}",
        out.stdout
    );
}
