//! Registering `tfc mcp` with coding-agent hosts (`tfc init --host`, SPEC §13.4), each in its
//! own configuration file, the way its documentation says: merged into what is there without
//! dropping anything, and a file whose entry is already right is left alone (idempotent).
//!
//! | host | file | entry |
//! |---|---|---|
//! | claude | `<root>/.mcp.json` | `mcpServers.tfc = {command, args: ["mcp"]}` |
//! | gemini | `<root>/.gemini/settings.json` | `mcpServers.tfc = {command, args: ["mcp"]}` |
//! | opencode | `<root>/opencode.json` | `mcp.tfc = {type: "local", command: [tfc, "mcp"], enabled: true}` |
//! | codex | `$CODEX_HOME/config.toml` (default `~/.codex`) | `[mcp_servers.tfc]` `command`, `args` |
//! | pi | — | no MCP configuration of its own: instructions only |
//!
//! JSON files are rewritten with their keys in order; a file that is not plain JSON (comments,
//! say) is refused with the entry to add by hand, never overwritten. The codex TOML is edited
//! as text — the `[mcp_servers.tfc]` table appended or its lines replaced — so comments and
//! layout elsewhere in the file stay as they were.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::project::PlannedFile;

/// A coding-agent host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// OpenCode.
    Opencode,
    /// Pi (no MCP support of its own).
    Pi,
}

impl Host {
    /// Every host, in the order of `--host`'s help.
    pub const ALL: [Host; 5] = [
        Host::Claude,
        Host::Codex,
        Host::Gemini,
        Host::Opencode,
        Host::Pi,
    ];

    /// The host's name, which is also its CLI's command name.
    pub fn as_str(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Opencode => "opencode",
            Host::Pi => "pi",
        }
    }

    /// The host named `s`.
    pub fn parse(s: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|h| h.as_str() == s)
    }
}

/// What registering with one host takes.
#[derive(Debug)]
pub struct Registration {
    /// The host.
    pub host: Host,
    /// Files to write (none for pi).
    pub files: Vec<PlannedFile>,
    /// What to tell the user besides the files.
    pub note: Option<String>,
}

/// The hosts whose CLI is on `path` (a `PATH` value).
pub fn found_on_path(path: &std::ffi::OsStr) -> Vec<Host> {
    Host::ALL
        .into_iter()
        .filter(|h| {
            std::env::split_paths(path).any(|dir| {
                let f = dir.join(h.as_str());
                std::fs::metadata(&f).is_ok_and(|m| {
                    use std::os::unix::fs::PermissionsExt;
                    m.is_file() && m.permissions().mode() & 0o111 != 0
                })
            })
        })
        .collect()
}

/// Plan the registration of `exe mcp` with `host` for the project at `root`. `codex_home`:
/// `$CODEX_HOME`, else `~/.codex`.
pub fn register(
    host: Host,
    root: &Path,
    exe: &Path,
    codex_home: Option<&Path>,
) -> Result<Registration, String> {
    let command = exe.display().to_string();
    let std_entry = json!({"command": command, "args": ["mcp"]});
    let files = match host {
        Host::Claude => vec![json_entry(
            &root.join(".mcp.json"),
            "mcpServers",
            std_entry,
        )?],
        Host::Gemini => vec![json_entry(
            &root.join(".gemini").join("settings.json"),
            "mcpServers",
            std_entry,
        )?],
        Host::Opencode => vec![json_entry(
            &root.join("opencode.json"),
            "mcp",
            json!({"type": "local", "command": [command, "mcp"], "enabled": true}),
        )?],
        Host::Codex => {
            let home = codex_home.ok_or(
                "cannot find codex's configuration folder: set CODEX_HOME (or HOME for ~/.codex)",
            )?;
            vec![codex_entry(&home.join("config.toml"), &command)?]
        }
        Host::Pi => Vec::new(),
    };
    let note = (host == Host::Pi).then(|| {
        format!(
            "pi has no MCP configuration of its own: let it use tfc through its shell tool \
             (`{command} check FLOW`, `{command} run FLOW`), or run `{command} mcp` from an \
             MCP bridge extension if you use one"
        )
    });
    Ok(Registration { host, files, note })
}

