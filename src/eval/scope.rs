//! Placeholder resolution (SPEC §4.3). A [`Scope`] exposes what a phase can see; [`resolve`] is
//! the one place that applies the resolution rules to a parsed [`RefPath`].

use std::borrow::Cow;
use std::sync::OnceLock;

use indexmap::IndexMap;

use super::safe_parse::safe_parse;
use crate::syntax::path::{Keys, canonical_index};
use crate::syntax::{RefPath, Target};
use crate::value::{Map, Value};

/// The text every downstream template sees in place of a failed phase's output.
pub(crate) const FAILED_SENTINEL: &str = "[previous phase failed]";

/// What a phase can read. Implementations are plain getters; the rules live in [`resolve`].
pub trait Scope {
    /// The invocation arguments (an object).
    fn args(&self) -> Option<&Value>;
    /// The output of a visible step (`done`: its output; `failed`: the sentinel).
    fn step_output(&self, id: &str) -> Option<&Value>;
    /// The parsed JSON of a `done` step (its stored `json`, else `safeParse(output)`).
    fn step_json(&self, id: &str) -> Option<&Value>;
    /// [`Scope::step_output`] of the phase `path` names (`id`, its [`RefPath::step_id`]). A
    /// scope that keeps its steps in a table may start from the slot the path remembers.
    fn step_output_of(&self, path: &RefPath, id: &str) -> Option<&Value> {
        let _ = path;
        self.step_output(id)
    }
    /// [`Scope::step_json`] of the phase `path` names, as [`Scope::step_output_of`].
    fn step_json_of(&self, path: &RefPath, id: &str) -> Option<&Value> {
        let _ = path;
        self.step_json(id)
    }
    /// What `{previous.output}` resolves to.
    fn previous(&self) -> Option<&Value>;
    /// The phases `{previous.output}` read (the chosen dependency, or a reduce's inputs).
    fn previous_phases(&self) -> Vec<&str> {
        Vec::new()
    }
    /// The loop's reflexion summary, on `reflexion: true` loops.
    fn reflexion(&self) -> Option<&Value>;
    /// A local: the map item under its name, or `loop`.
    fn local(&self, name: &str) -> Option<&Value>;
}

/// Resolve a placeholder path; `None` is undefined (the placeholder stays verbatim).
pub fn resolve<'s, S: Scope + ?Sized>(scope: &'s S, path: &RefPath) -> Option<Cow<'s, Value>> {
    match path.target {
        Target::Args => match scope.args()? {
            // The first key through the slot the path remembers: argument objects are the
            // largest most templates read, and the same path reads them again and again.
            Value::Object(args) => {
                let mut keys = path.dig_keys();
                match keys.next() {
                    Some(first) => dig(slot_member(args, first, path)?, keys),
                    None => dig(scope.args()?, keys),
                }
            }
            other => dig(other, path.dig_keys()),
        },
        Target::StepOutput => scope
            .step_output_of(path, path.step_id()?)
            .map(Cow::Borrowed),
        Target::StepJson => {
            let (id, keys) = path.step_json_keys()?;
            dig(scope.step_json_of(path, id)?, keys)
        }
        Target::Previous => scope.previous().map(Cow::Borrowed),
        Target::Reflexion => scope.reflexion().map(Cow::Borrowed),
        Target::Local => {
            let mut keys = path.keys();
            dig(scope.local(keys.next()?)?, keys)
        }
        Target::Never => None,
    }
}

/// The heads of the placeholder families (SPEC §4.3). A map may bind its element to another
/// name (`as`); any other head is a local no scope binds.
pub const FAMILY_HEADS: [&str; 6] = ["steps", "args", "previous", "reflexion", "loop", "item"];

/// Does [`resolve`] return `None` for `path` in every scope, whatever upstream produced,
/// because of its head alone? True for `{previous}` and `{previous.F}` with F ≠ `output`
/// (classified [`Target::Never`]), and for a local (`{answer}`, `{0}`, `{-x}`) whose head is no
/// family and no name `bound` accepts (the `as` names of the flow's maps): no scope's
/// [`Scope::local`] ever answers for it. This is the one rule behind both the run's
/// `unresolved refs … left intact` warning for such refs and its static counterpart, W0207.
#[inline]
pub fn unresolvable_by_head(path: &RefPath, bound: impl Fn(&str) -> bool) -> bool {
    // Most refs are `steps.…`: decided by the target alone, without reading the head.
    match path.target {
        Target::Never => path.head() == "previous",
        Target::Local => {
            let head = path.head();
            !FAMILY_HEADS.contains(&head) && !bound(head)
        }
        _ => false,
    }
}

