//! Auto-detection of a backend when none is configured (SPEC §9.2): preset CLIs on `PATH`
//! and an OpenAI-compatible server named by the environment. Nothing is spawned.

use std::path::{Path, PathBuf};

use super::types::{BackendSpec, ConfigEnv, Preset, PresetSpec};
use crate::agent::openai::OpenAiConfig;

/// What auto-detection found (nothing is spawned: PATH lookups and environment only).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Detection {
    /// Preset CLIs on PATH, in detection order, with where they were found.
    pub found: Vec<(Preset, PathBuf)>,
    /// An OpenAI-compatible server from the environment: (variable, base URL).
    pub openai: Option<(&'static str, String)>,
}

/// The backend auto-detection picked, for the one stderr line the CLI prints.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoPick {
    /// The backend name (`claude`, …, or `openai`).
    pub name: String,
    /// The backend it describes.
    pub spec: BackendSpec,
    /// Why: `found /usr/bin/claude on PATH`, `OLLAMA_HOST is set`.
    pub reason: String,
}

impl AutoPick {
    /// `no backend configured; using auto-detected 'claude' (found … on PATH)`.
    pub fn describe(&self) -> String {
        format!(
            "no backend configured; using auto-detected '{}' ({})",
            self.name, self.reason
        )
    }
}

/// The variables that enable OpenAI-compatible auto-detection, in order.
pub(crate) const OPENAI_ENV_VARS: [&str; 3] =
    ["TFC_OPENAI_BASE_URL", "OPENAI_BASE_URL", "OLLAMA_HOST"];

/// Look for preset CLIs on `PATH` and an OpenAI-compatible server in the environment.
pub fn detect(env: &ConfigEnv) -> Detection {
    let mut found = Vec::new();
    let dirs: Vec<PathBuf> = env
        .path
        .as_ref()
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    for preset in Preset::ALL {
        if let Some(p) = dirs
            .iter()
            .filter(|d| !d.as_os_str().is_empty())
            .map(|d| d.join(preset.as_str()))
            .find(|p| is_executable(p))
        {
            found.push((preset, p));
        }
    }
    let openai = if let Some(u) = &env.tfc_openai_base_url {
        Some(("TFC_OPENAI_BASE_URL", u.clone()))
    } else if let Some(u) = &env.openai_base_url {
        Some(("OPENAI_BASE_URL", u.clone()))
    } else {
        env.ollama_host
            .as_deref()
            .map(|h| ("OLLAMA_HOST", ollama_base_url(h)))
    };
    Detection { found, openai }
}

impl Detection {
    /// The first preset found, else the OpenAI-compatible server.
    pub fn pick(&self) -> Option<AutoPick> {
        if let Some((preset, path)) = self.found.first() {
            return Some(AutoPick {
                name: preset.as_str().to_owned(),
                spec: BackendSpec::Preset(PresetSpec::plain(*preset)),
                reason: format!("found {} on PATH", path.display()),
            });
        }
        self.openai_pick()
    }

    /// The OpenAI-compatible backend the environment describes, named `openai`.
    pub fn openai_pick(&self) -> Option<AutoPick> {
        let (var, url) = self.openai.as_ref()?;
        let mut c = OpenAiConfig::new(url.clone());
        if *var != "OLLAMA_HOST" {
            c.api_key_env = Some("OPENAI_API_KEY".into());
        }
        Some(AutoPick {
            name: "openai".into(),
            spec: BackendSpec::OpenAi(c),
            reason: format!("{var} is set: {url}"),
        })
    }
}

/// `OLLAMA_HOST` (`host`, `host:port`, `http://host:port`; `0.0.0.0` = this machine) → the
/// base URL of Ollama's OpenAI-compatible API.
pub(crate) fn ollama_base_url(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    let (scheme, rest) = match host.split_once("://") {
        Some((s, r)) => (s, r),
        None => ("http", host),
    };
    let rest = rest.replacen("0.0.0.0", "127.0.0.1", 1);
    let has_port = match rest.rfind(']') {
        Some(i) => rest[i..].contains(':'),
        None => rest.contains(':'),
    };
    let rest = if has_port {
        rest
    } else {
        format!("{rest}:11434")
    };
    format!("{scheme}://{rest}/v1")
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_support::test_dir;

    #[test]
    fn detection_without_spawning() {
        let d = test_dir("detect");
        let (a, b) = (d.join("a"), d.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let exe = |p: &Path| {
            std::fs::write(p, "#!/bin/sh\n").unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        };
        exe(&b.join("gemini"));
        exe(&b.join("codex"));
        std::fs::write(a.join("claude"), "not executable").unwrap();
        let mut env = ConfigEnv {
            path: Some(std::env::join_paths([&a, &b]).unwrap()),
            ollama_host: Some("0.0.0.0".into()),
            ..ConfigEnv::default()
        };
        let det = detect(&env);
        #[cfg(unix)]
        assert_eq!(
            det.found.iter().map(|(p, _)| *p).collect::<Vec<_>>(),
            [Preset::Codex, Preset::Gemini]
        );
        let pick = det.pick().unwrap();
        #[cfg(unix)]
        assert_eq!(pick.name, "codex");
        assert!(
            pick.describe()
                .starts_with("no backend configured; using auto-detected")
        );

        env.path = None;
        let pick = detect(&env).pick().unwrap();
        assert_eq!(pick.name, "openai");
        let BackendSpec::OpenAi(o) = &pick.spec else {
            panic!()
        };
        assert_eq!(o.base_url, "http://127.0.0.1:11434/v1");
        assert_eq!(o.api_key_env, None);
        env.openai_base_url = Some("https://api.example.com/v1".into());
        let pick = detect(&env).pick().unwrap();
        assert_eq!(
            pick.reason,
            "OPENAI_BASE_URL is set: https://api.example.com/v1"
        );
        env.openai_base_url = None;
        env.ollama_host = None;
        assert_eq!(detect(&env).pick(), None);
        std::fs::remove_dir_all(d).ok();
    }

    #[test]
    fn ollama_hosts() {
        assert_eq!(ollama_base_url("localhost"), "http://localhost:11434/v1");
        assert_eq!(
            ollama_base_url("ollama.test:8000"),
            "http://ollama.test:8000/v1"
        );
        assert_eq!(
            ollama_base_url("https://o.example/"),
            "https://o.example:11434/v1"
        );
        assert_eq!(ollama_base_url("[::1]"), "http://[::1]:11434/v1");
    }
}
