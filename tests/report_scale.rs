//! A 1,000-phase run's report (SPEC §11.5): under 5 MB, every phase present, and quick even in
//! a debug build (the bench `report` measures the release figure).

#[path = "../benches/report_run/mod.rs"]
mod report_run;

use tfc::report::html::{Input, html};
use tfc::value::parse_json;

#[test]
fn a_thousand_phase_report_is_small_and_complete() {
    let (record, journal) = report_run::run(1000);
    let rec = parse_json(&record).expect("record parses");
    let t = std::time::Instant::now();
    let page = html(&Input {
        record: &rec,
        journal: &journal,
        status: None,
        load: &|_| None,
    });
    let took = t.elapsed();
    assert!(page.len() < 5_000_000, "{} bytes", page.len());
    assert_eq!(page.matches("<details class=\"ph\"").count(), 1000);
    assert_eq!(page.matches("<g class=\"n st-done").count(), 1000);
    // A bar per phase, and one per call: every 7th phase from the second layer maps 3 items.
    assert_eq!(page.matches("<span class=\"bar st-done\"").count(), 1000);
    let maps = (10..1000).filter(|i| i % 7 == 3).count();
    assert_eq!(
        page.matches("<span class=\"bar call st-done\"").count(),
        1000 + 2 * maps
    );
    assert!(page.contains("p999"));
    assert!(!page.contains("<module>"), "prompts escaped");
    // Debug builds are ~10× slower than release; this only catches a blow-up.
    assert!(took.as_secs() < 20, "{took:?}");
}
