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

/// A flow typed throughout: 20 phases whose `expect` contracts declare 50 properties each
/// (strings, numbers, enums, arrays of objects, nested objects), and 50 phases reading them
/// through 1,000 placeholders (paths into the contracts, in tasks and `when` comparisons).
/// Target (SPEC §7.5 work): checked in under 10 ms.
fn typed_flow() -> String {
    const PRODUCERS: usize = 20;
    const PROPS: usize = 50;
    const READERS: usize = 50;
    const READS: usize = 20;
    let mut phases = Vec::new();
    for p in 0..PRODUCERS {
        let props: Vec<String> = (0..PROPS)
            .map(|k| {
                let schema = match k % 5 {
                    0 => r#"{"type": "string"}"#.to_owned(),
                    1 => r#"{"type": "number"}"#.to_owned(),
                    2 => r#"{"enum": ["low", "medium", "high"]}"#.to_owned(),
                    3 => r#"{"type": "array", "items": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}, "lines": {"type": "integer"}}}}"#.to_owned(),
                    _ => r#"{"type": "object", "properties": {"name": {"type": "string"}, "count": {"type": "number"}}}"#.to_owned(),
                };
                format!("\"f{k}\": {schema}")
            })
            .collect();
        let required: Vec<String> = (0..PROPS).step_by(2).map(|k| format!("\"f{k}\"")).collect();
        phases.push(format!(
            "{{\"id\": \"p{p}\", \"output\": \"json\", \"task\": \"Produce part {p}.\", \"expect\": {{\"type\": \"object\", \"required\": [{}], \"properties\": {{{}}}}}}}",
            required.join(", "),
            props.join(", ")
        ));
    }
    let all: Vec<String> = (0..PRODUCERS).map(|p| format!("\"p{p}\"")).collect();
    for r in 0..READERS {
        let mut task = String::from("Use");
        let mut when = Vec::new();
        for i in 0..READS {
            let p = (r + i) % PRODUCERS;
            let k = (r * READS + i) % PROPS;
            let path = match k % 5 {
                0 | 1 => format!("steps.p{p}.json.f{k}"),
                2 => {
                    if i % 4 == 0 {
                        when.push(format!("{{steps.p{p}.json.f{k}}} == high"));
                        continue;
                    }
                    format!("steps.p{p}.json.f{k}")
                }
                3 => format!("steps.p{p}.json.f{k}.0.path"),
                _ => format!("steps.p{p}.json.f{k}.name"),
            };
            task.push_str(&format!(" {{{path}}}"));
        }
        let when = if when.is_empty() {
            String::new()
        } else {
            format!(", \"when\": \"{}\"", when.join(" || "))
        };
        phases.push(format!(
            "{{\"id\": \"r{r}\", \"dependsOn\": [{}], \"task\": \"{task}\"{when}}}",
            all.join(", ")
        ));
    }
    let readers: Vec<String> = (0..READERS).map(|r| format!("\"r{r}\"")).collect();
    phases.push(format!(
        "{{\"id\": \"end\", \"dependsOn\": [{}], \"task\": \"Done.\"}}",
        readers.join(", ")
    ));
    format!(
        // The readers are guarded, so the final phase may be skipped (W0109): meant here.
        "{{\"name\": \"typed\", \"lint\": {{\"allow\": [\"W0109\"]}}, \"phases\": [\n{}\n]}}\n",
        phases.join(",\n")
    )
}

mod typed {
    use super::*;

    /// 1,000 typed placeholders against 50-property contracts.
    #[divan::bench]
    fn check_source(b: Bencher) {
        let text = typed_flow();
        let checked = check(&text);
        assert!(checked.diagnostics.is_empty(), "{:?}", checked.diagnostics);
        let flow = checked.flow.expect("flow");
        let typed = tfc::check::types::placeholder_types(&flow, None);
        assert_eq!(typed.len(), 1_000, "the flow reads 1,000 placeholders");
        b.bench(|| check(black_box(&text)));
    }

    /// The same flow's placeholder types for `--types` (and editors).
    #[divan::bench]
    fn placeholder_types(b: Bencher) {
        let flow = check(&typed_flow()).flow.expect("flow");
        b.bench(|| tfc::check::types::placeholder_types(black_box(&flow), None));
    }
}
