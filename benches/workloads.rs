//! The reference workloads (`benches/data/`, copied byte for byte from the original's perf set;
//! `manifest.json` holds their SHA-256), timed as the original was: medians of one operation.
//! Before timing, every input's hash and every expected result is checked. Prints a table
//! beside the original's medians and the goals; with `TFC_PERF_OUT=FILE` also writes
//! `{"<workload>": median_ns, …}`. Run with `cargo bench --bench workloads [-- FILTER]`.
//! A row whose goal is relative to another row (its floor: `check_*` to a bare parse, `plan_*`
//! (the check, then `tfc plan`'s counts) to the check,
//! `run_chain_1000_otel` to the run without export) is sampled in turn with that floor, and
//! its goal is the floor's median from those samples: a machine that drifts meanwhile moves
//! both alike.

mod common;

use common::{chain_flow, map_args};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tfc::agent::{FnAgent, Outcome};
use tfc::check::{CheckOptions, check_source};
use tfc::compile::Condition;
use tfc::compile::Template;
use tfc::eval::context::bindings_from_context;
use tfc::eval::safe_parse::safe_parse;
use tfc::eval::{Bindings, eval_when};
use tfc::flow::LowerOptions;
use tfc::run::{Interpreter, RunStatus};
use tfc::value::{Map, Value, parse_json};

