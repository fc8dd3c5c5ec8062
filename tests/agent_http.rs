//! End to end over the public agent API: a project configuration with an OpenAI-compatible
//! backend (a test server on 127.0.0.1) and an agent definition, a call recorded with
//! `--record`, then the same call answered by `replay:FILE` from that recording.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread;

use tfc::agent::{
    AgentCallRecord, AgentDefinitions, Cancel, Config, ConfigEnv, ConfigRoster, NoProcessBackends,
    Request, Roster, RosterOptions, ToolPolicy,
};
use tfc::flow::AgentScope;

/// Answer one chat-completions request with a streamed reply; return the request body.
fn server() -> (u16, thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let h = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        while !buf.ends_with(b"\r\n\r\n") {
            s.read_exact(&mut byte).unwrap();
            buf.push(byte[0]);
        }
        let head = String::from_utf8(buf).unwrap();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .unwrap()
            .parse()
            .unwrap();
        let mut body = vec![0; len];
        s.read_exact(&mut body).unwrap();
        let events = concat!(
            "data: {\"choices\":[{\"delta\":{\"content\":\"fine\"},\"finish_reason\":\"stop\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":1}}\n\n",
            "data: [DONE]\n\n"
        );
        write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n{events}",
            events.len()
        )
        .unwrap();
        String::from_utf8(body).unwrap()
    });
    (port, h)
}

fn temp_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("tfc-agent-http-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join(".tfc/agents")).unwrap();
    d
}

fn roster(root: &Path, options: RosterOptions) -> ConfigRoster {
    let env = ConfigEnv::default();
    let config = Config::load(root, &env).unwrap();
    let (defs, warnings) = AgentDefinitions::load(root, None, AgentScope::Both);
    assert!(warnings.is_empty(), "{warnings:?}");
    ConfigRoster::new(config, defs, options, env, Arc::new(NoProcessBackends)).unwrap()
}

fn request(roster: &ConfigRoster, agent: &str, prompt: &str) -> Request {
    let a = roster.resolve(agent).unwrap();
    Request {
        system_prompt: a.system_prompt,
        model: a.model,
        thinking: a.thinking,
        tools: ToolPolicy::from_tools(&a.tools),
        ..Request::new("r", "review", agent, prompt)
    }
}

#[test]
fn configured_http_backend_recorded_then_replayed() {
    let root = temp_dir();
    let (port, h) = server();
    std::fs::write(
        root.join(".tfc/config.toml"),
        format!(
            "[backends.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nstream = true\nprice = {{ input_per_mtok = 1, output_per_mtok = 2 }}\n[agents]\n\"*\" = {{ backend = \"local\" }}\ncritic = {{ model = \"{{{{fast}}}}\" }}\n[roles]\nfast = \"small-model\"\n"
        ),
    )
    .unwrap();
    std::fs::write(
        root.join(".tfc/agents/critic.md"),
        "---\nname: critic\ndescription: Reviews work.\n---\nYou review work.\n",
    )
    .unwrap();
    let fixture = root.join("calls.jsonl");

    let recording = roster(
        &root,
        RosterOptions {
            record: Some(fixture.clone()),
            ..RosterOptions::default()
        },
    );
    let resolved = recording.resolve("critic").unwrap();
    assert_eq!(resolved.backend_name, "local");
    assert_eq!(resolved.model.as_deref(), Some("small-model"));
    let req = request(&recording, "critic", "Is it good?");
    let out = smol::block_on(resolved.backend.call(req, Cancel::never()));
    assert!(out.is_ok(), "{out:?}");
    assert_eq!(out.output, "fine");
    assert_eq!((out.usage.input, out.usage.output), (7, 1));
    assert!((out.usage.cost_usd.unwrap() - 9e-6).abs() < 1e-15);

    let sent = h.join().unwrap();
    assert!(sent.contains(r#""model":"small-model""#), "{sent}");
    assert!(
        sent.contains(r#"{"role":"system","content":"You review work."}"#),
        "{sent}"
    );

    let text = std::fs::read_to_string(&fixture).unwrap();
    let record =
        AgentCallRecord::from_value(&tfc::value::parse_json(text.trim_end()).unwrap()).unwrap();
    assert_eq!(record.backend, "local");
    assert_eq!(record.prompt.as_deref(), Some("Is it good?"));

    let replaying = roster(
        &root,
        RosterOptions {
            backend: Some(format!("replay:{}", fixture.display())),
            ..RosterOptions::default()
        },
    );
    let resolved = replaying.resolve("critic").unwrap();
    assert_eq!(resolved.backend_name, "replay");
    let req = request(&replaying, "critic", "Is it good?");
    let again = smol::block_on(resolved.backend.call(req, Cancel::never()));
    assert_eq!(again.output, "fine");
    assert_eq!(again.usage, out.usage);

    let req = request(&replaying, "critic", "Is it better?");
    let miss = smol::block_on(resolved.backend.call(req, Cancel::never()));
    assert!(tfc::agent::is_replay_miss(&miss));
    assert!(miss.error.unwrap().ends_with("(prompt differs)"));
    std::fs::remove_dir_all(root).ok();
}