/// `<key>.tfc = entry` merged into the JSON object in `path`.
fn json_entry(path: &Path, key: &str, entry: Value) -> Result<PlannedFile, String> {
    let exists = path.exists();
    let mut doc: Map<String, Value> = if exists {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if text.trim().is_empty() {
            Map::new()
        } else {
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(m)) => m,
                Ok(_) => {
                    return Err(format!(
                        "{} does not hold a JSON object; add this by hand: \"{key}\": {{\"tfc\": {entry}}}",
                        path.display()
                    ));
                }
                Err(e) => {
                    return Err(format!(
                        "{} is not plain JSON ({e}), so tfc will not rewrite it; add this by \
                         hand: \"{key}\": {{\"tfc\": {entry}}}",
                        path.display()
                    ));
                }
            }
        }
    } else {
        Map::new()
    };
    let servers = doc
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        return Err(format!(
            "\"{key}\" in {} is not an object; fix it by hand, then run again",
            path.display()
        ));
    };
    if servers.get("tfc") == Some(&entry) {
        return Ok(PlannedFile {
            path: path.to_path_buf(),
            content: None,
            exists,
        });
    }
    servers.insert("tfc".into(), entry);
    let mut text = serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default();
    text.push('\n');
    Ok(PlannedFile {
        path: path.to_path_buf(),
        content: Some(text),
        exists,
    })
}

/// `[mcp_servers.tfc]` in codex's `config.toml`, edited as text.
fn codex_entry(path: &Path, command: &str) -> Result<PlannedFile, String> {
    let exists = path.exists();
    let text = if exists {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?
    } else {
        String::new()
    };
    let quoted = toml::Value::String(command.to_owned()).to_string();
    let block = format!("[mcp_servers.tfc]\ncommand = {quoted}\nargs = [\"mcp\"]\n");
    let parsed: toml::Table = text
        .parse()
        .map_err(|e| format!("{} is not valid TOML ({e}); fix it first", path.display()))?;
    let current = parsed
        .get("mcp_servers")
        .and_then(|s| s.get("tfc"))
        .cloned();
    let unchanged = |c: &toml::Value| {
        c.get("command").and_then(toml::Value::as_str) == Some(command)
            && c.get("args")
                .and_then(toml::Value::as_array)
                .is_some_and(|a| a.len() == 1 && a[0].as_str() == Some("mcp"))
    };
    let content = match current {
        Some(c) if unchanged(&c) => None,
        None => {
            let mut t = text.clone();
            if !t.is_empty() && !t.ends_with('\n') {
                t.push('\n');
            }
            if !t.is_empty() {
                t.push('\n');
            }
            t.push_str(&block);
            Some(t)
        }
        Some(_) => Some(replace_table(&text, &block).ok_or_else(|| {
            format!(
                "{} defines mcp_servers.tfc in a form tfc does not edit; replace it by hand \
                 with:\n{block}",
                path.display()
            )
        })?),
    };
    if let Some(new) = &content {
        new.parse::<toml::Table>().map_err(|e| {
            format!(
                "editing {} would break it ({e}); edit it by hand",
                path.display()
            )
        })?;
    }
    Ok(PlannedFile {
        path: path.to_path_buf(),
        content,
        exists,
    })
}