/// The allocator `tfc` itself uses, so the figures are those of the shipped binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One row: its key, the original's median and the goal (ns), and what one iteration does.
struct Row {
    key: &'static str,
    original_ns: f64,
    goal_ns: f64,
    run: Box<dyn FnMut()>,
    /// A goal relative to another row's median: (that row's key, factor). That row runs first.
    per_floor: Option<(&'static str, f64)>,
    /// Samples to take (whole runs are slow) and the time one sample should at least last.
    samples: usize,
    /// Run after each of its samples, untimed, when it is sampled in turn with its floor: so
    /// that work it left running in the background (an export) is not charged to the floor.
    settle: Option<Box<dyn FnMut()>>,
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let data = Data::load();
    let wanted = |key: &str| filter.is_empty() || filter.iter().any(|f| key.contains(f.as_str()));
    let mut rows = rows(&data, &wanted);
    rows.retain(|r| wanted(r.key));
    println!(
        "{:<26} {:>14} {:>14} {:>12} {:>10}  goal",
        "workload", "tfc median", "original", "ratio", "goal"
    );
    let mut out = Vec::new();
    for i in 0..rows.len() {
        let floor = rows[i]
            .per_floor
            .and_then(|(key, factor)| Some((rows.iter().position(|r| r.key == key)?, factor)));
        let median = match floor {
            // Against its floor, sampled in turn with it: a machine that gets slower or faster
            // meanwhile moves both alike.
            Some((f, factor)) if f < i => {
                let (before, after) = rows.split_at_mut(i);
                let row = &mut after[0];
                let (floor_median, median) = paired_median_ns(
                    &mut before[f].run,
                    &mut row.run,
                    row.settle.as_mut(),
                    row.samples,
                );
                row.goal_ns = floor_median * factor;
                median
            }
            _ => {
                let samples = rows[i].samples;
                median_ns(&mut rows[i].run, samples)
            }
        };
        let row = &rows[i];
        let ok = match row.goal_ns {
            g if g.is_nan() => "-",
            g if median <= g => "met",
            _ => "MISSED",
        };
        println!(
            "{:<26} {:>14} {:>14} {:>11.1}× {:>10}  {ok}",
            row.key,
            show(median),
            show(row.original_ns),
            row.original_ns / median,
            show(row.goal_ns),
        );
        out.push(format!("  \"{}\": {}", row.key, median.round()));
    }
    if let Ok(path) = std::env::var("TFC_PERF_OUT") {
        std::fs::write(&path, format!("{{\n{}\n}}\n", out.join(",\n"))).expect("TFC_PERF_OUT");
        println!("medians written to {path}");
    }
}

/// The median time of one call of `f`: each sample runs `f` enough times to last ≥ 20 ms (at
/// least once), after one warm-up call.
fn median_ns(f: &mut dyn FnMut(), samples: usize) -> f64 {
    let start = Instant::now();
    f();
    let once = start.elapsed().max(Duration::from_nanos(1));
    let batch = (Duration::from_millis(20).as_nanos() / once.as_nanos()).clamp(1, 1_000_000) as u32;
    let mut times: Vec<f64> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                f();
            }
            start.elapsed().as_nanos() as f64 / f64::from(batch)
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The medians of one call of `floor` and of `f`, sampled in turn (each sample as
/// [`median_ns`] takes it).
fn paired_median_ns(
    floor: &mut dyn FnMut(),
    f: &mut dyn FnMut(),
    mut settle: Option<&mut Box<dyn FnMut()>>,
    samples: usize,
) -> (f64, f64) {
    let batch = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        f();
        let once = start.elapsed().max(Duration::from_nanos(1));
        (Duration::from_millis(20).as_nanos() / once.as_nanos()).clamp(1, 1_000_000) as u32
    };
    let (nf, n) = (batch(floor), batch(f));
    let sample = |f: &mut dyn FnMut(), n: u32| {
        let start = Instant::now();
        for _ in 0..n {
            f();
        }
        start.elapsed().as_nanos() as f64 / f64::from(n)
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        a.push(sample(floor, nf));
        b.push(sample(f, n));
        if let Some(settle) = settle.as_mut() {
            settle();
        }
    }
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    (a[a.len() / 2], b[b.len() / 2])
}

fn show(ns: f64) -> String {
    match ns {
        n if n.is_nan() => "-".to_owned(),
        n if n >= 1e9 => format!("{:.2} s", n / 1e9),
        n if n >= 1e6 => format!("{:.2} ms", n / 1e6),
        n if n >= 1e3 => format!("{:.2} µs", n / 1e3),
        n => format!("{n:.0} ns"),
    }
}

/// The reference inputs, checked against the manifest.
struct Data {
    dir: PathBuf,
}

impl Data {
    fn load() -> Data {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/data");
        let data = Data { dir };
        let manifest = parse_json(&data.text("manifest.json")).expect("manifest.json");
        for (name, entry) in manifest.as_object().expect("manifest object") {
            let bytes = std::fs::read(data.dir.join(name)).expect("a manifest file");
            let sha = Sha256::digest(&bytes);
            let hex: String = sha.iter().map(|b| format!("{b:02x}")).collect();
            let want = entry
                .as_object()
                .and_then(|e| e.get("sha256"))
                .and_then(Value::as_str);
            assert_eq!(
                Some(hex.as_str()),
                want,
                "{name} differs from the reference"
            );
        }
        data
    }

    fn text(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).expect("reference input")
    }

    fn context(&self, name: &str) -> Bindings {
        bindings_from_context(&parse_json(&self.text(name)).expect("context JSON"))
            .expect("context")
    }
}

