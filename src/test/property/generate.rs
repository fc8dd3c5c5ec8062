//! Answers drawn from the flow itself (SPEC §17 "Properties"): a JSON phase gets a value of
//! its contract (every enum member, boundary numbers, empty and long arrays within
//! `minItems`/`maxItems`, optional properties left out), a text phase one of a small
//! adversarial set (empty, one line, 10 KiB, text that looks like JSON, `VERDICT: PASS` /
//! `VERDICT: BLOCK` for gates), a script an output and an exit code; any call may fail first
//! (transient, permanent, timeout) or every time; each approval is approved, rejected or left
//! pending; arguments come from their ArgSpecs.

use crate::flow::{ArgType, Contract, Def, Flow, OutputMode, Phase, PhaseType};
use crate::value::{Map, Value};

use super::plan::{Approval, Gen, NodePlan, Plan};
use super::rng::Rng;

/// Contracts nested deeper than this get their minimal value (`run::contract::stub`).
const MAX_DEPTH: usize = 24;

/// The most elements a "long" array gets beyond its minimum.
const LONG_EXTRA: u64 = 12;

/// The failures a call may meet: transient (retried per §8.4), permanent, a timeout.
pub fn failures() -> [Gen; 3] {
    [
        Gen::Error("overloaded".into()),
        Gen::Error("permission denied".into()),
        Gen::Timeout,
    ]
}

/// The string values a contract's `string` draws from.
const STRINGS: &[&str] = &[
    "",
    "x",
    "two words",
    "line one\nline two",
    "{\"looks\": \"like JSON\"}",
    "ünïcödé ✓",
];

/// Numbers at the edges: zero, signs, fractions, large magnitudes.
const NUMBERS: &[f64] = &[0.0, 1.0, -1.0, 0.5, -2.5, 1e21, 2_147_483_647.0];
const INTEGERS: &[f64] = &[0.0, 1.0, -1.0, 2.0, 2_147_483_647.0, -2_147_483_648.0];

/// The texts a text phase draws from (a gate adds the two verdicts).
pub fn texts() -> Vec<String> {
    let mut long = String::with_capacity(10 * 1024);
    while long.len() < 10 * 1024 {
        long.push_str(
            "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tem\n",
        );
    }
    long.truncate(10 * 1024);
    vec![
        String::new(),
        "one line".into(),
        long,
        "{\"result\": \"looks like JSON\", \"items\": [1, 2]}".into(),
    ]
}

/// One run's plan for `flow`.
pub fn plan(flow: &Flow, rng: &mut Rng) -> Plan {
    let mut p = Plan {
        args: args(flow, rng),
        ..Plan::default()
    };
    let texts = texts();
    phases(flow, "", rng, &texts, &mut p);
    // Every call no pattern above names (a judge's answer is its phase's; a saved or generated
    // sub-flow's nodes; tree-reduce batches) gets a plain text.
    p.nodes.push(NodePlan {
        pattern: "*".into(),
        failures: Vec::new(),
        reply: Some(Gen::Text("ok".into())),
    });
    p
}

fn phases(flow: &Flow, prefix: &str, rng: &mut Rng, texts: &[String], out: &mut Plan) {
    for phase in &flow.phases {
        let path = format!("{prefix}{}", phase.id);
        match phase.ty() {
            PhaseType::Approval => {
                let a = *rng
                    .pick(&[Approval::Approve, Approval::Reject, Approval::Pending])
                    .unwrap_or(&Approval::Approve);
                out.approvals.push((path, a));
            }
            PhaseType::Script => {
                let stdout = rng.pick(texts).cloned().unwrap_or_default();
                let code = if rng.chance(85) { 0 } else { 1 };
                out.nodes.push(NodePlan {
                    pattern: path,
                    failures: Vec::new(),
                    reply: Some(Gen::Script(stdout, code)),
                });
            }
            PhaseType::Flow | PhaseType::Expand => {
                if let Some(Def::Inline(child)) = phase.def().map(|d| &d.value) {
                    phases(child, &format!("{path}/"), rng, texts, out);
                }
            }
            _ => {
                let reply = reply(phase, rng, texts);
                let mut failed = Vec::new();
                let mut reply = Some(reply);
                if rng.chance(15) {
                    failed.push(rng.pick(&failures()).cloned().unwrap_or(Gen::Timeout));
                    if rng.chance(25) {
                        reply = None;
                    }
                }
                out.nodes.push(NodePlan {
                    pattern: path,
                    failures: failed,
                    reply,
                });
            }
        }
    }
}

/// A successful answer for a phase that calls an agent.
pub fn reply(phase: &Phase, rng: &mut Rng, texts: &[String]) -> Gen {
    if phase.output == OutputMode::Json {
        return match phase.expect.as_deref() {
            Some(c) => Gen::Json(value(c, rng, 0)),
            None if rng.chance(70) => Gen::Json(any_value(rng)),
            None => Gen::Text(rng.pick(texts).cloned().unwrap_or_default()),
        };
    }
    if phase.ty() == PhaseType::Gate && rng.chance(80) {
        let v = if rng.chance(50) { "PASS" } else { "BLOCK" };
        return Gen::Text(format!("VERDICT: {v}"));
    }
    Gen::Text(rng.pick(texts).cloned().unwrap_or_default())
}

