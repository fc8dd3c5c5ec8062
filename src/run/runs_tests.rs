use super::*;
use crate::run::record::timestamp;

const DAY: u64 = 24 * 3600 * 1000;
/// 2026-11-30T10:00:00.000Z
const T0: u64 = 1_796_032_800_000;

fn b36(mut ms: u64) -> String {
    let mut out = Vec::new();
    while ms > 0 {
        out.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(ms % 36) as usize]);
        ms /= 36;
    }
    out.reverse();
    String::from_utf8(out).expect("ascii")
}

fn ts(ms: u64) -> String {
    timestamp(UNIX_EPOCH + Duration::from_millis(ms))
}

/// Write a run of `flow` started at `ms` with `status`; returns its id.
fn put(root: &Path, flow: &str, ms: u64, hex: &str, status: &str) -> String {
    let id = format!("{flow}-{}-{hex}", b36(ms));
    let dir = runs_dir(root).join(flow).join(&id);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let record = format!(
        r#"{{
  "schemaVersion": 1, "runId": "{id}", "flow": "{flow}", "parentRunId": null,
  "status": "{status}", "reason": null, "finalOutput": "big \"final\" output",
  "outputPhase": "b", "args": {{"n": 1}}, "startedAt": "{}", "endedAt": "{}",
  "usage": {{"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "costUSD": null, "turns": 2}},
  "spentBefore": null, "warnings": ["a: w"], "backends": {{}},
  "phases": {{
    "a": {{"status": "done", "output": "x[{{\"}}", "json": [1, {{"k": [2]}}], "attempts": 2, "reads": []}},
    "b": {{"status": "skipped", "output": "", "attempts": 0, "cacheHit": "run-only"}}
  }},
  "def": {{"phases": [{{"id": "a", "task": "t"}}]}}
}}
"#,
        ts(ms),
        ts(ms + 1000)
    );
    std::fs::write(dir.join("run.json"), record).expect("write");
    id
}

fn ids(entries: &[RunEntry]) -> Vec<&str> {
    entries.iter().map(|e| e.run_id.as_str()).collect()
}

#[test]
fn ids_carry_their_start_time() {
    let id = crate::run::store::new_run_id("my-flow-x");
    let ms = id_millis(&id).expect("time in id");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("now")
        .as_millis() as u64;
    assert!(now.abs_diff(ms) < 60_000, "{id} {ms}");
    assert_eq!(id_millis("plain"), None);
    assert_eq!(id_millis("a-B!-x"), None);
    // Ids of another shape carry no time (their directory's mtime orders them).
    assert_eq!(id_millis("my-flow-x"), None);
    assert_eq!(id_millis("a-mx33k1s0-nothex"), None);
    assert_eq!(id_millis("a-mx33k1s0-0f"), Some(T0));
}

#[test]
fn timestamps_parse_back() {
    for ms in [0, T0, T0 + 123, 951_782_400_000, 4_102_444_800_999] {
        assert_eq!(parse_timestamp(&ts(ms)), Some(ms), "{}", ts(ms));
    }
    assert_eq!(parse_timestamp("2026-11-30T10:00:00Z"), Some(T0));
    for bad in [
        "",
        "2026-13-01T00:00:00.000Z",
        "2026-11-30 10:00:00.000Z",
        "2026-11-30T10:00:00.000",
    ] {
        assert_eq!(parse_timestamp(bad), None, "{bad}");
    }
}

#[test]
fn summaries_keep_the_small_fields_and_skip_the_bulk() {
    let root = tempfile::tempdir().expect("tmp");
    let id = put(root.path(), "f", T0, "aaaaaa", "completed");
    let dir = runs_dir(root.path()).join("f").join(&id);
    let full = read_record(&dir).expect("full");
    let sum = read_summary(&dir).expect("summary");
    let o = sum.as_object().expect("object");
    assert!(o.get("def").is_none() && o.get("finalOutput").is_none());
    assert_eq!(
        o.get("runId"),
        full.as_object().and_then(|f| f.get("runId"))
    );
    assert_eq!(
        o.get("usage"),
        full.as_object().and_then(|f| f.get("usage"))
    );
    let phases = o.get("phases").and_then(Value::as_object).expect("phases");
    let a = phases.get("a").and_then(Value::as_object).expect("a");
    assert_eq!(a.get("attempts"), Some(&Value::Number(2.0)));
    assert_eq!(a.get("status").and_then(Value::as_str), Some("done"));
    assert!(a.get("output").is_none() && a.get("json").is_none());
    let b = phases.get("b").and_then(Value::as_object).expect("b");
    assert_eq!(b.get("cacheHit").and_then(Value::as_str), Some("run-only"));
}

