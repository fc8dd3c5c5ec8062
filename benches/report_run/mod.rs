//! A synthetic finished run of `n` phases — `run.json` (with its `def`) and `journal.jsonl` —
//! for the report bench and the report size test. Shape: layers of ten phases, each depending
//! on two of the layer above (so crossings have to be reduced); every 7th phase a map of three
//! items, every 50th conditional, the last one final. Outputs of ~400 and prompts of ~600
//! characters, with markup to escape; every phase done, 100 ms each, one after the other.
#![allow(dead_code)]

use std::fmt::Write;

/// `2026-12-01T10:00:00.000Z` plus `ms`.
fn ts(ms: u64) -> String {
    let s = ms / 1000;
    format!(
        "2026-12-01T{:02}:{:02}:{:02}.{:03}Z",
        10 + s / 3600,
        (s / 60) % 60,
        s % 60,
        ms % 1000
    )
}

/// `(run.json, journal.jsonl)` of a run of `n` phases.
pub fn run(n: usize) -> (String, String) {
    let width = 10;
    let mut def = String::from(r#"{"name": "bench-report", "phases": ["#);
    let mut phases = String::new();
    let mut journal = String::new();
    let _ = writeln!(
        journal,
        r#"{{"type":"run-start","ts":"{}","runId":"bench-report-1","flow":"bench-report","parentRunId":null,"args":{{}}}}"#,
        ts(0)
    );
    let output: String = "Findings: <ok> & fine. ".repeat(18);
    let prompt: String = "Review the <module> & report \"issues\". ".repeat(15);
    for i in 0..n {
        let layer = i / width;
        let mut deps = Vec::new();
        if layer > 0 {
            let base = (layer - 1) * width;
            deps.push(base + i % width);
            deps.push(base + (i % width + 3) % width);
            deps.dedup();
        }
        let deps: Vec<String> = deps.iter().map(|d| format!("\"p{d}\"")).collect();
        let map = i % 7 == 3 && layer > 0;
        let kind = if map {
            format!(
                r#""type": "map", "over": "{{steps.p{}.json}}", "#,
                (layer - 1) * width + i % width
            )
        } else {
            String::new()
        };
        let when = if i % 50 == 49 {
            format!(r#""when": "{{steps.p{}.output}} != \"stop\"", "#, i - 1)
        } else {
            String::new()
        };
        let last = if i + 1 == n { r#""final": true, "# } else { "" };
        let _ = write!(
            def,
            r#"{}{{"id": "p{i}", {kind}{when}{last}"dependsOn": [{}], "task": "Step {i}"}}"#,
            if i == 0 { "" } else { ", " },
            deps.join(", ")
        );
        let (start, end) = (i as u64 * 100, i as u64 * 100 + 95);
        let calls = if map { 3 } else { 1 };
        let _ = write!(
            phases,
            r#"{}"p{i}": {{"status": "done", "output": "{output}", "warnings": [], "attempts": {calls}, "reads": [], "usage": {{"input": 1200, "output": 300, "cacheRead": 0, "cacheWrite": 0, "costUSD": 0.0042, "turns": 1}}, "startedAt": "{}", "endedAt": "{}", "type": "{}"}}"#,
            if i == 0 { "" } else { ", " },
            ts(start),
            ts(end),
            if map { "map" } else { "agent" }
        );
        let _ = writeln!(
            journal,
            r#"{{"type":"phase-start","ts":"{}","phase":"p{i}"}}"#,
            ts(start)
        );
        for k in 0..calls {
            let node = if map {
                format!("p{i}#{k}")
            } else {
                format!("p{i}")
            };
            let _ = writeln!(
                journal,
                r#"{{"type":"input","ts":"{}","input":{{"at":{},"what":{{"kind":"call-ended","op":{i},"node":"{node}","attempt":1}}}}}}"#,
                ts(end),
                end
            );
            let _ = writeln!(
                journal,
                r#"{{"type":"agent-call","ts":"{}","node":"{node}","agent":"default","promptSha256":"{}","attempt":1,"backend":"bench","model":null,"ok":true,"output":"{output}","error":null,"usage":{{"input":1200,"output":300,"cacheRead":0,"cacheWrite":0,"costUSD":0.0042,"turns":1}},"stopReason":"completed","durationMs":80,"prompt":"{} {}"}}"#,
                ts(end - 5 * (calls - k) as u64),
                "0".repeat(64),
                prompt.replace('"', "\\\""),
                node
            );
        }
        let _ = writeln!(
            journal,
            r#"{{"type":"phase-end","ts":"{}","phase":"p{i}","status":"done"}}"#,
            ts(end)
        );
    }
    def.push_str("]}");
    let _ = writeln!(
        journal,
        r#"{{"type":"run-end","ts":"{}","status":"completed"}}"#,
        ts(n as u64 * 100)
    );
    let record = format!(
        r#"{{"schemaVersion": 1, "runId": "bench-report-1", "flow": "bench-report", "parentRunId": null, "status": "completed", "reason": null, "finalOutput": "done", "outputPhase": "p{}", "args": {{}}, "startedAt": "{}", "endedAt": "{}", "usage": {{"input": {}, "output": {}, "cacheRead": 0, "cacheWrite": 0, "costUSD": 4.2, "turns": {n}}}, "spentBefore": null, "warnings": ["p3: a warning with <markup>"], "phases": {{{phases}}}, "def": {def}, "tfcVersion": "0.1.0"}}"#,
        n - 1,
        ts(0),
        ts(n as u64 * 100),
        n * 1200,
        n * 300
    );
    (record, journal)
}