/// The phase at `path` (`sub/inner` through inline sub-flows) of `flow`.
pub fn phase_at<'f>(flow: &'f Flow, path: &str) -> Option<&'f Phase> {
    let mut flow = flow;
    let mut parts = path.split('/').peekable();
    while let Some(id) = parts.next() {
        let p = flow.phase(id)?;
        if parts.peek().is_none() {
            return Some(p);
        }
        match p.def().map(|d| &d.value) {
            Some(Def::Inline(child)) => flow = child,
            _ => return None,
        }
    }
    None
}

/// The types a contract allows (`type`, else what `properties`/`required` or `items` imply);
/// empty: any.
pub fn types_of(c: &Contract) -> Vec<&str> {
    match &c.ty {
        Some(t) => t.value.iter().map(String::as_str).collect(),
        None if !c.properties.is_empty() || !c.required.is_empty() => vec!["object"],
        None if c.items.is_some() => vec!["array"],
        None => Vec::new(),
    }
}

/// Does `v` satisfy `c`? (The run's own contract check is the oracle.)
pub fn satisfies(c: &Contract, v: &Value) -> bool {
    crate::run::contract::check_output(c, &v.to_json()).is_ok()
}

/// A value satisfying `c`, `depth` levels into the answer.
pub fn value(c: &Contract, rng: &mut Rng, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return crate::run::contract::stub(Some(c));
    }
    if let Some(members) = &c.enum_values {
        let fit: Vec<&Value> = members.iter().filter(|m| satisfies(c, m)).collect();
        if let Some(m) = rng.pick(&fit) {
            return (*m).clone();
        }
        return crate::run::contract::stub(Some(c));
    }
    let types = types_of(c);
    let ty = rng.pick(&types).copied().unwrap_or("any");
    match ty {
        "object" => object(c, rng, depth),
        "array" => array(c, rng, depth),
        "string" => Value::from(*rng.pick(STRINGS).unwrap_or(&"")),
        "integer" => Value::from(*rng.pick(INTEGERS).unwrap_or(&0.0)),
        "number" => Value::from(*rng.pick(NUMBERS).unwrap_or(&0.0)),
        "boolean" => Value::Bool(rng.chance(50)),
        "null" => Value::Null,
        _ => any_value(rng),
    }
}

fn object(c: &Contract, rng: &mut Rng, depth: usize) -> Value {
    let mut m = Map::default();
    let required = |k: &str| c.required.iter().any(|r| r.value == k);
    for (k, sub) in &c.properties {
        // An optional property is left out half the time.
        if required(k) || rng.chance(50) {
            m.insert(k.clone(), value(&sub.value, rng, depth + 1));
        }
    }
    for r in &c.required {
        if !m.contains_key(&r.value) {
            m.insert(r.value.clone(), any_value(rng));
        }
    }
    Value::Object(m)
}

fn array(c: &Contract, rng: &mut Rng, depth: usize) -> Value {
    let min = c.min_items.as_ref().map_or(0, |f| f.value);
    let max = c.max_items.as_ref().map(|f| f.value);
    let long = max
        .unwrap_or(min + LONG_EXTRA)
        .min(min + LONG_EXTRA)
        .max(min);
    // The bounds themselves, one past the minimum, and a long array.
    let lengths = [min, (min + 1).min(long), long];
    let len = lengths[rng.below(lengths.len())];
    let items = (0..len)
        .map(|_| match &c.items {
            Some(item) => value(&item.value, rng, depth + 1),
            None => any_value(rng),
        })
        .collect();
    Value::Array(items)
}

/// A value with no contract: a scalar or an empty container.
pub fn any_value(rng: &mut Rng) -> Value {
    match rng.below(6) {
        0 => Value::Null,
        1 => Value::Bool(true),
        2 => Value::from(0.0),
        3 => Value::from("x"),
        4 => Value::Array(Vec::new()),
        _ => Value::Object(Map::default()),
    }
}

/// Arguments for the flow's ArgSpecs: each without a default is given (an optional one half
/// the time), by its type.
fn args(flow: &Flow, rng: &mut Rng) -> Map {
    let mut out = Map::default();
    for (name, spec) in &flow.args {
        if spec.default.is_some() || (!spec.required && rng.chance(50)) {
            continue;
        }
        let v = match spec.ty {
            Some(ArgType::Enum) => match rng.pick(&spec.values) {
                Some(v) => v.clone(),
                None => continue,
            },
            Some(ArgType::Number) => {
                let lo = spec.minimum.unwrap_or(0.0);
                let hi = spec.maximum.unwrap_or(lo + 10.0).max(lo);
                Value::from(
                    *rng.pick(&[lo, hi, ((lo + hi) / 2.0).floor().max(lo)])
                        .unwrap_or(&lo),
                )
            }
            Some(ArgType::Boolean) => Value::Bool(rng.chance(50)),
            Some(ArgType::RelativePath) => Value::from("src/main.rs"),
            Some(ArgType::String) | None => {
                Value::from(*rng.pick(&["x", "two words"]).unwrap_or(&"x"))
            }
        };
        out.insert(name.clone(), v);
    }
    out
}