#[test]
fn a_summary_keeps_the_calls_of_sub_runs() {
    let text = r#"{"runId": "r", "status": "completed", "phases": {
        "a": {"type": "agent", "status": "done", "attempts": 1, "output": "x"},
        "sub": {"type": "flow", "status": "done", "attempts": 0, "output": "y",
            "subRun": {"runId": "s", "finalOutput": "big", "phases": {
                "x": {"type": "agent", "status": "done", "attempts": 2, "output": "z",
                      "subRun": {"phases": {"deep": {"attempts": 1}}}}}}}}}"#;
    let sum = summarize(text).expect("summary");
    assert_eq!(crate::run::summary::record_calls(&sum), 4);
    let sub = &sum.as_object().expect("record")["phases"]
        .as_object()
        .expect("phases")["sub"];
    assert_eq!(
        sub.to_json(),
        r#"{"type":"flow","status":"done","attempts":0,"subRun":{"phases":{"x":{"type":"agent","status":"done","attempts":2,"subRun":{"phases":{"deep":{"attempts":1}}}}}}}"#
    );
}

#[test]
fn broken_records_are_corrupt_not_missing() {
    let root = tempfile::tempdir().expect("tmp");
    let id = put(root.path(), "f", T0, "aaaaaa", "completed");
    let p = runs_dir(root.path()).join("f").join(id).join("run.json");
    let text = std::fs::read_to_string(&p).expect("read");
    // Every truncation of a record is refused by the scanner.
    for cut in (1..text.trim_end().len()).step_by(7) {
        if let Some(prefix) = text.get(..cut) {
            assert!(summarize(prefix).is_err(), "cut at {cut}: {prefix}");
        }
    }
    assert!(summarize(&text).is_ok());
    assert!(summarize("{\"a\": [1, 2}").is_err());
    assert!(summarize("{} x").is_err());

    let id = put(root.path(), "f", T0, "bbbbbb", "completed");
    let dir = runs_dir(root.path()).join("f").join(&id);
    std::fs::write(dir.join("run.json"), "{\"runId\": \"x\", ").expect("write");
    let err = find(root.path(), &id, None).expect_err("corrupt");
    assert!(matches!(err, LookupError::Corrupt(_)), "{err:?}");
    assert!(err.to_string().contains("corrupt run record"), "{err}");
    assert!(err.to_string().contains("run.json"), "{err}");
    std::fs::remove_file(dir.join("run.json")).expect("rm");
    let err = find(root.path(), &id, None).expect_err("missing");
    assert!(err.to_string().contains("has no run.json"), "{err}");
    std::fs::write(dir.join("run.json"), "[1]").expect("write");
    assert!(matches!(
        find(root.path(), &id, None),
        Err(LookupError::Corrupt(_))
    ));
    std::fs::write(dir.join("run.json"), "{\"status\": \"failed\"}").expect("write");
    assert!(matches!(
        find(root.path(), &id, None),
        Err(LookupError::Corrupt(_))
    ));
    // The corrupt run is left out of listings, and reported by list_checked.
    put(root.path(), "f", T0 + 5, "cccccc", "completed");
    let (runs, bad) = list_checked(root.path(), None);
    assert_eq!(runs.len(), 2);
    assert_eq!(bad.len(), 1);
    assert!(matches!(
        find(root.path(), "nope", None),
        Err(LookupError::NotFound(_))
    ));
}

