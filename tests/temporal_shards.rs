//! A large map on Temporal runs its calls in child workflows (`TfcShard`), a shard at a
//! time, and gives the record of a local run; cancelling the run stops the shard in flight.
#![cfg(feature = "temporal")]

#[path = "mock/mod.rs"]
mod mock;
mod temporal_env;

use temporal_env::*;

/// Eleven items (one flaky: retried), a downstream phase.
const MAP: &str = r#"{"name": "wide",
    "args": {"items": {"default": ["a", "b", "FLAKY c", "d", "e", "f", "g", "h", "i", "j", "k"]}},
    "phases": [
    {"id": "each", "type": "map", "concurrency": 3, "over": "{args.items}", "task": "look at {item}"},
    {"id": "sum", "dependsOn": ["each"], "task": "sum up {steps.each.output}"}]}"#;

/// How many of a history's events carry `attributes` (`…EventAttributes`), and the
/// activity ids of its scheduled activities.
fn events(history: &serde_json::Value, attributes: &str) -> Vec<serde_json::Value> {
    history["events"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e.get(attributes).cloned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_large_map_runs_in_shards_and_gives_the_local_record() {
    let Some((server, base)) = server_in("shards") else {
        return;
    };
    let local_dir = base.join("local");
    let remote_dir = base.join("remote");
    let local_agent = project(&local_dir);
    let remote_agent = project(&remote_dir);
    // Shards of four items: eleven items make three.
    std::fs::write(
        remote_dir.join(".tfc").join("config.toml"),
        "[engine]\nshard_items = 4\n",
    )
    .expect("config");
    let _w1 = Worker::start(&server, &remote_dir, &remote_agent, "1");
    let _w2 = Worker::start(&server, &remote_dir, &remote_agent, "2");
    std::fs::write(local_dir.join("flow.json"), MAP).expect("flow");
    std::fs::write(remote_dir.join("flow.json"), MAP).expect("flow");
    let agent = local_agent.display().to_string();
    let local = tfc(&local_dir, &["run", "flow.json", "--agent-cmd", &agent]);
    let on_temporal = run_on(&server, &remote_dir, &remote_agent);
    assert_eq!(
        (local.code, &local.stdout),
        (on_temporal.code, &on_temporal.stdout),
        "exit code and output\nlocal: {}\ntemporal: {}",
        local.stderr,
        on_temporal.stderr
    );
    assert_eq!(local.code, 0, "{}", local.stderr);
    let a = normalized(record(&local_dir));
    let b = normalized(record(&remote_dir));
    assert_eq!(
        a,
        b,
        "the records differ\nlocal: {}\ntemporal: {}",
        serde_json::to_string_pretty(&a).unwrap_or_default(),
        serde_json::to_string_pretty(&b).unwrap_or_default()
    );
    assert_eq!(b["phases"]["each"]["attempts"], 12, "{b:#}");
    let sorted = |d: &std::path::Path| {
        let mut v: Vec<String> = calls(d).into_iter().map(|c| c.0).collect();
        v.sort();
        v
    };
    assert_eq!(sorted(&local_dir), sorted(&remote_dir), "the same calls");

    // The run's own history holds three child workflows and no item call; each shard's
    // history holds its items' calls.
    let id = run_id(&remote_dir).expect("run id");
    let history = server.history(&id);
    let children = events(
        &history,
        "startChildWorkflowExecutionInitiatedEventAttributes",
    );
    assert_eq!(children.len(), 3, "{history:#}");
    let scheduled = events(&history, "activityTaskScheduledEventAttributes");
    let item_calls = scheduled
        .iter()
        .filter(|a| a["activityId"].as_str().unwrap_or("").contains("each#"))
        .count();
    assert_eq!(item_calls, 0, "no item call in the run's history");
    let mut in_shards = 0;
    for c in &children {
        let child_id = c["workflowId"].as_str().expect("child id");
        assert!(child_id.starts_with(&format!("{id}/shard")), "{child_id}");
        in_shards += events(
            &server.history(child_id),
            "activityTaskScheduledEventAttributes",
        )
        .len();
    }
    assert_eq!(in_shards, 12, "eleven items and one retry, in the shards");
    // The journal holds every attempt's `agent-call` line, as a local run's does.
    let journal = |d: &std::path::Path| {
        std::fs::read_to_string(run_dir(d).expect("run").join("journal.jsonl"))
            .expect("journal")
            .lines()
            .filter(|l| l.contains("\"type\":\"agent-call\""))
            .count()
    };
    assert_eq!(journal(&local_dir), journal(&remote_dir));
}

#[test]
fn cancelling_a_run_stops_the_shard_in_flight() {
    let Some((server, base)) = server_in("shard-cancel") else {
        return;
    };
    let dir = base.join("cancel");
    let agent = project(&dir);
    std::fs::write(
        dir.join(".tfc").join("config.toml"),
        "[engine]\nshard_items = 2\n",
    )
    .expect("config");
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name": "slowmap",
            "args": {"items": {"default": ["SLOW:120 a", "SLOW:120 b", "c", "d", "e"]}},
            "phases": [{"id": "each", "type": "map", "concurrency": 2, "over": "{args.items}",
            "task": "{item}"}]}"#,
    )
    .expect("flow");
    let _w = Worker::start(&server, &dir, &agent, "cancel");
    let run = spawn_run(&server, &dir, &agent);
    assert!(
        wait_for(180, || calls(&dir).len() == 2),
        "the slow calls never started"
    );
    let started = std::time::Instant::now();
    let cancelled = tfc(&dir, &["cancel", "last", "--temporal", &server.address()]);
    assert_eq!(cancelled.code, 0, "{}", cancelled.stderr);
    let out = run.wait_with_output().expect("tfc run");
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "the shard's calls were stopped, not waited for"
    );
    let rec = record(&dir);
    assert_eq!(rec["status"], "paused", "{rec:#}");
    assert_eq!(rec["reason"], "interrupted", "{rec:#}");
    let items = rec["phases"]["each"]["items"].as_array().expect("items");
    assert_eq!(items.len(), 5, "{rec:#}");
    assert!(
        items.iter().all(|i| i["status"] == "failed"),
        "every item stopped or never started: {rec:#}"
    );
    assert_eq!(calls(&dir).len(), 2, "no item started after the cancel");
}

