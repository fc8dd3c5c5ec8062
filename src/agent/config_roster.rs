//! [`ConfigRoster`]: the [`Roster`] `tfc run` uses — agent names mapped to backends by flags,
//! `TFC_BACKEND`, configuration and auto-detection (SPEC §9.1–9.2).
//!
//! Backend choice for agent `A`, first match:
//! 1. `--dry-run` ([`RosterOptions::dry_run`]): every agent;
//! 2. `--agent-backend A=NAME`; 3. `--backend NAME`; 4. `--agent-cmd CMD`;
//! 5. `TFC_BACKEND`;
//! 6. `[agents.A].backend`, then `[agents."*"].backend`, then `default_backend` (project
//!    entries over user entries, see [`Config`]);
//! 7. auto-detection ([`detect`]).
//!
//! A backend name is looked up as: `dry-run`; `replay:<file>`; a `[backends.NAME]` table; a
//! preset name (`claude`, …) with default options; `openai` when the environment names an
//! OpenAI-compatible server. Preset and command backends are built by a [`BackendFactory`]
//! (the process supervisor's); the default [`NoProcessBackends`] refuses them, so this module
//! works and is tested on its own.
//!
//! Model: `[agents.A].model` > frontmatter `model` > `[agents."*"].model` > the backend's
//! `model` > none (the backend default); the phase `model` is applied above this by the
//! interpreter (via [`Roster::role_model`]). A `{{role}}` model is mapped through `[roles]`;
//! unmapped ⇒ none + a warning. Thinking and tools: `[agents.A]` > frontmatter >
//! `[agents."*"]`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::config::{
    AutoPick, BackendSpec, CommandSpec, Config, ConfigEnv, DRY_RUN, Detection, FileState,
    OPENAI_ENV_VARS, Preset, PresetSpec, REPLAY_PREFIX, detect, role_name, unmapped_role_warning,
};
use super::definitions::AgentDefinitions;
use super::dry_run::DryRun;
use super::openai::OpenAiBackend;
use super::record::{RecordSink, Recorder};
use super::replay::Replay;
use crate::agent::call::Agent;
use crate::agent::roster::{ResolvedAgent, Roster};
use crate::diag::did_you_mean;
use crate::flow::AgentScope;

/// Builds the process-based backends (presets and generic commands).
pub trait BackendFactory: Send + Sync {
    /// A preset backend named `name` (the `[backends]` key or the preset name).
    fn preset(&self, name: &str, spec: &PresetSpec) -> Result<Arc<dyn Agent>, String>;
    /// A generic command backend (`kind = "command"`, `--agent-cmd`).
    fn command(&self, name: &str, spec: &CommandSpec) -> Result<Arc<dyn Agent>, String>;
}

/// A factory without process backends: every preset or command backend is an error saying
/// so. OpenAI-compatible, replay and dry-run backends still work.
pub struct NoProcessBackends;

impl BackendFactory for NoProcessBackends {
    fn preset(&self, name: &str, spec: &PresetSpec) -> Result<Arc<dyn Agent>, String> {
        Err(format!(
            "backend '{name}' (preset {}) is not available in this build",
            spec.preset.as_str()
        ))
    }

    fn command(&self, name: &str, _spec: &CommandSpec) -> Result<Arc<dyn Agent>, String> {
        Err(format!(
            "backend '{name}' (kind = \"command\") is not available in this build"
        ))
    }
}

/// The command-line choices that shape a roster.
#[derive(Default)]
pub struct RosterOptions {
    /// `--backend NAME` (`--replay FILE` is `replay:FILE`).
    pub backend: Option<String>,
    /// `--agent-backend AGENT=NAME`, in order (a later one for the same agent wins).
    pub agent_backends: Vec<(String, String)>,
    /// `--agent-cmd CMD`, already split into words.
    pub agent_cmd: Option<Vec<String>>,
    /// `--record FILE`: every backend is wrapped in a [`Recorder`] appending there.
    pub record: Option<PathBuf>,
    /// `--dry-run`: every agent is served by this backend (whose writer receives the listing).
    /// A `dry-run` backend chosen by name without this writes to stdout.
    pub dry_run: Option<Arc<DryRun>>,
    /// `--allow-writes`.
    pub allow_writes: bool,
}

