//! The `agent-call` record (SPEC §9.8, §10.3) — one line of a run's journal and of a replay
//! fixture — and the [`Recorder`] behind `--record FILE`.
//!
//! The journal and `--record` write the same shape, so a run's `journal.jsonl` can be replayed
//! as it is:
//!
//! ```json
//! {"type":"agent-call","ts":"2026-01-02T03:04:05.678Z","node":"audit#3","agent":"scout",
//!  "promptSha256":"…","attempt":1,"backend":"claude","model":"claude-haiku-4-5","ok":true,
//!  "output":"…","error":null,"usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,
//!  "costUSD":0.0001,"turns":1},"stopReason":"completed","durationMs":1234,"prompt":"…"}
//! ```

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use serde::{Deserialize, Serialize};

use super::wire::{self, Cost, Count, Flag, Object, Seen, Text};
use crate::agent::call::{Agent, BoxFuture, Outcome, Request, StopReason, Usage};
use crate::process::Cancel;
use crate::value::Value;

/// One model call as the journal records it. Serialized (`#[derive(Serialize)]`) as the
/// journal line shown above: `type` first, keys in field order, `prompt` only when present.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename = "agent-call", rename_all = "camelCase")]
pub struct AgentCallRecord {
    /// RFC 3339 UTC with milliseconds, e.g. `2026-01-02T03:04:05.678Z`.
    pub ts: String,
    /// The call's node (`audit#3`, `fix@2`, `sub/check#judge`, …).
    pub node: String,
    /// The agent the flow named.
    pub agent: String,
    /// Lowercase hex SHA-256 of the UTF-8 prompt (system prompt excluded).
    pub prompt_sha256: String,
    /// 1-based.
    pub attempt: u32,
    /// The backend's configured name (`claude`, `local`, `replay`, …).
    pub backend: String,
    /// The model that answered (or was asked for), when known.
    pub model: Option<String>,
    /// Did the call succeed?
    pub ok: bool,
    /// The answer (on failure: whatever partial output there was).
    pub output: String,
    /// Why it failed.
    pub error: Option<String>,
    /// Tokens and cost.
    pub usage: Usage,
    /// How the call ended.
    pub stop_reason: StopReason,
    /// Wall time of the call.
    pub duration_ms: u64,
    /// The prompt itself: written by `--record`, optional in the journal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// The record as read back: every field optional and lenient about `null`; the rules of
/// [`AgentCallRecord::from_value`] are applied to it afterwards.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct RecordIn {
    ts: Text,
    node: Text,
    agent: Text,
    prompt_sha256: Text,
    attempt: Option<Count>,
    backend: Text,
    model: Text,
    ok: Flag,
    output: Text,
    error: Text,
    usage: Object<UsageIn>,
    stop_reason: Text,
    duration_ms: Count,
    prompt: Text,
}

/// `usage` as read back: absent or `null` counts are 0, an absent or `null` cost unknown.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct UsageIn {
    input: Seen<Count>,
    output: Seen<Count>,
    cache_read: Count,
    cache_write: Count,
    #[serde(rename = "costUSD")]
    cost_usd: Cost,
    turns: Count,
}

impl From<UsageIn> for Usage {
    fn from(u: UsageIn) -> Usage {
        Usage {
            input: u.input.1.0,
            output: u.output.1.0,
            cache_read: u.cache_read.0,
            cache_write: u.cache_write.0,
            cost_usd: u.cost_usd.0,
            turns: u32::try_from(u.turns.0).unwrap_or(u32::MAX),
            calls: 0,
        }
    }
}

