//! The spend meter: usage added by every call, read by every budget check. It is the one
//! piece of state workers share; it only counts (atomically), it decides nothing.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::agent::Usage;
use crate::value::format_number;

#[derive(Debug, Default)]
pub struct Meter {
    tokens: AtomicU64,
    /// Cost in micro-dollars.
    cost_micros: AtomicU64,
    pub max_usd: Option<f64>,
    pub max_tokens: Option<f64>,
}

impl Meter {
    pub fn new(
        max_usd: Option<f64>,
        max_tokens: Option<f64>,
        spent_before: Option<&Usage>,
    ) -> Meter {
        let m = Meter {
            max_usd,
            max_tokens,
            ..Meter::default()
        };
        if let Some(u) = spent_before {
            m.add(u);
        }
        m
    }

    pub fn add(&self, u: &Usage) {
        self.tokens
            .fetch_add(u.billable_tokens(), Ordering::Relaxed);
        if let Some(c) = u.cost_usd {
            self.cost_micros
                .fetch_add((c * 1e6).round().max(0.0) as u64, Ordering::Relaxed);
        }
    }

    pub fn tokens(&self) -> u64 {
        self.tokens.load(Ordering::Relaxed)
    }

    pub fn cost(&self) -> f64 {
        self.cost_micros.load(Ordering::Relaxed) as f64 / 1e6
    }

    /// `Some(reason)` once a cap is exceeded (SPEC §8.7).
    pub fn over(&self) -> Option<String> {
        if let Some(max) = self.max_usd {
            let c = self.cost();
            if c > max {
                return Some(format!("cost ${c:.3} exceeded cap ${}", format_number(max)));
            }
        }
        if let Some(max) = self.max_tokens {
            let t = self.tokens();
            if t as f64 > max {
                return Some(format!("tokens {t} exceeded cap {}", format_number(max)));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps() {
        let m = Meter::new(Some(0.01), Some(100.0), None);
        assert_eq!(m.over(), None);
        m.add(&Usage {
            input: 60,
            output: 50,
            cache_read: 1000,
            cost_usd: Some(0.004),
            ..Usage::default()
        });
        assert_eq!(m.over().as_deref(), Some("tokens 110 exceeded cap 100"));
        let m = Meter::new(Some(0.01), None, None);
        m.add(&Usage {
            cost_usd: Some(0.0125),
            ..Usage::default()
        });
        assert_eq!(m.over().as_deref(), Some("cost $0.013 exceeded cap $0.01"));
        let zero = Meter::new(None, Some(0.0), None);
        assert_eq!(zero.over(), None);
    }
}
