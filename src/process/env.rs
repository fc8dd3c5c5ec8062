//! A child's environment: tfc passes every child its whole environment explicitly (nothing is
//! inherited implicitly), as an ordered list of variables.
//!
//! Which of the parent's variables an agent backend passes on is the agent's business
//! (`agent::env`); this module only holds the list and its edits.

use std::ffi::OsString;

/// A whole environment, in order.
pub type EnvVars = Vec<(OsString, OsString)>;

/// tfc's own environment, as it is now.
pub fn parent_env() -> EnvVars {
    std::env::vars_os().collect()
}

/// The names of an environment (for `Debug` output that must not show values).
pub fn names(env: &[(OsString, OsString)]) -> Vec<String> {
    env.iter()
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect()
}

/// Set (or replace) variables.
pub fn set<K: Into<OsString>, V: Into<OsString>>(
    env: &mut EnvVars,
    vars: impl IntoIterator<Item = (K, V)>,
) {
    for (k, v) in vars {
        let (k, v) = (k.into(), v.into());
        match env.iter_mut().find(|(name, _)| *name == k) {
            Some(slot) => slot.1 = v,
            None => env.push((k, v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> EnvVars {
        pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    #[test]
    fn set_replaces() {
        let mut e = env(&[("A", "1")]);
        set(&mut e, [("A", "2"), ("B", "3")]);
        assert_eq!(e, env(&[("A", "2"), ("B", "3")]));
    }

    #[test]
    fn names_hide_values() {
        assert_eq!(names(&env(&[("K", "secret"), ("B", "")])), ["K", "B"]);
    }
}
