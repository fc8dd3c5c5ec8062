//! What the machine's unit tests share: a machine for a flow's text, and the answers to its
//! routine requests, so each test drives only what it is about (a working directory is ready
//! at once, a cache lookup misses).

use std::sync::Arc;

use super::{Command, Config, Event, Machine};
use crate::check::{CheckOptions, check_source};
use crate::flow::LowerOptions;
use crate::value::Map;

/// A machine for the clean flow `text`, with `cfg` and the test defaults (run id `r`, 1 MiB
/// output and prompt limits, working directory `/t`).
pub(super) fn test_machine(text: &str, cfg: Config) -> Machine {
    let checked = check_source(text, &LowerOptions::default(), &CheckOptions::default());
    assert!(!checked.has_errors(), "{:?}", checked.diagnostics);
    let flow = Arc::new(checked.flow.expect("a clean flow"));
    let args = crate::flow::effective_args(&flow, Map::default());
    let cfg = Config {
        run_id: "r".into(),
        max_output: 1 << 20,
        max_prompt: 1 << 20,
        cwd: "/t".into(),
        ..cfg
    };
    Machine::new(flow, args, cfg)
}

/// The event that answers `c` when it is a routine request (`PrepareDir`, `CacheLookup`).
pub(super) fn routine_reply(c: &Command) -> Option<Event> {
    match *c {
        Command::PrepareDir { op, .. } => Some(Event::DirReady {
            op,
            path: Ok("/t".into()),
            warning: None,
        }),
        Command::CacheLookup { op, .. } => Some(Event::CacheChecked {
            op,
            key: format!("{op:016x}"),
            hit: None,
            warning: None,
        }),
        _ => None,
    }
}
