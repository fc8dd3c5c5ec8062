//! The values templates and conditions work on: JSON with IEEE-754 doubles (so `1e400` is
//! `+∞`), insertion-ordered objects, and no `undefined` (that is `Option::None` at use sites);
//! and the JavaScript semantics every stage shares: JS whitespace and `trim`, `Number()` and
//! number formatting.
//!
//! Layout: `types.rs` ([`Value`], [`Map`]), `deep.rs` (their depth-proof traits), `js.rs` (JS
//! whitespace), `number.rs` (JS numbers), `json.rs` (the writers), `parse.rs` (the strict
//! parser).

mod deep;
#[cfg(test)]
pub(crate) mod fixtures;
mod js;
mod json;
mod number;
mod parse;
#[cfg(test)]
pub(crate) mod strategies;
mod types;

pub(crate) use js::{is_js_whitespace, js_trim, js_trim_end};
pub(crate) use json::newline;
pub use json::{READABLE_DEPTH, write_compact, write_pretty, write_readable, write_readable_at};
pub use number::write_number;
pub(crate) use number::{format_number, js_number_value};
pub(crate) use parse::parse_json_prefix;
pub use parse::{ParseError, parse_json};
pub use types::{Map, Value};

pub(crate) use json::{string_len, write_scalar, write_string};
pub(crate) use parse::find_byte;
