//! A plan as a table a person reads at a glance, and as the stable JSON of SPEC §18.

use std::fmt::Write as _;

use super::caps::show;
use super::model::{Calls, Count, MinMax, PhasePlan, Plan};
use crate::value::{Map, Value, format_number};

/// `{"flow", "phases", "total", "caps", "assumptions", "warnings"}` (SPEC §18).
pub fn to_json(plan: &Plan) -> Value {
    let mut m = Map::default();
    m.insert("flow".into(), Value::from(plan.flow.as_str()));
    m.insert(
        "phases".into(),
        Value::Array(plan.phases.iter().map(phase_json).collect()),
    );
    let mut total = Map::default();
    total.insert("calls".into(), calls_json(plan.total.calls));
    total.insert(
        "inputTokens".into(),
        min_max(plan.total.input_tokens, |n| count(Some(n))),
    );
    total.insert(
        "outputTokens".into(),
        plan.total
            .output_tokens
            .map_or(Value::Null, |t| min_max(t, |n| count(Some(n)))),
    );
    total.insert(
        "costUSD".into(),
        plan.total
            .cost_usd
            .map_or(Value::Null, |c| min_max(c, Value::Number)),
    );
    m.insert("total".into(), Value::Object(total));
    let mut caps = Map::default();
    caps.insert("maxCalls".into(), count(plan.caps.max_calls));
    caps.insert(
        "maxTokens".into(),
        plan.caps.max_tokens.map_or(Value::Null, Value::Number),
    );
    caps.insert(
        "maxUSD".into(),
        plan.caps.max_usd.map_or(Value::Null, Value::Number),
    );
    m.insert("caps".into(), Value::Object(caps));
    let strings = |v: &[String]| Value::Array(v.iter().map(|s| Value::from(s.as_str())).collect());
    m.insert("assumptions".into(), strings(&plan.assumptions));
    m.insert("warnings".into(), strings(&plan.warnings));
    Value::Object(m)
}

fn phase_json(p: &PhasePlan) -> Value {
    let mut m = Map::default();
    m.insert("id".into(), Value::from(p.id.as_str()));
    m.insert("kind".into(), Value::from(p.kind.as_str()));
    m.insert("calls".into(), calls_json(p.calls));
    m.insert("promptTokens".into(), count(Some(p.prompt_tokens)));
    m.insert("dynamic".into(), Value::Bool(p.dynamic));
    if let Some(children) = &p.children {
        m.insert(
            "children".into(),
            Value::Array(children.iter().map(phase_json).collect()),
        );
    }
    Value::Object(m)
}

fn count(n: Count) -> Value {
    n.map_or(Value::Null, |n| Value::Number(n as f64))
}

fn calls_json(c: Calls) -> Value {
    let mut m = Map::default();
    m.insert("min".into(), count(c.min));
    m.insert("max".into(), count(c.max));
    m.insert("worst".into(), count(c.worst));
    Value::Object(m)
}

fn min_max<T: Copy>(v: MinMax<T>, f: impl Fn(T) -> Value) -> Value {
    let mut m = Map::default();
    m.insert("min".into(), v.min.map_or(Value::Null, &f));
    m.insert("max".into(), v.max.map_or(Value::Null, &f));
    Value::Object(m)
}

/// The plan as a table: one row per phase (a sub-flow's phases indented under it), the
/// totals, then the assumptions behind every `?` and the budget warnings.
pub fn to_text(plan: &Plan) -> String {
    let mut rows: Vec<[String; 6]> = vec![[
        "phase".into(),
        "kind".into(),
        "min".into(),
        "max".into(),
        "worst".into(),
        "prompt tokens".into(),
    ]];
    for p in &plan.phases {
        phase_rows(p, 0, &mut rows);
    }
    let t = plan.total.calls;
    rows.push([
        "total".into(),
        String::new(),
        show(t.min),
        show(t.max),
        show(t.worst),
        String::new(),
    ]);
    let mut widths = [0usize; 6];
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = format!(
        "plan of '{}': agent calls if every call succeeds (min to max), and with every retry (worst)\n\n",
        plan.flow
    );
    for r in &rows {
        let line = format!(
            "  {:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {:>w4$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
            w4 = widths[4],
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out.push('\n');
    let tok = plan.total.input_tokens;
    let _ = writeln!(
        out,
        "  input tokens   {}  (static prompt text; values inserted at run time not counted)",
        range(
            tok.min.map(|n| format!("~{n}")),
            tok.max.map(|n| format!("~{n}"))
        )
    );
    let _ = writeln!(
        out,
        "  output tokens  {}",
        plan.total.output_tokens.map_or("?".to_owned(), |t| range(
            t.min.map(|n| n.to_string()),
            t.max.map(|n| n.to_string())
        ))
    );
    let dollars = |x: f64| format!("${x:.4}");
    let _ = writeln!(
        out,
        "  cost           {}",
        plan.total.cost_usd.map_or("?".to_owned(), |c| range(
            c.min.map(dollars),
            c.max.map(dollars)
        ))
    );
    let caps = &plan.caps;
    if caps.max_calls.is_some() || caps.max_tokens.is_some() || caps.max_usd.is_some() {
        let mut parts = Vec::new();
        if let Some(c) = caps.max_calls {
            parts.push(format!("maxCalls {c}"));
        }
        if let Some(t) = caps.max_tokens {
            parts.push(format!("maxTokens {}", format_number(t)));
        }
        if let Some(u) = caps.max_usd {
            parts.push(format!("maxUSD {}", format_number(u)));
        }
        let _ = writeln!(out, "  budget         {}", parts.join(", "));
    }
    if !plan.assumptions.is_empty() {
        out.push_str("\n? assumptions:\n");
        for a in &plan.assumptions {
            let _ = writeln!(out, "  - {a}");
        }
    }
    if !plan.warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in &plan.warnings {
            let _ = writeln!(out, "  - {w}");
        }
    }
    out
}

fn phase_rows(p: &PhasePlan, depth: usize, rows: &mut Vec<[String; 6]>) {
    let prompt = if p.groups.is_empty() {
        "-".to_owned()
    } else if p.dynamic {
        format!("~{} + run-time values", p.prompt_tokens)
    } else {
        format!("~{}", p.prompt_tokens)
    };
    rows.push([
        format!("{}{}", "  ".repeat(depth), p.id),
        p.kind.as_str().to_owned(),
        show(p.calls.min),
        show(p.calls.max),
        show(p.calls.worst),
        prompt,
    ]);
    for c in p.children.iter().flatten() {
        phase_rows(c, depth + 1, rows);
    }
}

/// `a to b`, or one value when both are the same.
fn range(min: Option<String>, max: Option<String>) -> String {
    let min = min.unwrap_or_else(|| "?".into());
    let max = max.unwrap_or_else(|| "?".into());
    if min == max {
        min
    } else {
        format!("{min} to {max}")
    }
}
