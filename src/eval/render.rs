//! Rendering compiled templates (SPEC §4.4 text mode, §4.5 value mode) against a [`Scope`]:
//! the ops of [`Template`] are run here, with the readSet and the missing placeholders
//! recorded, and with an optional cap on the rendered size.

use std::borrow::Cow;

use super::scope::{Scope, read_phases_of, resolve};
use super::text::write_text;
use crate::compile::template::{Op, Template};
use crate::value::{Value, string_len};

/// The result of a text-mode render. Path lists hold indices into [`Template::paths`], distinct
/// and in order of first appearance (which is also first-resolution order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rendered {
    /// The rendered text.
    pub text: String,
    /// Unresolved placeholder paths.
    pub missing: Vec<u32>,
    /// Resolved placeholder paths: the observed readSet.
    pub reads: Vec<u32>,
}

/// A render that passed its cap ([`Template::render_capped`]).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Oversize {
    /// The path (index into [`Template::paths`]) that contributed the most bytes (the one
    /// that passed the cap counted at a lower bound of its size); 0 with `bytes` 0 when the
    /// template has no placeholder.
    pub path: u32,
    /// The bytes that path contributed.
    pub bytes: usize,
    /// What was rendered before giving up.
    pub partial: Rendered,
}

/// `Some(lower bound)` when `value`'s template text certainly exceeds `room` bytes (then it
/// need not be written to know), else `None`. The bound counts each string's JSON text (its
/// quotes and escapes included) and the `": "` of keys, one byte per number or literal, and
/// the newline and two-space indentation before every element of a container (as
/// `write_text` pretty-prints them).
fn text_size_above(value: &Value, room: usize) -> Option<usize> {
    let scalar = match value {
        Value::String(s) => s.len(),
        Value::Null => 0,
        Value::Array(_) | Value::Object(_) => return container_size_above(value, room),
        _ => 1,
    };
    (scalar > room).then_some(scalar)
}

/// [`text_size_above`] of a container.
fn container_size_above(value: &Value, room: usize) -> Option<usize> {
    let mut size = 0usize;
    let mut stack = Stack::new(value);
    while let Some((v, depth)) = stack.pop() {
        match v {
            Value::String(s) => size += if depth == 0 { s.len() } else { string_len(s) },
            Value::Null if depth == 0 => {}
            Value::Array(a) => {
                size += if a.is_empty() { 2 } else { 2 + 1 + 2 * depth };
                for item in a {
                    size += 1 + 2 * (depth + 1);
                    stack.push((item, depth + 1));
                }
            }
            Value::Object(o) => {
                size += if o.is_empty() { 2 } else { 2 + 1 + 2 * depth };
                for (k, item) in o {
                    size += 1 + 2 * (depth + 1) + string_len(k) + 2;
                    stack.push((item, depth + 1));
                }
            }
            _ => size += 1,
        }
        if size > room {
            return Some(size);
        }
    }
    None
}

