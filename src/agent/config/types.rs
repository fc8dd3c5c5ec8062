//! The configuration's types: presets, backend specs, agent settings, the merged [`Config`],
//! and the reserved backend names.

use std::ffi::OsString;
use std::path::PathBuf;

use indexmap::IndexMap;

use crate::agent::openai::OpenAiConfig;

/// The CLI agents tfc has presets for, in auto-detection order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preset {
    /// Anthropic's `claude` CLI.
    Claude,
    /// OpenAI's `codex` CLI.
    Codex,
    /// The `opencode` CLI.
    Opencode,
    /// Google's `gemini` CLI.
    Gemini,
    /// The `pi` coding agent CLI.
    Pi,
}

impl Preset {
    /// Auto-detection order.
    pub const ALL: [Preset; 5] = [
        Preset::Claude,
        Preset::Codex,
        Preset::Opencode,
        Preset::Gemini,
        Preset::Pi,
    ];

    /// The preset name, which is also its default binary.
    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Claude => "claude",
            Preset::Codex => "codex",
            Preset::Opencode => "opencode",
            Preset::Gemini => "gemini",
            Preset::Pi => "pi",
        }
    }

    /// The preset named `s`, if there is one.
    pub fn parse(s: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// `[backends.NAME]` with `preset = "…"`.
#[derive(Clone, Debug, PartialEq)]
pub struct PresetSpec {
    /// Which CLI.
    pub preset: Preset,
    /// The binary to run instead of the preset's name.
    pub bin: Option<String>,
    /// Arguments added to the preset's own.
    pub extra_args: Vec<String>,
    /// Extra environment variable names passed through the preset's allowlist.
    pub env_allow: Vec<String>,
    /// The model when neither the agent nor its definition names one.
    pub model: Option<String>,
}

impl PresetSpec {
    /// The preset with no options (`--backend claude` without a config entry).
    pub fn plain(preset: Preset) -> PresetSpec {
        PresetSpec {
            preset,
            bin: None,
            extra_args: Vec::new(),
            env_allow: Vec::new(),
            model: None,
        }
    }
}

/// `[backends.NAME]` with `kind = "command"` (and `--agent-cmd`).
#[derive(Clone, Debug, PartialEq)]
pub struct CommandSpec {
    /// argv; never empty.
    pub command: Vec<String>,
    /// The model when neither the agent nor its definition names one.
    pub model: Option<String>,
}

/// One `[backends.NAME]` table.
#[derive(Clone, Debug, PartialEq)]
pub enum BackendSpec {
    /// `preset = "…"`: a CLI agent.
    Preset(PresetSpec),
    /// `kind = "openai"`: an OpenAI-compatible HTTP server.
    OpenAi(OpenAiConfig),
    /// `kind = "command"`: any program, prompt on stdin.
    Command(CommandSpec),
}

impl BackendSpec {
    /// The backend's configured `model`.
    pub fn model(&self) -> Option<&str> {
        match self {
            BackendSpec::Preset(p) => p.model.as_deref(),
            BackendSpec::OpenAi(o) => o.model.as_deref(),
            BackendSpec::Command(c) => c.model.as_deref(),
        }
    }

    /// A short description for messages: `preset claude`, `openai http://…`, `command my-agent`.
    pub fn describe(&self) -> String {
        match self {
            BackendSpec::Preset(p) => format!("preset {}", p.preset.as_str()),
            BackendSpec::OpenAi(o) => format!("openai {}", o.base_url),
            BackendSpec::Command(c) => format!("command {}", c.command.join(" ")),
        }
    }
}

/// One `[agents]` entry (`"*"` is the default for every agent).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentSettings {
    /// The backend that serves the agent.
    pub backend: Option<String>,
    /// The model, or a `{{role}}` mapped through `[roles]`.
    pub model: Option<String>,
    /// The thinking level passed to backends that have one.
    pub thinking: Option<String>,
    /// `None`: not set here (the definition's list applies).
    pub tools: Option<Vec<String>>,
}

/// Whether a configuration file was there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileState {
    /// Read and merged.
    Loaded,
    /// Not there (which is fine).
    NotFound,
}

/// The merged configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Config {
    /// `default_backend`: the backend of agents nothing else assigns.
    pub default_backend: Option<String>,
    /// `[backends.NAME]`, in file order.
    pub backends: IndexMap<String, BackendSpec>,
    /// `[agents.NAME]` (`"*"`: every agent).
    pub agents: IndexMap<String, AgentSettings>,
    /// `[roles]`: role name → model, for `model = "{{role}}"`.
    pub roles: IndexMap<String, String>,
    /// `[safety] allow_unsandboxed_writes`.
    pub allow_unsandboxed_writes: Option<bool>,
    /// `[defaults] idle_timeout_ms`.
    pub idle_timeout_ms: Option<u64>,
    /// `[limits] max_output_bytes`: the most an agent call may return (default 16 MiB).
    pub max_output_bytes: Option<u64>,
    /// `[limits] max_prompt_bytes`: the most a rendered prompt may weigh (default 16 MiB).
    pub max_prompt_bytes: Option<u64>,
    /// `[engine]`: where `tfc run` executes a new run by default (SPEC §14.3).
    pub engine: EngineSettings,
    /// `[telemetry]`: OpenTelemetry export of runs (the `OTEL_*` variables win key by key).
    pub telemetry: TelemetrySettings,
    /// The files looked at, highest precedence first.
    pub checked: Vec<(PathBuf, FileState)>,
}

