//! `{placeholder}` templates (SPEC §4): scanned and parsed into a spanned AST. The
//! AST is compiled to a flat op list by [`crate::compile::template`] once and rendered many
//! times by [`crate::eval`].
//!
//! A placeholder is exactly what `\{([a-zA-Z0-9_-]+(?:\.[a-zA-Z0-9_-]+)*)\}` matches, found left
//! to right; every other byte, including `{ a }`, `{"k": 1}` and an unclosed `{`, is literal text.

mod ast;
/// The tokens as logos regexes: the reference the scanner of `ast.rs` is tested against.
#[cfg(test)]
mod token;

pub use ast::{Piece, TemplateAst, parse_template};
pub(crate) use ast::{Pieces, RawPiece, count_braces, placeholder_path};
