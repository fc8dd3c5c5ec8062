//! The environment of a command backend's process (SPEC §9.4).
//!
//! Presets pass an allowlist of the parent environment (plus their prefixes and `env_allow`);
//! the generic command and pi pass all of it. Either way the parent's `TFC_*` variables are
//! dropped and the call's own `TFC_*` variables (`call_vars`) are added.

use std::ffi::{OsStr, OsString};

use crate::agent::call::Request;
pub use crate::process::env::{EnvVars, names, parent_env, set};

/// Names every preset passes.
const BASE_NAMES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "TMPDIR",
    "TMP",
    "TEMP",
    "LANG",
    "LC_ALL",
    "TZ",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
];
/// Prefixes every preset passes.
const BASE_PREFIXES: &[&str] = &["XDG_"];

/// Which variables of the parent environment a backend passes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvPolicy {
    /// Everything (generic command, pi).
    Full,
    /// The base allowlist, these name prefixes, and the configured `env_allow` entries.
    Allowlist {
        /// Variable name prefixes of the backend's own (`ANTHROPIC_`, …).
        prefixes: &'static [&'static str],
    },
}

/// Filter `base` by `policy`. `env_allow` entries are exact names, or prefixes when they end
/// in `*` (`MY_AGENT_*`). `TFC_*` variables never pass: the call sets its own.
pub fn filter(base: &[(OsString, OsString)], policy: &EnvPolicy, env_allow: &[String]) -> EnvVars {
    base.iter()
        .filter(|(k, _)| !is_tfc(k))
        .filter(|(k, _)| match policy {
            EnvPolicy::Full => true,
            EnvPolicy::Allowlist { prefixes } => k.to_str().is_some_and(|k| {
                BASE_NAMES.contains(&k)
                    || BASE_PREFIXES.iter().any(|p| k.starts_with(p))
                    || prefixes.iter().any(|p| k.starts_with(p))
                    || env_allow.iter().any(|a| match a.strip_suffix('*') {
                        Some(prefix) => k.starts_with(prefix),
                        None => a == k,
                    })
            }),
        })
        .cloned()
        .collect()
}

fn is_tfc(name: &OsStr) -> bool {
    name.as_encoded_bytes().starts_with(b"TFC_")
}

/// The `TFC_*` variables of one call: run, phase, node, agent, attempt, and the loop
/// iteration, fan-out index and model when there are any.
pub(crate) fn call_vars(request: &Request) -> Vec<(&'static str, String)> {
    let mut vars = vec![
        ("TFC_RUN_ID", request.run_id.clone()),
        ("TFC_PHASE_ID", request.phase_id.clone()),
        ("TFC_NODE", request.node.clone()),
        ("TFC_AGENT", request.agent.clone()),
        ("TFC_ATTEMPT", request.attempt.to_string()),
    ];
    if let Some(i) = request.iteration {
        vars.push(("TFC_ITERATION", i.to_string()));
    }
    if let Some(i) = request.item_index {
        vars.push(("TFC_ITEM_INDEX", i.to_string()));
    }
    if let Some(m) = &request.model {
        vars.push(("TFC_MODEL", m.clone()));
    }
    if let Some(tp) = &request.traceparent {
        vars.push(("TRACEPARENT", tp.clone()));
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> EnvVars {
        pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    fn names(e: &EnvVars) -> Vec<&str> {
        e.iter().map(|(k, _)| k.to_str().unwrap()).collect()
    }

    #[test]
    fn allowlist_keeps_base_prefixes_and_env_allow() {
        let base = env(&[
            ("PATH", "/bin"),
            ("XDG_CONFIG_HOME", "/c"),
            ("ANTHROPIC_API_KEY", "k"),
            ("OPENAI_API_KEY", "o"),
            ("AWS_SECRET", "s"),
            ("MY_TOKEN", "t"),
            ("MY_AGENT_X", "x"),
            ("TFC_RUN_ID", "parent"),
            ("LC_CTYPE", "C"),
        ]);
        let p = EnvPolicy::Allowlist {
            prefixes: &["ANTHROPIC_"],
        };
        let got = filter(&base, &p, &["MY_TOKEN".into(), "MY_AGENT_*".into()]);
        assert_eq!(
            names(&got),
            [
                "PATH",
                "XDG_CONFIG_HOME",
                "ANTHROPIC_API_KEY",
                "MY_TOKEN",
                "MY_AGENT_X"
            ]
        );
        let full = filter(&base, &EnvPolicy::Full, &[]);
        assert_eq!(full.len(), base.len() - 1);
        assert!(!names(&full).contains(&"TFC_RUN_ID"));
    }
}
