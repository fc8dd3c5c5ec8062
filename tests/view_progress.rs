//! What `tfc run` tells on stderr while a flow runs: the plain lines (stderr not a terminal)
//! with loop iterations and stop reasons, gate verdicts and rework rounds, fan-out items,
//! reuse, whole errors, run-time warnings and the one-line summary; and the live view on a
//! terminal (through a pty made by `script`), whose elapsed times tick without events.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Outcome, scratch, tfc_in};

/// A project folder holding `flow.json` and an executable `agent.sh`.
fn project(name: &str, flow: &str, agent: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc")).expect("create .tfc");
    std::fs::write(dir.join("flow.json"), flow).expect("write flow");
    let script = dir.join("agent.sh");
    std::fs::write(&script, format!("#!/bin/sh\n{agent}\n")).expect("write agent");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

fn run(dir: &Path, extra: &[&str]) -> Outcome {
    let mut argv = vec!["run", "flow.json", "--agent-cmd", "./agent.sh"];
    argv.extend_from_slice(extra);
    tfc_in(Some(dir), &argv, b"")
}

/// Every kind of fact in one flow: a map, a loop stopped by `until`, a gate that blocks once
/// and passes after a rework, and a final phase that fails with two lines of stderr and an
/// unresolved placeholder.
const FLOW: &str = r#"{"name":"v","phases":[
 {"id":"draft","task":"write","output":"json"},
 {"id":"each","type":"map","dependsOn":["draft"],"over":"{steps.draft.json.list}","task":"item {item}"},
 {"id":"fix","type":"loop","dependsOn":["draft"],"task":"iter {loop.iteration}","until":"{loop.iteration} >= 3","maxIterations":5},
 {"id":"review","type":"gate","dependsOn":["draft"],"task":"judge","onBlock":"retry","retry":{"max":2}},
 {"id":"bad","dependsOn":["review","each","fix"],"task":"fail {steps.draft.json.nope}","final":true}
]}"#;

const AGENT: &str = r#"p=$(cat)
case "$p" in
  *judge*) n=$(cat judged 2>/dev/null || echo 0); n=$((n+1)); echo $n > judged
           if [ $n -ge 2 ]; then echo "VERDICT: PASS"; else echo '{"verdict":"block","reason":"tests fail"}'; fi;;
  fail*) echo "first line" >&2; echo "second line" >&2; exit 3;;
  write*) echo '{"list":[1,2,3]}';;
  *) echo "ok $p";;
esac"#;

/// The summary line: `run <id> <status>…`, the last line starting with `run `.
fn summary(stderr: &str) -> &str {
    stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("run "))
        .expect("a summary line")
}

