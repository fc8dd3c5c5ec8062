//! `tfc doctor` (SPEC §11.4): what tfc sees on this machine — each backend preset (on `PATH`?
//! its version, its own config file, the auth variables it reads), the configuration files
//! read and the backends they define, what auto-detection would pick, the project root and the
//! size of the run store. Nothing is changed; the only programs started are the preset CLIs
//! found on `PATH`, with `--version` (3 s at most each). Exit codes: 0 · 2 when a
//! configuration file is invalid (the message names the file and key).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;

use super::Exit;
use tfc::agent::ConfigEnv;
use tfc::agent::config::{BackendSpec, Config, FileState, Preset, detect};
use tfc::project::project_root;
use tfc::run::runs;

#[derive(Args, Debug)]
pub struct DoctorArgs {}

/// How long a `--version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(3);

/// `tfc doctor`.
pub fn run(_: DoctorArgs) -> Exit {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = project_root(&cwd);
    let env = ConfigEnv::from_process();
    let mut exit = Exit::Ok;
    let mut t = String::new();
    t.push_str(&format!("project root: {}\n", root.display()));

    t.push_str("\nbackend presets:\n");
    let detection = detect(&env);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    for preset in Preset::ALL {
        let name = preset.as_str();
        match detection.found.iter().find(|(p, _)| *p == preset) {
            Some((_, path)) => {
                let version = version(path).unwrap_or_else(|e| format!("version unknown: {e}"));
                t.push_str(&format!(
                    "  {name:<9} found {} ({version})\n",
                    path.display()
                ));
            }
            None => t.push_str(&format!("  {name:<9} not on PATH\n")),
        }
        let files: Vec<String> = config_files(preset, home.as_deref())
            .into_iter()
            .map(|f| {
                let state = if f.exists() { "present" } else { "absent" };
                format!("{} ({state})", f.display())
            })
            .collect();
        if !files.is_empty() {
            t.push_str(&format!("  {:<9} config: {}\n", "", files.join(", ")));
        }
        let vars: Vec<String> = auth_vars(preset)
            .iter()
            .map(|v| {
                let set = std::env::var_os(v).is_some_and(|x| !x.is_empty());
                format!("{v} {}", if set { "set" } else { "unset" })
            })
            .collect();
        t.push_str(&format!("  {:<9} auth env: {}\n", "", vars.join(", ")));
    }
    match &detection.openai {
        Some((var, url)) => t.push_str(&format!("  {:<9} {var} is set: {url}\n", "openai")),
        None => t.push_str(&format!(
            "  {:<9} none of TFC_OPENAI_BASE_URL, OPENAI_BASE_URL, OLLAMA_HOST is set\n",
            "openai"
        )),
    }

    t.push_str("\nconfiguration:\n");
    match &env.config_file {
        Some(f) => t.push_str(&format!(
            "  TFC_CONFIG={} (replaces the files below)\n",
            f.display()
        )),
        None => t.push_str("  TFC_CONFIG unset\n"),
    }
    match &env.backend {
        Some(b) => t.push_str(&format!("  TFC_BACKEND={b} (serves every agent)\n")),
        None => t.push_str("  TFC_BACKEND unset\n"),
    }
    match Config::load(&root, &env) {
        Ok(config) => {
            for (file, state) in &config.checked {
                let state = match state {
                    FileState::Loaded => "read",
                    FileState::NotFound => "not found",
                };
                t.push_str(&format!("  {} ({state})\n", file.display()));
            }
            backends(&mut t, &config, &env);
            let configured = env.backend.is_some()
                || config.default_backend.is_some()
                || config.agents.values().any(|a| a.backend.is_some());
            if !configured {
                match detection.pick() {
                    Some(pick) => t.push_str(&format!("  {}\n", pick.describe())),
                    None => t.push_str(
                        "  no backend configured and none detected: `tfc init` writes a starter \
                         .tfc/config.toml; `tfc run FLOW --agent-cmd CMD` runs with any command\n",
                    ),
                }
            }
            telemetry(&mut t, &config.telemetry);
        }
        Err(e) => {
            t.push_str(&format!("  error: {e}\n"));
            exit = Exit::Usage;
        }
    }

    t.push_str("\nrun store:\n");
    store(&mut t, &root);
    out!("{t}");
    if exit != Exit::Ok {
        sayln!("error: the configuration is invalid (see above); fix the file it names");
    }
    exit
}

