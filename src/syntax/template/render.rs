//! Compiled templates: a flat list of ops (copy literal text / resolve path), rendered in text
//! mode (SPEC §4.4) or value mode (SPEC §4.5) against a [`Scope`].

use std::borrow::Cow;

use super::ast::{Piece, TemplateAst, parse_template};
use crate::eval::{Scope, resolve, write_text};
use crate::source::Span;
use crate::syntax::RefPath;
use crate::value::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// Copy `src[start..end]`.
    Lit(u32, u32),
    /// Resolve `refs[i]` and write it as text; unresolved ⇒ copy the placeholder verbatim.
    Ref(u32),
}

/// A placeholder of a compiled template.
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateRef {
    pub path: RefPath,
    /// The placeholder with its braces, relative to the template text.
    pub span: Span,
}

/// A template compiled for repeated rendering.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    src: Box<str>,
    ops: Vec<Op>,
    refs: Vec<TemplateRef>,
}

/// The result of a text-mode render.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rendered {
    pub text: String,
    /// Unresolved placeholder paths, distinct, in order of first appearance.
    pub missing: Vec<String>,
    /// Resolved placeholder paths (the observed readSet), distinct, first-resolution order.
    pub reads: Vec<String>,
    /// Phase ids read through `steps.ID…` and `previous.output`, distinct, first-read order.
    pub read_phases: Vec<String>,
}

impl Template {
    pub fn parse(src: &str) -> Template {
        Template::compile(src, &parse_template(src))
    }

    /// Lower an AST to ops.
    pub fn compile(src: &str, ast: &TemplateAst) -> Template {
        let mut ops = Vec::with_capacity(ast.pieces.len());
        let mut refs = Vec::new();
        for piece in &ast.pieces {
            match piece {
                Piece::Text(span) => ops.push(Op::Lit(span.start, span.end)),
                Piece::Placeholder(span, path) => {
                    ops.push(Op::Ref(refs.len() as u32));
                    refs.push(TemplateRef {
                        path: path.clone(),
                        span: *span,
                    });
                }
            }
        }
        Template {
            src: src.into(),
            ops,
            refs,
        }
    }

    pub fn source(&self) -> &str {
        &self.src
    }

    pub fn refs(&self) -> &[TemplateRef] {
        &self.refs
    }

    pub fn has_placeholders(&self) -> bool {
        !self.refs.is_empty()
    }

    /// Render in text mode. Unresolved placeholders stay verbatim and are listed in `missing`.
    pub fn render<S: Scope + ?Sized>(&self, scope: &S) -> Rendered {
        let mut text = String::with_capacity(self.src.len() + 64);
        let mut resolved: Vec<u32> = Vec::new();
        let mut unresolved: Vec<u32> = Vec::new();
        for op in &self.ops {
            match *op {
                Op::Lit(start, end) => text.push_str(&self.src[start as usize..end as usize]),
                Op::Ref(i) => {
                    let r = &self.refs[i as usize];
                    match resolve(scope, &r.path) {
                        Some(value) => {
                            write_text(&value, &mut text);
                            resolved.push(i);
                        }
                        None => {
                            text.push_str(&self.src[r.span.range()]);
                            unresolved.push(i);
                        }
                    }
                }
            }
        }
        let mut out = Rendered {
            text,
            ..Rendered::default()
        };
        self.collect_paths(&unresolved, &mut out.missing);
        self.collect_paths(&resolved, &mut out.reads);
        for &i in &resolved {
            for phase in read_phases(scope, &self.refs[i as usize].path) {
                push_distinct(&mut out.read_phases, phase);
            }
        }
        out
    }

    /// Render in value mode (`interpolateValue`): a template that is exactly one placeholder
    /// yields the raw value when it resolves, else the original string; otherwise text mode.
    pub fn render_value<S: Scope + ?Sized>(&self, scope: &S) -> (Value, Rendered) {
        if let ([Op::Ref(0)], [r]) = (self.ops.as_slice(), self.refs.as_slice()) {
            let mut out = Rendered::default();
            return match resolve(scope, &r.path) {
                Some(value) => {
                    out.reads.push(r.path.text.to_string());
                    out.read_phases = read_phases(scope, &r.path)
                        .into_iter()
                        .map(str::to_owned)
                        .collect();
                    (Cow::into_owned(value), out)
                }
                None => {
                    out.missing.push(r.path.text.to_string());
                    (Value::String(self.src.to_string()), out)
                }
            };
        }
        let rendered = self.render(scope);
        (Value::String(rendered.text.clone()), rendered)
    }

    fn collect_paths(&self, indices: &[u32], out: &mut Vec<String>) {
        for &i in indices {
            push_distinct(out, &self.refs[i as usize].path.text);
        }
    }
}

/// The phase ids a resolved path read.
pub(crate) fn read_phases<'s, S: Scope + ?Sized>(scope: &'s S, path: &'s RefPath) -> Vec<&'s str> {
    match path.target {
        crate::syntax::Target::Previous => scope.previous_phases(),
        _ => path.step_id().into_iter().collect(),
    }
}

fn push_distinct(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|x| x == item) {
        list.push(item.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{Bindings, StepState};
    use crate::value::Map;

    fn scope() -> Bindings {
        let mut b = Bindings::default();
        let mut args = Map::new();
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
        let r = t.render(&scope());
        assert_eq!(r.text, "src 2.5 false [] b.rs {missing.x} src {missing.x} prev");
        assert_eq!(r.missing, ["missing.x"]);
        assert_eq!(
            r.reads,
            ["args.dir", "args.n", "args.flag", "args.none", "steps.scan.json.1.path", "previous.output"]
        );
        assert_eq!(r.read_phases, ["scan"]);
    }

    #[test]
    fn containers_render_pretty() {
        let r = Template::parse("{steps.scan.json.0}").render(&scope());
        assert_eq!(r.text, "{\n  \"path\": \"a.rs\"\n}");
    }

    #[test]
    fn inserted_values_are_not_rescanned() {
        let mut s = scope();
        s.locals.insert("item".into(), Value::from("{args.dir} $1 $&"));
        assert_eq!(Template::parse("<{item}>").render(&s).text, "<{args.dir} $1 $&>");
    }

    #[test]
    fn value_mode() {
        let s = scope();
        let (v, r) = Template::parse("{steps.scan.json}").render_value(&s);
        assert_eq!(v.as_array().map(Vec::len), Some(2));
        assert_eq!(r.reads, ["steps.scan.json"]);
        let (v, r) = Template::parse("{nope}").render_value(&s);
        assert_eq!(v, Value::from("{nope}"));
        assert_eq!(r.missing, ["nope"]);
        let (v, _) = Template::parse("n={args.n}").render_value(&s);
        assert_eq!(v, Value::from("n=2.5"));
    }

    #[test]
    fn no_escape_sequence() {
        assert_eq!(Template::parse("\\{args.dir}").render(&scope()).text, "\\src");
        assert_eq!(Template::parse("{ args.dir }").render(&scope()).text, "{ args.dir }");
    }
}

#[cfg(test)]
mod laws {
    use super::*;
    use crate::eval::Bindings;
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

        /// Spans are inside the input, ordered, and cover it exactly.
        #[test]
        fn pieces_tile_the_input(s in "\\PC*") {
            let ast = parse_template(&s);
            let mut at = 0;
            for piece in &ast.pieces {
                let span = match piece { Piece::Text(sp) | Piece::Placeholder(sp, _) => *sp };
                prop_assert_eq!(span.start as usize, at);
                prop_assert!(span.end > span.start);
                at = span.end as usize;
            }
            prop_assert_eq!(at, s.len());
        }
    }
}
