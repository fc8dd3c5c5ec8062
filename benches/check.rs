//! `tfc check` on large generated flows, beside a bare `serde_json` parse of the same bytes.
//! Run with `cargo bench --bench check`.
//!
//! Two shapes, 1 000 and 10 000 phases each:
//! - `chain`: phase `p<i>` depends on `p<i-1>` and its task reads `{steps.p<i-1>.output}` and
//!   `{args.topic}`;
//! - `fan_in`: N−1 independent phases, then one reduce phase with `from` and `dependsOn` all of
//!   them whose task reads several of them.
//!
//! Target: checking the 10 000-phase flows within 3× the bare parse and under 50 ms.
//! `stage_json_parse` (the span-keeping reader alone) and `stage_lower` (reader + lowering to
//! the IR) split `check_source` into its parts. Every bench returns its result, so divan drops
//! it outside the timing for all of them alike.

use divan::{Bencher, black_box};
use tfc::check::{CheckOptions, Checked, check_source};
use tfc::flow::LowerOptions;

/// The allocator `tfc` itself uses, so the figures are those of the shipped binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

const SIZES: &[usize] = &[1_000, 10_000];

const HEADER: &str = r#"{
  "name": "bench",
  "args": {"topic": {"type": "string", "default": "parsers"}},
  "phases": [
"#;

/// `n` phases in a line.
fn chain(n: usize) -> String {
    let mut t = String::from(HEADER);
    t.push_str(r#"    {"id": "p0", "task": "Survey {args.topic}."}"#);
    for i in 1..n {
        t.push_str(&format!(
            ",\n    {{\"id\": \"p{i}\", \"dependsOn\": [\"p{}\"], \"task\": \"Refine {{steps.p{}.output}} about {{args.topic}}.\"}}",
            i - 1,
            i - 1
        ));
    }
    t.push_str("\n  ]\n}\n");
    t
}

/// `n - 1` independent phases and one reduce over all of them.
fn fan_in(n: usize) -> String {
    let mut t = String::from(HEADER);
    let ids: Vec<String> = (0..n - 1).map(|i| format!("\"p{i}\"")).collect();
    for i in 0..n - 1 {
        t.push_str(&format!(
            "    {{\"id\": \"p{i}\", \"task\": \"Review part {i} of {{args.topic}}.\"}},\n"
        ));
    }
    let list = ids.join(", ");
    t.push_str(&format!(
        "    {{\"id\": \"merge\", \"type\": \"reduce\", \"from\": [{list}], \"dependsOn\": [{list}], \
         \"task\": \"Merge {{previous.output}}; first {{steps.p0.output}}, middle {{steps.p{}.output}}, last {{steps.p{}.output}}.\", \"final\": true}}\n",
        (n - 1) / 2,
        n - 2
    ));
    t.push_str("  ]\n}\n");
    t
}

/// The measured call. The result is returned, so divan drops it outside the timing, as it
/// does the `serde_json::Value` of the baseline.
fn check(text: &str) -> Checked {
    check_source(text, &LowerOptions::default(), &CheckOptions::default())
}

/// The generated flows are clean: no diagnostics at all.
fn assert_clean(text: &str) {
    let checked = check(text);
    assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
}

mod chain {
    use super::*;

    #[divan::bench(args = SIZES)]
    fn check_source(b: Bencher, n: usize) {
        let text = chain(n);
        assert_clean(&text);
        b.bench(|| check(black_box(&text)));
    }

    #[divan::bench(args = SIZES)]
    fn serde_json_parse(b: Bencher, n: usize) {
        let text = chain(n);
        b.bench(|| serde_json::from_str::<serde_json::Value>(black_box(&text)).unwrap());
    }

    /// The stages of `check_source`: the span-keeping reader alone, then reading + lowering.
    #[divan::bench(args = SIZES)]
    fn stage_json_parse(b: Bencher, n: usize) {
        let text = chain(n);
        b.bench(|| tfc::json::parse(black_box(&text)));
    }

    #[divan::bench(args = SIZES)]
    fn stage_lower(b: Bencher, n: usize) {
        let text = chain(n);
        b.bench(|| tfc::flow::lower_source(black_box(&text), &LowerOptions::default()));
    }
}

mod fan_in {
    use super::*;

    #[divan::bench(args = SIZES)]
    fn check_source(b: Bencher, n: usize) {
        let text = fan_in(n);
        assert_clean(&text);
        b.bench(|| check(black_box(&text)));
    }

    #[divan::bench(args = SIZES)]
    fn serde_json_parse(b: Bencher, n: usize) {
        let text = fan_in(n);
        b.bench(|| serde_json::from_str::<serde_json::Value>(black_box(&text)).unwrap());
    }

    /// The stages of `check_source`: the span-keeping reader alone, then reading + lowering.
    #[divan::bench(args = SIZES)]
    fn stage_json_parse(b: Bencher, n: usize) {
        let text = fan_in(n);
        b.bench(|| tfc::json::parse(black_box(&text)));
    }

    #[divan::bench(args = SIZES)]
    fn stage_lower(b: Bencher, n: usize) {
        let text = fan_in(n);
        b.bench(|| tfc::flow::lower_source(black_box(&text), &LowerOptions::default()));
    }
}