/// Whether runs are exported as OpenTelemetry traces, where to, and whether the endpoint
/// answers (one empty export request, 5 s at most).
fn telemetry(t: &mut String, file: &tfc::agent::config::TelemetrySettings) {
    use tfc::telemetry::Resolved;
    t.push_str("\ntelemetry (OpenTelemetry export of runs):\n");
    let var = |k: &str| std::env::var(k).ok();
    match tfc::telemetry::settings::resolve(&var, file, false) {
        Resolved::Off(why) => t.push_str(&format!("  off: {why}\n")),
        Resolved::Invalid(m) => t.push_str(&format!("  off, the settings are wrong: {m}\n")),
        Resolved::On(s) => {
            for (signal, target) in [("traces", &s.traces), ("metrics", &s.metrics)] {
                match target {
                    Some(x) => t.push_str(&format!(
                        "  {signal:<8} → {} ({})\n",
                        x.url,
                        x.protocol.as_str()
                    )),
                    None => t.push_str(&format!("  {signal:<8} off\n")),
                }
            }
            let service = s.resource.first().map_or("tfc", |(_, v)| v.as_str());
            t.push_str(&format!(
                "  service.name={service}, timeout {} ms, prompts and outputs {}\n",
                s.timeout.as_millis(),
                if s.content.is_some() {
                    "exported"
                } else {
                    "not exported"
                }
            ));
            match tfc::telemetry::export::probe(&s) {
                Ok(m) => t.push_str(&format!("  endpoint: {m}\n")),
                Err(e) => t.push_str(&format!("  endpoint: {e}\n")),
            }
        }
    }
    if let Ok(tp) = std::env::var("TRACEPARENT") {
        let valid = tfc::telemetry::SpanContext::from_traceparent(&tp).is_some();
        t.push_str(&format!(
            "  TRACEPARENT={tp} ({})\n",
            if valid {
                "runs join the caller's trace"
            } else {
                "not a W3C traceparent; ignored"
            }
        ));
    }
}

/// The first line `BIN --version` prints, waited for at most [`VERSION_TIMEOUT`].
fn version(bin: &Path) -> Result<String, String> {
    let mut child = Command::new(bin)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < VERSION_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "--version took over {}s",
                    VERSION_TIMEOUT.as_secs()
                ));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(if out.stdout.is_empty() {
        &out.stderr
    } else {
        &out.stdout
    })
    .into_owned();
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    match (out.status.success(), first) {
        (true, Some(l)) => Ok(l.chars().take(80).collect()),
        (true, None) => Err("--version printed nothing".into()),
        (false, _) => Err(format!("--version failed ({})", out.status)),
    }
}

/// The preset CLI's own configuration files (as its documentation names them).
fn config_files(preset: Preset, home: Option<&Path>) -> Vec<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let Some(home) = home else {
        return Vec::new();
    };
    match preset {
        Preset::Claude => vec![
            var("CLAUDE_CONFIG_DIR").unwrap_or_else(|| home.join(".claude")),
            home.join(".claude.json"),
        ],
        Preset::Codex => vec![
            var("CODEX_HOME")
                .unwrap_or_else(|| home.join(".codex"))
                .join("config.toml"),
        ],
        Preset::Opencode => vec![
            var("XDG_CONFIG_HOME")
                .unwrap_or_else(|| home.join(".config"))
                .join("opencode")
                .join("opencode.json"),
        ],
        Preset::Gemini => vec![home.join(".gemini").join("settings.json")],
        Preset::Pi => vec![home.join(".pi").join("agent").join("settings.json")],
    }
}

