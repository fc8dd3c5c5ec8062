//! `tfc init [--dry-run]` (SPEC §13.4): a starter `.tfc/config.toml` naming the backends found
//! on this machine (preset CLIs on `PATH`, an OpenAI-compatible server from the environment)
//! with commented examples of `command` and `openai` backends, and `.tfc/agents/default.md`,
//! the agent of phases that name none, and `.tfc/.gitignore` (what runs leave under `.tfc/` is
//! not for version control; see [`gitignore`]). Files already there are kept as they are (the
//! `.gitignore` only gains the lines it lacks), so running it again changes nothing. Every file
//! is printed with what happened to it.
//!
//! The work is a plan of [`PlannedFile`]s, applied (or, with `--dry-run`, printed) at the
//! end; host registrations (`--host`, SPEC §13.4; [`host_plan`], here so that `tfc init` owns
//! all of its set-up and `cli/mcp.rs` only serves) add their own files to the same plan, and so
//! do editor set-ups (`--editor`, [`editor_plan`]: the settings that attach `tfc lsp`).

use std::path::{Path, PathBuf};

use clap::Args;

use super::{Exit, usage_error};
use tfc::agent::ConfigEnv;
use tfc::agent::config::{Detection, Preset, detect};
use tfc::project::{PlannedFile, project_root};

#[derive(Args, Debug)]
pub struct InitArgs {
    /// Print what would be written, write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Register `tfc mcp` with a coding-agent host: claude, codex, gemini, opencode or pi
    /// (repeatable); default (and `--host` alone): every host CLI found on PATH.
    #[arg(long, value_name = "HOST", num_args = 0..=1, default_missing_value = "found")]
    host: Vec<String>,
    /// Set an editor up for `tfc lsp` (repeatable): vscode writes .vscode/settings.json
    /// (flow files as JSONC, their JSON Schema, `tfc.path` for the extension in
    /// editors/vscode) and .vscode/tfc-flow.schema.json; neovim writes .nvim.lua (read with
    /// 'exrc' set; Neovim 0.10+); helix writes .helix/languages.toml. Existing settings are
    /// kept.
    #[arg(long, value_name = "EDITOR")]
    editor: Vec<String>,
}

/// `tfc init`.
pub fn run(a: InitArgs) -> Exit {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = project_root(&cwd);
    let env = ConfigEnv::from_process();
    let detection = detect(&env);
    let tfc_dir = root.join(".tfc");
    let mut plan = vec![
        PlannedFile::create_unless_present(tfc_dir.join("config.toml"), config_toml(&detection)),
        PlannedFile::create_unless_present(
            tfc_dir.join("agents").join("default.md"),
            DEFAULT_AGENT.to_owned(),
        ),
        gitignore(&tfc_dir.join(".gitignore")),
    ];
    let notes = match host_plan(&a.host, &root) {
        Ok((changes, notes)) => {
            plan.extend(changes);
            notes
        }
        Err(e) => return usage_error(e),
    };
    match editor_plan(&a.editor, &root) {
        Ok(changes) => plan.extend(changes),
        Err(e) => return usage_error(e),
    }
    match apply(&plan, a.dry_run, &cwd) {
        Ok(()) => {
            for n in notes {
                sayln!("note: {n}");
            }
            if !a.dry_run && plan[0].content.is_some() {
                next_steps(&detection);
            }
            Exit::Ok
        }
        Err(e) => usage_error(e),
    }
}

/// The files `tfc init --host H…` writes (and the notes it prints): `found` (a bare `--host`)
/// stands for every host CLI on `PATH`, and so does no `--host` at all, except that finding
/// none is then no error. Each host's entry runs this binary (`<abs path of tfc> mcp`).
fn host_plan(names: &[String], root: &Path) -> Result<(Vec<PlannedFile>, Vec<String>), String> {
    use tfc::mcp::hosts::{Host, found_on_path, register};
    let mut hosts = Vec::new();
    if names.is_empty() {
        // Plain `tfc init` (SPEC §13.4): every host CLI found on PATH; none found is fine.
        hosts = found_on_path(&std::env::var_os("PATH").unwrap_or_default());
    }
    for n in names {
        let add: Vec<Host> = if n == "found" {
            let found = found_on_path(&std::env::var_os("PATH").unwrap_or_default());
            if found.is_empty() {
                return Err(
                    "--host: no host CLI (claude, codex, gemini, opencode, pi) is on PATH; \
                     name one: --host claude"
                        .into(),
                );
            }
            found
        } else {
            vec![Host::parse(n).ok_or_else(|| {
                format!("--host {n}: not a host; use claude, codex, gemini, opencode or pi")
            })?]
        };
        for h in add {
            if !hosts.contains(&h) {
                hosts.push(h);
            }
        }
    }
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot find the path of the tfc binary: {e}"))?;
    let codex_home = std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")));
    let (mut changes, mut notes) = (Vec::new(), Vec::new());
    for h in hosts {
        let r = register(h, root, &exe, codex_home.as_deref())
            .map_err(|e| format!("--host {}: {e}", h.as_str()))?;
        changes.extend(r.files);
        notes.extend(r.note);
    }
    Ok((changes, notes))
}

