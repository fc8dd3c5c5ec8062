//! Reuse of finished phases (SPEC §10.4–§10.5): cache keys (`key`), the scope rules
//! (here), the cross-run store under `.tfc/cache/` (`store`) and fingerprints
//! (`fingerprint`). The machine computes keys and decides; the driver does the I/O.

pub mod fingerprint;
pub mod key;
pub mod store;

use crate::flow::{CacheScope, Cwd, Phase, PhaseType};

/// A phase's effective cache scope (SPEC §10.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Never reused.
    Off,
    /// Reused from the same run lineage (resume).
    RunOnly,
    /// Also reused from `.tfc/cache/`.
    CrossRun,
}

impl Scope {
    /// The spelling of `cacheHit` and `cache.scope`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Off => "off",
            Scope::RunOnly => "run-only",
            Scope::CrossRun => "cross-run",
        }
    }
}

/// `cache.scope` ?? (`incremental`, the effective flag ⇒ cross-run) ?? run-only; gate, approval, loop, tournament,
/// script, race and expand at most run-only; `idempotent:false` and an `{args.X}` cwd ⇒ off.
pub fn scope(phase: &Phase, incremental: bool) -> Scope {
    if !phase.idempotent || matches!(phase.cwd.as_ref().map(|c| &c.value), Some(Cwd::Arg(_))) {
        return Scope::Off;
    }
    let written = phase
        .cache
        .as_ref()
        .and_then(|c| c.value.scope.as_ref())
        .map(|s| s.value);
    let s = match written {
        Some(CacheScope::Off) => Scope::Off,
        Some(CacheScope::RunOnly) => Scope::RunOnly,
        Some(CacheScope::CrossRun) => Scope::CrossRun,
        None if incremental => Scope::CrossRun,
        None => Scope::RunOnly,
    };
    let capped = matches!(
        phase.ty(),
        PhaseType::Gate
            | PhaseType::Approval
            | PhaseType::Loop
            | PhaseType::Tournament
            | PhaseType::Script
            | PhaseType::Race
            | PhaseType::Expand
    );
    if capped && s == Scope::CrossRun {
        Scope::RunOnly
    } else {
        s
    }
}

/// Kinds that always run again on resume (SPEC §10.4): loop, tournament, and gates decided
/// by their `eval`/`score` fast paths (their verdict is cheap and reads the current state).
pub fn always_reruns(phase: &Phase) -> bool {
    match phase.ty() {
        PhaseType::Loop | PhaseType::Tournament => true,
        PhaseType::Gate => {
            let g = phase.gate_fields();
            !g.eval.is_empty() || g.score.is_some()
        }
        _ => false,
    }
}

/// `cache.ttl` in ms, when set.
pub fn ttl_ms(phase: &Phase) -> Option<u64> {
    phase
        .cache
        .as_ref()
        .and_then(|c| c.value.ttl_ms)
        .filter(|t| t.is_finite() && *t >= 0.0)
        .map(|t| t as u64)
}

/// `cache.fingerprint` as written.
pub fn fingerprints(phase: &Phase) -> Vec<String> {
    phase
        .cache
        .as_ref()
        .map(|c| {
            c.value
                .fingerprint
                .iter()
                .map(|f| f.value.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// Every phase's `phasefp:` digest from the flow's definition (`def`: the flow document, or
/// its phases array); empty when the document's phases do not line up with the flow's.
pub fn phase_fps(def: &crate::value::Value, count: usize) -> Vec<String> {
    use crate::value::Value;
    let phases = match def {
        Value::Array(a) => a,
        Value::Object(m) => match m.get("phases") {
            Some(Value::Array(a)) => a,
            _ => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    if phases.len() != count {
        return Vec::new();
    }
    phases.iter().map(key::phase_fp).collect()
}
