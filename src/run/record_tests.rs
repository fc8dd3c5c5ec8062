//! Tests of the run record (`record.rs`).

use super::*;
use std::time::{Duration, UNIX_EPOCH};

#[test]
fn a_record_reads_back_whole_with_its_sub_run_item_keys_and_loop_failures() {
    let mut inner = PhaseRecord::new(PhaseType::Agent);
    inner.status = PhaseStatus::Done;
    inner.output = "deep".into();
    inner.input_hash = Some("00112233445566ff".into());
    let mut sub = RunRecord {
        run_id: "r-sub".into(),
        flow: "sub".into(),
        parent_run_id: Some("r".into()),
        status: RunStatus::Completed,
        reason: None,
        final_output: "deep".into(),
        output_phase: Some("inner".into()),
        args: Map::default(),
        started_at: "2026-11-30T10:00:00.000Z".into(),
        ended_at: Some("2026-11-30T10:00:01.000Z".into()),
        usage: Usage {
            input: 3,
            cost_usd: Some(0.5),
            ..Usage::default()
        },
        spent_before: None,
        warnings: vec!["inner: w".into()],
        backends: [("default".to_owned(), "echo".to_owned())]
            .into_iter()
            .collect(),
        phases: IndexMap::new(),
        replay: false,
        store_errors: Vec::new(),
    };
    sub.phases.insert("inner".into(), inner);
    let mut flow = PhaseRecord::new(PhaseType::Flow);
    flow.status = PhaseStatus::Done;
    flow.sub_run = Some(Box::new(sub));
    let mut map = PhaseRecord::new(PhaseType::Map);
    map.status = PhaseStatus::Failed;
    map.items = Some(vec![
        ItemInfo {
            index: 0,
            status: PhaseStatus::Done,
            error: None,
            input_hash: Some("aaaaaaaaaaaaaaaa".into()),
        },
        ItemInfo {
            index: 1,
            status: PhaseStatus::Failed,
            error: Some("boom".into()),
            input_hash: None,
        },
    ]);
    let mut lp = PhaseRecord::new(PhaseType::Loop);
    lp.loop_info = Some(LoopInfo {
        iterations: 2,
        stop: "max",
        reflexion: None,
        failures: vec![(1, "bad".into())],
    });
    for r in [flow, map, lp] {
        let back = PhaseRecord::from_value(&r.to_value(), PhaseType::Agent);
        assert_eq!(back.as_ref(), Some(&r), "{}", r.to_value().to_json());
    }
    // Nesting past the limit is dropped, never recursed into without end.
    let mut deep = PhaseRecord::new(PhaseType::Flow);
    for _ in 0..MAX_SUB_RUN_DEPTH + 5 {
        let mut run = RunRecord::from_value(&Value::Object({
            let mut m = Map::default();
            m.insert("runId".into(), Value::from("r"));
            m.insert("status".into(), Value::from("completed"));
            m
        }))
        .expect("a run record");
        run.phases.insert("p".into(), deep);
        deep = PhaseRecord::new(PhaseType::Flow);
        deep.sub_run = Some(Box::new(run));
    }
    let back = PhaseRecord::from_value(&deep.to_value(), PhaseType::Flow).expect("reads");
    let mut levels = 0;
    let mut at = &back;
    while let Some(sub) = &at.sub_run {
        levels += 1;
        at = &sub.phases["p"];
    }
    assert_eq!(levels, MAX_SUB_RUN_DEPTH);
    assert_eq!(RunRecord::from_value(&Value::from("no")), None);
}

#[test]
fn a_record_is_written_as_its_value_is() {
    let mut plain = PhaseRecord::new(PhaseType::Agent);
    plain.status = PhaseStatus::Done;
    plain.output = "line\n\"q\" \u{1}".into();
    plain.reads = vec!["a".into(), "b\\".into()];
    plain.started_at = Some("t0".into());
    plain.input_hash = Some("0011".into());
    plain.cache_hit = Some("run-only");
    let mut full = plain.clone();
    full.warnings = vec!["w".into()];
    full.usage = Usage {
        input: 3,
        cost_usd: Some(0.25),
        turns: 2,
        ..Usage::default()
    };
    full.json = Some(Value::Array(vec![Value::from("x"), Value::Number(1.5)]));
    full.error = Some("e".into());
    full.skip_reason = Some("s".into());
    full.agent = Some("ag".into());
    full.model = Some("m".into());
    full.timed_out = true;
    full.optional = true;
    full.gate = Some(GateInfo {
        verdict: "block",
        reason: Some("r".into()),
        rounds: Some(2),
    });
    full.approval = Some(ApprovalInfo {
        decision: "edit",
        note: None,
        source: Some("tty"),
        expires_at: Some("2026-11-30T10:00:00.000Z".into()),
    });
    full.loop_info = Some(LoopInfo {
        iterations: 3,
        stop: "max",
        reflexion: Some("x".into()),
        failures: vec![(1, "bad".into())],
    });
    full.tournament = Some((1, 3));
    full.items = Some(Vec::new());
    full.def_error = Some("d".into());
    full.prompt_stats = Some((10, 3));
    full.sub_run = RunRecord::from_value(&Value::Object({
        let mut m = Map::default();
        m.insert("runId".into(), Value::from("r"));
        m.insert("status".into(), Value::from("completed"));
        m
    }))
    .map(Box::new);
    for r in [PhaseRecord::new(PhaseType::Map), plain, full] {
        for depth in [0, 2, 61, 62, 63, 70] {
            let mut want = String::new();
            crate::value::write_readable_at(&r.to_value(), &mut want, depth);
            let mut got = String::new();
            r.write_readable_at(&mut got, depth);
            assert_eq!(got, want, "depth {depth}");
        }
    }
}

#[test]
fn timestamps() {
    assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    assert_eq!(
        timestamp(UNIX_EPOCH + Duration::from_millis(1_796_032_800_123)),
        "2026-11-30T10:00:00.123Z"
    );
    assert_eq!(
        timestamp(UNIX_EPOCH + Duration::from_secs(951_782_400)),
        "2000-02-29T00:00:00.000Z"
    );
}