/// The environment variables the preset CLI takes credentials from (a login the CLI stored
/// itself works as well).
fn auth_vars(preset: Preset) -> &'static [&'static str] {
    match preset {
        Preset::Claude => &["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"],
        Preset::Codex => &["OPENAI_API_KEY", "CODEX_API_KEY"],
        Preset::Opencode => &["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"],
        Preset::Gemini => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        Preset::Pi => &["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"],
    }
}

fn on_path(bin: &str, env: &ConfigEnv) -> Option<PathBuf> {
    if bin.contains('/') {
        return Path::new(bin).is_file().then(|| PathBuf::from(bin));
    }
    let path = env.path.as_ref()?;
    std::env::split_paths(path)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(bin))
        .find(|p| p.is_file())
}

fn backends(t: &mut String, config: &Config, env: &ConfigEnv) {
    if config.backends.is_empty() {
        t.push_str("  backends: none configured\n");
        return;
    }
    t.push_str("  backends:\n");
    for (name, spec) in &config.backends {
        let default = if config.default_backend.as_deref() == Some(name) {
            " (default)"
        } else {
            ""
        };
        let status = match spec {
            BackendSpec::Preset(p) => {
                let bin = p.bin.as_deref().unwrap_or(p.preset.as_str());
                match on_path(bin, env) {
                    Some(found) => format!("{} found", found.display()),
                    None => format!("'{bin}' not found on PATH"),
                }
            }
            BackendSpec::Command(c) => match c.command.first().and_then(|b| on_path(b, env)) {
                Some(found) => format!("{} found", found.display()),
                None => format!(
                    "'{}' not found on PATH",
                    c.command.first().map_or("", String::as_str)
                ),
            },
            BackendSpec::OpenAi(o) => match &o.api_key_env {
                Some(k) if std::env::var_os(k).is_some_and(|v| !v.is_empty()) => {
                    format!("{k} set")
                }
                Some(k) => format!("{k} unset"),
                None => "no api_key_env".to_owned(),
            },
        };
        t.push_str(&format!(
            "    {name}{default}: {}; {status}\n",
            spec.describe()
        ));
    }
}

/// Runs by status and bytes on disk; cache entries.
fn store(t: &mut String, root: &Path) {
    let dir = runs::runs_dir(root);
    let (list, corrupt) = runs::list_checked(root, None);
    let counts: Vec<String> = [
        "running",
        "interrupted",
        "paused",
        "completed",
        "failed",
        "blocked",
    ]
    .iter()
    .filter_map(|s| {
        let n = list.iter().filter(|e| e.status == *s).count();
        (n > 0).then(|| format!("{n} {s}"))
    })
    .collect();
    t.push_str(&format!(
        "  {}: {} run{}{}, {}\n",
        dir.display(),
        list.len(),
        if list.len() == 1 { "" } else { "s" },
        if counts.is_empty() {
            String::new()
        } else {
            format!(" ({})", counts.join(", "))
        },
        size(dir_bytes(&dir))
    ));
    if !corrupt.is_empty() {
        t.push_str(&format!(
            "  {} run(s) with a corrupt record (`tfc runs` names them)\n",
            corrupt.len()
        ));
    }
    let cache = root.join(".tfc").join("cache");
    let entries = std::fs::read_dir(&cache)
        .map(|rd| rd.filter_map(Result::ok).count())
        .unwrap_or(0);
    t.push_str(&format!(
        "  {}: {entries} entr{}, {}\n",
        cache.display(),
        if entries == 1 { "y" } else { "ies" },
        size(dir_bytes(&cache))
    ));
}

fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.filter_map(Result::ok) {
            match e.file_type() {
                Ok(ft) if ft.is_dir() => stack.push(e.path()),
                Ok(ft) if ft.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}

/// `512 B`, `1.2 KiB`, `3.4 MiB`, `1.0 GiB`.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}