#[test]
fn lookup_by_id_prefix_and_last() {
    let root = tempfile::tempdir().expect("tmp");
    let r = root.path();
    assert_eq!(
        find(r, "last", None).expect_err("empty"),
        LookupError::NotFound("last".into())
    );
    let a1 = put(r, "alpha", T0, "111111", "completed");
    let a2 = put(r, "alpha", T0 + 10, "222222", "failed");
    let b1 = put(r, "beta", T0 + 5, "333333", "paused");
    // Newest first, across flows.
    assert_eq!(
        ids(&list(r, None)),
        vec![a2.as_str(), b1.as_str(), a1.as_str()]
    );
    assert_eq!(ids(&list(r, Some("alpha"))), vec![a2.as_str(), a1.as_str()]);
    assert!(list(r, Some("gamma")).is_empty());
    assert_eq!(find(r, "last", None).expect("last").run_id, a2);
    assert_eq!(find(r, "last", Some("beta")).expect("last beta").run_id, b1);
    let e = find(r, &a1, None).expect("exact");
    assert_eq!((e.flow.as_str(), e.status.as_str()), ("alpha", "completed"));
    assert!(e.record.as_object().is_some_and(|o| o.contains_key("def")));
    assert_eq!(find(r, "beta-", None).expect("prefix").run_id, b1);
    match find(r, "alpha-", None) {
        Err(LookupError::Ambiguous(m)) => assert_eq!(m, vec![a2.clone(), a1.clone()]),
        other => panic!("{other:?}"),
    }
    let msg = find(r, "alpha-", None).expect_err("ambiguous").to_string();
    assert!(
        msg.contains(&a1) && msg.contains(&a2) && msg.contains("ambiguous"),
        "{msg}"
    );
    // The flow narrows the prefix search.
    assert!(matches!(
        find(r, "alpha-", Some("beta")),
        Err(LookupError::NotFound(_))
    ));
    // Paths are never followed.
    assert!(matches!(
        find(r, "../alpha", None),
        Err(LookupError::NotFound(_))
    ));
    assert!(matches!(find(r, "", None), Err(LookupError::NotFound(_))));
    // Runs still being created are not runs.
    std::fs::create_dir_all(runs_dir(r).join("alpha").join(".alpha-x.creating")).expect("mk");
    assert_eq!(list(r, None).len(), 3);
}

#[test]
fn running_with_a_dead_lock_is_interrupted() {
    let root = tempfile::tempdir().expect("tmp");
    let r = root.path();
    let id = put(r, "f", T0, "aaaaaa", "running");
    let dir = runs_dir(r).join("f").join(&id);
    // No lock: nobody runs it.
    assert_eq!(find(r, &id, None).expect("run").status, "interrupted");
    // Our own pid: alive.
    std::fs::write(dir.join("lock"), format!("{}\n", std::process::id())).expect("lock");
    assert_eq!(find(r, &id, None).expect("run").status, "running");
    // A process that has exited and been reaped.
    let mut child = std::process::Command::new("true")
        .spawn()
        .expect("spawn true");
    let pid = child.id();
    child.wait().expect("wait");
    std::fs::write(dir.join("lock"), format!("{pid}\n")).expect("lock");
    assert_eq!(find(r, &id, None).expect("run").status, "interrupted");
    // A killed process not yet reaped (a zombie) is dead too.
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("spawn sleep");
    std::fs::write(dir.join("lock"), format!("{}\n", child.id())).expect("lock");
    assert_eq!(list(r, None)[0].status, "running");
    child.kill().expect("kill");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(list(r, None)[0].status, "interrupted");
    child.wait().expect("wait");
    // A live process that started after the lock was written: the pid was reused.
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("spawn sleep");
    std::fs::write(dir.join("lock"), format!("{}\n", child.id())).expect("lock");
    assert_eq!(list(r, None)[0].status, "running");
    let old = std::fs::File::options()
        .write(true)
        .open(dir.join("lock"))
        .expect("open");
    old.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .expect("mtime");
    drop(old);
    assert_eq!(list(r, None)[0].status, "interrupted");
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert!(
        process_start_ms(std::process::id() as i32).is_some_and(|ms| {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .expect("now")
                .as_millis() as u64;
            ms <= now && now - ms < 3_600_000
        })
    );
    std::fs::write(dir.join("lock"), "garbage").expect("lock");
    assert_eq!(list(r, None)[0].status, "interrupted");
    // Other statuses are what the record says.
    let rec = read_record(&dir).expect("rec");
    let mut o = rec.into_object().expect("obj");
    o.insert("status".into(), Value::from("paused"));
    assert_eq!(effective_status(&dir, &Value::Object(o)), "paused");
}

