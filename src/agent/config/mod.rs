//! Backend configuration (SPEC §9.2): `.tfc/config.toml` (project) over
//! `$XDG_CONFIG_HOME/tfc/config.toml` (user), `TFC_CONFIG=<file>` replacing both, and
//! auto-detection of installed agent CLIs (without spawning anything).
//!
//! Every key is checked: an unknown key or a value of the wrong type is an error naming the
//! file and the dotted key. Merging is per entry: a project `[backends.x]` replaces the user's
//! `[backends.x]` whole, likewise `[agents.NAME]` and `[roles]` entries, and scalars.
//!
//! Files: `types.rs` holds the configuration types, this one loading and merging; `file.rs` reads one
//! file through serde derive (closed tables, the checks serde cannot express), over `de.rs`, a
//! deserializer of parsed TOML whose errors name the dotted key in the words below; `detect.rs`
//! is auto-detection. The [`ConfigRoster`](super::ConfigRoster) built from this lives in
//! `config_roster.rs`; agent definition files in `definitions.rs`.

use std::path::Path;

mod de;
mod detect;
mod file;
mod types;

pub(crate) use de::key_value_pairs;
pub(crate) use detect::OPENAI_ENV_VARS;
pub use detect::{AutoPick, Detection, detect};
pub use types::{
    AgentSettings, BackendSpec, CommandSpec, Config, ConfigEnv, EngineSettings, FileState, Preset,
    PresetSpec, TelemetrySettings,
};
pub(crate) use types::{DRY_RUN, REPLAY_PREFIX, role_name, split_tools, unmapped_role_warning};

impl Config {
    /// Load and merge the configuration for a project: `TFC_CONFIG` alone when set (it must
    /// exist), else `<project_root>/.tfc/config.toml` over `<user_dir>/config.toml` (either
    /// may be missing).
    pub fn load(project_root: &Path, env: &ConfigEnv) -> Result<Config, String> {
        if let Some(f) = &env.config_file {
            let text = std::fs::read_to_string(f).map_err(|e| {
                format!(
                    "TFC_CONFIG names '{}', which cannot be read: {e}",
                    f.display()
                )
            })?;
            let mut c = Config::parse(&text, f)?;
            c.checked = vec![(f.clone(), FileState::Loaded)];
            return Ok(c);
        }
        let mut files = vec![project_root.join(".tfc").join("config.toml")];
        if let Some(u) = &env.user_dir {
            files.push(u.join("config.toml"));
        }
        let mut merged = Config::default();
        for f in files {
            match std::fs::read_to_string(&f) {
                Ok(text) => {
                    let c = Config::parse(&text, &f)?;
                    merged = merged.over(c);
                    merged.checked.push((f, FileState::Loaded));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    merged.checked.push((f, FileState::NotFound));
                }
                Err(e) => return Err(format!("cannot read '{}': {e}", f.display())),
            }
        }
        Ok(merged)
    }

    /// `self` (higher precedence) over `lower`, entry by entry.
    pub fn over(mut self, lower: Config) -> Config {
        for (k, v) in lower.backends {
            self.backends.entry(k).or_insert(v);
        }
        for (k, v) in lower.agents {
            self.agents.entry(k).or_insert(v);
        }
        for (k, v) in lower.roles {
            self.roles.entry(k).or_insert(v);
        }
        self.default_backend = self.default_backend.or(lower.default_backend);
        self.allow_unsandboxed_writes = self
            .allow_unsandboxed_writes
            .or(lower.allow_unsandboxed_writes);
        self.idle_timeout_ms = self.idle_timeout_ms.or(lower.idle_timeout_ms);
        self.max_output_bytes = self.max_output_bytes.or(lower.max_output_bytes);
        self.max_prompt_bytes = self.max_prompt_bytes.or(lower.max_prompt_bytes);
        let (e, low) = (&mut self.engine, lower.engine);
        e.kind = e.kind.take().or(low.kind);
        e.address = e.address.take().or(low.address);
        e.namespace = e.namespace.take().or(low.namespace);
        e.task_queue = e.task_queue.take().or(low.task_queue);
        e.shard_items = e.shard_items.take().or(low.shard_items);
        self.telemetry = self.telemetry.over(lower.telemetry);
        self.checked.extend(lower.checked);
        self
    }

