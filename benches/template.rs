//! Template rendering: a 10 KB template holding 200 placeholders against a 500-step context.
//! Run with `cargo bench --bench template`.

use divan::{Bencher, black_box};
use tfc::compile::Template;
use tfc::eval::{Bindings, StepState};
use tfc::value::{Map, Value};

/// The allocator `tfc` itself uses, so the figures are those of the shipped binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

fn context() -> Bindings {
    let mut b = Bindings::default();
    let mut args = Map::default();
    args.insert("since".into(), Value::from("v1.4.0"));
    args.insert("limit".into(), Value::Number(25.0));
    b.args = Some(Value::Object(args));
    for i in 0..500 {
        let out = format!(
            "{{\"severity\": \"high\", \"n\": {i}, \"summary\": \"phase {i} found nothing alarming\"}}"
        );
        b.steps.insert(format!("phase-{i}"), StepState::done(out));
    }
    b.locals.insert("item".into(), Value::from("src/lib.rs"));
    b
}

/// ~10 KB of prose with 200 placeholders spread over outputs, JSON fields, args and locals.
fn template_text() -> String {
    let mut t = String::new();
    for i in 0..200 {
        let ph = match i % 4 {
            0 => format!("{{steps.phase-{}.output}}", i * 2),
            1 => format!("{{steps.phase-{}.json.severity}}", i * 2 + 1),
            2 => "{args.since}".to_string(),
            _ => "{item}".to_string(),
        };
        t.push_str("Review the findings below carefully and keep only the relevant ones: ");
        t.push_str(&ph);
        t.push('\n');
    }
    t
}

#[divan::bench]
fn parse_and_compile(b: Bencher) {
    let text = template_text();
    b.bench(|| Template::parse(black_box(&text)));
}

#[divan::bench]
fn render_200_placeholders(b: Bencher) {
    let ctx = context();
    let template = Template::parse(&template_text());
    // Warm the per-step JSON caches so the bench measures rendering, not first parses.
    let _ = template.render(&ctx);
    b.bench(|| template.render(black_box(&ctx)));
}

#[divan::bench]
fn baseline_copy_10kb(b: Bencher) {
    let text = template_text();
    b.bench(|| black_box(&text).to_string());
}
