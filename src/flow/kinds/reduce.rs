//! `reduce` (SPEC §3.6): many outputs combined into one, in one call or batched rounds.

use super::common::{Cx, has, need};
use crate::diag::{Code, Diagnostic};
use crate::flow::enums::ReduceStrategy;
use crate::flow::fields::FieldDef;
use crate::flow::fields::{FieldType, f};
use crate::flow::ir::{Field, Phase};
use crate::flow::lowerer::{Lowerer, PhaseFields};

/// A reduce phase.
#[derive(Clone, Debug)]
pub struct Reduce {
    /// `reduceStrategy`.
    pub strategy: ReduceStrategy,
    /// `batchSize` (an integer >= 2).
    pub batch_size: Option<Field<f64>>,
}

impl Reduce {
    /// The defaults.
    pub const DEFAULT: Reduce = Reduce {
        strategy: ReduceStrategy::OneShot,
        batch_size: None,
    };

    /// Is this a tree reduce?
    pub fn is_tree(&self) -> bool {
        self.strategy == ReduceStrategy::Tree
    }
}

/// The fields of a reduce phase.
pub(super) const FIELDS: &[FieldDef] = &[
    f(
        "reduceStrategy",
        FieldType::OneOf(ReduceStrategy::NAMES),
        "reduce: one call or batched rounds",
    ),
    f(
        "batchSize",
        FieldType::Integer,
        "reduce: inputs per tree batch (>= 2)",
    ),
];

pub(super) fn lower(l: &mut Lowerer, f: &PhaseFields<'_>, _cx: &mut Cx<'_>) -> Reduce {
    let mut k = Reduce::DEFAULT;
    k.strategy = l.word(f, "reduceStrategy").unwrap_or_default();
    if let Some(n) = l.number(f, "batchSize") {
        if n.value >= 2.0 && n.value.fract() == 0.0 && n.value.is_finite() {
            k.batch_size = Some(n);
        } else {
            l.invalid_value(f["batchSize"], "an integer >= 2");
        }
    }
    k
}

/// E0301 (task, from), E0307 (a tree over the call cap).
pub(super) fn check(p: &Phase, k: &Reduce, out: &mut Vec<Diagnostic>) {
    need(
        p,
        "task",
        has(p, "task"),
        "add \"task\": how to combine the inputs ({previous.output})",
        out,
    );
    need(
        p,
        "from",
        !p.from.is_empty() || p.invalid.contains(&"from"),
        "add \"from\": the phases whose outputs are combined",
        out,
    );
    if k.is_tree() {
        let calls = tree_calls(
            p.from.len(),
            k.batch_size.as_ref().map_or(2, |b| b.value as usize),
        );
        if calls > 256 {
            out.push(
                Diagnostic::new(Code::TreeReduceCap, format!("{}: a tree reduce of {} inputs in batches of {} makes {calls} calls (limit 256)", p.id, p.from.len(), k.batch_size.as_ref().map_or(2.0, |b| b.value)))
                    .at(p.written.get("reduceStrategy").copied().unwrap_or(p.id_span))
                    .with_label(format!("{calls} calls"))
                    .phase(&p.id)
                    .help("raise batchSize or split the inputs over several reduce phases"),
            );
        }
    }
}

/// Calls a tree reduce makes over `n` inputs in batches of `b`.
pub fn tree_calls(n: usize, b: usize) -> usize {
    let b = b.max(2);
    let (mut left, mut calls) = (n, 0);
    while left >= 2 {
        let round = left.div_ceil(b);
        calls += round;
        left = round;
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_call_counts() {
        assert_eq!(tree_calls(0, 2), 0);
        assert_eq!(tree_calls(1, 2), 0);
        assert_eq!(tree_calls(2, 2), 1);
        assert_eq!(tree_calls(5, 2), 3 + 2 + 1);
        assert_eq!(tree_calls(300, 300), 1);
    }
}
