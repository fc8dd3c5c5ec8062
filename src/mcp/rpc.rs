//! JSON-RPC 2.0 framing for MCP's stdio transport: one message per line.
//!
//! [`parse`] sorts a line into a request, a notification, a response (to a request this
//! server never sends: ignored) or one of the two error cases the server answers itself:
//! a line that is not JSON (`-32700`) and JSON that is not a JSON-RPC message (`-32600`).

use serde_json::{Map, Value, json};

/// JSON-RPC error codes used by the server.
pub mod code {
    /// The line is not valid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Valid JSON, but not a JSON-RPC 2.0 request or notification.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The method exists, but its params are wrong (e.g. an unknown tool).
    pub const INVALID_PARAMS: i64 = -32602;
}

/// One incoming line, classified.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// A request: it gets exactly one response.
    Request {
        /// The request id (a string or a number), echoed in the response.
        id: Value,
        /// The method name.
        method: String,
        /// `params`, or `null` when absent.
        params: Value,
    },
    /// A notification: no response.
    Notification {
        /// The method name.
        method: String,
        /// `params`, or `null` when absent.
        params: Value,
    },
    /// A response or error from the client (this server sends no requests: ignored).
    Response,
    /// JSON that is no JSON-RPC message: answered with `-32600` (id `null` when unknown).
    Invalid {
        /// The id, when the message had a usable one.
        id: Value,
        /// What is wrong.
        message: String,
    },
    /// Not JSON at all: answered with `-32700`.
    Malformed(String),
}

/// Classify one line (without its newline).
pub fn parse(line: &[u8]) -> Incoming {
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return Incoming::Malformed(format!("Parse error: {e}")),
    };
    let Value::Object(mut o) = value else {
        let what = if value.is_array() {
            "batches are not supported: send one JSON-RPC message per line"
        } else {
            "a JSON-RPC message must be a JSON object"
        };
        return Incoming::Invalid {
            id: Value::Null,
            message: format!("Invalid Request: {what}"),
        };
    };
    let id = match o.remove("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id),
        Some(other) => {
            return Incoming::Invalid {
                id: Value::Null,
                message: format!("Invalid Request: id must be a string or a number, found {other}"),
            };
        }
    };
    if o.get("jsonrpc") != Some(&Value::from("2.0")) {
        return Incoming::Invalid {
            id: id.unwrap_or(Value::Null),
            message: "Invalid Request: \"jsonrpc\" must be \"2.0\"".into(),
        };
    }
    let params = o.remove("params").unwrap_or(Value::Null);
    match (o.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Incoming::Request { id, method, params },
        (Some(Value::String(method)), None) => Incoming::Notification { method, params },
        (Some(_), id) => Incoming::Invalid {
            id: id.unwrap_or(Value::Null),
            message: "Invalid Request: \"method\" must be a string".into(),
        },
        (None, Some(_)) if o.contains_key("result") || o.contains_key("error") => {
            Incoming::Response
        }
        (None, id) => Incoming::Invalid {
            id: id.unwrap_or(Value::Null),
            message: "Invalid Request: no \"method\"".into(),
        },
    }
}

/// A success response.
pub fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response.
pub fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A notification from the server.
pub fn notification(method: &str, params: Map<String, Value>) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_every_kind_of_line() {
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Incoming::Request {
                id: json!(1),
                method: "ping".into(),
                params: Value::Null
            }
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}"#),
            Incoming::Notification {
                method: "notifications/initialized".into(),
                params: json!({})
            }
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
            Incoming::Response
        );
        assert!(matches!(parse(b"{nope"), Incoming::Malformed(_)));
        assert!(matches!(parse(b"\xff\xfe"), Incoming::Malformed(_)));
        assert!(matches!(
            parse(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            Incoming::Invalid {
                id: Value::Null,
                ..
            }
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#),
            Incoming::Invalid { id, .. } if id == json!(7)
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            Incoming::Invalid { .. }
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":3,"method":5}"#),
            Incoming::Invalid { id, .. } if id == json!(3)
        ));
    }

    #[test]
    fn builds_messages() {
        assert_eq!(
            error(&json!(2), code::METHOD_NOT_FOUND, "Method not found: x").to_string(),
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found: x"}}"#
        );
        assert_eq!(
            response(&json!("q"), json!({})).to_string(),
            r#"{"jsonrpc":"2.0","id":"q","result":{}}"#
        );
    }
}
