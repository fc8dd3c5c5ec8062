//! What a running phase can read: the states of the phases it references, `previous.output`,
//! the arguments, and locals layered on top (a map item, loop state, the reflexion summary).

use std::sync::Arc;

use crate::eval::{Scope, StepState};
use crate::value::{Map, Value};

/// A phase's view of the run, taken when it starts. Only the steps the phase references are
/// included, so building it costs O(references), not O(phases).
#[derive(Debug, Clone, Default)]
pub struct PhaseScope {
    pub args: Arc<Value>,
    pub steps: Vec<(String, Arc<StepState>)>,
    pub previous: Option<Value>,
    pub previous_phases: Vec<String>,
}

impl PhaseScope {
    fn step(&self, id: &str) -> Option<&StepState> {
        self.steps.iter().find(|(k, _)| k == id).map(|(_, s)| &**s)
    }
}

impl Scope for PhaseScope {
    fn args(&self) -> Option<&Value> {
        Some(&self.args)
    }
    fn step_output(&self, id: &str) -> Option<&Value> {
        self.step(id)?.output()
    }
    fn step_json(&self, id: &str) -> Option<&Value> {
        self.step(id)?.json()
    }
    fn previous(&self) -> Option<&Value> {
        self.previous.as_ref()
    }
    fn previous_phases(&self) -> Vec<&str> {
        self.previous_phases.iter().map(String::as_str).collect()
    }
    fn reflexion(&self) -> Option<&Value> {
        None
    }
    fn local(&self, _name: &str) -> Option<&Value> {
        None
    }
}

/// A scope with locals (and optionally the reflexion summary and the loop's own state) layered
/// over a base scope.
pub struct Layered<'a, S: Scope + ?Sized> {
    pub base: &'a S,
    pub locals: Map,
    pub reflexion: Option<Value>,
    /// A loop's own latest output, visible to its `until` as `steps.<self>`.
    pub own: Option<(&'a str, StepState)>,
}

impl<'a, S: Scope + ?Sized> Layered<'a, S> {
    pub fn new(base: &'a S) -> Layered<'a, S> {
        Layered {
            base,
            locals: Map::default(),
            reflexion: None,
            own: None,
        }
    }

    pub fn with(mut self, name: &str, value: Value) -> Self {
        self.locals.insert(name.to_owned(), value);
        self
    }

    fn own(&self, id: &str) -> Option<&StepState> {
        self.own.as_ref().filter(|(k, _)| *k == id).map(|(_, s)| s)
    }
}

impl<S: Scope + ?Sized> Scope for Layered<'_, S> {
    fn args(&self) -> Option<&Value> {
        self.base.args()
    }
    fn step_output(&self, id: &str) -> Option<&Value> {
        match self.own(id) {
            Some(s) => s.output(),
            None => self.base.step_output(id),
        }
    }
    fn step_json(&self, id: &str) -> Option<&Value> {
        match self.own(id) {
            Some(s) => s.json(),
            None => self.base.step_json(id),
        }
    }
    fn previous(&self) -> Option<&Value> {
        self.base.previous()
    }
    fn previous_phases(&self) -> Vec<&str> {
        self.base.previous_phases()
    }
    fn reflexion(&self) -> Option<&Value> {
        self.reflexion.as_ref()
    }
    fn local(&self, name: &str) -> Option<&Value> {
        self.locals.get(name).or_else(|| self.base.local(name))
    }
}

/// A map item's view: one local (the item, borrowed, not copied) over a base scope. Reads as
/// `Layered::new(base).with(name, value.clone())` does.
pub struct WithLocal<'a, S: Scope + ?Sized> {
    pub base: &'a S,
    pub name: &'a str,
    pub value: &'a Value,
}

impl<S: Scope + ?Sized> Scope for WithLocal<'_, S> {
    fn args(&self) -> Option<&Value> {
        self.base.args()
    }
    fn step_output(&self, id: &str) -> Option<&Value> {
        self.base.step_output(id)
    }
    fn step_json(&self, id: &str) -> Option<&Value> {
        self.base.step_json(id)
    }
    fn previous(&self) -> Option<&Value> {
        self.base.previous()
    }
    fn previous_phases(&self) -> Vec<&str> {
        self.base.previous_phases()
    }
    fn reflexion(&self) -> Option<&Value> {
        None
    }
    fn local(&self, name: &str) -> Option<&Value> {
        if name == self.name {
            Some(self.value)
        } else {
            self.base.local(name)
        }
    }
}
