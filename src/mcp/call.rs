//! What every tool works with: its arguments (read and checked by name), the call's
//! cancellation and progress, and the shape of a tool result.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

/// Why a tool call failed: reported as a tool result with `isError: true`, never as a
/// protocol error, so the model reads the message and can fix its call.
#[derive(Debug)]
pub struct ToolError {
    /// What is wrong and how to fix it.
    pub message: String,
    /// Structured detail (e.g. check diagnostics), when there is some.
    pub detail: Option<Value>,
}

impl ToolError {
    /// A plain message.
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError {
            message: message.into(),
            detail: None,
        }
    }

    /// A problem with one argument: the message names it.
    pub fn arg(name: &str, problem: impl std::fmt::Display) -> ToolError {
        ToolError::new(format!("argument '{name}': {problem}"))
    }
}

/// A tool's successful answer: `structuredContent` plus a short text rendering.
pub struct ToolOutput {
    /// Matches the tool's `outputSchema`.
    pub structured: Value,
    /// What a model reads.
    pub text: String,
    /// Extra content items after the text (an SVG drawing as an image).
    pub extra: Vec<Value>,
}

impl ToolOutput {
    /// A result with its text.
    pub fn new(structured: Value, text: impl Into<String>) -> ToolOutput {
        ToolOutput {
            structured,
            text: text.into(),
            extra: Vec::new(),
        }
    }
}

/// The `CallToolResult` of an outcome.
pub fn tool_result(outcome: Result<ToolOutput, ToolError>) -> Value {
    match outcome {
        Ok(out) => {
            let mut content = vec![json!({"type": "text", "text": out.text})];
            content.extend(out.extra);
            json!({"content": content, "structuredContent": out.structured, "isError": false})
        }
        Err(e) => {
            let mut r = json!({"content": [{"type": "text", "text": e.message}], "isError": true});
            if let Some(detail) = e.detail {
                r["structuredContent"] = detail;
            }
            r
        }
    }
}

/// The arguments of one call, read by name. Every argument must be read (or explicitly
/// ignored) before [`Args::finish`], which refuses any name the tool does not know.
pub struct Args {
    map: Map<String, Value>,
}

impl Args {
    /// `arguments` of `tools/call`: an object, or absent.
    pub fn new(arguments: Option<&Value>) -> Result<Args, ToolError> {
        match arguments {
            None | Some(Value::Null) => Ok(Args { map: Map::new() }),
            Some(Value::Object(m)) => Ok(Args { map: m.clone() }),
            Some(other) => Err(ToolError::new(format!(
                "arguments must be a JSON object, found {}",
                type_name(other)
            ))),
        }
    }

    /// Take an argument's raw value (`null` counts as absent).
    pub fn take(&mut self, name: &str) -> Option<Value> {
        self.map.remove(name).filter(|v| !v.is_null())
    }

    /// An optional string.
    pub fn opt_str(&mut self, name: &str) -> Result<Option<String>, ToolError> {
        match self.take(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(ToolError::arg(
                name,
                format!("expected a string, found {}", type_name(&v)),
            )),
        }
    }

    /// A required string.
    pub fn str(&mut self, name: &str) -> Result<String, ToolError> {
        self.opt_str(name)?
            .ok_or_else(|| ToolError::arg(name, "required, and missing"))
    }

    /// An optional boolean.
    pub fn opt_bool(&mut self, name: &str) -> Result<Option<bool>, ToolError> {
        match self.take(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(v) => Err(ToolError::arg(
                name,
                format!("expected true or false, found {}", type_name(&v)),
            )),
        }
    }

    /// An optional finite number, at least `min`.
    pub fn opt_num(&mut self, name: &str, min: f64) -> Result<Option<f64>, ToolError> {
        match self.take(name) {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_f64() {
                Some(x) if x.is_finite() && x >= min => Ok(Some(x)),
                _ => Err(ToolError::arg(name, format!("must be a number ≥ {min}"))),
            },
            Some(v) => Err(ToolError::arg(
                name,
                format!("expected a number, found {}", type_name(&v)),
            )),
        }
    }

