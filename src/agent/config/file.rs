//! One `config.toml` file as serde reads it (SPEC §9.2): closed tables (`deny_unknown_fields`),
//! then the rules serde cannot say — reserved backend names, which keys a backend's `preset` or
//! `kind` allows, required keys, ranges — checked in the order of the file.

use std::path::Path;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::de::{
    Bool, Entries, Int, Num, Pairs, Str, Strings, Tools, from_toml, join, key_value_pairs,
    quote_key,
};
use super::types::{
    AgentSettings, BackendSpec, CommandSpec, Config, DRY_RUN, EngineSettings, Preset, PresetSpec,
    REPLAY_PREFIX, TelemetrySettings,
};
use crate::agent::openai::{OpenAiConfig, Price};

/// The top level of a file. The order of the fields is the order of the keys in messages.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileIn {
    default_backend: Option<Str>,
    /// Each entry is read by [`backend`] once its name is checked.
    backends: Option<Entries<IgnoredAny>>,
    agents: Option<Entries<AgentIn>>,
    roles: Option<Entries<Str>>,
    safety: Option<SafetyIn>,
    defaults: Option<DefaultsIn>,
    limits: Option<LimitsIn>,
    engine: Option<EngineIn>,
    telemetry: Option<TelemetryIn>,
}

/// `[telemetry]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TelemetryIn {
    enabled: Option<Bool>,
    endpoint: Option<Str>,
    traces_endpoint: Option<Str>,
    metrics_endpoint: Option<Str>,
    protocol: Option<Str>,
    headers: Option<Entries<Str>>,
    service_name: Option<Str>,
    /// A table, or one `k=v,k2=v2` string.
    resource_attributes: Option<Pairs>,
    timeout_ms: Option<Int>,
    content: Option<Bool>,
    content_max_chars: Option<Int>,
    trace_url: Option<Str>,
    metrics: Option<Bool>,
}

/// `[engine]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EngineIn {
    kind: Option<Str>,
    address: Option<Str>,
    namespace: Option<Str>,
    task_queue: Option<Str>,
    shard_items: Option<Int>,
}

/// `[agents.NAME]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentIn {
    backend: Option<Str>,
    model: Option<Str>,
    thinking: Option<Str>,
    tools: Option<Tools>,
}

/// `[safety]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SafetyIn {
    allow_unsandboxed_writes: Option<Bool>,
}

/// `[defaults]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DefaultsIn {
    idle_timeout_ms: Option<Int>,
}

/// `[limits]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsIn {
    max_output_bytes: Option<Int>,
    max_prompt_bytes: Option<Int>,
}

/// What decides the shape of a `[backends.NAME]` table (its other keys are read later).
#[derive(Deserialize)]
struct BackendKind {
    kind: Option<Str>,
    preset: Option<Str>,
}

/// `[backends.NAME]` with `preset`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetIn {
    #[allow(dead_code)] // read through `BackendKind`
    preset: Str,
    bin: Option<Str>,
    extra_args: Option<Strings>,
    env_allow: Option<Strings>,
    model: Option<Str>,
}

/// `[backends.NAME]` with `kind = "openai"`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenAiIn {
    #[allow(dead_code)] // read through `BackendKind`
    kind: Str,
    base_url: Option<Str>,
    model: Option<Str>,
    api_key_env: Option<Str>,
    stream: Option<Bool>,
    price: Option<PriceIn>,
}

/// `price = { input_per_mtok, output_per_mtok }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PriceIn {
    input_per_mtok: Option<Num>,
    output_per_mtok: Option<Num>,
}

/// `[backends.NAME]` with `kind = "command"`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandIn {
    #[allow(dead_code)] // read through `BackendKind`
    kind: Str,
    command: Option<Strings>,
    model: Option<Str>,
}

fn text(s: Option<Str>) -> Option<String> {
    s.map(|s| s.0)
}