#[test]
fn prune_keeps_the_newest_hundred_and_the_last_month() {
    let root = tempfile::tempdir().expect("tmp");
    let r = root.path();
    let now = T0 + 400 * DAY;
    // 110 old terminal runs (one a day, ending 1 s after they start), 300+ days old.
    let mut old = Vec::new();
    for i in 0..110u64 {
        let status = ["completed", "failed", "blocked"][(i % 3) as usize];
        old.push(put(r, "old", T0 + i * DAY, &format!("{i:06x}"), status));
    }
    // Non-terminal runs older still: never pruned.
    let paused = put(r, "keep", T0 - 5 * DAY, "aaaaaa", "paused");
    let interrupted = put(r, "keep", T0 - 6 * DAY, "bbbbbb", "running");
    // Ten recent runs.
    for i in 0..10u64 {
        put(r, "new", now - i * DAY, &format!("{i:06x}"), "completed");
    }
    let removed = prune(r, UNIX_EPOCH + Duration::from_millis(now));
    // 122 runs; the newest 100 are kept: 10 new + 90 old; of the other 20 old ones, all go.
    assert_eq!(removed, 20);
    let left = list(r, None);
    assert_eq!(left.len(), 102);
    assert!(find(r, &paused, None).is_ok() && find(r, &interrupted, None).is_ok());
    assert!(find(r, &old[19], None).is_err() && find(r, &old[20], None).is_ok());
    // Runs inside the 30 days are kept even beyond the newest 100.
    let root2 = tempfile::tempdir().expect("tmp");
    let r2 = root2.path();
    for i in 0..120u64 {
        put(
            r2,
            "f",
            now - i * 3600 * 1000,
            &format!("{i:06x}"),
            "completed",
        );
    }
    assert_eq!(prune(r2, UNIX_EPOCH + Duration::from_millis(now)), 0);
    assert_eq!(list(r2, None).len(), 120);
    // A run started long ago that ended recently is kept.
    let root3 = tempfile::tempdir().expect("tmp");
    let r3 = root3.path();
    for i in 0..101u64 {
        put(r3, "f", now - i * 1000, &format!("{i:06x}"), "completed");
    }
    let long = put(r3, "f", T0, "ffffff", "completed");
    let p = runs_dir(r3).join("f").join(&long).join("run.json");
    let t = std::fs::read_to_string(&p).expect("read");
    std::fs::write(&p, t.replace(&ts(T0 + 1000), &ts(now - DAY))).expect("write");
    assert_eq!(prune(r3, UNIX_EPOCH + Duration::from_millis(now)), 0);
    assert!(find(r3, &long, None).is_ok());
}

#[test]
fn listing_a_thousand_runs_is_fast() {
    let root = tempfile::tempdir().expect("tmp");
    let r = root.path();
    for i in 0..1000u64 {
        put(
            r,
            &format!("f{}", i % 7),
            T0 + i,
            &format!("{i:06x}"),
            "completed",
        );
    }
    // One big record: 2,000 phases with 1 KiB outputs each.
    let big = put(r, "f0", T0 + 5000, "ffffff", "completed");
    let p = runs_dir(r).join("f0").join(&big).join("run.json");
    let mut phases = Map::default();
    for i in 0..2000 {
        let mut o = Map::default();
        o.insert("status".into(), Value::from("done"));
        o.insert("output".into(), Value::from("y".repeat(1024)));
        o.insert("attempts".into(), Value::Number(1.0));
        phases.insert(format!("p{i}"), Value::Object(o));
    }
    let mut rec = read_record(p.parent().expect("dir"))
        .expect("rec")
        .into_object()
        .expect("o");
    rec.insert("phases".into(), Value::Object(phases));
    std::fs::write(&p, Value::Object(rec).to_pretty_json()).expect("write");
    let t = std::time::Instant::now();
    let all = list(r, None);
    let took = t.elapsed();
    assert_eq!(all.len(), 1001);
    assert_eq!(all[0].run_id, big);
    eprintln!("list of 1001 runs (one of 2,000 phases): {took:?}");
    // Generous for a debug build on a shared machine; the release figure is far lower.
    assert!(took < Duration::from_secs(5), "{took:?}");
}

mod props {
    use super::*;
    use crate::value::strategies::arb_value;
    use proptest::prelude::*;

