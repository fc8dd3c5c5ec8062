//! `{placeholder}` templates (SPEC §4): lexed with logos, parsed into a spanned AST, compiled to
//! a flat op list once, rendered many times.
//!
//! A placeholder is exactly what `\{([a-zA-Z0-9_-]+(?:\.[a-zA-Z0-9_-]+)*)\}` matches, found left
//! to right; every other byte, including `{ a }`, `{"k": 1}` and an unclosed `{`, is literal text.

mod ast;
mod render;
mod token;

pub use ast::{Piece, TemplateAst, parse_template};
pub(crate) use render::read_phases;
pub use render::{Oversize, Rendered, Template, TemplateRef};