/// Read one parsed file; `file` names it in errors (`<file>: <key>: <what is wrong>`).
pub(super) fn read(root: &toml::Value, file: &Path) -> Result<Config, String> {
    let f = file.display();
    let err = |key: &str, msg: &str| format!("{f}: {key}: {msg}");
    let top: FileIn = from_toml(root, "").map_err(|e| format!("{f}: {e}"))?;
    let mut c = Config {
        default_backend: text(top.default_backend),
        ..Config::default()
    };
    if let Some(names) = top.backends {
        let tables = root.get("backends").and_then(toml::Value::as_table);
        for (name, _) in &names.0 {
            let key = format!("backends.{}", quote_key(name));
            if name == DRY_RUN || name.starts_with(REPLAY_PREFIX) {
                return Err(err(&key, &format!("'{name}' is a reserved backend name")));
            }
            let Some(v) = tables.and_then(|t| t.get(name)) else {
                continue;
            };
            let spec = backend(v, &key).map_err(|e| format!("{f}: {e}"))?;
            c.backends.insert(name.clone(), spec);
        }
    }
    for (name, a) in top.agents.unwrap_or_default().0 {
        c.agents.insert(
            name,
            AgentSettings {
                backend: text(a.backend),
                model: text(a.model),
                thinking: text(a.thinking),
                tools: a.tools.map(|t| t.0),
            },
        );
    }
    for (name, model) in top.roles.unwrap_or_default().0 {
        c.roles.insert(name, model.0);
    }
    c.allow_unsandboxed_writes = top
        .safety
        .and_then(|s| s.allow_unsandboxed_writes)
        .map(|b| b.0);
    if let Some(d) = top.defaults {
        c.idle_timeout_ms = match d.idle_timeout_ms {
            None => None,
            Some(Int(Some(n))) if n == 0 || n >= 1000 => Some(n as u64),
            Some(_) => {
                return Err(err(
                    "defaults.idle_timeout_ms",
                    "expected an integer number of milliseconds: 0 (off) or at least 1000",
                ));
            }
        };
    }
    if let Some(l) = top.limits {
        let bytes = |key: &str, v: Option<Int>| match v {
            None => Ok(None),
            Some(Int(Some(n))) if n >= 1 => Ok(Some(n as u64)),
            Some(_) => Err(err(
                &format!("limits.{key}"),
                "expected a positive integer number of bytes, e.g. 16777216 for 16 MiB",
            )),
        };
        c.max_output_bytes = bytes("max_output_bytes", l.max_output_bytes)?;
        c.max_prompt_bytes = bytes("max_prompt_bytes", l.max_prompt_bytes)?;
    }
    if let Some(e) = top.engine {
        let kind = text(e.kind);
        if let Some(k) = kind.as_deref()
            && k != "local"
            && k != "temporal"
        {
            return Err(err(
                "engine.kind",
                &format!("unknown engine '{k}' (expected \"local\" or \"temporal\")"),
            ));
        }
        let shard_items = match e.shard_items {
            None => None,
            Some(Int(Some(n))) if n >= 1 => Some(n as u64),
            Some(_) => {
                return Err(err(
                    "engine.shard_items",
                    "expected a whole number of items, at least 1",
                ));
            }
        };
        c.engine = EngineSettings {
            kind,
            address: text(e.address),
            namespace: text(e.namespace),
            task_queue: text(e.task_queue),
            shard_items,
        };
    }
    if let Some(t) = top.telemetry {
        c.telemetry = telemetry(t, &err)?;
    }
    Ok(c)
}

/// `[telemetry]`, checked: URLs, the protocol's name, positive numbers.
fn telemetry(
    t: TelemetryIn,
    err: &dyn Fn(&str, &str) -> String,
) -> Result<TelemetrySettings, String> {
    let url = |key: &str, v: Option<Str>| -> Result<Option<String>, String> {
        match text(v) {
            Some(u) => crate::agent::http::Url::parse(&u)
                .map(|_| Some(u))
                .map_err(|e| err(&format!("telemetry.{key}"), &e)),
            None => Ok(None),
        }
    };
    let positive = |key: &str, v: Option<Int>, what: &str| match v {
        None => Ok(None),
        Some(Int(Some(n))) if n >= 1 => Ok(Some(n as u64)),
        Some(_) => Err(err(&format!("telemetry.{key}"), what)),
    };
    let protocol = text(t.protocol);
    if let Some(p) = protocol.as_deref()
        && p != "http/protobuf"
        && p != "http/json"
    {
        return Err(err(
            "telemetry.protocol",
            &format!(
                "unknown protocol '{p}' (expected \"http/protobuf\" or \"http/json\"; tfc exports over HTTP)"
            ),
        ));
    }
    let table = |e: Option<Entries<Str>>| {
        e.map(|e| e.0.into_iter().map(|(k, v)| (k, v.0)).collect())
            .unwrap_or_default()
    };
    Ok(TelemetrySettings {
        enabled: t.enabled.map(|b| b.0),
        endpoint: url("endpoint", t.endpoint)?,
        traces_endpoint: url("traces_endpoint", t.traces_endpoint)?,
        metrics_endpoint: url("metrics_endpoint", t.metrics_endpoint)?,
        protocol,
        headers: table(t.headers),
        service_name: text(t.service_name),
        resource_attributes: match t.resource_attributes {
            None => indexmap::IndexMap::new(),
            Some(Pairs::Table(entries)) => entries.into_iter().collect(),
            Some(Pairs::Text(text)) => key_value_pairs(&text)
                .map_err(|e| err("telemetry.resource_attributes", &e))?
                .into_iter()
                .collect(),
        },
        timeout_ms: positive(
            "timeout_ms",
            t.timeout_ms,
            "expected a positive number of milliseconds, e.g. 10000",
        )?,
        content: t.content.map(|b| b.0),
        content_max_chars: positive(
            "content_max_chars",
            t.content_max_chars,
            "expected a positive number of characters, e.g. 4096",
        )?,
        trace_url: text(t.trace_url),
        metrics: t.metrics.map(|b| b.0),
    })
}