/// The walk stack of [`text_size_above`]: the first few entries inline, so sizing a scalar or
/// a small container allocates nothing; the rest on the heap.
struct Stack<'v> {
    inline: [(&'v Value, usize); 8],
    len: usize,
    spill: Vec<(&'v Value, usize)>,
}

impl<'v> Stack<'v> {
    /// A stack holding `root` at depth 0.
    fn new(root: &'v Value) -> Stack<'v> {
        Stack {
            inline: [(root, 0); 8],
            len: 1,
            spill: Vec::new(),
        }
    }

    fn push(&mut self, entry: (&'v Value, usize)) {
        // Once the heap part is in use, it holds the top of the stack.
        if self.len < self.inline.len() && self.spill.is_empty() {
            self.inline[self.len] = entry;
            self.len += 1;
        } else {
            self.spill.push(entry);
        }
    }

    fn pop(&mut self) -> Option<(&'v Value, usize)> {
        if let Some(entry) = self.spill.pop() {
            return Some(entry);
        }
        self.len = self.len.checked_sub(1)?;
        Some(self.inline[self.len])
    }
}

/// The path that contributed the most bytes (the first of equals) and its bytes.
fn largest(state: &[(usize, Seen)]) -> Option<(u32, usize)> {
    state
        .iter()
        .enumerate()
        .max_by_key(|&(i, (b, _))| (*b, std::cmp::Reverse(i)))
        .map(|(i, (b, _))| (i as u32, *b))
}

/// Per-render state of one distinct path in an uncapped render.
#[derive(Clone, Copy)]
enum Written {
    /// Not met yet.
    Not,
    /// Unresolved: its placeholder is copied verbatim.
    Missing,
    /// Resolved, its text written at `text[start..end]`.
    At(usize, usize),
}

/// Per-render state of one distinct path in a capped render.
#[derive(Clone, Copy, PartialEq)]
enum Seen {
    Not,
    Resolved,
    Missing,
}

impl Template {
    /// The phase ids read through the resolved paths `reads`: `steps.ID…` and the phases
    /// chosen by `previous.output`; distinct, in first-read order.
    pub fn read_phases<S: Scope + ?Sized>(&self, scope: &S, reads: &[u32]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for &i in reads {
            for phase in read_phases_of(scope, &self.paths[i as usize]) {
                if !out.iter().any(|p| p == phase) {
                    out.push(phase.to_owned());
                }
            }
        }
        out
    }

    /// Render in text mode. Unresolved placeholders stay verbatim and are listed in `missing`.
    pub fn render<S: Scope + ?Sized>(&self, scope: &S) -> Rendered {
        self.render_uncapped(scope)
    }

    /// [`Template::render`]: no cap to watch, so a path met again copies the text its first
    /// occurrence wrote (a scope is read-only while it renders: the same path resolves to the
    /// same value, whose text is the same) instead of resolving and writing it again.
    fn render_uncapped<S: Scope + ?Sized>(&self, scope: &S) -> Rendered {
        let guess = (self.src.len() + self.refs.len() * 16).max(self.len_hint.get());
        let mut text = String::with_capacity(guess);
        // Per distinct path: where its first occurrence's text is, once written.
        let mut written = vec![Written::Not; self.paths.len()];
        let mut out = Rendered {
            reads: Vec::with_capacity(self.paths.len()),
            ..Rendered::default()
        };
        for op in &self.ops {
            match *op {
                Op::Lit(start, end) => text.push_str(&self.src[start as usize..end as usize]),
                Op::Ref(i) => {
                    let r = &self.refs[i as usize];
                    let id = r.path as usize;
                    match written[id] {
                        Written::At(start, end) => text.extend_from_within(start..end),
                        Written::Missing => text.push_str(&self.src[r.span.range()]),
                        Written::Not => match resolve(scope, &self.paths[id]) {
                            Some(value) => {
                                let start = text.len();
                                match value {
                                    // Most values are borrowed: nothing to drop.
                                    Cow::Borrowed(value) => write_text(value, &mut text),
                                    Cow::Owned(value) => write_text(&value, &mut text),
                                }
                                written[id] = Written::At(start, text.len());
                                out.reads.push(r.path);
                            }
                            None => {
                                text.push_str(&self.src[r.span.range()]);
                                written[id] = Written::Missing;
                                out.missing.push(r.path);
                            }
                        },
                    }
                }
            }
        }
        self.len_hint.set(text.len());
        out.text = text;
        out
    }

    /// [`Template::render`] that gives up once the text would pass `max` bytes, before
    /// writing the value that would pass it when its text is certainly too long (a deeply
    /// nested value's pretty JSON grows with the square of its depth), so memory stays near
    /// `max`. The error names the placeholder that contributed the most bytes.
    pub fn render_capped<S: Scope + ?Sized>(
        &self,
        scope: &S,
        max: usize,
    ) -> Result<Rendered, Oversize> {
        if max == usize::MAX {
            // No value's text can pass `usize::MAX` bytes.
            return Ok(self.render_uncapped(scope));
        }
        let guess = (self.src.len() + self.refs.len() * 16).max(self.len_hint.get());
        let mut text = String::with_capacity(guess.min(max));
        // Per distinct path: the bytes it contributed, and whether it resolved.
        let mut state = vec![(0usize, Seen::Not); self.paths.len()];
        let mut out = Rendered {
            reads: Vec::with_capacity(self.paths.len()),
            ..Rendered::default()
        };
        for op in &self.ops {
            match *op {
                Op::Lit(start, end) => text.push_str(&self.src[start as usize..end as usize]),
                Op::Ref(i) => {
                    let r = &self.refs[i as usize];
                    let id = r.path as usize;
                    if state[id].1 == Seen::Missing {
                        text.push_str(&self.src[r.span.range()]);
                        continue;
                    }
                    match resolve(scope, &self.paths[id]) {
                        Some(value) => {
                            let room = max.saturating_sub(text.len());
                            let before = text.len();
                            let skipped = match text_size_above(&value, room) {
                                Some(size) => {
                                    state[id].0 = state[id].0.saturating_add(size);
                                    true
                                }
                                None => {
                                    write_text(&value, &mut text);
                                    state[id].0 += text.len() - before;
                                    false
                                }
                            };
                            if skipped || text.len() > max {
                                let (path, bytes) = largest(&state).unwrap_or((r.path, 0));
                                // What was written stops before this placeholder (its size
                                // was only bounded from below: numbers count one byte).
                                text.truncate(before);
                                out.text = text;
                                return Err(Oversize {
                                    path,
                                    bytes,
                                    partial: out,
                                });
                            }
                            if state[id].1 == Seen::Not {
                                state[id].1 = Seen::Resolved;
                                out.reads.push(r.path);
                            }
                        }
                        None => {
                            text.push_str(&self.src[r.span.range()]);
                            state[id].1 = Seen::Missing;
                            out.missing.push(r.path);
                        }
                    }
                }
            }
        }
        if text.len() > max {
            // Literal text alone passes the cap: the largest placeholder is still named, and
            // what was written is cut at the cap.
            let (path, bytes) = largest(&state).unwrap_or((0, 0));
            let mut cut = max;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            out.text = text;
            return Err(Oversize {
                path,
                bytes,
                partial: out,
            });
        }
        self.len_hint.set(text.len());
        out.text = text;
        Ok(out)
    }

    /// Render in value mode (`interpolateValue`): a template that is exactly one placeholder
    /// yields the raw value when it resolves, else the original string; otherwise text mode.
    pub fn render_value<S: Scope + ?Sized>(&self, scope: &S) -> (Value, Rendered) {
        if let ([Op::Ref(0)], [path]) = (self.ops.as_slice(), self.paths.as_slice()) {
            let mut out = Rendered::default();
            return match resolve(scope, path) {
                Some(value) => {
                    out.reads.push(0);
                    (Cow::into_owned(value), out)
                }
                None => {
                    out.missing.push(0);
                    (Value::String(self.src.to_string()), out)
                }
            };
        }
        let rendered = self.render(scope);
        (Value::String(rendered.text.clone()), rendered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::scope::{Bindings, StepState};
    use crate::value::Map;

    fn scope() -> Bindings {
        let mut b = Bindings::default();
        let mut args = Map::default();
        args.insert("dir".into(), Value::from("src"));
        args.insert("n".into(), Value::Number(2.5));
        args.insert("flag".into(), Value::Bool(false));
        args.insert("none".into(), Value::Null);
        b.args = Some(Value::Object(args));
        b.steps.insert(
            "scan".into(),
            StepState::done("[{\"path\":\"a.rs\"},{\"path\":\"b.rs\"}]"),
        );
        b.previous = Some(Value::from("prev"));
        b.previous_phases = vec!["scan".into()];
        b
    }

    #[test]
    fn text_mode_renders_and_records() {
        let t = Template::parse(
            "{args.dir} {args.n} {args.flag} [{args.none}] {steps.scan.json.1.path} {missing.x} {args.dir} {missing.x} {previous.output}",
        );
        let s = scope();
        let r = t.render(&s);
        assert_eq!(
            r.text,
            "src 2.5 false [] b.rs {missing.x} src {missing.x} prev"
        );
        assert_eq!(t.path_texts(&r.missing), ["missing.x"]);
        assert_eq!(
            t.path_texts(&r.reads),
            [
                "args.dir",
                "args.n",
                "args.flag",
                "args.none",
                "steps.scan.json.1.path",
                "previous.output"
            ]
        );
        assert_eq!(t.read_phases(&s, &r.reads), ["scan"]);
    }

    #[test]
    fn containers_render_pretty() {
        let r = Template::parse("{steps.scan.json.0}").render(&scope());
        assert_eq!(r.text, "{\n  \"path\": \"a.rs\"\n}");
    }

    #[test]
    fn inserted_values_are_not_rescanned() {
        let mut s = scope();
        s.locals
            .insert("item".into(), Value::from("{args.dir} $1 $&"));
        assert_eq!(
            Template::parse("<{item}>").render(&s).text,
            "<{args.dir} $1 $&>"
        );
    }

    #[test]
    fn value_mode() {
        let s = scope();
        let t = Template::parse("{steps.scan.json}");
        let (v, r) = t.render_value(&s);
        assert_eq!(v.as_array().map(Vec::len), Some(2));
        assert_eq!(t.path_texts(&r.reads), ["steps.scan.json"]);
        let t = Template::parse("{nope}");
        let (v, r) = t.render_value(&s);
        assert_eq!(v, Value::from("{nope}"));
        assert_eq!(t.path_texts(&r.missing), ["nope"]);
        let (v, _) = Template::parse("n={args.n}").render_value(&s);
        assert_eq!(v, Value::from("n=2.5"));
    }

    /// Rendering a deep value never recurses: value mode copies a million-deep value, text
    /// mode writes a step's JSON as fully indented pretty JSON (quadratic in the depth, as
    /// SPEC §4.4 prescribes, so a smaller depth here), both on a 256 KiB stack.
    #[test]
    fn deep_values_render_on_a_small_stack() {
        use crate::value::fixtures::{DEPTH, mixed, small_stack};
        small_stack(|| {
            let mut s = Bindings::default();
            s.locals.insert("item".into(), mixed(DEPTH, Value::Null));
            let t = Template::parse("{item}");
            let (v, r) = t.render_value(&s);
            assert_eq!(t.path_texts(&r.reads), ["item"]);
            assert!(s.locals.get("item") == Some(&v));
            let (v, _) = Template::parse("{item.k.1.k.1.k}").render_value(&s);
            assert!(v == mixed(DEPTH - 5, Value::Null));

            let depth = 2_000;
            let answer = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            s.steps.insert("a".into(), StepState::done(answer));
            let text = Template::parse("<{steps.a.json}>").render(&s).text;
            assert_eq!(text.len(), 2 * depth * depth + 2);
            assert!(text.starts_with("<[\n  [\n    ["));
        });
    }

    #[test]
    fn no_escape_sequence() {
        assert_eq!(
            Template::parse("\\{args.dir}").render(&scope()).text,
            "\\src"
        );
        assert_eq!(
            Template::parse("{ args.dir }").render(&scope()).text,
            "{ args.dir }"
        );
    }
}

#[cfg(test)]
mod laws {
    use super::*;
    use crate::eval::scope::Bindings;
    use crate::syntax::template::parse_template;
    use proptest::prelude::*;

    proptest! {
        /// Rendering a placeholder-free string is the identity.
        #[test]
        fn placeholder_free_text_is_identity(s in "[^{]*|[a-z{} .\"-]*") {
            let t = Template::parse(&s);
            prop_assume!(!t.has_placeholders());
            prop_assert_eq!(t.render(&Bindings::default()).text, s);
        }

        /// With nothing resolvable, every template renders to itself and lists what it missed.
        #[test]
        fn unresolved_placeholders_stay_verbatim(s in "([a-z .{}]|\\{[a-z]{1,3}(\\.[a-z0-9]{1,2})?\\})*") {
            let t = Template::parse(&s);
            let r = t.render(&Bindings::default());
            prop_assert_eq!(&r.text, &s);
            prop_assert_eq!(r.missing.len() <= t.refs().len(), true);
            prop_assert!(r.reads.is_empty());
        }

        /// Parsing straight to a template equals compiling the parsed AST.
        #[test]
        fn parse_equals_compile(s in "([a-z.{} \"]|\\{[a-z0-9_-]{1,3}(\\.[a-z0-9]{1,2}){0,3}\\})*") {
            let direct = Template::parse(&s);
            prop_assert_eq!(&direct, &Template::compile(&s, &parse_template(&s)));
            prop_assert_eq!(direct.render(&Bindings::default()).text, s);
        }
    }
}

#[cfg(test)]
mod caps {
    use super::*;
    use crate::eval::scope::{Bindings, StepState};
    use crate::value::Map;

    fn scope() -> Bindings {
        let mut args = Map::default();
        args.insert("small".into(), Value::from("tiny"));
        let mut nested = Value::Null;
        for _ in 0..3000 {
            nested = Value::Array(vec![nested]);
        }
        args.insert("deep".into(), nested);
        let mut b = Bindings {
            args: Some(Value::Object(args)),
            ..Bindings::default()
        };
        b.steps
            .insert("big".into(), StepState::done("x".repeat(5000)));
        b
    }

    #[test]
    fn within_the_cap_renders_as_usual() {
        let t = Template::parse("{args.small} and {steps.big.output}");
        let r = t.render_capped(&scope(), 10_000).expect("fits");
        assert_eq!(r.text, t.render(&scope()).text);
    }

    #[test]
    fn the_largest_contributor_is_named() {
        let t = Template::parse("{args.small} {steps.big.output} {args.small}");
        let over = t.render_capped(&scope(), 4000).expect_err("too long");
        assert_eq!(
            t.paths()[over.path as usize].text.as_ref(),
            "steps.big.output"
        );
        assert_eq!(over.bytes, 5000);
    }

    #[test]
    fn a_deep_value_is_refused_before_it_is_written() {
        // Pretty-printed, 3000 levels weigh about 9 MB; the cap is far below.
        let t = Template::parse("Look: {args.deep}");
        let over = t.render_capped(&scope(), 100_000).expect_err("too long");
        assert_eq!(t.paths()[over.path as usize].text.as_ref(), "args.deep");
        assert!(over.bytes > 100_000);
        assert!(over.partial.text.len() < 100, "{}", over.partial.text.len());
    }

    #[test]
    fn the_size_bound_never_exceeds_the_written_size() {
        let mut m = Map::default();
        m.insert(
            "k".into(),
            Value::Array(vec![Value::Null, Value::from("s"), Value::Array(vec![])]),
        );
        m.insert("e".into(), Value::Object(Map::default()));
        for v in [
            Value::Object(m),
            Value::Null,
            Value::from("plain"),
            Value::Number(12.5),
        ] {
            let mut written = String::new();
            write_text(&v, &mut written);
            // Room one byte below the real size may or may not be passed; zero room always is
            // for anything non-empty, and the bound found then is at most the real size.
            if let Some(bound) = text_size_above(&v, 0) {
                assert!(bound <= written.len(), "{bound} > {}", written.len());
            } else {
                assert!(written.is_empty());
            }
        }
    }

    /// The whole size bound of `v`: the least room it does not pass.
    fn bound(v: &Value) -> usize {
        let (mut lo, mut hi) = (0, 1 << 20);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if text_size_above(v, mid).is_some() {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    #[test]
    fn escapes_count_toward_the_bound() {
        // A control character escapes to six bytes, a quote or newline to two: the bound
        // grows by what the escapes add to the written text.
        let value = |key: &str, text: &str| {
            let mut m = Map::default();
            m.insert(key.repeat(40), Value::from(text.repeat(10)));
            Value::Array(vec![Value::Object(m), Value::from(text)])
        };
        let (plain, escaped) = (value("k", "xqtextqx"), value("\u{b}", "\"quoted\"\n"));
        let written = |v: &Value| {
            let mut out = String::new();
            write_text(v, &mut out);
            out.len()
        };
        assert!(written(&escaped) > written(&plain) + 200);
        assert_eq!(
            bound(&escaped) - bound(&plain),
            written(&escaped) - written(&plain)
        );
        assert!(bound(&escaped) <= written(&escaped));
    }

    #[test]
    fn what_is_written_before_giving_up_stays_within_the_cap() {
        // Numbers count one byte in the size bound: this array's bound fits caps its text
        // passes. The text it would add is taken back.
        let numbers = (0..2000)
            .map(|i| Value::Number(0.123_456_789 + f64::from(i)))
            .collect();
        let mut args = Map::default();
        args.insert("numbers".into(), Value::Array(numbers));
        let scope = Bindings {
            args: Some(Value::Object(args)),
            ..Bindings::default()
        };
        let t = Template::parse("n: {args.numbers}");
        for cap in [100, 5_000, 20_000, 30_000] {
            let Err(over) = t.render_capped(&scope, cap) else {
                panic!("cap {cap}: the text fits");
            };
            assert_eq!(over.partial.text, "n: ", "cap {cap}");
        }
        // Literal text alone past the cap is cut at it, on a character boundary.
        let t = Template::parse(&"é".repeat(100));
        let over = t.render_capped(&scope, 51).expect_err("too long");
        assert_eq!(over.partial.text, "é".repeat(25));
    }
}
