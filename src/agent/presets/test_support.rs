//! Helpers for the preset parsers' unit tests.

use std::path::PathBuf;

use crate::agent::call::Request;

/// One turn's usage without cost or cache writes (the codex and gemini streams).
pub fn usage(input: u64, output: u64, cache_read: u64) -> crate::agent::call::Usage {
    crate::agent::call::Usage {
        input,
        output,
        cache_read,
        turns: 1,
        ..crate::agent::call::Usage::default()
    }
}

/// A recorded stream from `tests/fixtures/agent-streams/`.
pub fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agent-streams")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn request() -> Request {
    Request {
        cwd: PathBuf::new(),
        ..Request::new("r1", "p", "a", "Do it")
    }
}
