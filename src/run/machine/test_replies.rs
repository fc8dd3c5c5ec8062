//! What the machine's unit tests answer to its routine requests, so each test drives only
//! what it is about: a working directory is ready at once, a cache lookup misses.

use super::{Command, Event};

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