/// The phase ids a resolved path read: the step of a `steps.ID…` path, the phases behind
/// `previous.output`.
pub(crate) fn read_phases_of<'s, S: Scope + ?Sized>(
    scope: &'s S,
    path: &'s RefPath,
) -> Vec<&'s str> {
    match path.target {
        Target::Previous => scope.previous_phases(),
        _ => path.step_id().into_iter().collect(),
    }
}

/// Walk the segments `keys` from `root`. Never fails: a missing key, an out-of-range index, or
/// a primitive (strings included) mid-way is undefined. Arrays take canonical indices and
/// `length` (as the last segment).
pub fn dig<'v>(root: &'v Value, mut keys: Keys<'_>) -> Option<Cow<'v, Value>> {
    let mut cur = root;
    while let Some(key) = keys.next() {
        cur = match cur {
            Value::Array(items) => match canonical_index(key) {
                Some(ix) => items.get(ix as usize)?,
                None if key == "length" => {
                    return keys
                        .is_done()
                        .then(|| Cow::Owned(Value::Number(items.len() as f64)));
                }
                None => return None,
            },
            Value::Object(map) => member(map, key)?,
            _ => return None,
        };
    }
    Some(Cow::Borrowed(cur))
}

/// `a == b`, compared in place: keys are short, a library call costs more than the bytes.
#[inline]
fn same_key(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| x == y)
}

/// `map[key]`. Most objects a path digs into are small: comparing a few keys beats hashing one.
#[inline]
fn member<'v>(map: &'v Map, key: &str) -> Option<&'v Value> {
    if map.len() <= 8 {
        map.iter().find(|(k, _)| same_key(k, key)).map(|(_, v)| v)
    } else {
        map.get(key)
    }
}

/// `map[key]`, trying the slot `path` remembers first (a path reads one root, so its slot is
/// only ever a step's or an argument's).
fn slot_member<'v>(map: &'v Map, key: &str, path: &RefPath) -> Option<&'v Value> {
    if let Some((k, v)) = map.get_index(path.step_slot())
        && same_key(k, key)
    {
        return Some(v);
    }
    let (slot, _, v) = map.get_full(key)?;
    path.set_step_slot(slot);
    Some(v)
}

/// Status of an upstream step as templates see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepStatus {
    /// Completed: its output and JSON are visible.
    Done,
    /// Failed: its output reads as the failure sentinel, its JSON as missing.
    Failed,
    /// Skipped, pending or running: invisible to templates.
    Hidden,
}

/// One upstream step's record as seen by templates.
#[derive(Debug)]
pub struct StepState {
    /// How the step ended, as templates see it.
    pub status: StepStatus,
    output: Value,
    stored_json: Option<Value>,
    /// `safeParse(output)` and its warning, computed on first use.
    parsed: OnceLock<(Option<Value>, Option<&'static str>)>,
}

impl StepState {
    /// A step's state from its status, output text and stored JSON (`null` counts as none).
    pub fn new(status: StepStatus, output: String, json: Option<Value>) -> StepState {
        let output = match status {
            StepStatus::Failed => Value::from(FAILED_SENTINEL),
            _ => Value::String(output),
        };
        StepState {
            status,
            output,
            stored_json: json.filter(|j| *j != Value::Null),
            parsed: OnceLock::new(),
        }
    }

    /// A completed step with `output` and no stored JSON.
    pub fn done(output: impl Into<String>) -> StepState {
        StepState::new(StepStatus::Done, output.into(), None)
    }

    /// What templates see as the output (`None` when hidden).
    pub fn output(&self) -> Option<&Value> {
        (self.status != StepStatus::Hidden).then_some(&self.output)
    }

    /// The stored JSON, else `safeParse(output)` (parsed once); `None` unless done.
    pub fn json(&self) -> Option<&Value> {
        if self.status != StepStatus::Done {
            return None;
        }
        if let Some(j) = &self.stored_json {
            return Some(j);
        }
        self.parsed().0.as_ref()
    }

    /// The safeParse warning of this step's output, once `json()` has parsed it (the stray-key
    /// anti-pattern); the phase that read it records the warning.
    pub(crate) fn json_warning(&self) -> Option<&'static str> {
        self.parsed.get().and_then(|(_, w)| *w)
    }

    fn parsed(&self) -> &(Option<Value>, Option<&'static str>) {
        self.parsed.get_or_init(|| match &self.output {
            Value::String(s) => {
                let p = safe_parse(s);
                (p.value, p.warning)
            }
            _ => (None, None),
        })
    }
}

/// A plain [`Scope`] built from data: the eval context of `tfc eval` and of tests.
#[derive(Debug, Default)]
pub struct Bindings {
    /// The invocation arguments (`args.…`).
    pub args: Option<Value>,
    /// The upstream steps by id (`steps.ID.…`).
    pub steps: IndexMap<String, StepState, foldhash::fast::RandomState>,
    /// `previous.output`.
    pub previous: Option<Value>,
    /// The phases `previous.output` was built from (its read phases).
    pub previous_phases: Vec<String>,
    /// Phase-local names: `item` (or a map's `as` name), `loop`, ….
    pub locals: Map,
    /// `{reflexion}`, inside a loop with `reflexion` on.
    pub reflexion: Option<Value>,
}