/// Lowercase hex SHA-256 of `prompt`'s UTF-8 bytes.
pub fn prompt_sha256(prompt: &str) -> String {
    hex(&Sha256::digest(prompt.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// `time` as RFC 3339 UTC with milliseconds (`2026-01-02T03:04:05.678Z`), the journal's `ts`.
pub(crate) fn rfc3339_ms(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

impl AgentCallRecord {
    /// The record of one finished call, stamped now. `backend` is the configured backend name;
    /// the model is the one the backend reported, else the one requested.
    pub fn from_call(
        request: &Request,
        backend: &str,
        outcome: &Outcome,
        duration: Duration,
        with_prompt: bool,
    ) -> AgentCallRecord {
        AgentCallRecord {
            ts: rfc3339_ms(SystemTime::now()),
            node: request.node.clone(),
            agent: request.agent.clone(),
            prompt_sha256: prompt_sha256(&request.prompt),
            attempt: request.attempt,
            backend: backend.to_owned(),
            model: outcome.model.clone().or_else(|| request.model.clone()),
            ok: outcome.is_ok(),
            output: outcome.output.clone(),
            error: outcome.error.clone(),
            usage: outcome.usage,
            stop_reason: outcome.stop,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            prompt: with_prompt.then(|| request.prompt.clone()),
        }
    }

    /// The outcome this record replays: its output, usage, model, stop reason and error
    /// (`ok:false` with a `completed` stop reason replays as `failed`).
    pub fn to_outcome(&self) -> Outcome {
        let mut o = Outcome::ok(self.output.clone());
        o.usage = self.usage;
        o.model = self.model.clone();
        if !self.ok {
            o.stop = match self.stop_reason {
                StopReason::Completed => StopReason::Failed,
                s => s,
            };
            o.error = Some(
                self.error
                    .clone()
                    .unwrap_or_else(|| "replayed failure (the record has no error)".to_owned()),
            );
        }
        o
    }

    /// The journal object, keys in the documented order; `prompt` only when present.
    pub fn to_value(&self) -> Value {
        wire::to_value(self)
    }

    /// One compact JSON line, without the newline.
    pub fn to_json_line(&self) -> String {
        self.to_value().to_json()
    }

    /// Read a record back. Required: `type` = `agent-call`, `node`, `agent`, `ok`, and
    /// `promptSha256` or `prompt` (the hash is computed from the prompt when absent; both
    /// present must agree). Everything else defaults: `attempt` 1, `output` `""`, `usage`
    /// zero with unknown cost, `stopReason` `completed`/`failed` after `ok`, the rest empty.
    /// A present field of the wrong type is an error naming it.
    pub fn from_value(v: &Value) -> Result<AgentCallRecord, String> {
        AgentCallRecord::read(v).map(|(r, _)| r)
    }

    /// [`from_value`](Self::from_value), and whether the record's `usage` carries token counts
    /// (an `input` or `output` key, even `null`), which tells replay its backend reports them.
    pub(crate) fn read(v: &Value) -> Result<(AgentCallRecord, bool), String> {
        let o = v.as_object().ok_or("not a JSON object")?;
        match o.get("type") {
            Some(Value::String(t)) if t == "agent-call" => {}
            Some(Value::String(t)) => return Err(format!("type is '{t}', not 'agent-call'")),
            _ => return Err("missing \"type\": \"agent-call\"".into()),
        }
        let r: RecordIn = wire::from_value(v)?;
        let tokens = r.usage.0.input.0 || r.usage.0.output.0;
        let prompt = r.prompt.0;
        let sha = match (r.prompt_sha256.0, &prompt) {
            (Some(h), p) => {
                let h = h.to_ascii_lowercase();
                if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(format!(
                        "\"promptSha256\" must be 64 hex digits, found '{h}'"
                    ));
                }
                if let Some(p) = p
                    && prompt_sha256(p) != h
                {
                    return Err("\"promptSha256\" does not match \"prompt\"".into());
                }
                h
            }
            (None, Some(p)) => prompt_sha256(p),
            (None, None) => return Err("missing \"promptSha256\" (or \"prompt\")".into()),
        };
        let ok = r.ok.0.ok_or("missing \"ok\"")?;
        let stop_reason = match r.stop_reason.0 {
            Some(s) => StopReason::parse(&s).ok_or_else(|| {
                format!("unknown \"stopReason\" '{s}' (expected completed, failed, idle-timeout, wall-timeout, cancelled, protocol-error, permission-denied or backend-missing)")
            })?,
            None if ok => StopReason::Completed,
            None => StopReason::Failed,
        };
        let record = AgentCallRecord {
            ts: r.ts.0.unwrap_or_default(),
            node: r.node.0.ok_or("missing \"node\"")?,
            agent: r.agent.0.ok_or("missing \"agent\"")?,
            prompt_sha256: sha,
            attempt: r
                .attempt
                .map_or(1, |n| u32::try_from(n.0).unwrap_or(u32::MAX)),
            backend: r.backend.0.unwrap_or_default(),
            model: r.model.0,
            ok,
            output: r.output.0.unwrap_or_default(),
            error: r.error.0,
            usage: r.usage.0.into(),
            stop_reason,
            duration_ms: r.duration_ms.0,
            prompt,
        };
        Ok((record, tokens))
    }
}

/// An append-only JSONL file shared by every [`Recorder`] of a run: each record is written
/// as one line with a single `write` under a lock, then flushed, so concurrent calls never
/// interleave.
#[derive(Debug)]
pub struct RecordSink {
    path: PathBuf,
    file: Mutex<File>,
}

impl RecordSink {
    /// Open `path` for appending, creating it (not its directory) when missing.
    pub fn open(path: &Path) -> Result<RecordSink, String> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open record file '{}': {e}", path.display()))?;
        Ok(RecordSink {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// The file records are appended to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one record as a line and flush it.
    pub fn append(&self, record: &AgentCallRecord) -> Result<(), String> {
        let mut line = record.to_json_line();
        line.push('\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|e| format!("cannot write record file '{}': {e}", self.path.display()))
    }
}

/// `--record FILE`: wraps a backend and appends an `agent-call` record (prompt included) per
/// call. A failed write does not fail the call; it adds a warning to the outcome.
pub struct Recorder {
    inner: Arc<dyn Agent>,
    backend_name: String,
    sink: Arc<RecordSink>,
}

impl Recorder {
    /// `backend_name` is what the records' `backend` field says (the configured name).
    pub fn new(
        inner: Arc<dyn Agent>,
        backend_name: impl Into<String>,
        sink: Arc<RecordSink>,
    ) -> Recorder {
        Recorder {
            inner,
            backend_name: backend_name.into(),
            sink,
        }
    }
}

impl Agent for Recorder {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn available(&self) -> Result<(), String> {
        self.inner.available()
    }

    fn call<'a>(&'a self, request: Request, cancel: Cancel) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let start = Instant::now();
            let mut outcome = self.inner.call(request.clone(), cancel).await;
            let record = AgentCallRecord::from_call(
                &request,
                &self.backend_name,
                &outcome,
                start.elapsed(),
                true,
            );
            if let Err(e) = self.sink.append(&record) {
                outcome.warnings.push(e);
            }
            outcome
        })
    }

    fn reports_tokens(&self) -> bool {
        self.inner.reports_tokens()
    }

    fn reports_cost(&self) -> bool {
        self.inner.reports_cost()
    }

    fn sandboxed(&self) -> bool {
        self.inner.sandboxed()
    }

    fn supports_tools(&self) -> bool {
        self.inner.supports_tools()
    }

    fn uses_system_prompt(&self) -> bool {
        self.inner.uses_system_prompt()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    use crate::value::parse_json;

    pub(crate) fn request(node: &str, agent: &str, prompt: &str) -> Request {
        Request::new("run-1", node, agent, prompt)
    }

    pub(crate) fn sample() -> AgentCallRecord {
        AgentCallRecord {
            ts: "2026-01-02T03:04:05.678Z".into(),
            node: "audit#3".into(),
            agent: "scout".into(),
            prompt_sha256: prompt_sha256("hello"),
            attempt: 2,
            backend: "local".into(),
            model: Some("qwen".into()),
            ok: true,
            output: "answer \"quoted\"\n".into(),
            error: None,
            usage: Usage {
                calls: 0,
                input: 10,
                output: 5,
                cache_read: 3,
                cache_write: 0,
                cost_usd: Some(0.25),
                turns: 1,
            },
            stop_reason: StopReason::Completed,
            duration_ms: 1234,
            prompt: Some("hello".into()),
        }
    }

    #[test]
    fn sha256_is_lowercase_hex() {
        assert_eq!(
            prompt_sha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339_ms(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_709_210_096_789); // a leap day
        assert_eq!(rfc3339_ms(t), "2024-02-29T12:34:56.789Z");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(rfc3339_ms(t), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn round_trip_and_key_order() {
        let r = sample();
        let line = r.to_json_line();
        assert!(line.starts_with(
            r#"{"type":"agent-call","ts":"2026-01-02T03:04:05.678Z","node":"audit#3","agent":"scout","promptSha256":""#
        ));
        assert!(line.contains(r#""usage":{"input":10,"output":5,"cacheRead":3,"cacheWrite":0,"costUSD":0.25,"turns":1},"stopReason":"completed","durationMs":1234,"prompt":"hello"}"#), "{line}");
        let back = AgentCallRecord::from_value(&parse_json(&line).unwrap()).unwrap();
        assert_eq!(back, r);

        let mut f = sample();
        f.ok = false;
        f.prompt = None;
        f.error = Some("HTTP 500: boom".into());
        f.stop_reason = StopReason::Failed;
        f.usage.cost_usd = None;
        let line = f.to_json_line();
        assert!(line.contains(r#""costUSD":null"#) && !line.contains("\"prompt\""));
        assert_eq!(
            AgentCallRecord::from_value(&parse_json(&line).unwrap()).unwrap(),
            f
        );
    }

    #[test]
    fn lenient_defaults_and_clear_errors() {
        let v =
            parse_json(r#"{"type":"agent-call","node":"a","agent":"b","ok":false,"prompt":"p"}"#)
                .unwrap();
        let r = AgentCallRecord::from_value(&v).unwrap();
        assert_eq!(r.prompt_sha256, prompt_sha256("p"));
        assert_eq!((r.attempt, r.stop_reason), (1, StopReason::Failed));
        let o = r.to_outcome();
        assert_eq!(o.stop, StopReason::Failed);
        assert!(o.error.is_some());

        let err = |s: &str| AgentCallRecord::from_value(&parse_json(s).unwrap()).unwrap_err();
        assert_eq!(err("[]"), "not a JSON object");
        assert!(
            err(r#"{"type":"agent-call","node":"a","agent":"b","ok":true}"#)
                .contains("promptSha256")
        );
        assert!(
            err(r#"{"type":"agent-call","node":"a","agent":"b","ok":"yes","prompt":"p"}"#)
                .contains("\"ok\" must be a boolean")
        );
        assert!(err(r#"{"type":"agent-call","node":"a","agent":"b","ok":true,"prompt":"p","usage":{"input":-1}}"#).contains("usage.input"));
        assert!(err(r#"{"type":"agent-call","node":"a","agent":"b","ok":true,"prompt":"p","promptSha256":"00"}"#).contains("64 hex"));
        assert!(err(r#"{"type":"agent-call","node":"a","agent":"b","ok":true,"prompt":"p","stopReason":"done"}"#).contains("stopReason"));
    }

    /// The committed fixture was written by `--record`: reading and writing every line gives
    /// the same bytes back.
    #[test]
    fn committed_fixture_round_trips_byte_for_byte() {
        let text = include_str!("../../examples/changelog/replay.jsonl");
        let mut n = 0;
        for line in text.lines() {
            let r = AgentCallRecord::from_value(&parse_json(line).unwrap()).unwrap();
            assert_eq!(r.to_json_line(), line);
            n += 1;
        }
        assert!(n > 0);
    }

    #[test]
    fn small_costs_are_written_as_javascript_does() {
        let mut r = sample();
        r.usage.cost_usd = Some(0.000003);
        r.duration_ms = 7;
        assert!(
            r.to_json_line().contains(
                r#""costUSD":0.000003,"turns":1},"stopReason":"completed","durationMs":7,"#
            )
        );
        r.usage.cost_usd = Some(2.0);
        assert!(r.to_json_line().contains(r#""costUSD":2,"#));
    }

    struct Echo;
    impl Agent for Echo {
        fn name(&self) -> &str {
            "echo"
        }
        fn call<'a>(&'a self, request: Request, _cancel: Cancel) -> BoxFuture<'a, Outcome> {
            Box::pin(async move { Outcome::ok(format!("echo {}", request.prompt)) })
        }
    }

    #[test]
    fn recorder_appends_one_line_per_call_concurrently() {
        let dir = crate::agent::test_support::test_dir("recorder");
        let path = dir.join("rec.jsonl");
        let sink = Arc::new(RecordSink::open(&path).unwrap());
        let rec = Arc::new(Recorder::new(Arc::new(Echo), "mine", sink));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let rec = rec.clone();
                std::thread::spawn(move || {
                    for j in 0..25 {
                        let req = request(&format!("n#{i}"), "a", &format!("p{i}-{j}"));
                        let o = smol::block_on(rec.call(req, Cancel::never()));
                        assert!(o.warnings.is_empty());
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 200);
        for l in lines {
            let r = AgentCallRecord::from_value(&parse_json(l).unwrap()).unwrap();
            assert_eq!(r.backend, "mine");
            assert_eq!(r.output, format!("echo {}", r.prompt.as_deref().unwrap()));
            assert_eq!(r.prompt_sha256, prompt_sha256(r.prompt.as_deref().unwrap()));
        }
        std::fs::remove_dir_all(dir).ok();
    }
}
