//! `kind = "openai"` (SPEC §9.7): any OpenAI-compatible chat-completions server (Ollama,
//! vLLM, llama.cpp, LM Studio, hosted APIs).
//!
//! One `POST {base_url}/chat/completions` per call with body `{"model", "messages":
//! [system (if non-empty), user], "stream"}` (+ `"stream_options": {"include_usage": true}`
//! when streaming). A streamed answer is read as SSE `data:` lines as they arrive, so the idle
//! limit is the gap between bytes; `data: [DONE]` ends it. No tools.
//!
//! Failures are outcomes: status ≥ 400 ⇒ `HTTP <status>: <body ≤ 4096 chars>` (so 429 and 5xx
//! read as transient to the interpreter's retry rule); connection errors carry the OS text;
//! `finish_reason: "length"` is a success with the warning
//! `output truncated (finish_reason=length)`.

use std::time::Instant;

use serde_json::{Value as Json, json};

use super::http::{Guard, HttpError, Response, Url, post};
use crate::agent::call::{
    Agent, BoxFuture, Outcome, Request, StopReason, Usage, idle_timeout_error,
};
use crate::process::Cancel;

/// Prices in USD per million tokens; enables `costUSD`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    /// USD per million input tokens.
    pub input_per_mtok: f64,
    /// USD per million output tokens.
    pub output_per_mtok: f64,
}

/// A `[backends.NAME]` table with `kind = "openai"`.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenAiConfig {
    /// e.g. `http://127.0.0.1:11434/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// Used when the request names no model.
    pub model: Option<String>,
    /// The environment variable holding the API key (never the key itself).
    pub api_key_env: Option<String>,
    /// Default `true`.
    pub stream: bool,
    /// Prices to compute a cost from the token counts (the API reports none).
    pub price: Option<Price>,
}

impl OpenAiConfig {
    /// A config for `base_url` with the defaults: no model, no key, streaming, no price.
    pub fn new(base_url: impl Into<String>) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.into(),
            model: None,
            api_key_env: None,
            stream: true,
            price: None,
        }
    }
}

/// The OpenAI-compatible HTTP backend.
pub struct OpenAiBackend {
    config: OpenAiConfig,
    url: Url,
    api_key: Option<String>,
}

/// Error bodies are cut to this many chars in messages.
const ERROR_BODY_CHARS: usize = 4096;
/// A non-streamed answer larger than this is refused.
const MAX_BODY: usize = 64 * 1024 * 1024;

impl OpenAiBackend {
    /// Reads the API key from `$<api_key_env>` now; an unset variable means no
    /// `Authorization` header. `Err` for an unusable `base_url`.
    pub fn new(config: OpenAiConfig) -> Result<OpenAiBackend, String> {
        let key = config
            .api_key_env
            .as_deref()
            .and_then(|v| std::env::var(v).ok())
            .filter(|k| !k.is_empty());
        OpenAiBackend::with_api_key(config, key)
    }