/// Where an agent's backend choice came from, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Source {
    DryRun,
    AgentFlag,
    BackendFlag,
    AgentCmd,
    Env,
    ConfigAgent(String),
    ConfigDefault,
    Auto,
}

impl Source {
    fn describe(&self, agent: &str) -> String {
        match self {
            Source::DryRun => "--dry-run".into(),
            Source::AgentFlag => format!("--agent-backend {agent}=…"),
            Source::BackendFlag => "--backend".into(),
            Source::AgentCmd => "--agent-cmd".into(),
            Source::Env => "TFC_BACKEND".into(),
            Source::ConfigAgent(k) if k == "*" => "[agents.\"*\"] in the configuration".into(),
            Source::ConfigAgent(k) => format!("[agents.{k}] in the configuration"),
            Source::ConfigDefault => "default_backend in the configuration".into(),
            Source::Auto => "auto-detection".into(),
        }
    }
}

/// A built backend, shared by every agent that names it.
#[derive(Clone)]
struct Built {
    /// The name run records show (`local`, `claude`, `replay`, `dry-run`, `command`).
    label: String,
    agent: Arc<dyn Agent>,
    /// The backend's configured `model`.
    model: Option<String>,
}

/// The roster of `tfc run`: configuration, definitions and flags.
pub struct ConfigRoster {
    config: Config,
    defs: AgentDefinitions,
    options: RosterOptions,
    env: ConfigEnv,
    detection: Detection,
    factory: Arc<dyn BackendFactory>,
    record: Option<Arc<RecordSink>>,
    built: Mutex<HashMap<String, Built>>,
    auto_used: AtomicBool,
    warnings: Mutex<Vec<String>>,
}

/// What fixes a missing backend (the E0701 help).
pub(crate) const NO_BACKEND_FIXES: &str = "run `tfc init` to write a .tfc/config.toml for the backends found on this machine, use `--dry-run` to print the prompts without calling a model, or `--backend replay:FILE` to answer from recorded calls";

impl ConfigRoster {
    /// Assemble a roster. Opens the `--record` file; everything else is resolved lazily
    /// (backends are built once, on first use).
    pub fn new(
        config: Config,
        defs: AgentDefinitions,
        options: RosterOptions,
        env: ConfigEnv,
        factory: Arc<dyn BackendFactory>,
    ) -> Result<ConfigRoster, String> {
        let record = options
            .record
            .as_deref()
            .map(RecordSink::open)
            .transpose()?
            .map(Arc::new);
        Ok(ConfigRoster {
            detection: detect(&env),
            config,
            defs,
            options,
            env,
            factory,
            record,
            built: Mutex::new(HashMap::new()),
            auto_used: AtomicBool::new(false),
            warnings: Mutex::new(Vec::new()),
        })
    }

    /// Everything from the process environment: the project root of `cwd`, the merged
    /// configuration and the definitions `scope` allows. Returns the warnings for skipped
    /// definition files.
    pub fn load(
        cwd: &Path,
        scope: AgentScope,
        options: RosterOptions,
        factory: Arc<dyn BackendFactory>,
    ) -> Result<(ConfigRoster, Vec<String>), String> {
        let env = ConfigEnv::from_process();
        let root = crate::project::project_root(cwd);
        let config = Config::load(&root, &env)?;
        let (defs, warnings) = AgentDefinitions::load(&root, env.user_dir.as_deref(), scope);
        Ok((
            ConfigRoster::new(config, defs, options, env, factory)?,
            warnings,
        ))
    }