#[test]
fn a_run_over_budget_stops_the_shard_out_as_it_stops_a_local_map() {
    let mockllm = std::env::var_os("TFC_MOCKLLM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/mockllm")
        });
    if !mockllm.join("server.py").is_file() {
        skip(&format!(
            "no mock provider at {} (set TFC_MOCKLLM)",
            mockllm.display()
        ));
        return;
    }
    let Some((server, base)) = server_in("shard-cap") else {
        return;
    };
    // `other` spends 200 tokens at once while the map's first shard runs its slow first
    // item: the cap (100) is passed, so the shard's second item must not start, nor any
    // later one, as a local map would not start them.
    let answers = serde_json::json!({"default": "ok", "rules": [
        {"match": "SLOW", "answer": "late", "delay_ms": 6000,
         "usage": {"input_tokens": 1, "output_tokens": 1}},
        {"match": "spend", "answer": "spent",
         "usage": {"input_tokens": 100, "output_tokens": 100}}]});
    let mock = mock::Mock::start(&mockllm, &base, &answers);
    let flow = r#"{"name": "capped", "budget": {"maxTokens": 100},
        "args": {"items": {"default": ["SLOW a", "SLOW b", "c", "d", "e"]}},
        "phases": [
        {"id": "other", "task": "spend"},
        {"id": "each", "type": "map", "concurrency": 1, "over": "{args.items}", "task": "{item}"},
        {"id": "end", "dependsOn": ["other", "each"], "task": "end"}]}"#;
    let mut records = Vec::new();
    for name in ["local", "remote"] {
        let dir = base.join(name);
        project(&dir);
        std::fs::write(dir.join("flow.json"), flow).expect("flow");
        std::fs::write(
            dir.join(".tfc").join("config.toml"),
            format!(
                "default_backend = \"llm\"\n[backends.llm]\nkind = \"openai\"\n\
                 base_url = \"{}/v1\"\nmodel = \"m\"\n[engine]\nshard_items = 2\n",
                mock.url
            ),
        )
        .expect("config");
        let before = mock.requests().len();
        let ran = if name == "local" {
            tfc(&dir, &["run", "flow.json"])
        } else {
            let _w = Worker::start_with(&server, &dir, &[], "cap");
            let address = server.address();
            tfc(
                &dir,
                &[
                    "run",
                    "flow.json",
                    "--engine",
                    "temporal",
                    "--temporal",
                    &address,
                ],
            )
        };
        assert_eq!(ran.code, 5, "{name}: {}", ran.stderr);
        let rec = record(&dir);
        assert_eq!(rec["status"], "paused", "{name}: {rec:#}");
        let items: Vec<&str> = rec["phases"]["each"]["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["status"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(
            items,
            ["done", "skipped", "skipped", "skipped", "skipped"],
            "{name}: {rec:#}"
        );
        assert_eq!(
            mock.requests().len() - before,
            2,
            "{name}: `other` and the first item only"
        );
        records.push(normalized(rec));
    }
    assert_eq!(records[0], records[1]);
}

#[test]
fn the_call_cap_holds_across_shards() {
    let Some((server, base)) = server_in("shard-calls") else {
        return;
    };
    // Shards of four items, three calls at once, `other` beside them: the run makes exactly
    // five calls (SPEC §8.7), however the shards and the other phase interleave.
    let dir = base.join("capped");
    let agent = project(&dir);
    std::fs::write(
        dir.join(".tfc").join("config.toml"),
        "[engine]\nshard_items = 4\n",
    )
    .expect("config");
    let flow = MAP
        .replace(
            r#""name": "wide","#,
            r#""name": "wide", "budget": {"maxCalls": 5},"#,
        )
        .replace(
            r#""phases": ["#,
            r#""phases": [{"id": "other", "task": "other"},"#,
        );
    std::fs::write(dir.join("flow.json"), flow).expect("flow");
    let _w = Worker::start(&server, &dir, &agent, "calls");
    let ran = run_on(&server, &dir, &agent);
    assert_eq!(ran.code, 5, "paused: {}", ran.stderr);
    assert_eq!(calls(&dir).len(), 5, "{:?}", calls(&dir));
    let rec = record(&dir);
    assert_eq!(rec["status"], "paused", "{rec:#}");
    assert_eq!(
        rec["reason"], "budget exceeded: calls 5 reached cap 5",
        "{rec:#}"
    );
    assert_eq!(rec["usage"]["calls"], 5, "{rec:#}");
    assert_eq!(rec["phases"]["each"]["budgetTruncated"], true, "{rec:#}");
}
