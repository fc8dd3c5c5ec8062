//! Which backend serves which agent: the interpreter asks a [`Roster`] for each agent name a
//! flow uses. Flows name agents, never backends; configuration (or the library caller) maps
//! them.

use std::sync::Arc;

use crate::agent::call::Agent;

/// An agent name resolved to a backend and its definition (SPEC §9.1).
#[derive(Clone)]
pub struct ResolvedAgent {
    /// The agent's name.
    pub agent: String,
    /// The backend's configured name (`claude`, `local`, `replay`, …), for the run record.
    pub backend_name: String,
    /// The backend that answers its calls.
    pub backend: Arc<dyn Agent>,
    /// The definition's body; empty when there is no definition file.
    pub system_prompt: String,
    /// config `[agents.NAME].model` > frontmatter > backend `model`.
    pub model: Option<String>,
    /// config `[agents.NAME].thinking` > frontmatter.
    pub thinking: Option<String>,
    /// config `[agents.NAME].tools` > frontmatter (empty: the backend's default).
    pub tools: Vec<String>,
    /// Whether a definition file was found (W0701 otherwise).
    pub defined: bool,
}

impl std::fmt::Debug for ResolvedAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedAgent")
            .field("agent", &self.agent)
            .field("backend_name", &self.backend_name)
            .field("model", &self.model)
            .field("defined", &self.defined)
            .finish()
    }
}

/// Maps agent names to backends.
pub trait Roster: Send + Sync {
    /// Resolve an agent; `Err` says what was looked at and how to configure one (E0701).
    fn resolve(&self, agent: &str) -> Result<ResolvedAgent, String>;

    /// Map a phase `model` through `[roles]`: a `{{role}}` model becomes the mapped model;
    /// `Err(warning)` when the role is unmapped (the call then uses the backend default).
    /// Other models pass through. The default maps no roles.
    fn role_model(&self, model: &str) -> Result<String, String> {
        match super::config::role_name(model) {
            Some(role) => Err(super::config::unmapped_role_warning(role)),
            None => Ok(model.to_owned()),
        }
    }
}

/// Every agent served by one backend, with no definitions (the library default, `--agent-cmd`).
pub struct SingleBackend {
    /// The backend's name, for the run record.
    pub name: String,
    /// The backend.
    pub backend: Arc<dyn Agent>,
}

impl SingleBackend {
    /// Serve every agent with `backend`, named `name`.
    pub fn new(name: impl Into<String>, backend: Arc<dyn Agent>) -> SingleBackend {
        SingleBackend {
            name: name.into(),
            backend,
        }
    }
}

impl Roster for SingleBackend {
    fn resolve(&self, agent: &str) -> Result<ResolvedAgent, String> {
        Ok(ResolvedAgent {
            agent: agent.to_owned(),
            backend_name: self.name.clone(),
            backend: self.backend.clone(),
            system_prompt: String::new(),
            model: None,
            thinking: None,
            tools: Vec::new(),
            defined: false,
        })
    }
}
