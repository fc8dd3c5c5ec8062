//! `tfc init --host …` (SPEC §13.4): each host's configuration file registers `tfc mcp`,
//! merged into what is there, idempotently, previewed with `--dry-run`; and the registered
//! command really serves MCP.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

fn tfc(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("HOME", dir.join("home"))
        .env("CODEX_HOME", dir.join("home/.codex"))
        .env("XDG_CONFIG_HOME", dir.join("home/.config"))
        .stdin(Stdio::null())
        .output()
        .expect("run tfc");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn project(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(".tfc")).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    dir
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn init_registers_every_host_and_is_idempotent() {
    let dir = project("mcp_hosts_init");
    std::fs::write(
        dir.join(".mcp.json"),
        r#"{"mcpServers": {"mine": {"command": "my-server"}}}"#,
    )
    .unwrap();
    let hosts = [
        "init", "--host", "claude", "--host", "codex", "--host", "gemini", "--host", "opencode",
        "--host", "pi",
    ];
    let mut dry = hosts.to_vec();
    dry.push("--dry-run");
    let (code, out, err) = tfc(&dir, &dry);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("would update .mcp.json"), "{out}");
    assert!(
        !dir.join("opencode.json").exists(),
        "--dry-run writes nothing"
    );

    let (code, out, err) = tfc(&dir, &hosts);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("updated .mcp.json"), "{out}");
    assert!(out.contains("created opencode.json"), "{out}");
    assert!(err.contains("pi has no MCP configuration"), "{err}");
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_tfc")).unwrap();
    let exe = exe.to_str().unwrap();
    let claude = json(&dir.join(".mcp.json"));
    assert_eq!(claude["mcpServers"]["mine"]["command"], "my-server", "kept");
    assert_eq!(claude["mcpServers"]["tfc"]["command"], exe);
    assert_eq!(claude["mcpServers"]["tfc"]["args"][0], "mcp");
    let gemini = json(&dir.join(".gemini/settings.json"));
    assert_eq!(gemini["mcpServers"]["tfc"]["command"], exe);
    let oc = json(&dir.join("opencode.json"));
    assert_eq!(oc["mcp"]["tfc"]["type"], "local");
    assert_eq!(oc["mcp"]["tfc"]["command"][0], exe);
    let codex: toml::Table = std::fs::read_to_string(dir.join("home/.codex/config.toml"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(codex["mcp_servers"]["tfc"]["command"].as_str(), Some(exe));

    // Again: nothing changes.
    let before = std::fs::read_to_string(dir.join(".mcp.json")).unwrap();
    let (code, out, _) = tfc(&dir, &hosts);
    assert_eq!(code, 0);
    assert!(
        !out.contains("updated") && !out.contains("created"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join(".mcp.json")).unwrap(),
        before
    );

    let (code, _, err) = tfc(&dir, &["init", "--host", "vim"]);
    assert_eq!(code, 2);
    assert!(err.contains("--host vim: not a host"), "{err}");
}

#[test]
fn the_registered_command_serves_mcp() {
    let dir = project("mcp_hosts_serve");
    let (code, _, err) = tfc(&dir, &["init", "--host", "claude"]);
    assert_eq!(code, 0, "{err}");
    let entry = json(&dir.join(".mcp.json"))["mcpServers"]["tfc"].clone();
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let out = Command::new(entry["command"].as_str().unwrap())
        .args(&args)
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            let mut stdin = c.stdin.take().unwrap();
            writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#)?;
            writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list"}}"#)?;
            drop(stdin);
            c.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["result"]["serverInfo"]["name"], "tfc");
    assert!(lines[1]["result"]["tools"].as_array().unwrap().len() >= 12);
}
