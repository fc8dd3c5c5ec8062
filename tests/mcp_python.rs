//! `tfc mcp` with a client nobody here wrote: the official MCP Python SDK (`mcp` on PyPI)
//! connects over stdio, lists the tools, validates every result against its outputSchema,
//! runs a flow with a command backend to completion and reads it back (tests/mcp/sdk_client.py).
//!
//! The SDK lives in a virtual environment that `.ci/run` creates (`target/mcp-venv`; or the
//! python named by `TFC_MCP_PYTHON`). Without it the test says SKIPPED (or fails, with
//! `TFC_REQUIRE_REAL_PARTS=1`, as in CI).

#[path = "mcp/client.rs"]
mod client;
mod common;

use std::path::PathBuf;
use std::process::Command;

fn python() -> Option<PathBuf> {
    let p = match std::env::var_os("TFC_MCP_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/mcp-venv/bin/python"),
    };
    let ok = Command::new(&p)
        .args(["-c", "import mcp, jsonschema"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(p)
}

#[test]
fn the_official_python_sdk_drives_every_tool() {
    let Some(python) = python() else {
        common::skip("no Python with the `mcp` package (run .ci/run, or set TFC_MCP_PYTHON)");
        return;
    };
    let root = client::project("mcp_python_sdk");
    std::fs::write(
        root.join("flow.json"),
        r#"{"name": "pair", "phases": [
  {"id": "one", "task": "first"},
  {"id": "two", "dependsOn": ["one"], "task": "second {steps.one.output}"}]}"#,
    )
    .unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/sdk_client.py");
    let out = Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_tfc"))
        .arg(&root)
        .env("XDG_CONFIG_HOME", root.join(".xdg"))
        .env("NO_COLOR", "1")
        .output()
        .expect("run the SDK client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "SDK client failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.contains("every result matched its outputSchema"),
        "{stdout}"
    );
}