    /// Parse one file's text; `file` names it in errors (`<file>: …`).
    pub fn parse(text: &str, file: &Path) -> Result<Config, String> {
        let table: toml::Table = toml::from_str(text).map_err(|e| {
            format!(
                "{}: invalid TOML: {}",
                file.display(),
                e.to_string().trim_end()
            )
        })?;
        file::read(&toml::Value::Table(table), file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_support::test_dir;

    /// Every message of a bad file, word for word (they were written by the hand-walking
    /// reader this one replaced; keep them).
    #[test]
    fn error_messages_word_for_word() {
        let cases = [
            (
                "default_backend = 1",
                "cfg.toml: default_backend: expected a string, found integer",
            ),
            (
                "default_backend = 1979-05-27",
                "cfg.toml: default_backend: expected a string, found datetime",
            ),
            (
                "backends = 3",
                "cfg.toml: backends: expected a table, found integer",
            ),
            (
                "backends = []",
                "cfg.toml: backends: expected a table, found array",
            ),
            (
                "[backends]\nx = 5",
                "cfg.toml: backends.x: expected a table, found integer",
            ),
            (
                "[backends]\n\"dry-run\" = 5",
                "cfg.toml: backends.dry-run: 'dry-run' is a reserved backend name",
            ),
            (
                "[backends.x]\nkind = 5",
                "cfg.toml: backends.x.kind: expected a string, found integer",
            ),
            (
                "[backends.x]\npreset = 5",
                "cfg.toml: backends.x.preset: expected a string, found integer",
            ),
            (
                "[backends.x]\npreset = \"claude\"\nbin = 5",
                "cfg.toml: backends.x.bin: expected a string, found integer",
            ),
            (
                "[backends.x]\npreset = \"claude\"\nbase_url = \"h\"",
                "cfg.toml: unknown key 'backends.x.base_url'; allowed here: preset, bin, extra_args, env_allow, model",
            ),
            (
                "[backends.x]\npreset = \"claude\"\nextra_args = \"a\"",
                "cfg.toml: backends.x.extra_args: expected an array of strings, found string",
            ),
            (
                "[backends.x]\npreset = \"claude\"\nextra_args = [\"a\", true]",
                "cfg.toml: backends.x.extra_args[1]: expected a string, found boolean",
            ),
            (
                "[backends.x]\nkind = \"openai\"\nbase_url = \"http://h/v1\"\nstream = \"no\"",
                "cfg.toml: backends.x.stream: expected true or false, found string",
            ),
            (
                "[backends.x]\nkind = \"openai\"\nbase_url = \"http://h/v1\"\nstream = false\nprice = 3",
                "cfg.toml: backends.x.price: expected a table, found integer",
            ),
            (
                "[backends.x]\nkind = \"openai\"\nbase_url = \"http://h/v1\"\nprice = { input_per_mtok = -1, output_per_mtok = 1 }",
                "cfg.toml: backends.x.price.input_per_mtok: expected a non-negative number",
            ),
            (
                "[backends.x]\nkind = \"openai\"\nbase_url = \"http://h/v1\"\nprice = { input_per_mtok = \"a\", output_per_mtok = 1 }",
                "cfg.toml: backends.x.price.input_per_mtok: expected a number, found string",
            ),
            (
                "[backends.x]\nkind = \"openai\"\nbase_url = \"http://h/v1\"\nprice = { input_per_mtok = 1, output_per_mtok = 2.5, extra = 1 }",
                "cfg.toml: unknown key 'backends.x.price.extra'; allowed here: input_per_mtok, output_per_mtok",
            ),
            (
                "[backends.x]\nkind = \"openai\"\nbase_url = \"http://h/v1\"\ncommand = [\"a\"]",
                "cfg.toml: unknown key 'backends.x.command'; allowed here: kind, base_url, model, api_key_env, stream, price",
            ),
            (
                "[backends.x]\nkind = \"command\"\ncommand = \"a b\"",
                "cfg.toml: backends.x.command: expected an array of strings, found string",
            ),
            (
                "[backends.x]\nkind = \"command\"\ncommand = [\"\"]",
                "cfg.toml: backends.x: kind = \"command\" requires `command = [\"program\", \"arg\", …]`",
            ),
            (
                "[backends.x]\nkind = \"command\"\ncommand = [\"a\"]\nmodel = 1",
                "cfg.toml: backends.x.model: expected a string, found integer",
            ),
            (
                "[backends.x]\nkind = \"command\"\ncommand = [\"a\"]\nstream = true",
                "cfg.toml: unknown key 'backends.x.stream'; allowed here: kind, command, model",
            ),
            (
                "[backends.x]\nkind = \"grpc\"",
                "cfg.toml: backends.x.kind: unknown kind 'grpc' (expected \"openai\" or \"command\"; CLI agents use `preset`)",
            ),
            (
                "[backends.\"a b\"]\nkindd = \"openai\"",
                "cfg.toml: backends.\"a b\": needs `preset = \"claude\"` (codex, opencode, gemini, pi) or `kind = \"openai\"` / `kind = \"command\"`",
            ),
            (
                "[backends.\"a b\"]\npreset = \"pi\"\nmdel = 1",
                "cfg.toml: unknown key 'backends.\"a b\".mdel' (did you mean 'model'?); allowed here: preset, bin, extra_args, env_allow, model",
            ),
            (
                "agents = 1",
                "cfg.toml: agents: expected a table, found integer",
            ),
            (
                "[agents]\nx = 1",
                "cfg.toml: agents.x: expected a table, found integer",
            ),
            (
                "[agents]\nx = { tools = 1 }",
                "cfg.toml: agents.x.tools: expected an array of strings, found integer",
            ),
            (
                "[agents]\nx = { tools = [1] }",
                "cfg.toml: agents.x.tools[0]: expected a string, found integer",
            ),
            (
                "[agents]\nx = { tools = [\"a\"], backnd = 1 }",
                "cfg.toml: unknown key 'agents.x.backnd' (did you mean 'backend'?); allowed here: backend, model, thinking, tools",
            ),
            (
                "[agents.\"a.b\"]\nmodel = 2",
                "cfg.toml: agents.\"a.b\".model: expected a string, found integer",
            ),
            (
                "[roles]\nfast = 1",
                "cfg.toml: roles.fast: expected a string, found integer",
            ),
            (
                "roles = \"x\"",
                "cfg.toml: roles: expected a table, found string",
            ),
            (
                "[safety]\nallow_unsandboxed_writes = 1",
                "cfg.toml: safety.allow_unsandboxed_writes: expected true or false, found integer",
            ),
            (
                "[safety]\nallow = true",
                "cfg.toml: unknown key 'safety.allow'; allowed here: allow_unsandboxed_writes",
            ),
            (
                "safety = 1",
                "cfg.toml: safety: expected a table, found integer",
            ),
            (
                "[defaults]\nidle_timeout_ms = 999",
                "cfg.toml: defaults.idle_timeout_ms: expected an integer number of milliseconds: 0 (off) or at least 1000",
            ),
            (
                "[defaults]\nidle_timeout_ms = \"x\"",
                "cfg.toml: defaults.idle_timeout_ms: expected an integer number of milliseconds: 0 (off) or at least 1000",
            ),
            (
                "[defaults]\nidle_timeout_ms = 1000.0",
                "cfg.toml: defaults.idle_timeout_ms: expected an integer number of milliseconds: 0 (off) or at least 1000",
            ),
            (
                "[defaults]\nidle = 1",
                "cfg.toml: unknown key 'defaults.idle'; allowed here: idle_timeout_ms",
            ),
            (
                "[limits]\nmax_prompt_bytes = -1",
                "cfg.toml: limits.max_prompt_bytes: expected a positive integer number of bytes, e.g. 16777216 for 16 MiB",
            ),
            (
                "[limits]\nmax_prompt_bytes = 1.5",
                "cfg.toml: limits.max_prompt_bytes: expected a positive integer number of bytes, e.g. 16777216 for 16 MiB",
            ),
            (
                "[engine]\nkind = \"cloud\"",
                "cfg.toml: engine.kind: unknown engine 'cloud' (expected \"local\" or \"temporal\")",
            ),
            (
                "[engine]\nshard_items = 0",
                "cfg.toml: engine.shard_items: expected a whole number of items, at least 1",
            ),
            (
                "[engine]\nkind = \"temporal\"\nadress = \"h:1\"",
                "cfg.toml: unknown key 'engine.adress' (did you mean 'address'?); allowed here: kind, address, namespace, task_queue, shard_items",
            ),
            (
                "[telemetry]\nprotocol = \"grpc\"",
                "cfg.toml: telemetry.protocol: unknown protocol 'grpc' (expected \"http/protobuf\" or \"http/json\"; tfc exports over HTTP)",
            ),
            (
                "[telemetry]\nendpoint = \"collector:4318\"",
                "cfg.toml: telemetry.endpoint: invalid URL 'collector:4318': expected http:// or https://",
            ),
            (
                "[telemetry]\ntimeout_ms = 0",
                "cfg.toml: telemetry.timeout_ms: expected a positive number of milliseconds, e.g. 10000",
            ),
            (
                "[telemetry]\nendpont = \"http://h:4318\"",
                "cfg.toml: unknown key 'telemetry.endpont' (did you mean 'endpoint'?); allowed here: enabled, endpoint, traces_endpoint, metrics_endpoint, protocol, headers, service_name, resource_attributes, timeout_ms, content, content_max_chars, trace_url, metrics",
            ),
            (
                "zzz = 1\n[limits]\nmax_prompt_bytes = 7",
                "cfg.toml: unknown key 'zzz'; allowed here: default_backend, backends, agents, roles, safety, defaults, limits, engine, telemetry",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text).unwrap_err(), want, "{text}");
        }
    }

    #[test]
    fn the_telemetry_table_is_read_and_merged_key_by_key() {
        let project = parse(
            "[telemetry]\nendpoint = \"http://collector:4318\"\nprotocol = \"http/json\"\n\
             content = true\ntrace_url = \"http://jaeger:16686/trace/{traceId}\"\n\
             [telemetry.headers]\napi-key = \"k1\"\n[telemetry.resource_attributes]\nteam = \"infra\"",
        )
        .expect("project file");
        let t = &project.telemetry;
        assert_eq!(t.endpoint.as_deref(), Some("http://collector:4318"));
        assert_eq!(t.protocol.as_deref(), Some("http/json"));
        assert_eq!(t.content, Some(true));
        assert_eq!(t.headers.get("api-key").map(String::as_str), Some("k1"));
        let user = parse(
            "[telemetry]\nendpoint = \"http://other:4318\"\nservice_name = \"me\"\n\
             [telemetry.headers]\napi-key = \"k0\"\nx-tenant = \"t\"",
        )
        .expect("user file");
        let merged = project.over(user).telemetry;
        assert_eq!(merged.endpoint.as_deref(), Some("http://collector:4318"));
        assert_eq!(merged.service_name.as_deref(), Some("me"));
        assert_eq!(
            merged.headers.get("api-key").map(String::as_str),
            Some("k1")
        );
        assert_eq!(
            merged.headers.get("x-tenant").map(String::as_str),
            Some("t")
        );
        assert_eq!(
            merged.resource_attributes.get("team").map(String::as_str),
            Some("infra")
        );
        assert_eq!(merged.metrics, None);
    }

    #[test]
    fn resource_attributes_may_be_one_string_and_metrics_may_be_off() {
        let t = parse(
            "[telemetry]\nmetrics = false\n\
             resource_attributes = \"openinference.project.name=release, team = infra%2Fops\"",
        )
        .expect("file")
        .telemetry;
        assert_eq!(t.metrics, Some(false));
        let attrs: Vec<(&str, &str)> = t
            .resource_attributes
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            attrs,
            [
                ("openinference.project.name", "release"),
                ("team", "infra/ops")
            ]
        );
        assert_eq!(
            parse("[telemetry]\nresource_attributes = \"team\"").unwrap_err(),
            "cfg.toml: telemetry.resource_attributes: 'team' is not key=value (expected e.g. key1=value1,key2=value2)"
        );
        let wrong = parse("[telemetry]\nresource_attributes = 3").unwrap_err();
        assert!(
            wrong.starts_with("cfg.toml: telemetry.resource_attributes: ")
                && wrong.contains("a table of strings, or one \"key=value,key2=value2\" string"),
            "{wrong}"
        );
        assert!(
            parse("[telemetry]\nmetrics = \"no\"")
                .unwrap_err()
                .starts_with("cfg.toml: telemetry.metrics: "),
        );
    }

