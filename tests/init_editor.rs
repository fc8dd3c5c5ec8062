//! `tfc init --editor vscode|neovim|helix` end to end (SPEC §13.4, §15): each editor's
//! project settings attach `tfc lsp` to flow files, merged into what the user has (their keys,
//! comments and lines kept), byte-identical on a second run; an unknown editor is a usage
//! error (exit 2) that writes nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tfc::json::{Kind, Node};

fn tfc(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("HOME", dir.join("home"))
        .env("XDG_CONFIG_HOME", dir.join("home/.config"))
        // No host CLI on PATH: plain `tfc init` registers none.
        .env("PATH", dir.join("home/bin"))
        .stdin(Stdio::null())
        .output()
        .expect("run tfc");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh project folder outside the crate: `tfc init` writes to the nearest ancestor holding
/// `.tfc/`, and the crate's own checkout has one.
fn project(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tfc-init-editor-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("home/bin")).unwrap();
    dir
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

const FILES: [&str; 4] = [
    ".vscode/settings.json",
    ".vscode/tfc-flow.schema.json",
    ".nvim.lua",
    ".helix/languages.toml",
];

const USER_SETTINGS: &str = r#"{
	// the user's own settings, comments and all
	"editor.tabSize": 4,
	"files.associations": {"*.flow.json": "json", "*.tmpl": "html"},
	"json.schemas": [
		{"fileMatch": ["/package.json"], "url": "./schemas/package.json"},
	],
	"tfc.path": "/somewhere/old/tfc",
}
"#;

const USER_HELIX: &str = "[[language]]\nname = \"rust\"\nauto-format = false\n";

const USER_NVIM: &str = "vim.opt.colorcolumn = \"100\"\n";

#[test]
fn init_editor_merges_with_existing_settings_and_is_idempotent() {
    let dir = project("init_editor_merge");
    write(&dir, ".vscode/settings.json", USER_SETTINGS);
    write(&dir, ".helix/languages.toml", USER_HELIX);
    write(&dir, ".nvim.lua", USER_NVIM);
    let args = [
        "init", "--editor", "vscode", "--editor", "neovim", "--editor", "helix",
    ];
    let (code, out, err) = tfc(&dir, &args);
    assert_eq!(code, 0, "{out}{err}");
    for line in [
        "updated .vscode/settings.json",
        "created .vscode/tfc-flow.schema.json",
        "updated .nvim.lua",
        "updated .helix/languages.toml",
    ] {
        assert!(out.contains(line), "{line} in {out}");
    }
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_tfc")).unwrap();
    let exe = exe.to_str().unwrap();

    // VS Code: the user's members and comment kept as written, ours added with tabs.
    let settings = read(&dir, ".vscode/settings.json");
    assert!(
        settings.starts_with(
            "{\n\t// the user's own settings, comments and all\n\t\"editor.tabSize\": 4,\n"
        ),
        "{settings}"
    );
    let parsed = tfc::json::parse(&settings);
    assert!(parsed.diagnostics.is_empty(), "{settings}");
    let root = parsed.root.unwrap();
    let s = |n: Option<&Node>| n.and_then(Node::as_str).map(|s| s.value.clone());
    let assoc = root.get("files.associations").unwrap();
    assert_eq!(s(assoc.get("*.tmpl")).as_deref(), Some("html"));
    assert_eq!(
        s(assoc.get("*.flow.json")).as_deref(),
        Some("json"),
        "the user's own association stays"
    );
    assert_eq!(
        s(assoc.get("**/.tfc/flows/**/*.json")).as_deref(),
        Some("jsonc")
    );
    let Kind::Array(schemas) = &root.get("json.schemas").unwrap().kind else {
        panic!("{settings}")
    };
    let urls: Vec<String> = schemas.iter().filter_map(|e| s(e.get("url"))).collect();
    assert_eq!(
        urls,
        ["./schemas/package.json", "./.vscode/tfc-flow.schema.json"]
    );
    assert!(
        settings.contains("\n\t\t\t\"fileMatch\": [\n\t\t\t\t\"*.flow.json\","),
        "{settings}"
    );
    assert_eq!(s(root.get("tfc.path")).as_deref(), Some(exe));
    // The schema is `tfc schema`'s.
    let schema = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .arg("schema")
        .output()
        .unwrap();
    assert_eq!(
        read(&dir, ".vscode/tfc-flow.schema.json").as_bytes(),
        &schema.stdout[..]
    );

    // Neovim: the user's line, then tfc's block, for opened and new flow files.
    let nvim = read(&dir, ".nvim.lua");
    assert!(nvim.starts_with(USER_NVIM), "{nvim}");
    assert!(
        nvim.contains("{ \"BufReadPost\", \"BufNewFile\" }"),
        "{nvim}"
    );
    assert!(nvim.contains("vim.fs.root(args.buf, { \".tfc\", \".git\" })"));
    assert!(nvim.contains(&format!("cmd = {{ \"{exe}\", \"lsp\" }}")));

    // Helix: the user's language kept, tfc's server and language added; valid TOML.
    let helix = read(&dir, ".helix/languages.toml");
    assert!(helix.starts_with(USER_HELIX), "{helix}");
    let t: toml::Table = helix.parse().unwrap();
    assert_eq!(t["language-server"]["tfc"]["command"].as_str(), Some(exe));
    assert_eq!(t["language-server"]["tfc"]["args"][0].as_str(), Some("lsp"));
    let langs = t["language"].as_array().unwrap();
    let names: Vec<&str> = langs.iter().filter_map(|l| l["name"].as_str()).collect();
    assert_eq!(names, ["rust", "taskflow"]);
    assert_eq!(langs[1]["language-servers"][0].as_str(), Some("tfc"));

    // A second run: every byte the same, every file reported kept.
    let before: Vec<String> = FILES.iter().map(|f| read(&dir, f)).collect();
    let (code, out, err) = tfc(&dir, &args);
    assert_eq!(code, 0, "{out}{err}");
    let after: Vec<String> = FILES.iter().map(|f| read(&dir, f)).collect();
    assert_eq!(before, after);
    for f in FILES {
        assert!(out.contains(&format!("kept {f}")), "{f} in {out}");
    }
}