#[test]
fn plain_lines_tell_iterations_verdicts_reworks_items_and_errors() {
    let dir = project("view-plain", FLOW, AGENT);
    let out = run(&dir, &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    for line in [
        "▶ fix running [iteration 1/5]",
        "▶ fix running [iteration 3/5]",
        "✓ fix done (3 calls) [3/5 iterations, stopped: until]",
        "▶ review running [BLOCK: tests fail · rework 1/2]",
        "▶ draft running: re-run by a gate's rework",
        "✓ draft done (2 calls)",
        "✓ review done (2 calls) [PASS · rework 1/2]",
        "✓ each done (3 calls) [3/3 items]",
        "warning: bad: unresolved refs in task: {steps.draft.json.nope} — left intact (check dependsOn / placeholder spelling)",
        "✗ bad failed: first line\n  second line\n",
    ] {
        assert!(out.stderr.contains(line), "{line:?} in\n{}", out.stderr);
    }
    // Line-oriented: every progress line starts with its mark and phase id.
    for l in out.stderr.lines().filter(|l| l.starts_with('▶')) {
        let word = l.split(' ').nth(2).map(|w| w.trim_end_matches(':'));
        assert_eq!(word, Some("running"), "{l}");
    }
    let s = summary(&out.stderr);
    let id = s.split(' ').nth(1).expect("run id");
    assert!(
        s.starts_with(&format!("run {id} failed · ")),
        "{s}\n{}",
        out.stderr
    );
    assert!(s.contains(" · 11 calls · tokens 0 in / 0 out · "), "{s}");
    let record = format!(".tfc/runs/v/{id}/run.json");
    assert!(s.ends_with(&format!(" · record {record}")), "{s}");
    assert!(dir.join(&record).is_file(), "{s}");
    assert!(!s.contains('$'), "no cost is known: {s}");
}

#[test]
fn loops_say_why_they_stopped() {
    let flow = r#"{"name":"loops","phases":[
 {"id":"same","type":"loop","task":"same","until":"false","maxIterations":4},
 {"id":"grow","type":"loop","task":"grow {loop.iteration}","until":"false","maxIterations":2},
 {"id":"end","dependsOn":["same","grow"],"task":"end","final":true}
]}"#;
    let dir = project("view-loops", flow, r#"p=$(cat); echo "$p""#);
    let out = run(&dir, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("✓ same done (2 calls) [2/4 iterations, stopped: converged]"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("✓ grow done (2 calls) [2/2 iterations, stopped: max]"),
        "{}",
        out.stderr
    );
    assert!(
        summary(&out.stderr).contains(" completed · "),
        "{}",
        out.stderr
    );
}

#[test]
fn a_block_shows_on_the_gate_row_and_in_the_summary() {
    let flow = r#"{"name":"gated","phases":[
 {"id":"a","task":"work"},
 {"id":"check","type":"gate","dependsOn":["a"],"task":"judge"},
 {"id":"b","dependsOn":["check"],"task":"more","final":true}
]}"#;
    let agent = r#"p=$(cat); case "$p" in *judge*) printf '%s\n' '{"pass":false,"reason":"too\nrisky"}';; *) echo ok;; esac"#;
    let dir = project("view-block", flow, agent);
    let out = run(&dir, &["--report"]);
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(
        out.stderr.contains("✓ check done [BLOCK: too risky]"),
        "{}",
        out.stderr
    );
    let s = summary(&out.stderr);
    assert!(
        s.contains(" blocked: Gate blocked: too risky · "),
        "the reason on one line: {s}"
    );
    let id = s.split(' ').nth(1).expect("run id");
    assert!(
        s.ends_with(&format!(
            " · record .tfc/runs/gated/{id}/run.json · report .tfc/runs/gated/{id}/report.html"
        )),
        "{s}"
    );
    assert!(
        dir.join(format!(".tfc/runs/gated/{id}/report.html"))
            .is_file()
    );
}

#[test]
fn reused_phases_say_so_and_quiet_hides_run_time_warnings() {
    let flow = r#"{"name":"inc","phases":[
 {"id":"a","task":"work","output":"json"},
 {"id":"b","dependsOn":["a"],"task":"more {steps.a.json.nope}","final":true}
]}"#;
    let dir = project("view-reuse", flow, r#"cat >/dev/null; echo '{"x":1}'"#);
    let first = run(&dir, &["--incremental", "--quiet"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(!first.stderr.contains("warning:"), "{}", first.stderr);
    let second = run(&dir, &["--incremental"]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        second.stderr.contains("✓ a done: reused (cross-run)"),
        "{}",
        second.stderr
    );
    assert!(
        summary(&second.stderr).contains(" · 0 calls · "),
        "{}",
        second.stderr
    );
}

/// Run `tfc` on a pseudo-terminal of `cols` columns (via `script`); the raw bytes it wrote.
fn on_a_terminal(dir: &Path, args: &str, cols: u16) -> Option<String> {
    let probe = Command::new("script").arg("--version").output();
    if probe.is_err() {
        common::skip("`script` (util-linux) is not installed");
        return None;
    }
    let tfc = env!("CARGO_BIN_EXE_tfc");
    let out = Command::new("script")
        .args(["-qfec"])
        .arg(format!(
            "stty cols {cols} rows 30; exec {tfc} run flow.json --agent-cmd ./agent.sh {args}"
        ))
        .arg("/dev/null")
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env("TERM", "xterm")
        .output()
        .expect("run script");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The text of a terminal transcript without escape sequences, cut into lines at `\r`/`\n`
/// and at cursor moves.
fn screen_lines(raw: &str) -> Vec<String> {
    let mut lines = vec![String::new()];
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                // CSI: ESC [ params final-byte; a cursor move starts a new line.
                if chars.peek() == Some(&'[') {
                    chars.next();
                    while let Some(&n) = chars.peek() {
                        chars.next();
                        if n.is_ascii_alphabetic() {
                            if n == 'A' {
                                lines.push(String::new());
                            }
                            break;
                        }
                    }
                }
            }
            '\r' | '\n' => lines.push(String::new()),
            c => lines.last_mut().expect("a line").push(c),
        }
    }
    lines.retain(|l| !l.is_empty());
    lines
}