    /// The merged configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The agent definitions found.
    pub fn definitions(&self) -> &AgentDefinitions {
        &self.defs
    }

    /// What auto-detection found.
    pub fn detection(&self) -> &Detection {
        &self.detection
    }

    /// The auto-detected backend, iff some agent resolved to it (print [`AutoPick::describe`]
    /// once on stderr).
    pub fn auto_detected(&self) -> Option<AutoPick> {
        if self.auto_used.load(Ordering::Relaxed) {
            self.detection.pick()
        } else {
            None
        }
    }

    /// `--allow-writes` or `[safety] allow_unsandboxed_writes = true`.
    pub fn allow_writes(&self) -> bool {
        self.options.allow_writes || self.config.allow_unsandboxed_writes == Some(true)
    }

    /// `[defaults] idle_timeout_ms` (the interpreter's default is 300000).
    pub fn idle_timeout_ms(&self) -> Option<u64> {
        self.config.idle_timeout_ms
    }

    /// `[limits] max_output_bytes`, else 16 MiB.
    pub fn max_output_bytes(&self) -> usize {
        self.config
            .max_output_bytes
            .map_or(crate::process::DEFAULT_MAX_OUTPUT, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            })
    }

    /// `[limits] max_prompt_bytes`, else 16 MiB.
    pub fn max_prompt_bytes(&self) -> usize {
        self.config
            .max_prompt_bytes
            .map_or(crate::agent::call::DEFAULT_MAX_PROMPT, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            })
    }

    /// Warnings collected while resolving (unmapped roles), each once; drains them.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn warn(&self, w: String) {
        let mut ws = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        if !ws.contains(&w) {
            ws.push(w);
        }
    }

    /// [`Roster::resolve`], only when a configured choice serves `agent` (`TFC_BACKEND`, the
    /// project's or user's configuration, or the options): `None` when only auto-detection
    /// would, or when nothing resolves. What `tfc check` can know of a run's backends without
    /// looking at the machine's `PATH`.
    pub fn resolve_configured(&self, agent: &str) -> Option<ResolvedAgent> {
        match self.choose(agent) {
            Some((_, Source::Auto)) | None => None,
            Some(_) => self.resolve(agent).ok(),
        }
    }

    /// The backend name serving `agent` and where that choice came from.
    fn choose(&self, agent: &str) -> Option<(String, Source)> {
        if self.options.dry_run.is_some() {
            return Some((DRY_RUN.into(), Source::DryRun));
        }
        if let Some((_, n)) = self
            .options
            .agent_backends
            .iter()
            .rev()
            .find(|(a, _)| a == agent)
        {
            return Some((n.clone(), Source::AgentFlag));
        }
        if let Some(n) = &self.options.backend {
            return Some((n.clone(), Source::BackendFlag));
        }
        if self.options.agent_cmd.is_some() {
            return Some(("command".into(), Source::AgentCmd));
        }
        if let Some(n) = &self.env.backend {
            return Some((n.clone(), Source::Env));
        }
        for key in [agent, "*"] {
            if let Some(n) = self.config.agents.get(key).and_then(|s| s.backend.clone()) {
                return Some((n, Source::ConfigAgent(key.to_owned())));
            }
        }
        if let Some(n) = &self.config.default_backend {
            return Some((n.clone(), Source::ConfigDefault));
        }
        self.detection.pick().map(|p| (p.name, Source::Auto))
    }

    /// Build (once) the backend `name` chosen by `source`.
    fn backend(&self, name: &str, source: &Source, agent: &str) -> Result<Built, String> {
        let key = if *source == Source::AgentCmd {
            "\0agent-cmd".to_owned()
        } else {
            name.to_owned()
        };
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = built.get(&key) {
            return Ok(b.clone());
        }
        let (label, agent_impl, model): (String, Arc<dyn Agent>, Option<String>) =
            if *source == Source::AgentCmd {
                let spec = CommandSpec {
                    command: self.options.agent_cmd.clone().unwrap_or_default(),
                    model: None,
                };
                (
                    "command".into(),
                    self.factory.command("command", &spec)?,
                    None,
                )
            } else if name == DRY_RUN {
                let d = self
                    .options
                    .dry_run
                    .clone()
                    .unwrap_or_else(|| Arc::new(DryRun::stdout()));
                (DRY_RUN.into(), d, None)
            } else if let Some(file) = name.strip_prefix(REPLAY_PREFIX) {
                if file.is_empty() {
                    return Err("`replay:` needs a fixture file: replay:FILE".into());
                }
                (
                    "replay".into(),
                    Arc::new(Replay::load(Path::new(file))?),
                    None,
                )
            } else if let Some(spec) = self.config.backends.get(name) {
                (
                    name.to_owned(),
                    self.build_spec(name, spec)?,
                    spec.model().map(str::to_owned),
                )
            } else if let Some(p) = Preset::parse(name) {
                (
                    name.to_owned(),
                    self.build_spec(name, &BackendSpec::Preset(PresetSpec::plain(p)))?,
                    None,
                )
            } else if let Some(pick) = self.detection.openai_pick().filter(|p| p.name == name) {
                (name.to_owned(), self.build_spec(name, &pick.spec)?, None)
            } else {
                return Err(self.unknown_backend(name, source, agent));
            };
        let agent_impl: Arc<dyn Agent> = match &self.record {
            Some(sink) if label != DRY_RUN => {
                Arc::new(Recorder::new(agent_impl, label.clone(), sink.clone()))
            }
            _ => agent_impl,
        };
        let b = Built {
            label,
            agent: agent_impl,
            model,
        };
        built.insert(key, b.clone());
        Ok(b)
    }

    fn build_spec(&self, name: &str, spec: &BackendSpec) -> Result<Arc<dyn Agent>, String> {
        match spec {
            BackendSpec::Preset(p) => self.factory.preset(name, p),
            BackendSpec::Command(c) => self.factory.command(name, c),
            BackendSpec::OpenAi(o) => Ok(Arc::new(
                OpenAiBackend::new(o.clone()).map_err(|e| format!("backend '{name}': {e}"))?,
            )),
        }
    }

    fn unknown_backend(&self, name: &str, source: &Source, agent: &str) -> String {
        let mut known: Vec<&str> = self.config.backends.keys().map(String::as_str).collect();
        known.extend(Preset::ALL.iter().map(|p| p.as_str()));
        let hint = did_you_mean(name, known.iter().copied())
            .map(|s| format!(" (did you mean '{s}'?)"))
            .unwrap_or_default();
        let defined = if self.config.backends.is_empty() {
            "no [backends] are configured".to_owned()
        } else {
            format!(
                "configured: {}",
                self.config
                    .backends
                    .keys()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        format!(
            "unknown backend '{name}' (from {}){hint}; {defined}; presets: claude, codex, opencode, gemini, pi; reserved: dry-run, replay:FILE",
            source.describe(agent)
        )
    }

    /// The E0701 text: what was checked, then the fixes after `. Fix: `.
    fn no_backend(&self, agent: &str) -> String {
        let mut checked = vec![
            "--backend, --agent-backend and --agent-cmd (none given)".to_owned(),
            "TFC_BACKEND (unset)".to_owned(),
        ];
        for (f, state) in &self.config.checked {
            checked.push(match state {
                FileState::NotFound => format!("{} (not found)", f.display()),
                FileState::Loaded => format!(
                    "{} (no [agents.{agent}], [agents.\"*\"] or default_backend)",
                    f.display()
                ),
            });
        }
        if self.config.checked.is_empty() {
            checked.push("no configuration file (no project root and no user config dir)".into());
        }
        checked.push(format!(
            "auto-detection (none of {} is on PATH, and none of {} is set)",
            Preset::ALL.map(Preset::as_str).join(", "),
            OPENAI_ENV_VARS.join(", ")
        ));
        format!(
            "no backend for agent '{agent}'. Checked: {}. Fix: {NO_BACKEND_FIXES}",
            checked.join("; ")
        )
    }

    /// The model through `[roles]`: `None` for an unmapped role (with a warning).
    fn map_role(&self, model: Option<String>) -> Option<String> {
        let m = model?;
        match self.role_model(&m) {
            Ok(m) => Some(m),
            Err(w) => {
                self.warn(w);
                None
            }
        }
    }
}

impl Roster for ConfigRoster {
    fn resolve(&self, agent: &str) -> Result<ResolvedAgent, String> {
        let (name, source) = self.choose(agent).ok_or_else(|| self.no_backend(agent))?;
        let built = self
            .backend(&name, &source, agent)
            .map_err(|e| format!("agent '{agent}': {e}"))?;
        if source == Source::Auto {
            self.auto_used.store(true, Ordering::Relaxed);
        }
        let own = self.config.agents.get(agent);
        let star = self.config.agents.get("*");
        let def = self.defs.get(agent);
        let model = own
            .and_then(|s| s.model.clone())
            .or_else(|| def.and_then(|d| d.model.clone()))
            .or_else(|| star.and_then(|s| s.model.clone()))
            .or(built.model);
        let thinking = own
            .and_then(|s| s.thinking.clone())
            .or_else(|| def.and_then(|d| d.thinking.clone()))
            .or_else(|| star.and_then(|s| s.thinking.clone()));
        let tools = own
            .and_then(|s| s.tools.clone())
            .or_else(|| def.map(|d| d.tools.clone()).filter(|t| !t.is_empty()))
            .or_else(|| star.and_then(|s| s.tools.clone()))
            .unwrap_or_default();
        Ok(ResolvedAgent {
            agent: agent.to_owned(),
            backend_name: built.label,
            backend: built.agent,
            system_prompt: def.map(|d| d.system_prompt.clone()).unwrap_or_default(),
            model: self.map_role(model),
            thinking,
            tools,
            defined: def.is_some(),
        })
    }

    fn role_model(&self, model: &str) -> Result<String, String> {
        match role_name(model) {
            None => Ok(model.to_owned()),
            Some(role) => self
                .config
                .roles
                .get(role)
                .cloned()
                .ok_or_else(|| unmapped_role_warning(role)),
        }
    }
}

/// The factory of `tfc run`: CLI presets and generic commands as supervised processes.
pub struct ProcessBackends;

impl BackendFactory for ProcessBackends {
    fn preset(&self, name: &str, spec: &PresetSpec) -> Result<Arc<dyn Agent>, String> {
        let config = super::presets::PresetConfig {
            bin: spec.bin.clone(),
            extra_args: spec.extra_args.clone(),
            env_allow: spec.env_allow.clone(),
            ..super::presets::PresetConfig::default()
        };
        super::presets::by_name(spec.preset.as_str(), config).ok_or_else(|| {
            format!(
                "backend '{name}': unknown preset '{}'",
                spec.preset.as_str()
            )
        })
    }

    fn command(&self, _name: &str, spec: &CommandSpec) -> Result<Arc<dyn Agent>, String> {
        Ok(Arc::new(super::command::CommandBackend::new(
            spec.command.clone(),
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::call::{BoxFuture, Outcome, Request};
    use crate::agent::config::{AgentSettings, Preset};
    use crate::agent::definitions::AgentDefinition;
    use crate::agent::openai::OpenAiConfig;
    use crate::agent::record::tests::request;
    use crate::agent::test_support::test_dir;
    use crate::process::Cancel;

    /// A stand-in for the supervisor's backends: answers with its own name.
    struct Named(String);
    impl Agent for Named {
        fn name(&self) -> &str {
            &self.0
        }
        fn call<'a>(&'a self, _r: Request, _c: Cancel) -> BoxFuture<'a, Outcome> {
            Box::pin(async move { Outcome::ok(self.0.clone()) })
        }
    }

    struct FakeFactory;
    impl BackendFactory for FakeFactory {
        fn preset(&self, name: &str, spec: &PresetSpec) -> Result<Arc<dyn Agent>, String> {
            Ok(Arc::new(Named(format!("{name}:{}", spec.preset.as_str()))))
        }
        fn command(&self, name: &str, spec: &CommandSpec) -> Result<Arc<dyn Agent>, String> {
            Ok(Arc::new(Named(format!(
                "{name}:{}",
                spec.command.join(" ")
            ))))
        }
    }

    fn config(text: &str) -> Config {
        Config::parse(text, Path::new("cfg.toml")).unwrap()
    }

    fn roster(cfg: Config, options: RosterOptions, env: ConfigEnv) -> ConfigRoster {
        ConfigRoster::new(
            cfg,
            AgentDefinitions::default(),
            options,
            env,
            Arc::new(FakeFactory),
        )
        .unwrap()
    }

    fn answer(r: &ConfigRoster, agent: &str) -> String {
        let a = r.resolve(agent).unwrap();
        smol::block_on(a.backend.call(request("n", agent, "p"), Cancel::never())).output
    }

    const CFG: &str = r#"
default_backend = "cl"
[backends.cl]
preset = "claude"
model = "cl-model"
[backends.cx]
preset = "codex"
[backends.mine]
kind = "command"
command = ["my-agent", "-q"]
[agents]
scout = { backend = "cx" }
"*" = { backend = "mine" }
"#;

    #[test]
    fn precedence_flags_env_config_auto() {
        let env = ConfigEnv {
            backend: Some("cl".into()),
            ..ConfigEnv::default()
        };
        // Config: [agents.scout] > [agents."*"] > default_backend.
        let r = roster(config(CFG), RosterOptions::default(), ConfigEnv::default());
        assert_eq!(answer(&r, "scout"), "cx:codex");
        assert_eq!(answer(&r, "writer"), "mine:my-agent -q");
        let r = roster(
            config("default_backend = \"cl\"\n[backends.cl]\npreset = \"claude\""),
            RosterOptions::default(),
            ConfigEnv::default(),
        );
        assert_eq!(answer(&r, "writer"), "cl:claude");
        assert_eq!(r.resolve("writer").unwrap().backend_name, "cl");

        // TFC_BACKEND beats configuration.
        let r = roster(config(CFG), RosterOptions::default(), env.clone());
        assert_eq!(answer(&r, "scout"), "cl:claude");

        // --backend beats TFC_BACKEND; --agent-backend beats --backend.
        let opts = RosterOptions {
            backend: Some("cx".into()),
            agent_backends: vec![("scout".into(), "gemini".into())],
            ..RosterOptions::default()
        };
        let r = roster(config(CFG), opts, env.clone());
        assert_eq!(answer(&r, "scout"), "gemini:gemini");
        assert_eq!(answer(&r, "writer"), "cx:codex");

        // --agent-cmd serves everyone as `command`.
        let opts = RosterOptions {
            agent_cmd: Some(vec!["sh".into(), "-c".into(), "cat".into()]),
            ..RosterOptions::default()
        };
        let r = roster(config(CFG), opts, env);
        assert_eq!(answer(&r, "scout"), "command:sh -c cat");
        assert_eq!(r.resolve("scout").unwrap().backend_name, "command");

        // Nothing configured: auto-detection, reported once used.
        let auto_env = ConfigEnv {
            ollama_host: Some("127.0.0.1:9".into()),
            ..ConfigEnv::default()
        };
        let r = roster(Config::default(), RosterOptions::default(), auto_env);
        assert!(r.auto_detected().is_none());
        let a = r.resolve("scout").unwrap();
        assert_eq!(a.backend_name, "openai");
        assert!(!a.backend.supports_tools());
        assert!(r.auto_detected().unwrap().reason.contains("OLLAMA_HOST"));
    }

    #[test]
    fn reserved_names_and_unknown_backends() {
        let d = test_dir("roster-reserved");
        let fx = d.join("fx.jsonl");
        let mut rec = crate::agent::record::tests::sample();
        rec.node = "n".into();
        rec.agent = "scout".into();
        rec.prompt_sha256 = crate::agent::record::prompt_sha256("p");
        rec.prompt = Some("p".into());
        rec.output = "from fixture".into();
        std::fs::write(&fx, rec.to_json_line()).unwrap();
        let opts = RosterOptions {
            backend: Some(format!("replay:{}", fx.display())),
            ..RosterOptions::default()
        };
        let r = roster(config(CFG), opts, ConfigEnv::default());
        assert_eq!(answer(&r, "scout"), "from fixture");
        assert_eq!(r.resolve("scout").unwrap().backend_name, "replay");
        assert!(r.resolve("scout").unwrap().backend.sandboxed());

        let opts = RosterOptions {
            backend: Some("replay:".into()),
            ..RosterOptions::default()
        };
        let r = roster(config(CFG), opts, ConfigEnv::default());
        assert!(r.resolve("x").unwrap_err().contains("replay:FILE"));

        let opts = RosterOptions {
            agent_backends: vec![("scout".into(), "cxx".into())],
            ..RosterOptions::default()
        };
        let r = roster(config(CFG), opts, ConfigEnv::default());
        let e = r.resolve("scout").unwrap_err();
        assert!(
            e.starts_with("agent 'scout': unknown backend 'cxx' (from --agent-backend scout=…) (did you mean 'cx'?)"),
            "{e}"
        );
        assert!(e.contains("configured: cl, cx, mine"), "{e}");

        // The default factory refuses process backends but serves HTTP ones.
        let r = ConfigRoster::new(
            config("[backends.h]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n[agents]\n\"*\" = { backend = \"cl\" }\nweb = { backend = \"h\" }\n[backends.cl]\npreset = \"claude\""),
            AgentDefinitions::default(),
            RosterOptions::default(),
            ConfigEnv::default(),
            Arc::new(NoProcessBackends),
        )
        .unwrap();
        assert_eq!(
            r.resolve("x").unwrap_err(),
            "agent 'x': backend 'cl' (preset claude) is not available in this build"
        );
        assert_eq!(r.resolve("web").unwrap().backend.name(), "openai");
        std::fs::remove_dir_all(d).ok();
    }

    #[test]
    fn no_backend_says_what_was_checked() {
        let cfg = Config {
            checked: vec![
                (PathBuf::from("proj/.tfc/config.toml"), FileState::NotFound),
                (PathBuf::from("user/tfc/config.toml"), FileState::Loaded),
            ],
            ..Config::default()
        };
        let r = roster(cfg, RosterOptions::default(), ConfigEnv::default());
        let e = r.resolve("scout").unwrap_err();
        assert!(
            e.starts_with("no backend for agent 'scout'. Checked: "),
            "{e}"
        );
        for part in [
            "TFC_BACKEND (unset)",
            "proj/.tfc/config.toml (not found)",
            "user/tfc/config.toml (no [agents.scout]",
            "none of claude, codex, opencode, gemini, pi is on PATH",
            "TFC_OPENAI_BASE_URL, OPENAI_BASE_URL, OLLAMA_HOST",
            "`tfc init`",
            "`--dry-run`",
            "`--backend replay:FILE`",
        ] {
            assert!(e.contains(part), "{part} missing in {e}");
        }
    }

    #[test]
    fn models_roles_thinking_tools() {
        let cfg = config(
            r#"
[backends.cl]
preset = "claude"
model = "backend-model"
[agents]
"*" = { backend = "cl", model = "star-model", thinking = "high", tools = ["read"] }
scout = { model = "{{fast}}", thinking = "low" }
ghost = { model = "{{slow}}" }
[roles]
fast = "claude-haiku-4-5"
"#,
        );
        let mut defs = AgentDefinitions::default();
        let def = |name: &str, model: Option<&str>, tools: &[&str]| AgentDefinition {
            name: name.into(),
            description: "d".into(),
            tools: tools.iter().map(|t| t.to_string()).collect(),
            model: model.map(Into::into),
            thinking: Some("medium".into()),
            system_prompt: format!("I am {name}."),
            file: PathBuf::from(format!("{name}.md")),
        };
        defs.insert(def("scout", Some("def-model"), &["grep"]));
        defs.insert(def("writer", Some("def-model"), &[]));
        let r = ConfigRoster::new(
            cfg,
            defs,
            RosterOptions::default(),
            ConfigEnv::default(),
            Arc::new(FakeFactory),
        )
        .unwrap();

        let s = r.resolve("scout").unwrap();
        assert_eq!(s.model.as_deref(), Some("claude-haiku-4-5"));
        assert_eq!(s.thinking.as_deref(), Some("low"));
        assert_eq!(s.tools, ["grep"]);
        assert_eq!(s.system_prompt, "I am scout.");
        assert!(s.defined);

        let w = r.resolve("writer").unwrap();
        assert_eq!(w.model.as_deref(), Some("def-model"));
        assert_eq!(w.thinking.as_deref(), Some("medium"));
        assert_eq!(w.tools, ["read"]);

        let o = r.resolve("other").unwrap();
        assert_eq!(o.model.as_deref(), Some("star-model"));
        assert_eq!(o.thinking.as_deref(), Some("high"));
        assert!(!o.defined && o.system_prompt.is_empty());

        let g = r.resolve("ghost").unwrap();
        assert_eq!(g.model, None);
        assert_eq!(
            r.take_warnings(),
            ["model role '{{slow}}' is not mapped in [roles]; using the backend's default model"]
        );
        assert!(r.take_warnings().is_empty());

        assert_eq!(r.role_model("{{fast}}").unwrap(), "claude-haiku-4-5");
        assert_eq!(r.role_model("gpt-4o").unwrap(), "gpt-4o");
        assert!(r.role_model("{{nope}}").is_err());

        // Without an agent-level model, the backend's model applies.
        let mut cfg2 = Config::default();
        cfg2.backends.insert(
            "h".into(),
            BackendSpec::OpenAi(OpenAiConfig {
                model: Some("qwen".into()),
                ..OpenAiConfig::new("http://127.0.0.1:9/v1")
            }),
        );
        cfg2.agents.insert(
            "*".into(),
            AgentSettings {
                backend: Some("h".into()),
                ..AgentSettings::default()
            },
        );
        let r = roster(cfg2, RosterOptions::default(), ConfigEnv::default());
        assert_eq!(r.resolve("a").unwrap().model.as_deref(), Some("qwen"));
        let _ = Preset::Pi;
    }

    #[test]
    fn dry_run_and_record_wrap() {
        let d = test_dir("roster-record");
        let path = d.join("rec.jsonl");
        let opts = RosterOptions {
            record: Some(path.clone()),
            ..RosterOptions::default()
        };
        let r = roster(config(CFG), opts, ConfigEnv::default());
        assert_eq!(answer(&r, "scout"), "cx:codex");
        assert_eq!(answer(&r, "scout"), "cx:codex");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.contains(r#""backend":"cx""#));

        let opts = RosterOptions {
            dry_run: Some(Arc::new(DryRun::new(Box::new(std::io::sink())))),
            backend: Some("cl".into()),
            record: Some(path.clone()),
            ..RosterOptions::default()
        };
        let r = roster(config(CFG), opts, ConfigEnv::default());
        assert_eq!(answer(&r, "scout"), "[dry-run] n");
        assert_eq!(r.resolve("scout").unwrap().backend_name, "dry-run");
        // Dry runs are not recorded.
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
        std::fs::remove_dir_all(d).ok();
    }
}