/// The rows, each group's inputs prepared and its expected results checked only when one of
/// its rows is `wanted` (so a filtered run, or a profile of one, does no other group's work).
fn rows(data: &Data, wanted: &dyn Fn(&str) -> bool) -> Vec<Row> {
    let mut rows = Vec::new();
    let any = |keys: &[&str]| keys.iter().any(|k| wanted(k));
    let interp = any(&[
        "interp_compiled",
        "interp_compiled_json",
        "interp_parse_render",
    ]);
    let when = any(&["when_compiled", "when_parse_eval"]);
    let safeparse = any(&["safeparse_array", "safeparse_fenced", "safeparse_nojson"]);
    let run = any(&[
        "run_chain_1000",
        "run_chain_1000_otel",
        "run_chain_1000_rec",
        "run_map_100000",
    ]);
    let run_otel = wanted("run_chain_1000_otel");
    let mut otel_settle = None;
    let check = any(&[
        "serde_parse_chain_10000",
        "check_chain_10000",
        "serde_parse_fanin_10000",
        "check_fanin_10000",
        "plan_chain_10000",
        "plan_fanin_10000",
    ]);
    let mut row = |key, original_ns: f64, goal_ns: f64, samples, run: Box<dyn FnMut()>| {
        rows.push(Row {
            key,
            original_ns,
            goal_ns,
            run,
            per_floor: None,
            samples,
            settle: None,
        })
    };

    if interp {
        // Interpolation: the expected output and missing refs first.
        let template_text = data.text("interp_template.txt");
        let expected = data.text("interp_expected_output.txt");
        let missing = parse_json(&data.text("interp_expected_missing.json")).expect("missing");
        for ctx_name in ["interp_ctx.json", "interp_ctx_json.json"] {
            let ctx = data.context(ctx_name);
            let template = Template::parse(&template_text);
            let rendered = template.render(&ctx);
            assert_eq!(rendered.text, expected, "interpolation output ({ctx_name})");
            let got: Vec<Value> = template
                .path_texts(&rendered.missing)
                .into_iter()
                .map(Value::from)
                .collect();
            assert_eq!(Value::Array(got), missing, "missing refs ({ctx_name})");
        }
        for (key, ctx_name, original) in [
            ("interp_compiled", "interp_ctx.json", 251e3),
            ("interp_compiled_json", "interp_ctx_json.json", 176e3),
        ] {
            let ctx = data.context(ctx_name);
            let template = Template::parse(&template_text);
            let goal = if key == "interp_compiled" { 8e3 } else { 6e3 };
            row(
                key,
                original,
                goal,
                51,
                Box::new(move || {
                    black_box(template.render(black_box(&ctx)));
                }),
            );
        }
        let ctx = data.context("interp_ctx.json");
        let text = template_text.clone();
        row(
            "interp_parse_render",
            251e3,
            25e3,
            51,
            Box::new(move || {
                black_box(Template::parse(black_box(&text)).render(&ctx));
            }),
        );
    }
    if when {
        // `when`: true, no error, both contexts.
        let expr = data.text("when_expr.txt");
        let expr = expr.trim_end().to_owned();
        for ctx_name in ["when_ctx.json", "when_ctx_json.json"] {
            let outcome = eval_when(&expr, &data.context(ctx_name));
            assert!(
                outcome.value && outcome.error.is_none(),
                "when ({ctx_name})"
            );
        }
        let ctx = data.context("when_ctx.json");
        let condition = Condition::parse(&expr).expect("the when parses");
        row(
            "when_compiled",
            10.0e3,
            0.35e3,
            51,
            // Reads are recorded as ref-table indices; `path_texts` turns them into text on demand.
            Box::new(move || {
                black_box(condition.decide(black_box(&ctx)));
            }),
        );
        let ctx = data.context("when_ctx.json");
        row(
            "when_parse_eval",
            10.0e3,
            1.5e3,
            51,
            Box::new(move || {
                black_box(eval_when(black_box(&expr), &ctx));
            }),
        );
    }
    if safeparse {
        // safeParse: the array's 14,807 items, an object from the fenced prose, nothing from the rest.
        let array = data.text("safeparse_array_1mib.json");
        let fenced = data.text("safeparse_prose_fenced_1mib.txt");
        let nojson = data.text("safeparse_prose_nojson_1mib.txt");
        let items = safe_parse(&array)
            .value
            .and_then(|v| v.as_array().map(Vec::len));
        assert_eq!(items, Some(14_807), "safeParse of the array");
        assert!(
            matches!(safe_parse(&fenced).value, Some(Value::Object(_))),
            "fenced prose"
        );
        assert!(safe_parse(&nojson).value.is_none(), "prose without JSON");
        for (key, text, original, goal) in [
            ("safeparse_array", array, 11.1e6, 8e6),
            ("safeparse_fenced", fenced, 529e3, 100e3),
            ("safeparse_nojson", nojson, 727e3, 150e3),
        ] {
            row(
                key,
                original,
                goal,
                21,
                Box::new(move || {
                    black_box(safe_parse(black_box(&text)));
                }),
            );
        }
    }
    if run {
        // Whole runs with an instant in-process agent.
        let interp = instant();
        row("run_chain_1000", 2.29e9, 10e6, 11, chain_run(interp));
        if run_otel {
            // The same run exported as a trace to a live OTLP/HTTP endpoint (protobuf): at most
            // 10 % slower than without export (the row above).
            let tel = otel_to(&common::otlp_sink());
            let chain = chain_flow(1_000);
            let interp = instant().options(tfc::run::RunOptions {
                telemetry: Some(tel.clone()),
                ..tfc::run::RunOptions::default()
            });
            let r = interp
                .eval_text("bench-chain", &chain, Map::default())
                .expect("runs");
            assert_eq!(r.status, RunStatus::Completed);
            assert!(
                tel.flush(Duration::from_secs(10)),
                "the sink took the spans"
            );
            let stats = tel.stats();
            assert!(
                stats.sent == 2_001 && stats.failed == 0 && stats.dropped == 0,
                "{stats:?}"
            );
            row(
                "run_chain_1000_otel",
                f64::NAN,
                f64::NAN,
                11,
                chain_run(interp),
            );
            // Its spans are sent in the background: sent before the next plain run starts.
            otel_settle = Some(tel);
        }
        // Where the export's cost lies: the trace recorded but nothing sent (`_rec`), and the
        // progress notes alone, which the trace is built from (`_progress`).
        if wanted("run_chain_1000_rec") {
            let settings = tfc::telemetry::settings::Settings {
                traces: None,
                metrics: None,
                timeout: Duration::from_secs(1),
                resource: Vec::new(),
                content: None,
                trace_url: None,
            };
            let (tel, _) = tfc::telemetry::Telemetry::in_memory(settings);
            let interp = instant().options(tfc::run::RunOptions {
                telemetry: Some(tel),
                ..tfc::run::RunOptions::default()
            });
            row(
                "run_chain_1000_rec",
                f64::NAN,
                f64::NAN,
                11,
                chain_run(interp),
            );
            let interp = instant().options(tfc::run::RunOptions {
                progress: Some(tfc::run::ProgressSink(std::sync::Arc::new(|_| {}))),
                ..tfc::run::RunOptions::default()
            });
            row(
                "run_chain_1000_progress",
                f64::NAN,
                f64::NAN,
                11,
                chain_run(interp),
            );
        }
        let args = map_args(100_000);
        let interp = instant();
        row(
            "run_map_100000",
            519e9,
            300e6,
            5,
            Box::new(move || {
                let r = interp
                    .eval_text("map", MAP_FLOW, args.clone())
                    .expect("runs");
                assert_eq!(r.status, RunStatus::Completed);
            }),
        );
    }
    if check {
        // The static check of the large flows (no diagnostics), each within 3× of a bare serde_json
        // parse of the same bytes (the floor, timed just before it).
        for (key, floor, file, original) in [
            (
                "check_chain_10000",
                "serde_parse_chain_10000",
                "flow_chain_10000.json",
                15.6e9,
            ),
            (
                "check_fanin_10000",
                "serde_parse_fanin_10000",
                "flow_fanin_10000.json",
                553e6,
            ),
        ] {
            let text = data.text(file);
            let bare = text.clone();
            row(
                floor,
                f64::NAN,
                f64::NAN,
                11,
                Box::new(move || {
                    black_box(
                        serde_json::from_str::<serde_json::Value>(black_box(&bare)).expect("JSON"),
                    );
                }),
            );
            let checked = check_source(&text, &LowerOptions::default(), &CheckOptions::default());
            assert!(checked.diagnostics.is_empty(), "{file} checks clean");
            let planned = checked
                .flow
                .as_ref()
                .map(|f| tfc::plan::plan(f, &tfc::plan::Options::default(), &tfc::plan::NoEnv));
            let calls = planned.map(|p| p.total.calls);
            assert!(
                calls.is_some_and(|c| c.min.is_some() && c.worst.is_some()),
                "{file} plans with every count known"
            );
            let plan_text = text.clone();
            row(
                key,
                original,
                f64::NAN,
                11,
                Box::new(move || {
                    black_box(check_source(
                        black_box(&text),
                        &LowerOptions::default(),
                        &CheckOptions::default(),
                    ));
                }),
            );
            // `tfc plan`: the same check, then the plan of the checked flow.
            row(
                if key == "check_chain_10000" {
                    "plan_chain_10000"
                } else {
                    "plan_fanin_10000"
                },
                f64::NAN,
                f64::NAN,
                11,
                Box::new(move || {
                    let checked = check_source(
                        black_box(&plan_text),
                        &LowerOptions::default(),
                        &CheckOptions::default(),
                    );
                    let flow = checked.flow.expect("a flow");
                    black_box(tfc::plan::plan(
                        &flow,
                        &tfc::plan::Options::default(),
                        &tfc::plan::NoEnv,
                    ));
                }),
            );
        }
    }
    for r in &mut rows {
        if r.key == "run_chain_1000_otel"
            && let Some(tel) = otel_settle.take()
        {
            r.settle = Some(Box::new(move || {
                tel.flush(Duration::from_secs(10));
            }));
        }
        r.per_floor = match r.key {
            "check_chain_10000" => Some(("serde_parse_chain_10000", 3.0)),
            "check_fanin_10000" => Some(("serde_parse_fanin_10000", 3.0)),
            // `tfc plan` = the check and the plan: within 1.5x of the check alone.
            "plan_chain_10000" => Some(("check_chain_10000", 1.5)),
            "plan_fanin_10000" => Some(("check_fanin_10000", 1.5)),
            "run_chain_1000_otel" => Some(("run_chain_1000", 1.10)),
            _ => None,
        };
    }
    rows
}