#[test]
fn on_a_terminal_elapsed_time_ticks_and_errors_are_whole_and_cut() {
    let flow = r#"{"name":"tty","phases":[
 {"id":"slow","task":"slow","output":"json"},
 {"id":"each","type":"map","dependsOn":["slow"],"over":"{steps.slow.json}","task":"item {item}"},
 {"id":"bad","dependsOn":["slow","each"],"task":"fail","final":true}
]}"#;
    let long = "x".repeat(200);
    let agent = format!(
        r#"p=$(cat); case "$p" in slow*) sleep 1.5; echo '[1,2]';; fail*) echo "one" >&2; echo "{long}" >&2; echo "three" >&2; exit 1;; *) echo ok;; esac"#
    );
    let dir = project("view-tty", flow, &agent);
    let Some(raw) = on_a_terminal(&dir, "", 60) else {
        return;
    };
    let lines = screen_lines(&raw);
    // The running row of `slow` was redrawn with growing times while no event arrived.
    let mut times: Vec<String> = lines
        .iter()
        .filter(|l| l.starts_with("▶ slow"))
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_owned))
        .collect();
    times.dedup();
    assert!(times.len() >= 5, "ticks: {times:?}\n{raw}");
    // The failed phase: its line, then every line of its error, each cut to the width.
    let at = lines
        .iter()
        .position(|l| l.starts_with("✗ bad failed"))
        .unwrap_or_else(|| panic!("no failed line in {lines:#?}"));
    assert_eq!(lines[at + 1], "    one", "{lines:#?}");
    assert!(lines[at + 2].starts_with("    xxxx"), "{lines:#?}");
    assert!(lines[at + 2].ends_with('…'), "{lines:#?}");
    assert_eq!(lines[at + 2].chars().count(), 59, "{lines:#?}");
    assert_eq!(lines[at + 3], "    three", "{lines:#?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("✓ each done") && l.ends_with("[2/2 items]")),
        "{lines:#?}"
    );
    // Rows and the footer never wrap.
    for l in lines
        .iter()
        .filter(|l| l.starts_with('▶') || l.starts_with("──"))
    {
        assert!(l.chars().count() < 60, "{l:?}");
    }
    // The summary ends the output, after the live area was erased.
    let last = lines.last().expect("output");
    assert!(last.starts_with("run tty-"), "{lines:#?}");
    assert!(last.contains(" failed · "), "{last}");
}

#[test]
fn on_a_terminal_an_approval_prompt_is_not_drawn_over() {
    let flow = r#"{"name":"ap","phases":[
 {"id":"slow","task":"slow"},
 {"id":"ok","type":"approval","task":"go?"},
 {"id":"end","dependsOn":["slow","ok"],"task":"end","final":true}
]}"#;
    let dir = project(
        "view-tty-approval",
        flow,
        r#"p=$(cat); case "$p" in slow*) sleep 2;; esac; echo fine"#,
    );
    if Command::new("script").arg("--version").output().is_err() {
        common::skip("`script` (util-linux) is not installed");
        return;
    }
    let tfc = env!("CARGO_BIN_EXE_tfc");
    // The answer comes a second after the start, while `slow` is still running.
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "(sleep 1; printf 'a\\n') | script -qfec 'stty cols 80 rows 30; exec {tfc} run flow.json --agent-cmd ./agent.sh' /dev/null"
        ))
        .current_dir(&dir)
        .env_remove("NO_COLOR")
        .env("TERM", "xterm")
        .output()
        .expect("run script");
    let raw = String::from_utf8_lossy(&out.stdout);
    let asked = raw
        .find("[a]pprove / [r]eject / [e]dit note: ")
        .unwrap_or_else(|| panic!("no prompt in {raw}"));
    let decided = raw[asked..]
        .find("✓ ok done")
        .unwrap_or_else(|| panic!("the approval did not end: {raw}"))
        + asked;
    // While the prompt waits, the live area (with `slow` ticking) is not drawn over it.
    assert!(!raw[asked..decided].contains('▶'), "{raw}");
    assert!(!raw[asked..decided].contains("\x1b[2A"), "{raw}");
    assert!(raw[decided..].contains("▶ slow"), "{raw}");
    let lines = screen_lines(&raw);
    assert!(
        lines.last().is_some_and(|l| l.contains(" completed · ")),
        "{lines:#?}"
    );
}
