//! safeParse: recover JSON from model output (SPEC §5.1).
//! (Being replaced by the full four-stage implementation.)

use crate::value::Value;

/// The result of [`safe_parse`]: the value found, if any, and a diagnostic for the consuming
/// phase (the stray-key anti-pattern warning of stage 4).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub value: Option<Value>,
    pub warning: Option<&'static str>,
}

pub fn safe_parse(text: &str) -> Parsed {
    let value = serde_json::from_str::<serde_json::Value>(super::js_trim(text))
        .ok()
        .map(|v| Value::from(&v));
    Parsed {
        value,
        warning: None,
    }
}
