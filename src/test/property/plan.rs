//! A generated answer set (a [`Plan`]): per node pattern, the failures its first calls get
//! and the reply after them; per approval, a decision; the arguments. A plan is written as a
//! `tests[]` entry ([`Plan::entry`]) and run from that very text, so the test case a finding
//! prints is exactly what reproduced it.

use crate::value::{Map, Value};

/// One generated answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Gen {
    /// `{"json": V}`.
    Json(Value),
    /// A string answer.
    Text(String),
    /// `{"error": TEXT}`.
    Error(String),
    /// `{"timeout": true}`.
    Timeout,
    /// `{"stdout": TEXT, "exitCode": N}` (a script phase).
    Script(String, i32),
}

impl Gen {
    /// The answer as the test file writes it.
    pub fn to_value(&self) -> Value {
        let one = |k: &str, v: Value| {
            let mut m = Map::default();
            m.insert(k.into(), v);
            Value::Object(m)
        };
        match self {
            Gen::Json(v) => one("json", v.clone()),
            Gen::Text(t) => Value::from(t.as_str()),
            Gen::Error(e) => one("error", Value::from(e.as_str())),
            Gen::Timeout => one("timeout", Value::Bool(true)),
            Gen::Script(out, code) => {
                let mut m = Map::default();
                m.insert("stdout".into(), Value::from(out.as_str()));
                m.insert("exitCode".into(), Value::from(f64::from(*code)));
                Value::Object(m)
            }
        }
    }
}

/// The answers of one node pattern: `failures` answer its first calls (retries get the
/// next), then `reply` every later call; without a reply every call fails (the last failure
/// repeats).
#[derive(Clone, Debug, PartialEq)]
pub struct NodePlan {
    /// The pattern: a phase id, `sub/inner` inside an inline sub-flow, or `*`.
    pub pattern: String,
    /// Failed calls (errors, timeouts) its first calls get.
    pub failures: Vec<Gen>,
    /// The answer after the failures.
    pub reply: Option<Gen>,
}

impl NodePlan {
    /// The answers in call order (never empty for a plan the generator made).
    pub fn answers(&self) -> Vec<Gen> {
        self.failures.iter().chain(&self.reply).cloned().collect()
    }
}

/// An approval's drawn decision; the order is the shrinking order (approve first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Approval {
    /// `"approve"`.
    Approve,
    /// `"reject"`.
    Reject,
    /// Not listed: the approval stays pending.
    Pending,
}

/// One generated run's inputs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// The invocation arguments.
    pub args: Map,
    /// The answers, by pattern, in flow order (`*` last).
    pub nodes: Vec<NodePlan>,
    /// The approvals' decisions (the path of each approval phase).
    pub approvals: Vec<(String, Approval)>,
}

impl Plan {
    /// The plan as a `tests[]` entry named `name`, whose `expect` is `expect` when given.
    pub fn entry(&self, name: &str, expect: Option<&Value>) -> Value {
        let mut t = Map::default();
        t.insert("name".into(), Value::from(name));
        if !self.args.is_empty() {
            t.insert("args".into(), Value::Object(self.args.clone()));
        }
        let mut answers = Map::default();
        for n in &self.nodes {
            let mut list: Vec<Value> = n.answers().iter().map(Gen::to_value).collect();
            let v = match list.len() {
                1 => list.remove(0),
                _ => Value::Array(list),
            };
            answers.insert(n.pattern.clone(), v);
        }
        t.insert("answers".into(), Value::Object(answers));
        let approvals: Map = self
            .approvals
            .iter()
            .filter_map(|(id, a)| match a {
                Approval::Approve => Some((id.clone(), Value::from("approve"))),
                Approval::Reject => Some((id.clone(), Value::from("reject"))),
                Approval::Pending => None,
            })
            .collect();
        if !approvals.is_empty() {
            t.insert("approvals".into(), Value::Object(approvals));
        }
        if let Some(e) = expect {
            t.insert("expect".into(), e.clone());
        }
        Value::Object(t)
    }
}
