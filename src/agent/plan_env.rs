//! What `tfc plan` reads of a project (SPEC §18): its saved flows (`use` targets), the
//! pre-read files as they are today, and each agent's `price` from the configuration
//! (SPEC §9.2: a backend's `price`, which the flags of `tfc run` cannot change here).

use std::path::{Path, PathBuf};

use super::config::{BackendSpec, Config, ConfigEnv};
use crate::check::FlowLoader;
use crate::plan::{Env, Price};
use crate::project::SavedFlows;

/// A project as the plan sees it.
pub struct PlanEnv {
    cwd: PathBuf,
    saved: SavedFlows,
    /// The merged configuration, or why it could not be read.
    config: Result<Config, String>,
    env: ConfigEnv,
}

impl PlanEnv {
    /// The project of `cwd`: its saved flows, its configuration (project, user, `TFC_CONFIG`).
    pub fn load(cwd: &Path) -> PlanEnv {
        let env = ConfigEnv::from_process();
        let root = crate::project::project_root(cwd);
        PlanEnv {
            cwd: cwd.to_path_buf(),
            saved: SavedFlows::new(cwd),
            config: Config::load(&root, &env),
            env,
        }
    }
}

/// The largest file the run pre-reads (SPEC §3.16).
const MAX_CONTEXT_FILE: u64 = 10 * 1024 * 1024;

impl Env for PlanEnv {
    fn saved_flow(&self, name: &str) -> Option<String> {
        self.saved.load(name).ok().map(|(_, text)| text)
    }

    fn context_file(&self, path: &str) -> Option<String> {
        let full = self.cwd.join(path);
        let meta = std::fs::metadata(&full).ok()?;
        if !meta.is_file() || meta.len() > MAX_CONTEXT_FILE {
            return None;
        }
        let bytes = std::fs::read(&full).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn price(&self, agent: &str) -> Result<Price, String> {
        let config = self
            .config
            .as_ref()
            .map_err(|e| format!("the configuration cannot be read ({e})"))?;
        let backend = self
            .env
            .backend
            .clone()
            .or_else(|| {
                [agent, "*"]
                    .iter()
                    .find_map(|k| config.agents.get(*k).and_then(|s| s.backend.clone()))
            })
            .or_else(|| config.default_backend.clone())
            .ok_or_else(|| {
                format!("agent '{agent}' has no configured backend, so no price (an auto-detected CLI reports none)")
            })?;
        match config.backends.get(&backend) {
            Some(BackendSpec::OpenAi(o)) => o.price.map(|p| Price {
                input_per_mtok: p.input_per_mtok,
                output_per_mtok: p.output_per_mtok,
            }),
            _ => None,
        }
        .ok_or_else(|| {
            format!("agent '{agent}' runs on backend '{backend}', which has no price: add price = {{ input_per_mtok = …, output_per_mtok = … }} to [backends.{backend}]")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(toml: &str, backend: Option<&str>) -> PlanEnv {
        PlanEnv {
            cwd: PathBuf::from("."),
            saved: SavedFlows::new(Path::new(".")),
            config: Config::parse(toml, Path::new("cfg.toml")),
            env: ConfigEnv {
                backend: backend.map(str::to_owned),
                ..ConfigEnv::default()
            },
        }
    }

    const PRICED: &str = r#"default_backend = "cli"
[backends.cli]
preset = "claude"
[backends.local]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
price = { input_per_mtok = 0.15, output_per_mtok = 0.6 }
[agents]
scout = { backend = "local" }
"#;

    #[test]
    fn an_agent_is_priced_by_its_backend() {
        let e = env(PRICED, None);
        assert_eq!(
            e.price("scout"),
            Ok(Price {
                input_per_mtok: 0.15,
                output_per_mtok: 0.6
            })
        );
        assert_eq!(
            e.price("writer").unwrap_err(),
            "agent 'writer' runs on backend 'cli', which has no price: add price = { input_per_mtok = …, output_per_mtok = … } to [backends.cli]"
        );
        // TFC_BACKEND serves every agent.
        assert!(env(PRICED, Some("local")).price("writer").is_ok());
        assert_eq!(
            env("", None).price("a").unwrap_err(),
            "agent 'a' has no configured backend, so no price (an auto-detected CLI reports none)"
        );
    }
}