    /// The summary of a record = the record parsed whole, minus what a summary leaves out.
    fn expected(v: &Value) -> Value {
        let Some(o) = v.as_object() else {
            return Value::Null;
        };
        let mut out = Map::default();
        for (k, x) in o {
            if SKIPPED.contains(&k.as_str()) {
                continue;
            }
            if k == "phases" && x.as_object().is_some() {
                out.insert(k.clone(), phases(x));
                continue;
            }
            out.insert(k.clone(), x.clone());
        }
        Value::Object(out)
    }

    /// A record's `phases` as a summary keeps them.
    fn phases(x: &Value) -> Value {
        let Some(ps) = x.as_object() else {
            return x.clone();
        };
        let phases = ps
            .iter()
            .map(|(id, p)| {
                let kept = match p.as_object() {
                    Some(po) => Value::Object(
                        po.iter()
                            .filter(|(pk, _)| {
                                PHASE_KEPT.contains(&pk.as_str()) || pk.as_str() == SUB_RUN
                            })
                            .map(|(pk, pv)| {
                                let pv = match (pk.as_str(), pv.as_object()) {
                                    (SUB_RUN, Some(run)) => Value::Object(
                                        run.iter()
                                            .filter(|(rk, _)| rk.as_str() == "phases")
                                            .map(|(rk, rv)| (rk.clone(), phases(rv)))
                                            .collect(),
                                    ),
                                    _ => pv.clone(),
                                };
                                (pk.clone(), pv)
                            })
                            .collect(),
                    ),
                    None => p.clone(),
                };
                (id.clone(), kept)
            })
            .collect();
        Value::Object(phases)
    }

    fn record() -> impl Strategy<Value = Value> {
        let keys = prop_oneof![
            Just("runId".to_owned()),
            Just("def".to_owned()),
            Just("finalOutput".to_owned()),
            Just("phases".to_owned()),
            Just("usage".to_owned()),
            "[a-z\"é\\\\]{0,4}",
        ];
        let phase = prop::collection::vec(
            (
                prop_oneof![
                    Just("status".to_owned()),
                    Just("attempts".to_owned()),
                    Just("output".to_owned()),
                    Just("subRun".to_owned()),
                    "[a-z]{0,3}",
                ],
                arb_value(),
            ),
            0..5,
        )
        .prop_map(|kv| Value::Object(kv.into_iter().collect()));
        let phases =
            prop::collection::vec(("[a-z#\"]{0,3}", prop_oneof![phase, arb_value()]), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect()));
        prop::collection::vec((keys, prop_oneof![arb_value(), phases]), 0..7)
            .prop_map(|kv| Value::Object(kv.into_iter().collect()))
    }

    proptest! {
        #[test]
        fn summaries_agree_with_full_parses(v in record(), pretty in any::<bool>()) {
            let text = if pretty { v.to_pretty_json() } else { v.to_json() };
            let parsed = parse_json(&text).expect("valid");
            let sum = summarize(&text).expect("summary of valid JSON");
            prop_assert_eq!(sum, expected(&parsed));
        }

        #[test]
        fn the_scanner_never_panics(text in ".{0,64}", cut in 0usize..400, v in record()) {
            let _ = summarize(&text);
            let full = v.to_json();
            let mut end = cut.min(full.len());
            while !full.is_char_boundary(end) {
                end -= 1;
            }
            let prefix = &full[..end];
            if end < full.len() {
                prop_assert!(summarize(prefix).is_err(), "{}", prefix);
            }
        }
    }
}