/// The files `tfc init --editor E…` writes: each editor's project settings that attach
/// `tfc lsp` (this binary) to flow files (see `tfc::lsp::editors`).
fn editor_plan(names: &[String], root: &Path) -> Result<Vec<PlannedFile>, String> {
    use tfc::lsp::editors::{Editor, setup};
    let mut editors: Vec<Editor> = Vec::new();
    for n in names {
        let e = Editor::parse(n)
            .ok_or_else(|| format!("--editor {n}: not an editor; use vscode, neovim or helix"))?;
        if !editors.contains(&e) {
            editors.push(e);
        }
    }
    if editors.is_empty() {
        return Ok(Vec::new());
    }
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot find the path of the tfc binary: {e}"))?;
    let mut changes = Vec::new();
    for e in editors {
        let files = setup(e, root, &exe).map_err(|m| format!("--editor {}: {m}", e.as_str()))?;
        changes.extend(files);
    }
    Ok(changes)
}

/// Write (or with `dry_run` print) every change; one line per file on stdout.
pub(crate) fn apply(plan: &[PlannedFile], dry_run: bool, cwd: &Path) -> Result<(), String> {
    for c in plan {
        let shown = c.path.strip_prefix(cwd).unwrap_or(&c.path).display();
        let Some(content) = &c.content else {
            outln!("kept {shown} (already present)");
            continue;
        };
        let verb = if c.exists { "update" } else { "create" };
        if dry_run {
            outln!("would {verb} {shown}:");
            for line in content.lines() {
                outln!("  | {line}");
            }
            continue;
        }
        if let Some(dir) = c.path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(&c.path, content)
            .map_err(|e| format!("cannot write {}: {e}", c.path.display()))?;
        outln!("{verb}d {shown}");
    }
    Ok(())
}

fn next_steps(d: &Detection) {
    if d.found.is_empty() && d.openai.is_none() {
        sayln!(
            "note: no agent CLI ({}) is on PATH and no OpenAI-compatible server is set in the \
             environment; name a backend in .tfc/config.toml (examples inside); `tfc doctor` \
             shows what tfc sees",
            preset_names()
        );
    } else {
        sayln!("note: `tfc doctor` shows the backends tfc sees");
    }
}

