//! Shrinking a plan that broke an invariant towards the simplest one that still breaks it:
//! fewer failures, approvals approved, fewer array items and object properties, shorter
//! strings, earlier enum members, numbers nearer zero. Every candidate JSON answer still
//! satisfies its phase's contract (the run's own contract check decides).

use crate::flow::{Contract, Flow, OutputMode};
use crate::value::{Map, Value};

use super::generate::{phase_at, satisfies};
use super::plan::{Approval, Gen, Plan};

/// The plans one step simpler than `plan`, the biggest simplifications first.
pub fn candidates(plan: &Plan, flow: &Flow) -> Vec<Plan> {
    let mut out = Vec::new();
    // Fewer failures.
    for (i, n) in plan.nodes.iter().enumerate() {
        if n.failures.is_empty() {
            continue;
        }
        let mut p = plan.clone();
        let node = &mut p.nodes[i];
        match node.reply {
            Some(_) => node.failures.clear(),
            None => {
                node.reply = Some(minimal(flow, &node.pattern));
                node.failures.clear();
            }
        }
        out.push(p);
        if n.failures.len() > 1 {
            let mut p = plan.clone();
            p.nodes[i].failures.pop();
            out.push(p);
        }
    }
    // Earlier approval decisions.
    for (i, (_, a)) in plan.approvals.iter().enumerate() {
        for earlier in [Approval::Approve, Approval::Reject] {
            if earlier < *a {
                let mut p = plan.clone();
                p.approvals[i].1 = earlier;
                out.push(p);
            }
        }
    }
    // Simpler replies.
    for (i, n) in plan.nodes.iter().enumerate() {
        let Some(reply) = &n.reply else {
            continue;
        };
        let contract = phase_at(flow, &n.pattern)
            .filter(|p| p.output == OutputMode::Json)
            .and_then(|p| p.expect.as_deref());
        for smaller in simpler_replies(reply, contract) {
            let mut p = plan.clone();
            p.nodes[i].reply = Some(smaller);
            out.push(p);
        }
    }
    out
}

/// The simplest successful answer for the node at `pattern`: its contract's minimal value
/// for a JSON phase, the empty text otherwise.
fn minimal(flow: &Flow, pattern: &str) -> Gen {
    match phase_at(flow, pattern) {
        Some(p) if p.output == OutputMode::Json => {
            Gen::Json(crate::run::contract::stub(p.expect.as_deref()))
        }
        Some(p) if p.ty() == crate::flow::PhaseType::Script => Gen::Script(String::new(), 0),
        _ => Gen::Text(String::new()),
    }
}

fn simpler_replies(reply: &Gen, contract: Option<&Contract>) -> Vec<Gen> {
    match reply {
        Gen::Json(v) => smaller_values(v, contract)
            .into_iter()
            .filter(|s| contract.is_none_or(|c| satisfies(c, s)))
            .map(Gen::Json)
            .collect(),
        Gen::Text(t) => shorter(t).into_iter().map(Gen::Text).collect(),
        Gen::Script(out, code) => {
            let mut v: Vec<Gen> = shorter(out)
                .into_iter()
                .map(|s| Gen::Script(s, *code))
                .collect();
            if *code != 0 {
                v.push(Gen::Script(out.clone(), 0));
            }
            v
        }
        Gen::Error(_) | Gen::Timeout => Vec::new(),
    }
}

/// Shorter versions of a text: empty, its first line, its first half.
pub fn shorter(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    if t.is_empty() {
        return out;
    }
    out.push(String::new());
    if let Some((first, _)) = t.split_once('\n') {
        out.push(first.to_owned());
    }
    let chars = t.chars().count();
    if chars > 1 {
        out.push(t.chars().take(chars / 2).collect());
    }
    out.dedup();
    out
}

/// Values one step simpler than `v` (of contract `c`, when known), the biggest steps first.
/// Not every one need satisfy the contract: the caller filters.
pub fn smaller_values(v: &Value, c: Option<&Contract>) -> Vec<Value> {
    let mut out = Vec::new();
    // An earlier enum member.
    if let Some(members) = c.and_then(|c| c.enum_values.as_ref())
        && let Some(at) = members.iter().position(|m| m == v)
    {
        out.extend(members[..at].iter().cloned());
        return out;
    }
    match v {
        Value::Array(items) => {
            let item_c = c.and_then(|c| c.items.as_deref()).map(|f| &f.value);
            if !items.is_empty() {
                out.push(Value::Array(items[..items.len() / 2].to_vec()));
                out.push(Value::Array(items[..items.len() - 1].to_vec()));
                out.push(Value::Array(items[1..].to_vec()));
            }
            for (i, item) in items.iter().enumerate() {
                for s in smaller_values(item, item_c) {
                    let mut copy = items.clone();
                    copy[i] = s;
                    out.push(Value::Array(copy));
                }
            }
        }
        Value::Object(m) => {
            let required = |k: &str| c.is_some_and(|c| c.required.iter().any(|r| r.value == k));
            for k in m.keys().filter(|k| !required(k)) {
                let mut copy: Map = m.clone();
                copy.shift_remove(k);
                out.push(Value::Object(copy));
            }
            for (k, item) in m {
                let sub = c.and_then(|c| c.properties.get(k)).map(|f| &f.value);
                for s in smaller_values(item, sub) {
                    let mut copy = m.clone();
                    copy.insert(k.clone(), s);
                    out.push(Value::Object(copy));
                }
            }
        }
        Value::String(s) => out.extend(shorter(s).into_iter().map(Value::from)),
        Value::Number(n) if *n != 0.0 => {
            out.push(Value::from(0.0));
            let half = (n / 2.0).trunc();
            if half != 0.0 && half != *n {
                out.push(Value::from(half));
            }
        }
        Value::Bool(true) => out.push(Value::Bool(false)),
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::parse_json;

    #[test]
    fn values_get_smaller() {
        let v = parse_json(r#"{"a": [1, 2, 3], "b": "hello"}"#).unwrap();
        let s = smaller_values(&v, None);
        assert!(s.contains(&parse_json(r#"{"b": "hello"}"#).unwrap()));
        assert!(s.contains(&parse_json(r#"{"a": [1], "b": "hello"}"#).unwrap()));
        assert!(s.contains(&parse_json(r#"{"a": [1, 2, 3], "b": ""}"#).unwrap()));
        assert!(s.contains(&parse_json(r#"{"a": [0, 2, 3], "b": "hello"}"#).unwrap()));
        assert_eq!(shorter("ab\ncd"), ["", "ab"]);
        assert_eq!(shorter("abcd"), ["", "ab"]);
        assert!(shorter("").is_empty());
    }
}