impl Bindings {
    /// The step `id` that `path` names: the slot the path remembers when it holds that step,
    /// else a lookup (whose slot the path then remembers).
    fn step_of(&self, path: &RefPath, id: &str) -> Option<&StepState> {
        if let Some((key, step)) = self.steps.get_index(path.step_slot())
            && same_key(key, id)
        {
            return Some(step);
        }
        let (slot, _, step) = self.steps.get_full(id)?;
        path.set_step_slot(slot);
        Some(step)
    }
}

impl Scope for Bindings {
    fn args(&self) -> Option<&Value> {
        self.args.as_ref()
    }
    fn step_output(&self, id: &str) -> Option<&Value> {
        self.steps.get(id)?.output()
    }
    fn step_json(&self, id: &str) -> Option<&Value> {
        self.steps.get(id)?.json()
    }
    fn step_output_of(&self, path: &RefPath, id: &str) -> Option<&Value> {
        self.step_of(path, id)?.output()
    }
    fn step_json_of(&self, path: &RefPath, id: &str) -> Option<&Value> {
        self.step_of(path, id)?.json()
    }
    fn previous(&self) -> Option<&Value> {
        self.previous.as_ref()
    }
    fn previous_phases(&self) -> Vec<&str> {
        self.previous_phases.iter().map(String::as_str).collect()
    }
    fn reflexion(&self) -> Option<&Value> {
        self.reflexion.as_ref()
    }
    fn local(&self, name: &str) -> Option<&Value> {
        member(&self.locals, name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> Bindings {
        let mut b = Bindings::default();
        let mut args = Map::default();
        args.insert("dir".into(), Value::from("src"));
        let mut user = Map::default();
        user.insert("id".into(), Value::Number(7.0));
        args.insert("user".into(), Value::Object(user));
        b.args = Some(Value::Object(args));
        b.steps.insert(
            "triage".into(),
            StepState::done("{\"severity\": \"high\", \"tags\": [\"a\", \"b\"]}"),
        );
        b.steps.insert(
            "bad".into(),
            StepState::new(StepStatus::Failed, "partial".into(), None),
        );
        b.steps.insert(
            "gone".into(),
            StepState::new(StepStatus::Hidden, "x".into(), None),
        );
        b.locals.insert("file".into(), Value::from("a.rs"));
        b
    }

    fn get(s: &Bindings, p: &str) -> Option<Value> {
        resolve(s, &RefPath::parse(p)).map(Cow::into_owned)
    }

    /// A million segments deep, into a value a million deep, on a 256 KiB stack.
    #[test]
    fn dig_walks_deep_values_and_long_paths() {
        use crate::value::fixtures::{DEPTH, nested_arrays, small_stack};
        small_stack(|| {
            let v = nested_arrays(DEPTH, Value::from("bottom"));
            let path = RefPath::parse(&format!("args{}", ".0".repeat(DEPTH)));
            assert_eq!(
                dig(&v, path.dig_keys()),
                Some(Cow::Borrowed(&Value::from("bottom")))
            );
            let path = RefPath::parse(&format!("args{}.length", ".0".repeat(DEPTH - 1)));
            assert_eq!(
                dig(&v, path.dig_keys()),
                Some(Cow::Owned(Value::Number(1.0)))
            );
            let path = RefPath::parse(&format!("args{}", ".0".repeat(DEPTH + 1)));
            assert_eq!(dig(&v, path.dig_keys()), None);
        });
    }

    #[test]
    fn a_remembered_step_slot_is_checked_against_the_scope() {
        // One path read against scopes that keep the same steps in different orders, and
        // against one that lacks the step: each answer is that scope's own.
        let path = RefPath::parse("steps.b.output");
        let json = RefPath::parse("steps.b.json.k");
        let scope_of = |ids: &[&str]| {
            let mut s = Bindings::default();
            for id in ids {
                let out = format!("{{\"k\":\"{id}\"}}");
                s.steps.insert((*id).into(), StepState::done(out));
            }
            s
        };
        let first = scope_of(&["a", "b"]);
        let second = scope_of(&["b", "c", "a"]);
        let none = scope_of(&["a", "c"]);
        for _ in 0..2 {
            for (scope, want) in [(&first, Some("b")), (&second, Some("b")), (&none, None)] {
                let got = resolve(scope, &json).map(|v| v.into_owned());
                assert_eq!(got, want.map(Value::from));
                let out = resolve(scope, &path).map(|v| v.into_owned());
                assert_eq!(out.is_some(), want.is_some());
            }
        }
    }

    #[test]
    fn a_remembered_argument_slot_is_checked_against_the_scope() {
        let path = RefPath::parse("args.b.c");
        let with_args = |json: &str| Bindings {
            args: Some(crate::value::parse_json(json).unwrap()),
            ..Bindings::default()
        };
        let first = with_args(r#"{"a": 1, "b": {"c": "one"}}"#);
        let second = with_args(r#"{"b": {"c": "two"}, "x": 0, "a": 1}"#);
        let none = with_args(r#"{"a": 1, "c": 2}"#);
        let array = with_args(r#"[1, 2]"#);
        for _ in 0..2 {
            for (scope, want) in [(&first, Some("one")), (&second, Some("two")), (&none, None)] {
                let got = resolve(scope, &path).map(|v| v.into_owned());
                assert_eq!(got, want.map(Value::from));
            }
            assert_eq!(resolve(&array, &path), None);
            let whole = resolve(&first, &RefPath::parse("args")).map(|v| v.into_owned());
            assert_eq!(whole, first.args.clone());
        }
    }

    #[test]
    fn resolution_by_head() {
        let s = scope();
        assert_eq!(get(&s, "args.dir"), Some(Value::from("src")));
        assert_eq!(get(&s, "args.user.id"), Some(Value::Number(7.0)));
        assert_eq!(get(&s, "args.user.id.x"), None);
        assert_eq!(get(&s, "args.nope.x"), None);
        assert_eq!(
            get(&s, "steps.triage.json.severity"),
            Some(Value::from("high"))
        );
        assert_eq!(get(&s, "steps.triage.json.tags.1"), Some(Value::from("b")));
        assert_eq!(get(&s, "steps.triage.json.tags.01"), None);
        assert_eq!(
            get(&s, "steps.triage.json.tags.length"),
            Some(Value::Number(2.0))
        );
        assert_eq!(get(&s, "steps.triage.json.severity.label"), None);
        assert_eq!(get(&s, "steps.triage.output.x"), None);
        assert_eq!(get(&s, "steps.triage"), None);
        assert_eq!(
            get(&s, "steps.bad.output"),
            Some(Value::from(FAILED_SENTINEL))
        );
        assert_eq!(get(&s, "steps.bad.json"), None);
        assert_eq!(get(&s, "steps.gone.output"), None);
        assert_eq!(get(&s, "file"), Some(Value::from("a.rs")));
        assert_eq!(get(&s, "item"), None);
        assert_eq!(get(&s, "previous.output"), None);
        assert_eq!(get(&s, "reflexion"), None);
    }

    /// A scope in which every root a run can bind is bound: arguments, a done step with JSON,
    /// `previous`, `reflexion`, and the locals `item`, `loop` and a map's `as` name `file`.
    fn everything() -> Bindings {
        let mut b = scope();
        b.previous = Some(Value::from("prev"));
        b.reflexion = Some(Value::from("summary"));
        b.locals.insert("item".into(), Value::from("x"));
        b.locals.insert(
            "loop".into(),
            crate::value::parse_json(r#"{"iteration": 1}"#).unwrap(),
        );
        b
    }

    /// W0207's rule and resolution agree on a table of refs: a ref unresolvable by its head
    /// resolves in no scope (not even one binding everything), the others resolve there.
    #[test]
    fn unresolvable_heads_never_resolve() {
        let s = everything();
        let bound = |h: &str| h == "file";
        for (path, never) in [
            ("answer", true),
            ("0", true),
            ("-x", true),
            ("answer.x", true),
            ("previous", true),
            ("previous.outptu", true),
            ("previous.output", false),
            ("previous.output.x", false),
            ("args", false),
            ("args.dir", false),
            ("steps.triage.output", false),
            ("steps.triage.json", false),
            ("item", false),
            ("loop.iteration", false),
            ("file", false),
            ("reflexion", false),
        ] {
            let p = RefPath::parse(path);
            assert_eq!(unresolvable_by_head(&p, bound), never, "{path}");
            assert_eq!(resolve(&s, &p).is_none(), never, "{path}");
        }
    }

    proptest::proptest! {
        /// Sound for any path: what the rule calls unresolvable never resolves.
        #[test]
        fn unresolvable_by_head_is_sound(
            text in "(steps|args|previous|reflexion|loop|item|file|output|[a-z0-9_-]{1,6})(\\.(output|json|dir|triage|iteration|0|[a-z0-9]{1,3})){0,3}"
        ) {
            let p = RefPath::parse(&text);
            if unresolvable_by_head(&p, |h| h == "file") {
                proptest::prop_assert!(resolve(&everything(), &p).is_none(), "{}", text);
            }
        }
    }
}
