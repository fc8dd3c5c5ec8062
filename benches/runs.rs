//! The run store as a whole (`tfc runs`, `tfc show`, retention): a project of 1,000 runs —
//! 990 of 20 phases with 1 KiB outputs, 10 of 2,000 phases — read cold from the page cache.
//! Prints the median time of listing them all (`tfc runs`), the newest 20 (`--limit 20`),
//! `last`, a prefix lookup, and a retention pass that deletes nothing. Run with
//! `cargo bench --bench runs`.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tfc::run::runs;
use tfc::value::{Map, Value};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn b36(mut n: u64) -> String {
    let mut out = Vec::new();
    while n > 0 {
        out.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).expect("ascii")
}

fn usage() -> Value {
    let mut u = Map::default();
    for k in ["input", "output", "cacheRead", "cacheWrite", "turns"] {
        u.insert(k.into(), Value::Number(7.0));
    }
    u.insert("costUSD".into(), Value::Null);
    Value::Object(u)
}

/// Write the store; returns the number of bytes of `run.json` written.
fn build(root: &Path, now_ms: u64) -> u64 {
    let mut bytes = 0;
    for i in 0..1000u64 {
        let flow = format!("flow{}", i % 7);
        let id = format!("{flow}-{}-{i:06x}", b36(now_ms - (1000 - i) * 60_000));
        let dir = runs::runs_dir(root).join(&flow).join(&id);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let n = if i % 100 == 0 { 2000 } else { 20 };
        let mut phases = Map::default();
        let mut def = Vec::new();
        for j in 0..n {
            let mut p = Map::default();
            p.insert("status".into(), Value::from("done"));
            p.insert("output".into(), Value::from("o".repeat(1024)));
            p.insert("warnings".into(), Value::Array(Vec::new()));
            p.insert("attempts".into(), Value::Number(1.0));
            p.insert("reads".into(), Value::Array(Vec::new()));
            p.insert("usage".into(), usage());
            p.insert("startedAt".into(), Value::from("2026-11-30T10:00:00.000Z"));
            p.insert("endedAt".into(), Value::from("2026-11-30T10:00:01.000Z"));
            phases.insert(format!("p{j}"), Value::Object(p));
            let mut d = Map::default();
            d.insert("id".into(), Value::from(format!("p{j}")));
            d.insert("task".into(), Value::from("t".repeat(200)));
            def.push(Value::Object(d));
        }
        let mut r = Map::default();
        r.insert("schemaVersion".into(), Value::Number(1.0));
        r.insert("runId".into(), Value::from(id.as_str()));
        r.insert("flow".into(), Value::from(flow.as_str()));
        r.insert("parentRunId".into(), Value::Null);
        r.insert("status".into(), Value::from("completed"));
        r.insert("reason".into(), Value::Null);
        r.insert("finalOutput".into(), Value::from("f".repeat(4096)));
        r.insert("startedAt".into(), Value::from("2026-11-30T10:00:00.000Z"));
        r.insert("endedAt".into(), Value::from("2026-11-30T10:00:05.000Z"));
        r.insert("usage".into(), usage());
        r.insert("phases".into(), Value::Object(phases));
        let mut dm = Map::default();
        dm.insert("phases".into(), Value::Array(def));
        r.insert("def".into(), Value::Object(dm));
        let text = Value::Object(r).to_pretty_json();
        bytes += text.len() as u64;
        std::fs::write(dir.join("run.json"), text).expect("write");
    }
    bytes
}

fn median(label: &str, reps: usize, mut f: impl FnMut()) {
    f(); // warm the page cache
    let mut times: Vec<Duration> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    println!("{label:<44} {:>10.2?}", times[reps / 2]);
}

fn main() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path();
    let now = SystemTime::now();
    let now_ms = now.duration_since(UNIX_EPOCH).expect("now").as_millis() as u64;
    let bytes = build(root, now_ms);
    println!(
        "1,000 runs, {:.1} MiB of run.json (10 of 2,000 phases)",
        bytes as f64 / (1024.0 * 1024.0)
    );
    median("list all (tfc runs)", 11, || {
        assert_eq!(black_box(runs::list(root, None)).len(), 1000);
    });
    median("newest 20 (tfc runs --limit 20)", 21, || {
        let (l, _) = runs::list_where(root, None, Some(20), |_| true);
        assert_eq!(black_box(l).len(), 20);
    });
    median("find last, whole record (tfc show last)", 21, || {
        black_box(runs::find(root, "last", None).expect("last"));
    });
    // Run 0 has 2,000 phases (3.6 MiB): the whole record is parsed.
    let big = format!("flow0-{}", b36(now_ms - 1000 * 60_000));
    median("find a 2,000-phase run by prefix, whole", 11, || {
        black_box(runs::find(root, &big, None).expect("big run"));
    });
    median("ambiguous prefix (1,000 candidates)", 21, || {
        black_box(runs::find(root, "flow", None).expect_err("ambiguous"));
    });
    median("retention pass, nothing to delete", 21, || {
        assert_eq!(runs::prune(root, now), 0);
    });
}