    /// With an explicit key (`None`: no `Authorization` header).
    pub fn with_api_key(
        config: OpenAiConfig,
        api_key: Option<String>,
    ) -> Result<OpenAiBackend, String> {
        let mut url = Url::parse(&config.base_url)?;
        url.path = format!("{}/chat/completions", url.path.trim_end_matches('/'));
        Ok(OpenAiBackend {
            config,
            url,
            api_key,
        })
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// The request body for `request` answered by `model`.
    pub fn body(&self, request: &Request, model: &str) -> Json {
        let mut messages = Vec::new();
        if !request.system_prompt.is_empty() {
            messages.push(json!({"role": "system", "content": request.system_prompt}));
        }
        messages.push(json!({"role": "user", "content": request.prompt}));
        let mut body = json!({"model": model, "messages": messages, "stream": self.config.stream});
        if self.config.stream {
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }

    async fn run(&self, request: Request, cancel: Cancel) -> Outcome {
        let Some(model) = request.model.clone().or_else(|| self.config.model.clone()) else {
            return Outcome::failed(
                StopReason::Failed,
                "no model for the OpenAI-compatible backend: set `model` in its [backends.NAME] table or in [agents]",
            );
        };
        let guard = Guard {
            cancel,
            idle: request.idle_timeout,
            deadline: request.wall_timeout.map(|d| Instant::now() + d),
        };
        let mut acc = Answer {
            stream: self.config.stream,
            ..Answer::default()
        };
        let result = self.exchange(&request, &model, &guard, &mut acc).await;
        let too_large = matches!(result, Err(Failure::TooLarge(_)));
        let mut o = Outcome::ok(if too_large {
            // An answer over the cap is not kept.
            String::new()
        } else {
            std::mem::take(&mut acc.text)
        });
        o.model = acc.model.take().or(Some(model));
        o.usage = self.usage(&acc);
        // A request the server answered is one turn, whatever it answered: a refused call
        // records the same usage shape as in the CLI presets (one turn, no tokens, cost null).
        if matches!(
            result,
            Ok(()) | Err(Failure::Status(_) | Failure::Protocol(_))
        ) {
            o.usage.turns = o.usage.turns.max(1);
        }
        if acc.usage.is_none() && result.is_ok() {
            o.warnings
                .push("the server reported no usage (tokens and cost unknown)".into());
        }
        match result {
            Ok(()) => {
                if acc.finish_reason.as_deref() == Some("length") {
                    o.warnings
                        .push("output truncated (finish_reason=length)".into());
                }
            }
            Err(f) => {
                let (stop, error) = match f {
                    Failure::Http(HttpError::Cancelled) => {
                        (StopReason::Cancelled, "Aborted".into())
                    }
                    Failure::Http(HttpError::Idle) => (
                        StopReason::IdleTimeout,
                        idle_timeout_error(request.idle_timeout.unwrap_or_default().as_millis()),
                    ),
                    Failure::Http(HttpError::Wall) => (
                        StopReason::WallTimeout,
                        format!(
                            "Phase timed out after {}ms (subagent aborted)",
                            request.wall_timeout.unwrap_or_default().as_millis()
                        ),
                    ),
                    Failure::Http(HttpError::Io(e)) => (StopReason::Failed, e),
                    Failure::Status(e) => (StopReason::Failed, e),
                    Failure::Protocol(e) => (StopReason::ProtocolError, e),
                    Failure::TooLarge(cap) => {
                        (StopReason::Failed, crate::process::output_cap_error(cap))
                    }
                };
                o.stop = stop;
                o.error = Some(error);
            }
        }
        o
    }

    async fn exchange(
        &self,
        request: &Request,
        model: &str,
        guard: &Guard,
        acc: &mut Answer,
    ) -> Result<(), Failure> {
        let body = self.body(request, model).to_string();
        let mut headers = vec![
            ("Content-Type", "application/json".to_owned()),
            (
                "Accept",
                if self.config.stream {
                    "text/event-stream"
                } else {
                    "application/json"
                }
                .to_owned(),
            ),
            (
                "User-Agent",
                concat!("tfc/", env!("CARGO_PKG_VERSION")).to_owned(),
            ),
        ];
        if let Some(key) = &self.api_key {
            headers.push(("Authorization", format!("Bearer {key}")));
        }
        let mut resp = post(&self.url, &headers, body.as_bytes(), guard).await?;
        if !(200..300).contains(&resp.status) {
            let raw = resp.read_to_end(guard, 64 * 1024).await?;
            let text = String::from_utf8_lossy(&raw);
            let text: String = text.trim_end().chars().take(ERROR_BODY_CHARS).collect();
            return Err(Failure::Status(format!("HTTP {}: {text}", resp.status)));
        }
        let event_stream = resp
            .header("content-type")
            .is_some_and(|t| t.to_ascii_lowercase().contains("text/event-stream"));
        if self.config.stream && event_stream {
            read_stream(&mut resp, guard, acc).await
        } else {
            // Not streaming, or a server that answered a streaming request with plain JSON.
            acc.stream = false;
            let cap = crate::process::max_output();
            let limit = MAX_BODY.min(body_limit(cap));
            let raw = resp.read_to_end(guard, limit + 1).await?;
            if raw.len() > limit {
                return Err(if limit < MAX_BODY {
                    Failure::TooLarge(cap)
                } else {
                    Failure::Protocol(format!("response body exceeds {MAX_BODY} bytes"))
                });
            }
            let v: Json = serde_json::from_slice(&raw).map_err(|e| {
                Failure::Protocol(format!(
                    "response is not JSON ({e}): {}",
                    cut(&String::from_utf8_lossy(&raw))
                ))
            })?;
            acc.apply(&v)?;
            if acc.text.len() > cap {
                return Err(Failure::TooLarge(cap));
            }
            if !acc.saw_choice {
                return Err(Failure::Protocol(format!(
                    "response has no choices: {}",
                    cut(&String::from_utf8_lossy(&raw))
                )));
            }
            Ok(())
        }
    }

    fn usage(&self, acc: &Answer) -> Usage {
        let Some(u) = &acc.usage else {
            return Usage::default();
        };
        let n = |v: &Json| v.as_u64().unwrap_or(0);
        let input = n(&u["prompt_tokens"]);
        let output = n(&u["completion_tokens"]);
        Usage {
            input,
            output,
            cache_read: n(&u["prompt_tokens_details"]["cached_tokens"]),
            cache_write: 0,
            cost_usd: self.config.price.map(|p| {
                (input as f64 * p.input_per_mtok + output as f64 * p.output_per_mtok) / 1e6
            }),
            turns: 1,
            calls: 0,
        }
    }
}

fn cut(s: &str) -> String {
    s.trim_end().chars().take(ERROR_BODY_CHARS).collect()
}

/// Read SSE lines as they arrive until `data: [DONE]` or the end of the body.
/// Stops (and drops what it has) once the answer passes the output cap.
async fn read_stream(resp: &mut Response, guard: &Guard, acc: &mut Answer) -> Result<(), Failure> {
    let cap = crate::process::max_output();
    let mut pending: Vec<u8> = Vec::new();
    while let Some(bytes) = resp.chunk(guard).await? {
        pending.extend_from_slice(&bytes);
        if acc.text.len() > cap || pending.len() > body_limit(cap) {
            return Err(Failure::TooLarge(cap));
        }
        let mut start = 0;
        while let Some(nl) = pending[start..].iter().position(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(&pending[start..start + nl]).into_owned();
            start += nl + 1;
            acc.line(line.trim_end_matches('\r'))?;
            if acc.done {
                return Ok(());
            }
        }
        pending.drain(..start);
    }
    if !pending.is_empty() {
        let line = String::from_utf8_lossy(&pending).into_owned();
        acc.line(line.trim_end_matches('\r'))?;
    }
    if acc.done || acc.finish_reason.is_some() {
        Ok(())
    } else {
        Err(Failure::Http(HttpError::Io(
            "the server closed the stream before `data: [DONE]`".into(),
        )))
    }
}

/// The most response bytes read to find an answer of at most `cap` bytes: JSON escaping
/// may double the text (`\n`), plus room for the envelope.
fn body_limit(cap: usize) -> usize {
    cap.saturating_mul(2).saturating_add(1024 * 1024)
}

enum Failure {
    /// The answer passed the output cap (`[limits] max_output_bytes`).
    TooLarge(usize),
    Http(HttpError),
    /// Status ≥ 400 (or another non-2xx final status).
    Status(String),
    /// A 2xx answer we cannot read.
    Protocol(String),
}

impl From<HttpError> for Failure {
    fn from(e: HttpError) -> Failure {
        Failure::Http(e)
    }
}

/// What the response said so far.
#[derive(Default)]
struct Answer {
    stream: bool,
    text: String,
    usage: Option<Json>,
    finish_reason: Option<String>,
    model: Option<String>,
    saw_choice: bool,
    done: bool,
}

impl Answer {
    /// One SSE line.
    fn line(&mut self, line: &str) -> Result<(), Failure> {
        let Some(data) = line.strip_prefix("data:") else {
            return Ok(()); // `event:`, `id:`, `retry:`, comments, blank separators
        };
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let v: Json = serde_json::from_str(data)
            .map_err(|e| Failure::Protocol(format!("invalid stream chunk ({e}): {}", cut(data))))?;
        self.apply(&v)
    }

    /// One chunk (streaming) or the whole response.
    fn apply(&mut self, v: &Json) -> Result<(), Failure> {
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            let msg = match err.get("message").and_then(Json::as_str) {
                Some(m) => format!("server error: {m} ({})", err),
                None => format!("server error: {err}"),
            };
            return Err(Failure::Status(cut(&msg)));
        }
        if let Some(m) = v
            .get("model")
            .and_then(Json::as_str)
            .filter(|m| !m.is_empty())
        {
            self.model = Some(m.to_owned());
        }
        if let Some(choice) = v.get("choices").and_then(|c| c.get(0)) {
            self.saw_choice = true;
            let part = if self.stream { "delta" } else { "message" };
            if let Some(t) = choice
                .get(part)
                .and_then(|d| d.get("content"))
                .and_then(Json::as_str)
            {
                self.text.push_str(t);
            }
            if let Some(r) = choice.get("finish_reason").and_then(Json::as_str) {
                self.finish_reason = Some(r.to_owned());
            }
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        Ok(())
    }
}

impl Agent for OpenAiBackend {
    fn name(&self) -> &str {
        "openai"
    }

    fn call<'a>(&'a self, request: Request, cancel: Cancel) -> BoxFuture<'a, Outcome> {
        Box::pin(self.run(request, cancel))
    }