/// `[engine]` (SPEC §14.3): `kind = "local" | "temporal"`, and for Temporal the service
/// `address` (`HOST:PORT`), `namespace` and `task_queue`. Flags and `TFC_TEMPORAL` win.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineSettings {
    /// `kind`: `local` or `temporal`.
    pub kind: Option<String>,
    /// `address`: the Temporal frontend, `HOST:PORT`.
    pub address: Option<String>,
    /// `namespace`.
    pub namespace: Option<String>,
    /// `task_queue`.
    pub task_queue: Option<String>,
    /// `shard_items`: on Temporal, a map of more items than this runs its calls in child
    /// workflows of this many items each (default 500).
    pub shard_items: Option<u64>,
}

/// `[telemetry]`: where runs are exported as OpenTelemetry traces and metrics. Every key is
/// optional; the standard `OTEL_*` variables win over the keys of the same meaning.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TelemetrySettings {
    /// `enabled = false`: never export, whatever the variables say.
    pub enabled: Option<bool>,
    /// `endpoint`: the collector's OTLP/HTTP base URL (`/v1/traces`, `/v1/metrics` appended).
    pub endpoint: Option<String>,
    /// `traces_endpoint`: the full traces URL.
    pub traces_endpoint: Option<String>,
    /// `metrics_endpoint`: the full metrics URL.
    pub metrics_endpoint: Option<String>,
    /// `protocol`: `http/protobuf` or `http/json`.
    pub protocol: Option<String>,
    /// `headers`: request headers (a table of strings).
    pub headers: IndexMap<String, String>,
    /// `service_name`.
    pub service_name: Option<String>,
    /// `resource_attributes`: a table of strings, or one `k=v,k2=v2` string.
    pub resource_attributes: IndexMap<String, String>,
    /// `timeout_ms`: how long one export request may take.
    pub timeout_ms: Option<u64>,
    /// `content = true`: prompts and outputs as span attributes (like `--otel-content`).
    pub content: Option<bool>,
    /// `content_max_chars`: how much of each prompt and output is kept.
    pub content_max_chars: Option<u64>,
    /// `trace_url`: a link to a run's trace, with `{traceId}` (e.g. a Jaeger or Tempo URL).
    pub trace_url: Option<String>,
    /// `metrics = false`: spans only (as `OTEL_METRICS_EXPORTER=none`).
    pub metrics: Option<bool>,
}

impl TelemetrySettings {
    /// `self` (higher precedence) over `lower`, key by key; tables merge entry by entry.
    pub fn over(mut self, lower: TelemetrySettings) -> TelemetrySettings {
        self.enabled = self.enabled.or(lower.enabled);
        self.endpoint = self.endpoint.or(lower.endpoint);
        self.traces_endpoint = self.traces_endpoint.or(lower.traces_endpoint);
        self.metrics_endpoint = self.metrics_endpoint.or(lower.metrics_endpoint);
        self.protocol = self.protocol.or(lower.protocol);
        for (k, v) in lower.headers {
            self.headers.entry(k).or_insert(v);
        }
        self.service_name = self.service_name.or(lower.service_name);
        for (k, v) in lower.resource_attributes {
            self.resource_attributes.entry(k).or_insert(v);
        }
        self.timeout_ms = self.timeout_ms.or(lower.timeout_ms);
        self.content = self.content.or(lower.content);
        self.content_max_chars = self.content_max_chars.or(lower.content_max_chars);
        self.trace_url = self.trace_url.or(lower.trace_url);
        self.metrics = self.metrics.or(lower.metrics);
        self
    }
}

/// The environment configuration reads, captured once (tests build it by hand).
#[derive(Clone, Debug, Default)]
pub struct ConfigEnv {
    /// `TFC_CONFIG`.
    pub config_file: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME/tfc` (default `~/.config/tfc`).
    pub user_dir: Option<PathBuf>,
    /// `TFC_BACKEND`.
    pub backend: Option<String>,
    /// `PATH`.
    pub path: Option<OsString>,
    /// `TFC_OPENAI_BASE_URL`.
    pub tfc_openai_base_url: Option<String>,
    /// `OPENAI_BASE_URL`.
    pub openai_base_url: Option<String>,
    /// `OLLAMA_HOST`.
    pub ollama_host: Option<String>,
}

impl ConfigEnv {
    /// Read the process environment (empty values count as unset).
    pub fn from_process() -> ConfigEnv {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        ConfigEnv {
            config_file: var("TFC_CONFIG").map(PathBuf::from),
            user_dir: crate::project::user_config_dir(),
            backend: var("TFC_BACKEND"),
            path: std::env::var_os("PATH"),
            tfc_openai_base_url: var("TFC_OPENAI_BASE_URL"),
            openai_base_url: var("OPENAI_BASE_URL"),
            ollama_host: var("OLLAMA_HOST"),
        }
    }
}

/// The reserved backend name of `--dry-run` (SPEC §9.2).
pub(crate) const DRY_RUN: &str = "dry-run";
/// Reserved backend names `replay:<file>` (SPEC §9.2).
pub(crate) const REPLAY_PREFIX: &str = "replay:";

/// `"read, grep,glob"` → `["read", "grep", "glob"]`.
pub(crate) fn split_tools(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `{{name}}` → `Some("name")`.
pub(crate) fn role_name(model: &str) -> Option<&str> {
    model
        .trim()
        .strip_prefix("{{")
        .and_then(|r| r.strip_suffix("}}"))
        .map(str::trim)
}

/// The text of the warning for an unmapped `{{role}}` model.
pub(crate) fn unmapped_role_warning(role: &str) -> String {
    format!(
        "model role '{{{{{role}}}}}' is not mapped in [roles]; using the backend's default model"
    )
}
