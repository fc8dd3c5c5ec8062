//! What a request handler sees: its document, read-only, and how it fails.

use lsp_server::ErrorCode;
use lsp_types::Uri;

use super::analysis::{Analysis, Project};
use super::position::LineIndex;

/// The state of a request handler: the document it is about, read-only.
pub struct Ctx<'a> {
    /// The document's text.
    pub text: &'a str,
    /// Its lines, for positions.
    pub index: &'a LineIndex,
    /// Its check.
    pub analysis: &'a Analysis,
    /// Its project (saved flows).
    pub project: &'a Project,
    /// Its URI.
    pub uri: &'a Uri,
    /// What the client can do.
    pub client: ClientCaps,
}

/// What the client said it can do, where an answer depends on it.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientCaps {
    /// A completion item may carry an `InsertReplaceEdit` (the typed prefix to insert over,
    /// the whole word to replace), and the user chooses.
    pub insert_replace: bool,
}

impl Ctx<'_> {
    /// The byte offset of an LSP position.
    pub fn offset(&self, pos: lsp_types::Position) -> usize {
        self.index.offset(self.text, pos)
    }

    /// The LSP range of a byte span.
    pub fn range(&self, span: crate::source::Span) -> lsp_types::Range {
        self.index.range(self.text, span)
    }
}

/// A request's failure: an LSP error code and message.
pub struct Failure(
    /// The JSON-RPC error code.
    pub i32,
    /// The message.
    pub String,
);

impl Failure {
    /// Params that do not parse.
    pub fn params(e: impl std::fmt::Display) -> Failure {
        Failure(
            ErrorCode::InvalidParams as i32,
            format!("invalid params: {e}"),
        )
    }

    /// A request that cannot be done as asked (an invalid new name, …).
    pub fn failed(message: impl Into<String>) -> Failure {
        Failure(ErrorCode::RequestFailed as i32, message.into())
    }
}
