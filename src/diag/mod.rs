//! Diagnostics as plain data. [`render`] is the only place that turns them into text.

mod allow;
mod codes;
pub mod render;
mod suggest;

pub use allow::{NotAllowable, allowable};
pub use codes::Code;
pub use suggest::{did_you_mean, edit_distance};

use crate::source::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A secondary label: another place that explains the problem.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One problem found in a flow, with where it is and how to fix it.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: Code,
    pub message: String,
    /// The primary location (inside strings: on the offending token itself).
    pub span: Option<Span>,
    /// The primary label's text; the message is used when absent.
    pub label: Option<String>,
    pub labels: Vec<Label>,
    pub help: Option<String>,
    /// The phase the problem belongs to, when there is one.
    pub phase: Option<String>,
}

impl Diagnostic {
    /// A diagnostic of `code`'s own severity.
    pub fn new(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: if code.is_warning() {
                Severity::Warning
            } else {
                Severity::Error
            },
            code,
            message: message.into(),
            span: None,
            label: None,
            labels: Vec::new(),
            help: None,
            phase: None,
        }
    }

    pub fn at(mut self, span: Span) -> Diagnostic {
        self.span = Some(span);
        self
    }

    pub fn with_label(mut self, text: impl Into<String>) -> Diagnostic {
        self.label = Some(text.into());
        self
    }

    pub fn label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn phase(mut self, phase: impl Into<String>) -> Diagnostic {
        self.phase = Some(phase.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}