    fn reports_tokens(&self) -> bool {
        true
    }

    fn reports_cost(&self) -> bool {
        self.config.price.is_some()
    }

    /// It runs no tools, so it cannot write.
    fn sandboxed(&self) -> bool {
        true
    }

    fn supports_tools(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::record::tests::request;
    use crate::process::CancelSource;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::thread::{self, JoinHandle};
    use std::time::Duration;

    /// What the test server received: head and body.
    struct Received {
        head: String,
        body: Json,
    }

    /// Serve one connection on 127.0.0.1 with `respond`; returns the base URL and a handle
    /// yielding the request.
    fn serve(
        respond: impl FnOnce(&mut TcpStream) + Send + 'static,
    ) -> (String, JoinHandle<Received>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}/v1", listener.local_addr().unwrap());
        let h = thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
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
            respond(&mut s);
            Received {
                head,
                body: serde_json::from_slice(&body).unwrap(),
            }
        });
        (base, h)
    }

    fn chunked(s: &mut TcpStream, content_type: &str, parts: &[&str], gap: Duration) {
        write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        .unwrap();
        for p in parts {
            write!(s, "{:x}\r\n{p}\r\n", p.len()).unwrap();
            s.flush().unwrap();
            thread::sleep(gap);
        }
        // The client may already have hung up after `data: [DONE]`: that is not a failure.
        let _ = write!(s, "0\r\n\r\n");
    }

    fn plain(s: &mut TcpStream, status: &str, body: &str) {
        write!(
            s,
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
    }

    fn backend(base: &str, stream: bool, price: Option<Price>) -> OpenAiBackend {
        let mut c = OpenAiConfig::new(base);
        c.model = Some("test-model".into());
        c.stream = stream;
        c.price = price;
        OpenAiBackend::with_api_key(c, Some("sk-test".into())).unwrap()
    }

    fn call(b: &OpenAiBackend, r: Request) -> Outcome {
        smol::block_on(b.call(r, Cancel::never()))
    }

    #[test]
    fn streaming_answer_usage_and_request_shape() {
        let (base, h) = serve(|s| {
            chunked(
                s,
                "text/event-stream",
                &[
                    "data: {\"model\":\"served\",\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n",
                    ": keep-alive\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo, \"}}]}\r\n\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"wor",
                    "ld\"},\"finish_reason\":\"stop\"}]}\n\n",
                    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"prompt_tokens_details\":{\"cached_tokens\":8}}}\n\n",
                    "data: [DONE]\n\n",
                ],
                Duration::from_millis(20),
            )
        });
        let b = backend(&base, true, None);
        let mut r = request("plan", "scout", "Say hello");
        r.system_prompt = "Be brief.".into();
        let o = call(&b, r);
        assert!(o.is_ok(), "{o:?}");
        assert_eq!(o.output, "Hello, world");
        assert_eq!(o.model.as_deref(), Some("served"));
        assert_eq!(
            o.usage,
            Usage {
                calls: 0,
                input: 12,
                output: 3,
                cache_read: 8,
                cache_write: 0,
                cost_usd: None,
                turns: 1
            }
        );
        assert!(o.warnings.is_empty());
        let got = h.join().unwrap();
        assert!(
            got.head
                .starts_with("POST /v1/chat/completions HTTP/1.1\r\n")
        );
        assert!(got.head.contains("\r\nAuthorization: Bearer sk-test\r\n"));
        assert_eq!(
            got.body,
            json!({"model": "test-model", "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Say hello"}],
                "stream": true, "stream_options": {"include_usage": true}})
        );
    }

    #[test]
    fn non_streaming_with_price_and_request_model() {
        let (base, h) = serve(|s| {
            plain(
                s,
                "200 OK",
                r#"{"choices":[{"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000000,"completion_tokens":500000}}"#,
            )
        });
        let b = backend(
            &format!("{base}/"),
            false,
            Some(Price {
                input_per_mtok: 0.15,
                output_per_mtok: 0.6,
            }),
        );
        assert!(b.reports_cost() && b.reports_tokens() && !b.supports_tools());
        let mut r = request("x", "a", "p");
        r.model = Some("override".into());
        let o = call(&b, r);
        assert!(o.is_ok(), "{o:?}");
        assert_eq!(o.output, "done");
        assert_eq!((o.usage.input, o.usage.output), (1_000_000, 500_000));
        assert!((o.usage.cost_usd.unwrap() - 0.45).abs() < 1e-12);
        let got = h.join().unwrap();
        assert_eq!(
            got.body,
            json!({"model": "override", "messages": [{"role": "user", "content": "p"}], "stream": false})
        );
    }

    #[test]
    fn length_finish_is_a_success_with_a_warning() {
        let (base, _h) = serve(|s| {
            plain(
                s,
                "200 OK",
                r#"{"choices":[{"message":{"content":"cut"},"finish_reason":"length"}]}"#,
            )
        });
        let o = call(&backend(&base, false, None), request("x", "a", "p"));
        assert!(o.is_ok());
        assert_eq!(o.output, "cut");
        assert!(
            o.warnings
                .contains(&"output truncated (finish_reason=length)".to_owned())
        );
        assert!(o.warnings.iter().any(|w| w.contains("no usage")));
    }

    #[test]
    fn http_errors_carry_status_and_body() {
        let (base, _h) = serve(|s| {
            plain(
                s,
                "429 Too Many Requests",
                r#"{"error":{"message":"Rate limit reached"}}"#,
            )
        });
        let o = call(&backend(&base, true, None), request("x", "a", "p"));
        assert_eq!(o.stop, StopReason::Failed);
        assert_eq!(
            o.error.as_deref(),
            Some(r#"HTTP 429: {"error":{"message":"Rate limit reached"}}"#)
        );
        // A refused request is one turn with unknown cost, as in every CLI preset.
        assert_eq!(
            (o.usage.turns, o.usage.input, o.usage.cost_usd),
            (1, 0, None)
        );

        let long = "x".repeat(10_000);
        let (base, _h) = serve(move |s| plain(s, "500 Internal Server Error", &long));
        let o = call(&backend(&base, false, None), request("x", "a", "p"));
        let e = o.error.unwrap();
        assert!(e.starts_with("HTTP 500: xxx"));
        assert_eq!(e.chars().count(), "HTTP 500: ".len() + 4096);
    }

    #[test]
    fn connection_errors_carry_the_os_text() {
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let o = call(
            &backend(&format!("http://127.0.0.1:{port}/v1"), true, None),
            request("x", "a", "p"),
        );
        assert_eq!(o.stop, StopReason::Failed);
        assert_eq!(o.usage.turns, 0, "no server answered, so no turn was taken");
        let e = o.error.unwrap();
        assert!(
            e.starts_with(&format!("cannot connect to 127.0.0.1:{port}: ")),
            "{e}"
        );
        assert!(e.to_lowercase().contains("refused"), "{e}");
    }

    #[test]
    fn idle_timeout_keeps_partial_output() {
        let (base, _h) = serve(|s| {
            write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
            )
            .unwrap();
            write!(
                s,
                "data: {{\"choices\":[{{\"delta\":{{\"content\":\"par\"}}}}]}}\n\n"
            )
            .unwrap();
            s.flush().unwrap();
            thread::sleep(Duration::from_millis(1500));
        });
        let mut r = request("x", "a", "p");
        r.idle_timeout = Some(Duration::from_millis(300));
        let start = Instant::now();
        let o = call(&backend(&base, true, None), r);
        assert!(start.elapsed() < Duration::from_millis(1400));
        assert_eq!(o.stop, StopReason::IdleTimeout);
        assert_eq!(o.output, "par");
        assert_eq!(
            o.error.as_deref(),
            Some("Subagent produced no output for 300ms (idle timeout)")
        );
    }

    #[test]
    fn wall_timeout_while_bytes_keep_coming() {
        let (base, _h) = serve(|s| {
            write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
            )
            .unwrap();
            for _ in 0..30 {
                if write!(
                    s,
                    "data: {{\"choices\":[{{\"delta\":{{\"content\":\".\"}}}}]}}\n\n"
                )
                .is_err()
                {
                    break;
                }
                thread::sleep(Duration::from_millis(50));
            }
        });
        let mut r = request("x", "a", "p");
        r.idle_timeout = Some(Duration::from_millis(5000));
        r.wall_timeout = Some(Duration::from_millis(400));
        let o = call(&backend(&base, true, None), r);
        assert_eq!(o.stop, StopReason::WallTimeout, "{o:?}");
        assert!(o.output.starts_with('.'));
        assert_eq!(
            o.error.as_deref(),
            Some("Phase timed out after 400ms (subagent aborted)")
        );
    }

    #[test]
    fn cancellation_ends_a_stalled_call() {
        let (base, _h) = serve(|_s| thread::sleep(Duration::from_millis(1500)));
        let b = backend(&base, true, None);
        let src = CancelSource::new();
        let token = src.token();
        let canceller = thread::spawn(move || {
            thread::sleep(Duration::from_millis(150));
            src.cancel();
        });
        let start = Instant::now();
        let o = smol::block_on(b.call(request("x", "a", "p"), token));
        assert!(start.elapsed() < Duration::from_millis(1200));
        assert_eq!(o.stop, StopReason::Cancelled);
        canceller.join().unwrap();
    }

    #[test]
    fn stream_cut_before_done_and_garbage_chunks_fail() {
        let (base, _h) = serve(|s| {
            chunked(
                s,
                "text/event-stream",
                &["data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"],
                Duration::ZERO,
            )
        });
        let o = call(&backend(&base, true, None), request("x", "a", "p"));
        assert_eq!(o.stop, StopReason::Failed);
        assert_eq!(o.output, "a");
        assert!(o.error.unwrap().contains("[DONE]"));

        let (base, _h) =
            serve(|s| chunked(s, "text/event-stream", &["data: {nope\n\n"], Duration::ZERO));
        let o = call(&backend(&base, true, None), request("x", "a", "p"));
        assert_eq!(o.stop, StopReason::ProtocolError);
        assert!(o.error.unwrap().starts_with("invalid stream chunk"));
    }

    #[test]
    fn streaming_request_answered_with_plain_json() {
        let (base, _h) = serve(|s| {
            plain(
                s,
                "200 OK",
                r#"{"choices":[{"message":{"content":"whole"}}]}"#,
            )
        });
        let o = call(&backend(&base, true, None), request("x", "a", "p"));
        assert!(o.is_ok(), "{o:?}");
        assert_eq!(o.output, "whole");
    }

    #[test]
    fn https_goes_through_tls() {
        // A plain-TCP server that answers the TLS ClientHello with garbage: the handshake
        // must fail with a message naming it (no network beyond loopback).
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let h = thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut hello = [0u8; 5];
            s.read_exact(&mut hello).unwrap();
            s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").unwrap();
            hello
        });
        let o = call(
            &backend(&format!("https://127.0.0.1:{port}/v1"), true, None),
            request("x", "a", "p"),
        );
        assert_eq!(o.stop, StopReason::Failed);
        let e = o.error.unwrap();
        assert!(
            e.starts_with(&format!("TLS handshake with 127.0.0.1:{port} failed: ")),
            "{e}"
        );
        assert_eq!(
            h.join().unwrap()[0],
            0x16,
            "a TLS handshake record was sent"
        );
    }

    #[test]
    fn no_model_anywhere() {
        let b =
            OpenAiBackend::with_api_key(OpenAiConfig::new("http://127.0.0.1:9/v1"), None).unwrap();
        let o = call(&b, request("x", "a", "p"));
        assert!(o.error.unwrap().starts_with("no model"));
        assert!(OpenAiBackend::new(OpenAiConfig::new("localhost:11434")).is_err());
    }
}