/// Replace the lines of a `[mcp_servers.tfc]` table (its header up to the next header) with
/// `block`; `None` when there is no such header line.
fn replace_table(text: &str, block: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let start = lines.iter().position(|l| l.trim() == "[mcp_servers.tfc]")?;
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.trim_start().starts_with('['))
        .map_or(lines.len(), |i| start + 1 + i);
    let mut out: String = lines[..start].concat();
    out.push_str(block);
    if end < lines.len() {
        out.push('\n');
    }
    out.push_str(&lines[end..].concat());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(f: &PlannedFile) {
        if let Some(c) = &f.content {
            std::fs::create_dir_all(f.path.parent().unwrap()).unwrap();
            std::fs::write(&f.path, c).unwrap();
        }
    }

    #[test]
    fn json_hosts_merge_and_are_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join(".mcp.json"),
            r#"{"mcpServers": {"other": {"command": "x"}}, "extra": [1, 2]}"#,
        )
        .unwrap();
        let exe = Path::new("/opt/tfc/bin/tfc");
        for host in [Host::Claude, Host::Gemini, Host::Opencode] {
            let r = register(host, root, exe, None).unwrap();
            assert_eq!(r.files.len(), 1);
            apply(&r.files[0]);
            let again = register(host, root, exe, None).unwrap();
            assert!(again.files[0].content.is_none(), "{host:?} is idempotent");
        }
        let claude: Value =
            serde_json::from_str(&std::fs::read_to_string(root.join(".mcp.json")).unwrap())
                .unwrap();
        assert_eq!(claude["mcpServers"]["other"]["command"], "x", "kept");
        assert_eq!(claude["extra"], json!([1, 2]), "kept");
        assert_eq!(
            claude["mcpServers"]["tfc"],
            json!({"command": "/opt/tfc/bin/tfc", "args": ["mcp"]})
        );
        let oc: Value =
            serde_json::from_str(&std::fs::read_to_string(root.join("opencode.json")).unwrap())
                .unwrap();
        assert_eq!(
            oc["mcp"]["tfc"]["command"],
            json!(["/opt/tfc/bin/tfc", "mcp"])
        );
        assert!(root.join(".gemini/settings.json").is_file());
        // A moved binary updates the entry.
        let moved = register(Host::Claude, root, Path::new("/usr/bin/tfc"), None).unwrap();
        assert!(
            moved.files[0]
                .content
                .as_ref()
                .unwrap()
                .contains("/usr/bin/tfc")
        );
        // A file with comments is refused, never rewritten.
        std::fs::write(root.join("opencode.json"), "// mine\n{}").unwrap();
        let e = register(Host::Opencode, root, exe, None).unwrap_err();
        assert!(e.contains("not plain JSON") && e.contains("by hand"), "{e}");
    }

    #[test]
    fn codex_toml_is_edited_as_text() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        let exe = Path::new("/opt/tfc");
        std::fs::write(
            home.join("config.toml"),
            "# my settings\nmodel = \"gpt-5.5\"\n\n[mcp_servers.other]\ncommand = \"x\"\n",
        )
        .unwrap();
        let r = register(Host::Codex, Path::new("/p"), exe, Some(home)).unwrap();
        apply(&r.files[0]);
        let text = std::fs::read_to_string(home.join("config.toml")).unwrap();
        assert!(
            text.starts_with("# my settings\nmodel = \"gpt-5.5\"\n"),
            "{text}"
        );
        assert!(text.ends_with("[mcp_servers.tfc]\ncommand = \"/opt/tfc\"\nargs = [\"mcp\"]\n"));
        let again = register(Host::Codex, Path::new("/p"), exe, Some(home)).unwrap();
        assert!(again.files[0].content.is_none());
        let moved = register(
            Host::Codex,
            Path::new("/p"),
            Path::new("/new/tfc"),
            Some(home),
        )
        .unwrap();
        let text = moved.files[0].content.clone().unwrap();
        let t: toml::Table = text.parse().unwrap();
        assert_eq!(
            t["mcp_servers"]["tfc"]["command"].as_str(),
            Some("/new/tfc")
        );
        assert_eq!(t["mcp_servers"]["other"]["command"].as_str(), Some("x"));
        assert_eq!(text.matches("[mcp_servers.tfc]").count(), 1);
        assert!(register(Host::Codex, Path::new("/p"), exe, None).is_err());
    }

    #[test]
    fn pi_gets_instructions() {
        let r = register(Host::Pi, Path::new("/p"), Path::new("/t/tfc"), None).unwrap();
        assert!(r.files.is_empty());
        assert!(r.note.unwrap().contains("/t/tfc check"));
    }
}