#[test]
fn a_live_record_is_brought_up_to_date_from_its_journal() {
    let root = tempfile::tempdir().expect("tmp");
    let r = root.path();
    let id = put(r, "f", T0, "aaaaaa", "running");
    let dir = runs_dir(r).join("f").join(&id);
    // The snapshot: `a` done, `b` pending, `c` pending.
    let p = dir.join("run.json");
    let text = std::fs::read_to_string(&p).expect("read");
    let text = text.replace(
        r#""b": {"status": "skipped", "output": "", "attempts": 0, "cacheHit": "run-only"}"#,
        r#""b": {"status": "pending", "startedAt": null}, "c": {"status": "pending"}, "d": {"status": "pending"}"#,
    );
    std::fs::write(&p, text).expect("write");
    let journal = [
        r#"{"type":"run-start","ts":"2026-11-30T10:00:00.000Z","runId":"x"}"#,
        r#"{"type":"input","ts":"2026-11-30T10:00:00.000Z","input":{"what":{"kind":"start"}}}"#,
        r#"{"type":"phase-start","ts":"2026-11-30T10:00:01.000Z","phase":"a"}"#,
        r#"{"type":"phase-start","ts":"2026-11-30T10:00:02.000Z","phase":"b"}"#,
        r#"{"type":"agent-call","ts":"2026-11-30T10:00:03.000Z","node":"b#1","agent":"x","attempt":2,"prompt":"P1"}"#,
        r#"{"type":"agent-call","ts":"2026-11-30T10:00:03.000Z","node":"bb","agent":"x","attempt":1,"prompt":"not b"}"#,
        r#"{"type":"agent-call","ts":"2026-11-30T10:00:03.000Z","node":"b/inner@2","agent":"x","attempt":1,"prompt":"P2"}"#,
        r#"{"type":"phase-end","ts":"2026-11-30T10:00:04.000Z","phase":"b","status":"failed","error":"boom","cacheHit":"cross-run"}"#,
        r#"{"type":"phase-start","ts":"2026-11-30T10:00:05.000Z","phase":"c"}"#,
        r#"{"type":"phase-end","ts":"2026-11-30T10:00:05.0"#,
    ];
    std::fs::write(dir.join("journal.jsonl"), journal.join("\n")).expect("journal");
    let mut rec = read_record(&dir).expect("rec");
    assert_eq!(
        overlay_journal(&dir, &mut rec),
        0,
        "a torn last line is no error"
    );
    let phase = |id: &str| {
        get(&rec, "phases")
            .and_then(|ps| get(ps, id))
            .cloned()
            .expect(id)
    };
    // `a` was done in the snapshot already: unchanged.
    assert_eq!(get_str(&phase("a"), "status"), Some("done"));
    assert_eq!(get_str(&phase("a"), "startedAt"), None);
    let b = phase("b");
    assert_eq!(get_str(&b, "status"), Some("failed"));
    assert_eq!(get_str(&b, "error"), Some("boom"));
    assert_eq!(get_str(&b, "cacheHit"), Some("cross-run"));
    assert_eq!(get_str(&b, "startedAt"), Some("2026-11-30T10:00:02.000Z"));
    assert_eq!(get_str(&b, "endedAt"), Some("2026-11-30T10:00:04.000Z"));
    assert_eq!(get_str(&phase("c"), "status"), Some("running"));
    assert_eq!(get_str(&phase("d"), "status"), Some("pending"));
    assert_eq!(get_str(&rec, "status"), Some("running"));
    // The prompts of `b`: its items and its sub-flow's nodes, not another phase's.
    let prompts = phase_prompts(&dir, "b");
    let texts: Vec<&str> = prompts
        .iter()
        .filter_map(|p| get_str(p, "prompt"))
        .collect();
    assert_eq!(texts, ["P1", "P2"]);
    assert_eq!(get(&prompts[0], "attempt"), Some(&Value::Number(2.0)));
    // A line broken in the middle of the journal is counted; a run-end ends the run.
    let mut lines = journal[..9].to_vec();
    lines.insert(3, "{not json");
    lines.push(r#"{"type":"run-end","ts":"2026-11-30T10:00:09.000Z","status":"failed","reason":"phase 'b' failed"}"#);
    std::fs::write(dir.join("journal.jsonl"), lines.join("\n") + "\n").expect("journal");
    let mut rec = read_record(&dir).expect("rec");
    assert_eq!(overlay_journal(&dir, &mut rec), 1);
    assert_eq!(get_str(&rec, "status"), Some("failed"));
    assert_eq!(get_str(&rec, "reason"), Some("phase 'b' failed"));
    // Finished records are left as they are.
    let mut done = read_record(&dir).expect("rec");
    if let Value::Object(o) = &mut done {
        o.insert("status".into(), Value::from("completed"));
    }
    let before = done.clone();
    overlay_journal(&dir, &mut done);
    assert_eq!(done, before);
    assert!(node_of_phase("b", "b") && node_of_phase("b#judge", "b") && !node_of_phase("b2", "b"));
}