    /// An optional whole number, at least `min`.
    pub fn opt_u64(&mut self, name: &str, min: u64) -> Result<Option<u64>, ToolError> {
        match self.take(name) {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(x) if x >= min => Ok(Some(x)),
                _ => Err(ToolError::arg(
                    name,
                    format!("must be a whole number ≥ {min}"),
                )),
            },
            Some(v) => Err(ToolError::arg(
                name,
                format!("expected a whole number, found {}", type_name(&v)),
            )),
        }
    }

    /// An optional list of strings.
    pub fn opt_strings(&mut self, name: &str) -> Result<Vec<String>, ToolError> {
        match self.take(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s),
                    v => Err(ToolError::arg(
                        name,
                        format!("expected a list of strings, found {} in it", type_name(&v)),
                    )),
                })
                .collect(),
            Some(v) => Err(ToolError::arg(
                name,
                format!("expected a list of strings, found {}", type_name(&v)),
            )),
        }
    }

    /// An optional JSON object.
    pub fn opt_object(&mut self, name: &str) -> Result<Option<Map<String, Value>>, ToolError> {
        match self.take(name) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(v) => Err(ToolError::arg(
                name,
                format!("expected a JSON object, found {}", type_name(&v)),
            )),
        }
    }

    /// Refuse any argument that was not read: `known` lists the tool's arguments.
    pub fn finish(self, known: &[&str]) -> Result<(), ToolError> {
        match self.map.keys().next() {
            None => Ok(()),
            Some(name) => Err(ToolError::arg(
                name,
                format!(
                    "not an argument of this tool (it takes: {})",
                    if known.is_empty() {
                        "no arguments".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            )),
        }
    }
}

/// The JSON type of a value, for messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Cancellation of one call (`notifications/cancelled`, or the server shutting down): a
/// flag that wakes a waiting call at once.
#[derive(Clone, Default)]
pub struct Cancel(Arc<(Mutex<bool>, Condvar)>);

impl Cancel {
    /// Cancel the call (idempotent).
    pub fn cancel(&self) {
        let (flag, cv) = &*self.0;
        *flag.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_all();
    }

    /// Sleep up to `d`; `true` when cancelled (at once, or during the sleep).
    pub fn sleep(&self, d: Duration) -> bool {
        let (flag, cv) = &*self.0;
        let deadline = Instant::now() + d;
        let mut cancelled = flag.lock().unwrap_or_else(|p| p.into_inner());
        while !*cancelled {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            cancelled = cv
                .wait_timeout(cancelled, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        true
    }
}

/// Sends `notifications/progress` for a call that asked for them.
pub type ProgressFn = Arc<dyn Fn(u64, u64, &str) + Send + Sync>;

/// Sends `notifications/message` (MCP logging) at a level.
pub type LogFn = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// One tool call's context.
#[derive(Clone)]
pub struct Call {
    /// Set when the client cancels the call.
    pub cancel: Cancel,
    /// Progress notifications, when the call carried `_meta.progressToken`.
    pub progress: Option<ProgressFn>,
    /// Log messages to the client.
    pub log: LogFn,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_named_in_errors() {
        let v = json!({"runId": 5, "extra": true, "limit": -1, "approve": ["a", 1]});
        let mut a = Args::new(Some(&v)).unwrap();
        assert_eq!(
            a.str("runId").unwrap_err().message,
            "argument 'runId': expected a string, found a number"
        );
        assert!(
            a.opt_u64("limit", 1)
                .unwrap_err()
                .message
                .starts_with("argument 'limit'")
        );
        assert!(
            a.opt_strings("approve")
                .unwrap_err()
                .message
                .contains("'approve'")
        );
        assert!(
            a.str("phase")
                .unwrap_err()
                .message
                .contains("'phase': required")
        );
        let e = a.finish(&["runId", "limit"]).unwrap_err().message;
        assert!(e.contains("'extra': not an argument"), "{e}");
        assert!(Args::new(Some(&json!([1]))).is_err());
    }

    #[test]
    fn cancel_wakes_a_sleeper() {
        let c = Cancel::default();
        assert!(!c.sleep(Duration::from_millis(1)));
        let c2 = c.clone();
        let t = std::thread::spawn(move || c2.sleep(Duration::from_secs(30)));
        std::thread::sleep(Duration::from_millis(20));
        c.cancel();
        assert!(t.join().unwrap());
        assert!(c.sleep(Duration::from_secs(30)), "stays cancelled");
    }
}