#[test]
fn init_editor_from_nothing_then_dry_run_and_refusals() {
    let dir = project("init_editor_fresh");
    let (code, out, err) = tfc(&dir, &["init", "--editor", "vscode", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("would create .vscode/settings.json:"), "{out}");
    assert!(!dir.join(".vscode").exists(), "--dry-run writes nothing");
    let (code, out, err) = tfc(&dir, &["init", "--editor", "vscode"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("created .vscode/settings.json"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&read(&dir, ".vscode/settings.json")).unwrap();
    assert_eq!(v["files.associations"]["*.flow.json"], "jsonc");
    // Test files are served (JSONC) but are not flows: the flow schema never applies to them.
    assert_eq!(v["files.associations"]["*.test.json"], "jsonc");
    assert_eq!(
        v["json.schemas"][0]["fileMatch"][1],
        "**/.tfc/flows/**/*.json"
    );
    let matched = v["json.schemas"][0]["fileMatch"].as_array().unwrap();
    assert!(!matched.iter().any(|g| g == "*.test.json"), "{matched:?}");
    let first = read(&dir, ".vscode/settings.json");
    let (code, _, _) = tfc(&dir, &["init", "--editor", "vscode"]);
    assert_eq!(code, 0);
    assert_eq!(read(&dir, ".vscode/settings.json"), first);

    // A settings file tfc cannot read is never rewritten: the error says what to add.
    write(&dir, ".vscode/settings.json", "{\"a\": 1,,}");
    let (code, _, err) = tfc(&dir, &["init", "--editor", "vscode"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not a JSON object tfc can read") && err.contains("\"tfc.path\""));
    assert_eq!(read(&dir, ".vscode/settings.json"), "{\"a\": 1,,}");
}

#[test]
fn init_with_an_unknown_editor_is_a_usage_error_that_writes_nothing() {
    let dir = project("init_editor_unknown");
    let (code, out, err) = tfc(&dir, &["init", "--editor", "vscode", "--editor", "emacs"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("error: --editor emacs: not an editor; use vscode, neovim or helix"),
        "{err}"
    );
    assert!(out.is_empty(), "{out}");
    assert!(!dir.join(".tfc").exists() && !dir.join(".vscode").exists());
}

/// The README's Neovim snippet is what `tfc init --editor neovim` writes (with `tfc` for the
/// absolute path), so the two cannot drift apart.
#[test]
fn the_readme_neovim_snippet_is_what_init_writes() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let at = readme.find("```lua\n").expect("a lua block") + "```lua\n".len();
    let snippet = &readme[at..at + readme[at..].find("```").unwrap()];
    let written = tfc::lsp::editors::neovim_lua("tfc");
    let code: String = written
        .lines()
        .filter(|l| !l.starts_with("--"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(snippet, code);
}
