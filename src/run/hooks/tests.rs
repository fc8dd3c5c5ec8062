use super::*;

fn flow(hooks: &str) -> Flow {
    let text = format!(
        r#"{{"name": "demo", "args": {{"to": {{"type": "string", "default": "ops"}}}}, "hooks": {hooks}, "phases": [{{"id": "a", "task": "x"}}]}}"#
    );
    let l = crate::flow::lower_source(&text, &Default::default());
    assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
    l.flow.expect("a flow")
}

fn record(status: RunStatus) -> RunRecord {
    let mut args = Map::default();
    args.insert("to".into(), "ops".into());
    RunRecord {
        run_id: "demo-1-abc".into(),
        flow: "demo".into(),
        parent_run_id: None,
        status,
        reason: None,
        final_output: "out".into(),
        output_phase: None,
        args,
        started_at: "2026-01-01T00:00:00.000Z".into(),
        ended_at: None,
        usage: Default::default(),
        spent_before: None,
        warnings: Vec::new(),
        backends: Default::default(),
        phases: Default::default(),
        replay: false,
        store_errors: Vec::new(),
    }
}

#[test]
fn each_ending_has_its_event() {
    let f = flow(r#"{"onComplete": ["c"], "onFail": ["f"], "onPause": ["p"], "onBlock": ["b"]}"#);
    for (status, program) in [
        (RunStatus::Completed, "c"),
        (RunStatus::Failed, "f"),
        (RunStatus::Paused, "p"),
        (RunStatus::Blocked, "b"),
    ] {
        let call = prepare(&f, &record(status), None, Path::new(".")).expect("a hook");
        assert_eq!(call.argv, [program], "{status:?}");
    }
    assert!(prepare(&f, &record(RunStatus::Running), None, Path::new(".")).is_none());
    let only = flow(r#"{"onFail": ["f"]}"#);
    assert!(prepare(&only, &record(RunStatus::Completed), None, Path::new(".")).is_none());
}

#[test]
fn arguments_read_args_and_run() {
    let f = flow(
        r#"{"onComplete": ["notify", "{run.id} {run.status} {run.dir}", "{args.to}", "{run.nope}"], "timeout": 2000}"#,
    );
    let call = prepare(
        &f,
        &record(RunStatus::Completed),
        Some(Path::new("/runs/demo-1-abc")),
        Path::new("/here"),
    )
    .expect("a hook");
    assert_eq!(
        call.argv,
        [
            "notify",
            "demo-1-abc completed /runs/demo-1-abc",
            "ops",
            "{run.nope}"
        ]
    );
    assert_eq!(call.hook_id(), "demo-1-abc:onComplete");
    assert_eq!(call.timeout_ms, 2000);
    assert_eq!(call.cwd, Path::new("/here"));
    let env: Vec<(&str, &str)> = call.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(
        env,
        [
            ("TFC_RUN_ID", "demo-1-abc"),
            ("TFC_RUN_STATUS", "completed"),
            ("TFC_RUN_DIR", "/runs/demo-1-abc"),
            ("TFC_FLOW", "demo"),
            ("TFC_HOOK_ID", "demo-1-abc:onComplete"),
        ]
    );
    let stdin = crate::value::parse_json(&call.stdin).expect("JSON");
    let runid = stdin.as_object().and_then(|o| o.get("runId"));
    assert_eq!(runid.and_then(Value::as_str), Some("demo-1-abc"));
}

fn call(argv: &[&str], timeout_ms: u64) -> HookCall {
    HookCall {
        event: HookEvent::Fail,
        argv: argv.iter().map(|s| (*s).to_owned()).collect(),
        stdin: "{\"runId\": \"r\"}".into(),
        env: vec![("TFC_HOOK_ID", "r:onFail".into())],
        cwd: PathBuf::from("."),
        timeout_ms,
    }
}

#[test]
fn a_hook_reads_stdin_and_env() {
    let c = call(&["sh", "-c", "cat; printf ' %s' \"$TFC_HOOK_ID\""], 10_000);
    let r = smol::block_on(run(&c, Cancel::never()));
    assert_eq!(r.exit_code, Some(0));
    assert_eq!(r.error, None);
    assert_eq!(r.warning(), None);
    assert_eq!(r.stdout, "{\"runId\": \"r\"} r:onFail");
}

#[test]
fn failures_are_errors_and_one_warning() {
    let c = call(&["sh", "-c", "echo nope >&2; exit 3"], 10_000);
    let r = smol::block_on(run(&c, Cancel::never()));
    assert_eq!(r.exit_code, Some(3));
    assert_eq!(
        r.warning().as_deref(),
        Some("hooks.onFail: the hook exited with code 3: nope")
    );
    let missing = call(&["/no/such/hook-program"], 10_000);
    let r = smol::block_on(run(&missing, Cancel::never()));
    assert_eq!(r.exit_code, None);
    assert!(
        r.error
            .as_deref()
            .unwrap_or("")
            .starts_with("the hook could not start"),
        "{r:?}"
    );
    let mut m = Map::default();
    r.fill(&mut m);
    assert_eq!(m.get("exitCode"), Some(&Value::Null));
    assert!(m.contains_key("error"));
}

#[test]
fn a_hanging_hook_is_killed_at_its_timeout() {
    let c = call(&["sleep", "30"], 1000);
    let started = std::time::Instant::now();
    let r = smol::block_on(run(&c, Cancel::never()));
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        r.error.as_deref(),
        Some("the hook timed out after 1000ms; its process group was killed")
    );
}

#[test]
fn output_is_cut_at_64_kib_and_a_hook_ignoring_stdin_is_fine() {
    let mut c = call(
        &["sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' x"],
        10_000,
    );
    c.stdin = "y".repeat(4 * 1024 * 1024);
    let r = smol::block_on(run(&c, Cancel::never()));
    assert_eq!(r.exit_code, Some(0), "{:?}", r.error);
    assert_eq!(r.stdout.len(), HOOK_OUTPUT_MAX);
    assert!(r.truncated);
}

#[test]
fn a_record_read_back_from_run_json_loses_the_store_fields() {
    let text = r#"{"schemaVersion": 1, "runId": "r", "def": {"phases": []}, "cwd": "/x",
        "tfcVersion": "0.1.0", "flowDefHash": "ab", "launch": {}, "status": "completed"}"#;
    let got = record_from_run_json(text).expect("an object");
    let v = crate::value::parse_json(&got).expect("JSON");
    let keys: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["schemaVersion", "runId", "status"]);
    assert_eq!(record_from_run_json("[1]"), None);
}

#[test]
fn hook_variables_survive_a_trip_by_name() {
    let vars = vec![
        ("TFC_HOOK_ID".to_owned(), "r:onFail".to_owned()),
        ("PATH".to_owned(), "/bin".to_owned()),
    ];
    assert_eq!(env_names(vars), [("TFC_HOOK_ID", "r:onFail".to_owned())]);
}