fn preset_names() -> String {
    Preset::ALL
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What runs leave under `.tfc/` (SPEC §10.1; each folder's run-time files): run records,
/// journals, prompts, outputs and diffs (`runs/`), cached results (`cache/`), phases'
/// dedicated working folders (`work/`) and git worktrees (`worktrees/`). None is for version
/// control; `config.toml`, `agents/` and `flows/` are not listed and stay tracked.
const IGNORED: [&str; 4] = ["/runs/", "/cache/", "/work/", "/worktrees/"];

/// `.tfc/.gitignore`, so that `git add .` never takes what runs leave in `.tfc/`.
///
/// Why a `.tfc/.gitignore` rather than lines in the project's `.gitignore`: git reads the
/// `.gitignore` of every folder, so this one works wherever `.tfc/` sits in the repository
/// (its patterns are relative to `.tfc/`), needs no git to find the repository's top, and
/// leaves the user's own file alone. A `.tfc/.gitignore` already there keeps every line it
/// has; the missing patterns are appended, once.
fn gitignore(path: &Path) -> PlannedFile {
    let Ok(current) = std::fs::read_to_string(path) else {
        let mut text = String::from(
            "# Written by `tfc init`: what tfc runs leave here is not for version control\n\
             # (run records, prompts, outputs and diffs, cached results, working folders).\n\
             # config.toml, agents/ and flows/ are not listed: they stay tracked.\n",
        );
        for line in IGNORED {
            text.push_str(line);
            text.push('\n');
        }
        return PlannedFile::create_unless_present(path.to_path_buf(), text);
    };
    let missing: Vec<&str> = IGNORED
        .into_iter()
        .filter(|want| !current.lines().any(|l| l.trim() == *want))
        .collect();
    if missing.is_empty() {
        return PlannedFile {
            path: path.to_path_buf(),
            content: None,
            exists: true,
        };
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for line in missing {
        text.push_str(line);
        text.push('\n');
    }
    PlannedFile {
        path: path.to_path_buf(),
        content: Some(text),
        exists: true,
    }
}

/// A TOML basic string.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// The starter configuration for what `d` found.
pub(crate) fn config_toml(d: &Detection) -> String {
    let mut t = String::from(
        "# tfc configuration for this project (written by `tfc init`; edit freely).\n\
         # Flows name agents; this file says which backend answers them. Precedence: command-line\n\
         # flags > TFC_BACKEND > this file > the user's config.toml > auto-detection.\n\n",
    );
    let openai_name = "openai";
    let default = d
        .found
        .first()
        .map(|(p, _)| p.as_str())
        .or(d.openai.as_ref().map(|_| openai_name));
    match default {
        Some(name) => t.push_str(&format!("default_backend = {}\n", quoted(name))),
        None => t.push_str(&format!(
            "# No agent CLI was found on PATH ({}), and no OpenAI-compatible\n\
             # server is set (TFC_OPENAI_BASE_URL, OPENAI_BASE_URL, OLLAMA_HOST): uncomment an\n\
             # example below and name it here.\n# default_backend = \"mine\"\n",
            preset_names()
        )),
    }
    for (preset, path) in &d.found {
        t.push_str(&format!(
            "\n# found {} on PATH\n[backends.{name}]\npreset = {}\n# model = \"…\"       # the model when the agent names none\n# extra_args = []    # added to the preset's own arguments\n",
            path.display(),
            quoted(preset.as_str()),
            name = preset.as_str(),
        ));
    }
    if let Some((var, url)) = &d.openai {
        t.push_str(&format!(
            "\n# an OpenAI-compatible server ({var} is set)\n[backends.{openai_name}]\nkind = \"openai\"\nbase_url = {}\n# model = \"…\"\n",
            quoted(url)
        ));
        if *var != "OLLAMA_HOST" {
            t.push_str("api_key_env = \"OPENAI_API_KEY\"\n");
        }
    }
    t.push_str(EXAMPLES);
    t
}

const EXAMPLES: &str = r#"
# Examples (uncomment to use):
#
# Any program that reads the prompt on stdin and answers on stdout:
# [backends.mine]
# kind = "command"
# command = ["my-agent", "--quiet"]
#
# An OpenAI-compatible HTTP server, e.g. a local Ollama:
# [backends.local]
# kind = "openai"
# base_url = "http://127.0.0.1:11434/v1"
# model = "qwen2.5-coder"
# api_key_env = "OLLAMA_API_KEY"   # the variable holding the key (never the key itself)
# price = { input_per_mtok = 0.15, output_per_mtok = 0.6 }
#
# Which backend serves which agent ("*": every agent):
# [agents]
# "*" = { backend = "local" }
# scout = { backend = "local", model = "qwen2.5-coder:7b" }
#
# [limits]
# max_output_bytes = 16777216
# max_prompt_bytes = 16777216
"#;

const DEFAULT_AGENT: &str = "---
name: default
description: The agent of phases that name none; a careful, concise software engineer.
---
You are a careful software engineer working in this repository. Do exactly the task you are
given, read the code before you change or judge it, and say plainly what you did and what you
could not do. When the task asks for JSON, answer with the JSON only.
";

#[cfg(test)]
mod tests {
    use super::*;

    fn parses(text: &str) -> tfc::agent::Config {
        tfc::agent::Config::parse(text, Path::new("config.toml"))
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    #[test]
    fn starter_configs_are_valid() {
        let none = config_toml(&Detection::default());
        assert_eq!(parses(&none).default_backend, None);
        assert!(none.contains("kind = \"command\"") && none.contains("kind = \"openai\""));
        let d = Detection {
            found: vec![
                (Preset::Codex, PathBuf::from("/opt/bin/codex")),
                (Preset::Pi, PathBuf::from("/opt/bin/pi")),
            ],
            openai: Some(("OPENAI_BASE_URL", "http://h:1/v1\"x".into())),
        };
        let c = parses(&config_toml(&d));
        assert_eq!(c.default_backend.as_deref(), Some("codex"));
        let mut names: Vec<&str> = c.backends.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["codex", "openai", "pi"]);
        let only_ollama = Detection {
            found: Vec::new(),
            openai: Some(("OLLAMA_HOST", "http://127.0.0.1:11434/v1".into())),
        };
        assert_eq!(
            parses(&config_toml(&only_ollama))
                .default_backend
                .as_deref(),
            Some("openai")
        );
    }
}
