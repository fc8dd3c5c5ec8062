//! An in-process backend from a closure: for tests, benchmarks and library callers.

use crate::agent::call::{Agent, BoxFuture, Outcome, Request};

use crate::process::Cancel;

/// A backend that answers each request with a function of it.
pub struct FnAgent<F> {
    name: String,
    answer: F,
}

impl<F: Fn(&Request) -> Outcome + Send + Sync> FnAgent<F> {
    /// A backend named `name` that answers every request with `answer(request)`.
    pub fn new(name: impl Into<String>, answer: F) -> FnAgent<F> {
        FnAgent {
            name: name.into(),
            answer,
        }
    }
}

impl<F: Fn(&Request) -> Outcome + Send + Sync> Agent for FnAgent<F> {
    fn name(&self) -> &str {
        &self.name
    }

    fn call<'a>(&'a self, request: Request, cancel: Cancel) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Outcome::failed(crate::agent::call::StopReason::Cancelled, "Aborted");
            }
            (self.answer)(&request)
        })
    }

    fn reports_tokens(&self) -> bool {
        true
    }

    fn reports_cost(&self) -> bool {
        true
    }
}
