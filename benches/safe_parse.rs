//! Benchmarks: safe_parse. Run with `cargo bench --bench safe_parse`.
//!
//! Three deterministic 1 MiB inputs, each parsed by `safe_parse` beside
//! `serde_json::from_str::<serde_json::Value>` of the same bytes:
//! * `array`: a JSON array of small objects (also our strict `parse_json`);
//!   target: within 1.5× of serde_json;
//! * `fenced`: prose ending in a ```` ```json ```` fenced block; target ≤ 0.5 ms;
//! * `prose`: prose with brackets and braces that never parse as JSON; target ≤ 1 ms.

use std::sync::LazyLock;

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use tfc::eval::safe_parse::safe_parse;
use tfc::value::parse_json;

/// The allocator `tfc` itself uses, so the figures are those of the shipped binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const MIB: usize = 1 << 20;

fn main() {
    check_inputs();
    divan::main();
}

/// The inputs are what they claim to be.
fn check_inputs() {
    assert!(ARRAY.len() >= MIB && parse_json(&ARRAY).is_ok());
    assert_eq!(FENCED.len(), MIB);
    let fenced = safe_parse(&FENCED).value;
    assert!(
        fenced
            .as_ref()
            .and_then(|v| v.as_object())
            .is_some_and(|o| o.contains_key("findings"))
    );
    assert_eq!(PROSE.len(), MIB);
    assert_eq!(
        safe_parse(&PROSE),
        tfc::eval::safe_parse::Parsed {
            value: None,
            warning: None
        }
    );
}

/// A small deterministic pseudo-random generator (64-bit LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// `[{"id":0,"name":"item-0",…},…]`, just over 1 MiB.
fn array_input() -> String {
    let mut rng = Lcg(1);
    let mut out = String::from("[");
    let mut i = 0;
    while out.len() < MIB {
        if i > 0 {
            out.push(',');
        }
        let score = rng.next(10_000) as f64 / 100.0;
        let active = rng.next(2) == 0;
        let tag = ["alpha", "beta", "gamma", "delta"][rng.next(4)];
        out.push_str(&format!(
            r#"{{"id":{i},"name":"item-{i}","score":{score},"active":{active},"tags":["{tag}","x"],"note":null}}"#
        ));
        i += 1;
    }
    out.push(']');
    out
}

const WORDS: &[&str] = &[
    "the", "model", "reviewed", "each", "finding", "and", "reported", "that", "nothing", "was",
    "wrong", "with", "auth", "module", "however", "a", "few", "edge", "cases", "remain", "open",
];

/// Bracketed asides that never parse as JSON, including unbalanced ones and quotes.
const ASIDES: &[&str] = &[
    "[note a]",
    "{draft}",
    "[sic]",
    "(see [appendix b])",
    "{x: y}",
    "[\"quoted] bracket\" here}",
    "[unclosed",
    "stray ] closer",
    "{a [b} c]",
    "say \"hi\" {",
    "}",
];

/// Exactly `len` bytes of prose sprinkled with [`ASIDES`].
fn prose(len: usize) -> String {
    let mut rng = Lcg(7);
    let mut out = String::with_capacity(len + 64);
    while out.len() < len {
        for _ in 0..12 {
            out.push_str(WORDS[rng.next(WORDS.len())]);
            out.push(' ');
        }
        if rng.next(3) == 0 {
            out.push_str(ASIDES[rng.next(ASIDES.len())]);
            out.push(' ');
        }
        out.push_str(if rng.next(8) == 0 { ".\n\n" } else { ". " });
    }
    out.truncate(len);
    out
}

/// Prose ending in a fenced JSON block; 1 MiB in all.
fn fenced_input() -> String {
    let block = "\n\nHere is the result:\n\n```json\n{\"severity\": \"high\", \"findings\": \
                 [{\"id\": \"F-1\", \"line\": 42}, {\"id\": \"F-2\", \"line\": 7}]}\n```\n";
    let mut out = prose(MIB - block.len());
    out.push_str(block);
    out
}

static ARRAY: LazyLock<String> = LazyLock::new(array_input);
static FENCED: LazyLock<String> = LazyLock::new(fenced_input);
static PROSE: LazyLock<String> = LazyLock::new(|| prose(MIB));

fn run<T>(bencher: Bencher, input: &'static str, f: impl Fn(&str) -> T + Sync) {
    bencher
        .counter(BytesCount::of_str(input))
        .bench(|| f(black_box(input)));
}

fn serde(text: &str) -> Option<serde_json::Value> {
    serde_json::from_str::<serde_json::Value>(text).ok()
}

mod array {
    use super::*;

    #[divan::bench]
    fn safe_parse(b: Bencher) {
        run(b, &ARRAY, super::safe_parse);
    }

    #[divan::bench]
    fn parse_json(b: Bencher) {
        run(b, &ARRAY, |t| super::parse_json(t).ok());
    }

    #[divan::bench]
    fn serde_json(b: Bencher) {
        run(b, &ARRAY, serde);
    }
}

mod fenced {
    use super::*;

    #[divan::bench]
    fn safe_parse(b: Bencher) {
        run(b, &FENCED, super::safe_parse);
    }

    #[divan::bench]
    fn serde_json(b: Bencher) {
        run(b, &FENCED, serde);
    }
}

mod prose {
    use super::*;

    #[divan::bench]
    fn safe_parse(b: Bencher) {
        run(b, &PROSE, super::safe_parse);
    }

    #[divan::bench]
    fn serde_json(b: Bencher) {
        run(b, &PROSE, serde);
    }
}
