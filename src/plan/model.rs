//! What a plan says: call counts (`min`, `max`, `worst`, each unknown as `None`), the calls
//! grouped by agent and prompt for the token and cost sums, the plan of each phase and of the
//! whole flow.

use crate::flow::PhaseType;

/// A number of agent calls, or `None` when it cannot be known before the run.
pub type Count = Option<u64>;

/// The three call counts of SPEC §18.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Calls {
    /// The fewest calls of a run in which every call succeeds at its first attempt.
    pub min: Count,
    /// The most calls of such a run.
    pub max: Count,
    /// `max` with every call at its attempt limit (§8.4).
    pub worst: Count,
}

impl Calls {
    /// No call at all (scripts, approvals).
    pub const ZERO: Calls = Calls {
        min: Some(0),
        max: Some(0),
        worst: Some(0),
    };

    /// Nothing known.
    pub const UNKNOWN: Calls = Calls {
        min: None,
        max: None,
        worst: None,
    };

    /// Between `min` and `max` calls, each with up to `attempts` attempts.
    pub fn between(min: Count, max: Count, attempts: u64) -> Calls {
        Calls {
            min,
            max,
            worst: max.map(|m| m.saturating_mul(attempts)),
        }
    }

    /// Exactly `n` calls, each with up to `attempts` attempts.
    pub fn exactly(n: u64, attempts: u64) -> Calls {
        Calls::between(Some(n), Some(n), attempts)
    }

    /// The counts of two parts together.
    pub fn plus(self, o: Calls) -> Calls {
        Calls {
            min: add(self.min, o.min),
            max: add(self.max, o.max),
            worst: add(self.worst, o.worst),
        }
    }

    /// Each count `k` times.
    pub fn times(self, k: u64) -> Calls {
        Calls {
            min: self.min.map(|n| n.saturating_mul(k)),
            max: self.max.map(|n| n.saturating_mul(k)),
            worst: self.worst.map(|n| n.saturating_mul(k)),
        }
    }
}

/// The sum of two counts; unknown if either is.
pub fn add(a: Count, b: Count) -> Count {
    Some(a?.saturating_add(b?))
}

/// Calls alike: one agent, one static prompt size. A phase's calls are a few groups (its
/// task, each branch, a judge, the re-run dependencies of a gate's rounds, a sub-flow's calls).
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// The agent that answers them.
    pub agent: String,
    /// How many.
    pub calls: Calls,
    /// The static characters of each call's prompt (template text without its placeholders,
    /// plus the pre-read files as they are today).
    pub chars: u64,
    /// The prompt inserts values only known at run time.
    pub dynamic: bool,
}

impl Group {
    /// `ceil(chars / 4)`: the estimate of SPEC §3.16's `promptStats`.
    pub fn tokens(&self) -> u64 {
        self.chars.div_ceil(4)
    }
}

/// Prices of one agent's calls (SPEC §9.2 `price`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    /// USD per million input tokens.
    pub input_per_mtok: f64,
    /// USD per million output tokens.
    pub output_per_mtok: f64,
}

/// The plan of one phase.
#[derive(Clone, Debug, PartialEq)]
pub struct PhasePlan {
    /// The phase id.
    pub id: String,
    /// Its type.
    pub kind: PhaseType,
    /// Its calls (its sub-flow's, its gate rounds' re-run dependencies' included).
    pub calls: Calls,
    /// The static prompt size of one of its calls, in tokens (the largest, when its calls
    /// differ: branches, a judge); 0 for a phase that makes no call.
    pub prompt_tokens: u64,
    /// Some prompt of the phase inserts run-time values (its size is then a lower bound).
    pub dynamic: bool,
    /// A sub-flow's phases.
    pub children: Option<Vec<PhasePlan>>,
    /// Its calls by agent and prompt.
    pub groups: Vec<Group>,
}

/// A pair of sums (tokens, dollars), each unknown as `None`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MinMax<T> {
    /// With the fewest calls.
    pub min: Option<T>,
    /// With the most calls.
    pub max: Option<T>,
}

/// The totals of a flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Total {
    /// Every call of the run.
    pub calls: Calls,
    /// The static prompt tokens of those calls.
    pub input_tokens: MinMax<u64>,
    /// `--output-tokens N` per call; `None` without it.
    pub output_tokens: Option<MinMax<u64>>,
    /// Input and output priced per agent; `None` without `--output-tokens` or a price.
    pub cost_usd: Option<MinMax<f64>>,
}

/// The flow's budget caps (SPEC §8.7).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Caps {
    /// `budget.maxCalls`.
    pub max_calls: Option<u64>,
    /// `budget.maxTokens`.
    pub max_tokens: Option<f64>,
    /// `budget.maxUSD`.
    pub max_usd: Option<f64>,
}

/// A flow's plan: what a run can call, before anything is called.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The flow's name.
    pub flow: String,
    /// Each phase, in file order.
    pub phases: Vec<PhasePlan>,
    /// The sums.
    pub total: Total,
    /// The caps of the flow's budget.
    pub caps: Caps,
    /// What would settle each unknown (`null` / `?`), one line each.
    pub assumptions: Vec<String>,
    /// Caps the run would meet: W0103 and "the run may stop at its budget" notes.
    pub warnings: Vec<String>,
}