    #[test]
    fn the_engine_table_is_read_and_a_project_file_wins_key_by_key() {
        let project = parse(
            "[engine]\nkind = \"temporal\"\naddress = \"10.0.0.7:7233\"\ntask_queue = \"agents\"",
        )
        .expect("project file");
        assert_eq!(
            project.engine,
            EngineSettings {
                kind: Some("temporal".into()),
                address: Some("10.0.0.7:7233".into()),
                namespace: None,
                task_queue: Some("agents".into()),
                shard_items: None,
            }
        );
        let user = parse("[engine]\nkind = \"local\"\nnamespace = \"team\"").expect("user file");
        let merged = project.over(user);
        assert_eq!(merged.engine.kind.as_deref(), Some("temporal"));
        let sized = parse("[engine]\nshard_items = 250").expect("shard size");
        assert_eq!(sized.engine.shard_items, Some(250));
        let lower = parse("[engine]\nshard_items = 9").expect("lower file");
        assert_eq!(
            sized.over(lower).engine.shard_items,
            Some(250),
            "the higher file wins"
        );
        assert_eq!(merged.engine.namespace.as_deref(), Some("team"));
        assert_eq!(merged.engine.task_queue.as_deref(), Some("agents"));
        assert_eq!(parse("").expect("empty").engine, EngineSettings::default());
    }

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, Path::new("cfg.toml"))
    }

    #[test]
    fn the_spec_example_parses() {
        let c = parse(
            r#"
default_backend = "claude"
[backends.claude]
preset = "claude"
[backends.local]
kind = "openai"
base_url = "http://127.0.0.1:11434/v1"
model = "qwen2.5-coder"
api_key_env = "OLLAMA_API_KEY"
stream = true
price = { input_per_mtok = 0.15, output_per_mtok = 0.6 }
[backends.mine]
kind = "command"
command = ["my-agent", "--quiet"]
[agents]
"*" = { backend = "claude" }
scout = { backend = "local", model = "qwen2.5-coder:7b", thinking = "low", tools = "read, grep" }
[roles]
fast = "claude-haiku-4-5"
[safety]
allow_unsandboxed_writes = false
[defaults]
idle_timeout_ms = 300000
"#,
        )
        .unwrap();
        assert_eq!(c.default_backend.as_deref(), Some("claude"));
        assert_eq!(
            c.backends["claude"],
            BackendSpec::Preset(PresetSpec::plain(Preset::Claude))
        );
        let BackendSpec::OpenAi(o) = &c.backends["local"] else {
            panic!()
        };
        assert_eq!(o.model.as_deref(), Some("qwen2.5-coder"));
        assert_eq!(o.price.unwrap().output_per_mtok, 0.6);
        assert_eq!(
            c.backends["mine"],
            BackendSpec::Command(CommandSpec {
                command: vec!["my-agent".into(), "--quiet".into()],
                model: None
            })
        );
        assert_eq!(c.agents["*"].backend.as_deref(), Some("claude"));
        assert_eq!(
            c.agents["scout"].tools,
            Some(vec!["read".to_owned(), "grep".to_owned()])
        );
        assert_eq!(c.roles["fast"], "claude-haiku-4-5");
        assert_eq!(c.allow_unsandboxed_writes, Some(false));
        assert_eq!(c.idle_timeout_ms, Some(300_000));
    }

    #[test]
    fn unknown_keys_and_bad_values_name_file_and_key() {
        let e = parse(
            "[backends.local]\nkind = \"openai\"\nbase_url = \"http://h/v1\"\nmodle = \"x\"\n",
        )
        .unwrap_err();
        assert!(
            e.starts_with("cfg.toml: unknown key 'backends.local.modle' (did you mean 'model'?)"),
            "{e}"
        );
        let e = parse("default_backnd = \"x\"").unwrap_err();
        assert!(e.contains("unknown key 'default_backnd'"), "{e}");
        let e = parse("[agents]\nscout = { backend = \"a\", colour = \"red\" }").unwrap_err();
        assert!(e.contains("unknown key 'agents.scout.colour'"), "{e}");
        let e = parse("[agents]\n\"*\" = { modle = \"x\" }").unwrap_err();
        assert!(e.contains("unknown key 'agents.\"*\".modle'"), "{e}");
        let e = parse("[safety]\nallow_unsandboxed_writes = \"yes\"").unwrap_err();
        assert!(
            e.contains("safety.allow_unsandboxed_writes: expected true or false"),
            "{e}"
        );
        let e = parse("[backends.x]\npreset = \"cursor\"").unwrap_err();
        assert!(e.contains("unknown preset 'cursor'"), "{e}");
        let e = parse("[backends.x]\nbin = \"y\"").unwrap_err();
        assert!(e.contains("backends.x: needs `preset"), "{e}");
        let e = parse("[backends.x]\nkind = \"openai\"").unwrap_err();
        assert!(e.contains("requires `base_url`"), "{e}");
        let e = parse("[backends.x]\nkind = \"openai\"\nbase_url = \"localhost:1\"").unwrap_err();
        assert!(e.contains("backends.x.base_url: invalid URL"), "{e}");
        let e = parse("[backends.x]\nkind = \"command\"\ncommand = []").unwrap_err();
        assert!(e.contains("requires `command"), "{e}");
        let e = parse("[backends.x]\nkind = \"command\"\ncommand = [\"a\", 1]").unwrap_err();
        assert!(
            e.contains("backends.x.command[1]: expected a string"),
            "{e}"
        );
        let e = parse("[backends.\"dry-run\"]\npreset = \"claude\"").unwrap_err();
        assert!(e.contains("reserved"), "{e}");
        let e = parse("[backends.\"replay:x\"]\npreset = \"claude\"").unwrap_err();
        assert!(e.contains("reserved"), "{e}");
        let e = parse("[limits]\nmax_output_bytes = 0").unwrap_err();
        assert!(
            e.contains("limits.max_output_bytes: expected a positive integer number of bytes"),
            "{e}"
        );
        let e = parse("[limits]\nmax_answer = 5").unwrap_err();
        assert!(e.contains("max_answer"), "{e}");
        let c = parse("[limits]\nmax_output_bytes = 1024\nmax_prompt_bytes = 2048").unwrap();
        assert_eq!(
            (c.max_output_bytes, c.max_prompt_bytes),
            (Some(1024), Some(2048))
        );
        let e = parse("[defaults]\nidle_timeout_ms = 5").unwrap_err();
        assert!(e.contains("at least 1000"), "{e}");
        let e = parse("[backends.x]\nkind = \"openai\"\nbase_url = \"http://h\"\nprice = { input_per_mtok = 1 }").unwrap_err();
        assert!(e.contains("requires `output_per_mtok`"), "{e}");
        let e = parse("[backends.x]\npreset = \"pi\"\nkind = \"command\"").unwrap_err();
        assert!(e.contains("not both"), "{e}");
        let e = parse("a = [").unwrap_err();
        assert!(e.starts_with("cfg.toml: invalid TOML"), "{e}");
    }

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn project_over_user_and_tfc_config_replacing_both() {
        let d = test_dir("config-load");
        let project = d.join("proj");
        let user = d.join("user");
        write(
            &project.join(".tfc/config.toml"),
            "default_backend = \"p\"\n[backends.p]\npreset = \"codex\"\n[backends.shared]\npreset = \"pi\"\n[agents]\nscout = { backend = \"p\" }\n[roles]\nfast = \"p-fast\"\n",
        );
        write(
            &user.join("config.toml"),
            "default_backend = \"u\"\n[backends.u]\npreset = \"gemini\"\n[backends.shared]\npreset = \"claude\"\n[agents]\nscout = { backend = \"u\", model = \"m\" }\nwriter = { backend = \"u\" }\n[roles]\nfast = \"u-fast\"\nslow = \"u-slow\"\n[safety]\nallow_unsandboxed_writes = true\n[defaults]\nidle_timeout_ms = 1000\n",
        );
        let env = ConfigEnv {
            user_dir: Some(user.clone()),
            ..ConfigEnv::default()
        };
        let c = Config::load(&project, &env).unwrap();
        assert_eq!(c.default_backend.as_deref(), Some("p"));
        assert_eq!(c.backends.len(), 3);
        assert_eq!(
            c.backends["shared"],
            BackendSpec::Preset(PresetSpec::plain(Preset::Pi))
        );
        // Entries replace whole: the project's scout has no model.
        assert_eq!(c.agents["scout"].backend.as_deref(), Some("p"));
        assert_eq!(c.agents["scout"].model, None);
        assert_eq!(c.agents["writer"].backend.as_deref(), Some("u"));
        assert_eq!(
            (c.roles["fast"].as_str(), c.roles["slow"].as_str()),
            ("p-fast", "u-slow")
        );
        assert_eq!(c.allow_unsandboxed_writes, Some(true));
        assert_eq!(c.idle_timeout_ms, Some(1000));
        assert_eq!(c.checked.len(), 2);
        assert!(c.checked.iter().all(|(_, s)| *s == FileState::Loaded));

        let only = d.join("only.toml");
        write(&only, "default_backend = \"x\"\n");
        let env2 = ConfigEnv {
            config_file: Some(only.clone()),
            ..env.clone()
        };
        let c = Config::load(&project, &env2).unwrap();
        assert_eq!(c.default_backend.as_deref(), Some("x"));
        assert!(c.backends.is_empty() && c.roles.is_empty());
        let env3 = ConfigEnv {
            config_file: Some(d.join("missing.toml")),
            ..env.clone()
        };
        assert!(
            Config::load(&project, &env3)
                .unwrap_err()
                .starts_with("TFC_CONFIG names")
        );

        // Missing files are fine; a bad one is an error naming it.
        let c = Config::load(&d.join("elsewhere"), &ConfigEnv::default()).unwrap();
        assert_eq!(c.checked[0].1, FileState::NotFound);
        write(&project.join(".tfc/config.toml"), "[oops]\n");
        let e = Config::load(&project, &env).unwrap_err();
        assert!(e.contains("config.toml: unknown key 'oops'"), "{e}");
        std::fs::remove_dir_all(d).ok();
    }

    #[test]
    fn roles_and_tools() {
        assert_eq!(role_name("{{fast}}"), Some("fast"));
        assert_eq!(role_name(" {{ fast }} "), Some("fast"));
        assert_eq!(role_name("gpt-4o"), None);
        assert_eq!(split_tools(" read,grep , ,glob"), ["read", "grep", "glob"]);
    }
}