/// Export on, to the endpoint at `base`, over protobuf.
fn otel_to(base: &str) -> std::sync::Arc<tfc::telemetry::Telemetry> {
    use tfc::telemetry::settings::{Protocol, Settings, Target};
    let target = |path: &str| Target {
        url: format!("{base}/v1/{path}"),
        protocol: Protocol::Protobuf,
        headers: Vec::new(),
    };
    let settings = Settings {
        traces: Some(target("traces")),
        metrics: Some(target("metrics")),
        timeout: Duration::from_secs(10),
        resource: vec![("service.name".into(), "tfc-bench".into())],
        content: None,
        trace_url: None,
    };
    tfc::telemetry::Telemetry::start(
        settings,
        std::sync::Arc::new(|line: &str| eprintln!("{line}")),
    )
}

/// One whole run of the 1,000-phase chain per call, with `interp`.
fn chain_run(interp: Interpreter) -> Box<dyn FnMut()> {
    let chain = chain_flow(1_000);
    Box::new(move || {
        let r = interp
            .eval_text("bench-chain", &chain, Map::default())
            .expect("runs");
        assert_eq!(r.status, RunStatus::Completed);
    })
}

fn instant() -> Interpreter {
    Interpreter::with_agent(FnAgent::new("instant", |_| Outcome::ok("ok")))
}

const MAP_FLOW: &str = r#"{"name": "map", "args": {"files": {"description": "items"}}, "phases": [
    {"id": "audit", "type": "map", "over": "{args.files}", "as": "file", "task": "Audit {file.path}."}
]}"#;
