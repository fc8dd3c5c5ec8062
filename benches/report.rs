//! The run report (SPEC §11.5) and the layout it shares with `tfc graph --format svg`.
//! Run with `cargo bench --bench report`.
//!
//! - `report_1000`: the whole `tfc report` work for a finished 1,000-phase run, minus the file
//!   reads: parse `run.json`, read the journal, lower the stored `def`, lay it out, write the
//!   page (target: < 1 s and < 5 MB; the page size is printed once);
//! - `draw_1000`: lay out that flow alone; `svg_1000`: lay out and write the SVG;
//! - `layout_perf`: lay out the reference flows of `benches/data` (chain and fan-in, 1,000 and
//!   10,000 phases).

#[path = "report_run/mod.rs"]
mod report_run;

use divan::{Bencher, black_box};
use tfc::flow::{LowerOptions, lower_source};
use tfc::report::dag::draw;
use tfc::report::html::{Input, html};
use tfc::report::layout::Orientation;
use tfc::report::svg::{check_deco, svg};
use tfc::value::parse_json;

/// The allocator `tfc` itself uses, so the figures are those of the shipped binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let (record, journal) = report_run::run(1000);
    let page = page(&record, &journal);
    println!(
        "report of a 1,000-phase run: {} bytes ({:.2} MB)",
        page.len(),
        page.len() as f64 / 1e6
    );
    divan::main();
}

fn page(record: &str, journal: &str) -> String {
    let rec = parse_json(record).expect("record parses");
    html(&Input {
        record: &rec,
        journal,
        status: None,
        load: &|_| None,
    })
}

#[divan::bench(sample_count = 20)]
fn report_1000(b: Bencher) {
    let (record, journal) = report_run::run(1000);
    b.bench(|| page(black_box(&record), black_box(&journal)));
}

fn def_of(record: &str) -> String {
    let rec = parse_json(record).expect("record parses");
    rec.as_object().expect("object")["def"].to_json()
}

#[divan::bench(sample_count = 20)]
fn draw_1000(b: Bencher) {
    let (record, _) = report_run::run(1000);
    let lowered = lower_source(&def_of(&record), &LowerOptions::default());
    let flow = lowered.flow.expect("lowers");
    b.bench(|| draw(black_box(&flow), &[], Orientation::TopDown).width);
}

#[divan::bench(sample_count = 20)]
fn svg_1000(b: Bencher) {
    let (record, _) = report_run::run(1000);
    let lowered = lower_source(&def_of(&record), &LowerOptions::default());
    let flow = lowered.flow.expect("lowers");
    b.bench(|| {
        svg(
            &draw(black_box(&flow), &[], Orientation::TopDown),
            &check_deco,
        )
    });
}

#[divan::bench(
    args = ["flow_chain_1000", "flow_fanin_1000", "flow_chain_10000", "flow_fanin_10000"],
    sample_count = 10
)]
fn layout_perf(b: Bencher, name: &str) {
    let path = format!("{}/benches/data/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).expect("perf flow");
    let lowered = lower_source(&text, &LowerOptions::default());
    let flow = lowered.flow.expect("lowers");
    b.bench(|| draw(black_box(&flow), &[], Orientation::TopDown).height);
}
