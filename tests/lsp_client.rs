//! `tfc lsp` with clients nobody here wrote, over stdio: pytest-lsp (a Python LSP client on
//! PyPI) runs tests/lsp/test_tfc_lsp.py against the built binary, and a headless Neovim opens a
//! flow, waits for its diagnostics and jumps to a definition (tests/lsp/nvim_smoke.lua).
//!
//! pytest-lsp lives in a virtual environment that `.ci/run` creates (`target/lsp-venv`, or the
//! python named by `TFC_LSP_PYTHON`); Neovim is Debian's `neovim`. Without them the tests say
//! SKIPPED (or fail, with `TFC_REQUIRE_REAL_PARTS=1`, as in CI).

mod common;

use std::path::PathBuf;
use std::process::Command;

fn python() -> Option<PathBuf> {
    let p = match std::env::var_os("TFC_LSP_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => common::root().join("target/lsp-venv/bin/python"),
    };
    let ok = Command::new(&p)
        .args(["-c", "import pytest_lsp"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(p)
}

#[test]
fn pytest_lsp_drives_every_feature_over_stdio() {
    let Some(python) = python() else {
        common::skip("no Python with pytest-lsp (run .ci/run, or set TFC_LSP_PYTHON)");
        return;
    };
    let project = common::scratch("lsp_pytest");
    std::fs::create_dir_all(project.join(".tfc/flows")).unwrap();
    let out = Command::new(python)
        .args(["-m", "pytest", "-q", "-s", "-p", "no:cacheprovider"])
        .args(["-o", "asyncio_mode=auto"])
        .args(["-o", "asyncio_default_fixture_loop_scope=function"])
        .arg(common::root().join("tests/lsp/test_tfc_lsp.py"))
        .current_dir(&project)
        .env("TFC_BIN", env!("CARGO_BIN_EXE_tfc"))
        .env("TFC_LSP_PROJECT", &project)
        .env("XDG_CONFIG_HOME", project.join(".xdg"))
        .output()
        .expect("run pytest");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "pytest-lsp failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("8 passed"), "{stdout}");
    assert!(stdout.contains("LATENCY 1000 phases"), "{stdout}");
}

#[test]
fn neovim_shows_diagnostics_and_jumps_to_a_definition() {
    if !Command::new("nvim")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        common::skip("no nvim (Debian package neovim; .ci/run installs it)");
        return;
    }
    let dir = common::scratch("lsp_neovim");
    let flow = dir.join("smoke.flow.json");
    std::fs::write(
        &flow,
        "{\"phases\": [\n  {\"id\": \"scan\", \"task\": \"naïve 😀\"},\n  {\"id\": \"fix\", \"dependsOn\": [\"scan\"], \"task\": \"😀 {steps.scan.output} {steps.scna.output}\"}\n]}\n",
    )
    .unwrap();
    let out = Command::new("timeout")
        .args(["120", "nvim", "--headless", "--clean", "-u", "NONE", "-c"])
        .arg(format!(
            "luafile {}",
            common::root().join("tests/lsp/nvim_smoke.lua").display()
        ))
        .current_dir(&dir)
        .env("TFC_BIN", env!("CARGO_BIN_EXE_tfc"))
        .env("TFC_LSP_FLOW", &flow)
        .env("XDG_CONFIG_HOME", dir.join(".xdg"))
        .env("XDG_STATE_HOME", dir.join(".state"))
        .env("XDG_DATA_HOME", dir.join(".data"))
        .output()
        .expect("run nvim");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "neovim smoke failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.contains("DIAGNOSTIC tfc 2:")
            && stdout.contains("did you mean {steps.scan.output}?"),
        "{stdout}"
    );
    assert!(stdout.contains("DEFINITION 2:10 scan"), "{stdout}");
}
