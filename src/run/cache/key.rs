//! Cache keys (SPEC §10.5): the parts of a phase's key, in order, joined by U+0000 and
//! hashed (sha256, first 16 hex digits); canonical JSON (sorted keys, no whitespace,
//! JS-format numbers) wherever a part holds a value. This is the one place keys are built.

use sha2::{Digest, Sha256};

use crate::value::{Value, format_number, write_string};

/// The version part every key starts with.
pub const VERSION: &str = "tfc-cache-v1";

/// Canonical JSON: object keys sorted (by UTF-16 code units, as JavaScript sorts them), no
/// whitespace, JS-format numbers. Iterative, so a deep value cannot exhaust the stack.
pub fn canonical_json(v: &Value) -> String {
    enum Work<'a> {
        Value(&'a Value),
        Text(&'static str),
        Key(&'a str),
    }
    let mut out = String::new();
    let mut stack = vec![Work::Value(v)];
    while let Some(w) = stack.pop() {
        match w {
            Work::Text(t) => out.push_str(t),
            Work::Key(k) => {
                write_string(k, &mut out);
                out.push(':');
            }
            Work::Value(v) => match v {
                Value::Null => out.push_str("null"),
                Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Value::Number(n) if n.is_finite() => out.push_str(&format_number(*n)),
                // JSON.stringify writes non-finite numbers as null.
                Value::Number(_) => out.push_str("null"),
                Value::String(s) => write_string(s, &mut out),
                Value::Array(items) => {
                    out.push('[');
                    stack.push(Work::Text("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Work::Value(item));
                        if i > 0 {
                            stack.push(Work::Text(","));
                        }
                    }
                }
                Value::Object(m) => {
                    out.push('{');
                    stack.push(Work::Text("}"));
                    let mut keys: Vec<(&String, &Value)> = m.iter().collect();
                    keys.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
                    for (i, (k, item)) in keys.into_iter().enumerate().rev() {
                        stack.push(Work::Value(item));
                        stack.push(Work::Key(k));
                        if i > 0 {
                            stack.push(Work::Text(","));
                        }
                    }
                }
            },
        }
    }
    out
}

/// The first 16 hex digits of sha256 of `bytes`.
pub fn hex16(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The full sha256 of `bytes`, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The key of `parts`: joined by U+0000, sha256, first 16 hex digits.
pub fn hash_parts<S: AsRef<str>>(parts: &[S]) -> String {
    let mut h = Sha256::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.update([0u8]);
        }
        h.update(p.as_ref().as_bytes());
    }
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `phasefp:`'s digest: sha256 of the phase definition's canonical JSON, 16 hex digits.
pub fn phase_fp(def: &Value) -> String {
    hex16(canonical_json(def).as_bytes())
}

/// A phase's key parts before the type parts and after them (SPEC §10.5).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyParts {
    /// The flow's name.
    pub flow: String,
    /// `phasefp:` digest.
    pub phase_fp: String,
    /// The parts of the phase's kind (id, agent, model, prompt, …).
    pub kind: Vec<String>,
    /// `thinking`, or empty.
    pub think: String,
    /// `tools`.
    pub tools: Vec<String>,
    /// The pre-read context.
    pub pre_read: String,
    /// `agentScope`.
    pub agent_scope: String,
    /// Canonical definitions of the agents the phase uses.
    pub agents: String,
    /// `<backend>/<model>`.
    pub backend: String,
    /// `cwd` as written, when set.
    pub cwd: Option<String>,
}

impl KeyParts {
    /// Every part, in order; `fp`: the fingerprint digest, when the phase has fingerprints.
    pub fn parts(&self, fp: Option<&str>) -> Vec<String> {
        let mut out = Vec::with_capacity(self.kind.len() + 12);
        out.push(VERSION.to_owned());
        out.push(format!("flow:{}", self.flow));
        out.push(format!("phasefp:{}", self.phase_fp));
        out.extend(self.kind.iter().cloned());
        out.push(format!("think:{}", self.think));
        out.push(format!("tools:{}", self.tools.join(",")));
        out.push(format!("ctx:{}", self.pre_read));
        out.push(format!("agent-scope:{}", self.agent_scope));
        out.push(format!("agents:{}", self.agents));
        out.push(format!("backend:{}", self.backend));
        if let Some(c) = &self.cwd {
            out.push(format!("cwd:{c}"));
        }
        if let Some(fp) = fp {
            out.push(format!("fp:{fp}"));
        }
        out
    }

    /// The key: [`KeyParts::parts`] hashed.
    pub fn key(&self, fp: Option<&str>) -> String {
        hash_parts(&self.parts(fp))
    }
}

/// JSON text of a list of strings (canonical).
pub fn json_strings<S: AsRef<str>>(items: &[S]) -> String {
    canonical_json(&Value::Array(
        items.iter().map(|s| Value::from(s.as_ref())).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Value {
        crate::json::parse(text).root.expect("json").to_value()
    }

    #[test]
    fn canonical_json_sorts_keys_and_formats_numbers() {
        let v = parse(r#"{"b": [1.0, 2.5e-7, 1e21, -0], "a": {"z": true, "y": null}, "é": "x\n"}"#);
        assert_eq!(
            canonical_json(&v),
            r#"{"a":{"y":null,"z":true},"b":[1,2.5e-7,1e+21,0],"é":"x\n"}"#
        );
        // UTF-16 order, as JavaScript sorts: an astral character (surrogates 0xD83D…)
        // sorts before U+FF5E, unlike code-point order.
        let v = parse(r#"{"～": 2, "😀": 1}"#);
        assert_eq!(canonical_json(&v), r#"{"😀":1,"～":2}"#);
    }

    #[test]
    fn canonical_json_of_a_deep_value_does_not_overflow() {
        let mut v = Value::Null;
        for _ in 0..200_000 {
            v = Value::Array(vec![v]);
        }
        assert_eq!(canonical_json(&v).len(), 400_004);
    }

    #[test]
    fn keys_are_pinned() {
        // sha256("a\0b") = 2cf2a1…; the parts are joined by U+0000 and cut to 16 hex digits.
        assert_eq!(hash_parts(&["a", "b"]), hex16(b"a\0b"));
        assert_eq!(hex16(b""), "e3b0c44298fc1c14");
        let parts = KeyParts {
            flow: "demo".into(),
            phase_fp: phase_fp(&parse(r#"{"id":"a","task":"hi"}"#)),
            kind: vec!["a".into(), "default".into(), "".into(), "hi".into()],
            think: String::new(),
            tools: vec![],
            pre_read: String::new(),
            agent_scope: "both".into(),
            agents: "{}".into(),
            backend: "echo/".into(),
            cwd: None,
        };
        assert_eq!(
            parts.parts(None),
            vec![
                "tfc-cache-v1",
                "flow:demo",
                &format!("phasefp:{}", hex16(br#"{"id":"a","task":"hi"}"#)),
                "a",
                "default",
                "",
                "hi",
                "think:",
                "tools:",
                "ctx:",
                "agent-scope:both",
                "agents:{}",
                "backend:echo/",
            ]
        );
        // Computed independently: sha256 of the parts above joined by NUL, 16 hex digits.
        assert_eq!(parts.key(None), "dedac2d066862a18");
        assert_ne!(parts.key(Some("0000")), parts.key(None));
        let mut other = parts.clone();
        other.kind[3] = "hi!".into();
        assert_ne!(other.key(None), parts.key(None));
    }
}