/// One `[backends.NAME]` table at `key`; errors are `<key…>: <what is wrong>`.
fn backend(v: &toml::Value, key: &str) -> Result<BackendSpec, String> {
    let err = |key: &str, msg: &str| format!("{key}: {msg}");
    let shape: BackendKind = from_toml(v, key)?;
    match (shape.kind.map(|k| k.0).as_deref(), shape.preset) {
        (None, Some(Str(p))) => {
            let t: PresetIn = from_toml(v, key)?;
            let preset = Preset::parse(&p).ok_or_else(|| {
                err(
                    &join(key, "preset"),
                    &format!(
                        "unknown preset '{p}' (expected claude, codex, opencode, gemini or pi)"
                    ),
                )
            })?;
            Ok(BackendSpec::Preset(PresetSpec {
                preset,
                bin: text(t.bin),
                extra_args: t.extra_args.unwrap_or_default().0,
                env_allow: t.env_allow.unwrap_or_default().0,
                model: text(t.model),
            }))
        }
        (Some(_), Some(_)) => Err(err(key, "set either `preset` or `kind`, not both")),
        (Some("openai"), None) => {
            let t: OpenAiIn = from_toml(v, key)?;
            let base_url = text(t.base_url)
                .ok_or_else(|| err(key, "kind = \"openai\" requires `base_url`"))?;
            crate::agent::http::Url::parse(&base_url)
                .map_err(|e| err(&join(key, "base_url"), &e.to_string()))?;
            let price = match t.price {
                None => None,
                Some(p) => {
                    let pk = join(key, "price");
                    let need = |n: Option<Num>, k: &str| {
                        n.map(|n| n.0)
                            .ok_or_else(|| err(&pk, &format!("requires `{k}`")))
                    };
                    Some(Price {
                        input_per_mtok: need(p.input_per_mtok, "input_per_mtok")?,
                        output_per_mtok: need(p.output_per_mtok, "output_per_mtok")?,
                    })
                }
            };
            Ok(BackendSpec::OpenAi(OpenAiConfig {
                base_url,
                model: text(t.model),
                api_key_env: text(t.api_key_env),
                stream: t.stream.is_none_or(|b| b.0),
                price,
            }))
        }
        (Some("command"), None) => {
            let t: CommandIn = from_toml(v, key)?;
            let command = t.command.unwrap_or_default().0;
            if command.first().is_none_or(|c| c.is_empty()) {
                return Err(err(
                    key,
                    "kind = \"command\" requires `command = [\"program\", \"arg\", …]`",
                ));
            }
            Ok(BackendSpec::Command(CommandSpec {
                command,
                model: text(t.model),
            }))
        }
        (Some(k), None) => Err(err(
            &join(key, "kind"),
            &format!(
                "unknown kind '{k}' (expected \"openai\" or \"command\"; CLI agents use `preset`)"
            ),
        )),
        (None, None) => Err(err(
            key,
            "needs `preset = \"claude\"` (codex, opencode, gemini, pi) or `kind = \"openai\"` / `kind = \"command\"`",
        )),
    }
}
