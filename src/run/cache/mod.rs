//! Reuse of finished phases (SPEC §10.4–§10.5): cache keys (`key`), the scope rules
//! (here), the cross-run store under `.tfc/cache/` (`store`) and fingerprints
//! (`fingerprint`). The machine computes keys and decides; the driver does the I/O.

pub mod fingerprint;
pub mod key;
pub mod store;

use crate::flow::{CacheScope, Cwd, Phase, PhaseKind, PhaseType};

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
    match &phase.kind {
        PhaseKind::Loop(_) | PhaseKind::Tournament(_) => true,
        PhaseKind::Gate(g) => !g.eval.is_empty() || g.score.is_some(),
        PhaseKind::Agent(_)
        | PhaseKind::Parallel(_)
        | PhaseKind::Map(_)
        | PhaseKind::Reduce(_)
        | PhaseKind::Approval(_)
        | PhaseKind::Flow(_)
        | PhaseKind::Script(_)
        | PhaseKind::Race(_)
        | PhaseKind::Expand(_) => false,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(text: &str) -> crate::flow::Flow {
        let root = crate::json::parse(text).root.expect("json");
        crate::flow::lower(&root, &crate::flow::LowerOptions::default())
            .flow
            .expect("lowers")
    }

    #[test]
    fn scope_rules() {
        let f = flow(
            r#"{"name": "s", "args": {"dir": {"type": "string"}}, "phases": [
            {"id": "plain", "task": "x"},
            {"id": "written", "task": "x", "cache": {"scope": "cross-run"}},
            {"id": "off", "task": "x", "cache": {"scope": "off"}},
            {"id": "side", "task": "x", "idempotent": false, "cache": {"scope": "cross-run"}},
            {"id": "g", "type": "gate", "task": "x", "cache": {"scope": "cross-run"}},
            {"id": "s", "type": "script", "run": "true"},
            {"id": "at", "task": "x", "cwd": "{args.dir}", "cache": {"scope": "cross-run"}},
            {"id": "lp", "type": "loop", "task": "x", "until": "true", "max": 2},
            {"id": "ev", "type": "gate", "eval": ["1 == 1"]}
        ]}"#,
        );
        let s = |id: &str, inc: bool| scope(f.phase(id).expect("phase"), inc);
        assert_eq!(s("plain", false), Scope::RunOnly);
        assert_eq!(s("plain", true), Scope::CrossRun);
        assert_eq!(s("written", false), Scope::CrossRun);
        assert_eq!(s("off", true), Scope::Off);
        assert_eq!(s("side", true), Scope::Off);
        assert_eq!(
            s("g", false),
            Scope::RunOnly,
            "gates are capped at run-only"
        );
        assert_eq!(
            s("s", true),
            Scope::RunOnly,
            "scripts are capped at run-only"
        );
        assert_eq!(
            s("at", true),
            Scope::Off,
            "an {{args.X}} cwd turns caching off"
        );
        assert!(always_reruns(f.phase("lp").expect("lp")));
        assert!(always_reruns(f.phase("ev").expect("ev")));
        assert!(!always_reruns(f.phase("g").expect("g")));
    }
}
