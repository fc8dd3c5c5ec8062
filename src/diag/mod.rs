//! Diagnostics as plain data. [`render`] is the only place that turns them into text.

mod allow;
mod codes;
pub mod render;
mod suggest;

pub use allow::{NotAllowable, allowable};
pub use codes::Code;
pub(crate) use suggest::did_you_mean;

use std::sync::Arc;

use crate::source::{Source, Span};

/// How bad a diagnostic is: errors stop a flow from running, warnings do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Reported; the flow still runs (`--strict` makes it fail the check).
    Warning,
    /// The flow cannot run.
    Error,
}

impl Severity {
    /// `warning` or `error`, as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A secondary label: another place that explains the problem.
#[derive(Clone, Debug)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What it says there.
    pub message: String,
    /// The file the span is in, when it is not the diagnostic's own (a saved sub-flow's
    /// declaration, for a `with` value of its caller).
    pub file: Option<Arc<Source>>,
}

impl PartialEq for Label {
    fn eq(&self, other: &Label) -> bool {
        self.span == other.span
            && self.message == other.message
            && match (&self.file, &other.file) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a.name == b.name,
                _ => false,
            }
    }
}

/// One problem found in a flow, with where it is and how to fix it.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// Error or warning: the code's own severity, unless `--strict` promoted a warning.
    pub severity: Severity,
    /// The stable code (`E0103`, `W0102`, …).
    pub code: Code,
    /// The one-line message.
    pub message: String,
    /// The primary location (inside strings: on the offending token itself).
    pub span: Option<Span>,
    /// The primary label's text; the message is used when absent.
    pub label: Option<String>,
    /// Secondary labels: other places that explain the problem.
    pub labels: Vec<Label>,
    /// A line saying how to fix it.
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

    /// Put the primary location at `span`.
    pub fn at(mut self, span: Span) -> Diagnostic {
        self.span = Some(span);
        self
    }

    /// Set the primary label's text (the message is used without one).
    pub(crate) fn with_label(mut self, text: impl Into<String>) -> Diagnostic {
        self.label = Some(text.into());
        self
    }

    /// Add a secondary label.
    pub fn label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            file: None,
        });
        self
    }

    /// Add a secondary label in another file.
    pub fn label_in(
        mut self,
        file: Arc<Source>,
        span: Span,
        message: impl Into<String>,
    ) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            file: Some(file),
        });
        self
    }

    /// Set the help line.
    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Attribute the problem to a phase.
    pub fn phase(mut self, phase: impl Into<String>) -> Diagnostic {
        self.phase = Some(phase.into());
        self
    }

    /// Is this an error (not a warning)?
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}
