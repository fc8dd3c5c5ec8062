//! `flow` (SPEC §3.8): a saved (`use`) or inline (`def`) flow run as one phase.

use super::common::{Cx, has, need};
use crate::diag::{Code, Diagnostic};
use crate::flow::fields::FieldDef;
use crate::flow::fields::{FieldType, f};
use crate::flow::ir::{Field, Flow, Phase, Text};
use crate::flow::lowerer::{Lowerer, PhaseFields};
use crate::json::{Kind, Member};
use crate::value::Value;

/// A sub-flow definition (`flow`/`expand` `def`).
#[derive(Clone, Debug)]
pub enum Def {
    /// An object def, lowered as a flow of its own (boxed: flows nest).
    Inline(Box<Flow>),
    /// A string def: interpolated and safeParsed at run time.
    Template(Text),
}

/// A `with` value: strings are templates (value mode), other values pass unchanged.
#[derive(Clone, Debug)]
pub enum WithValue {
    /// A string, rendered in value mode.
    Template(Text),
    /// Any other JSON value.
    Literal(Value),
}

/// A flow phase.
#[derive(Clone, Debug)]
pub struct SubFlow {
    /// `use`: a saved flow's name.
    pub use_flow: Option<Field<String>>,
    /// `def`: an inline definition.
    pub def: Option<Field<Def>>,
    /// `with`: the sub-flow's arguments, in file order (a repeated key keeps its first place
    /// and its last value).
    pub with: Vec<(String, Field<WithValue>)>,
}

impl SubFlow {
    /// The defaults.
    pub const DEFAULT: SubFlow = SubFlow {
        use_flow: None,
        def: None,
        with: Vec::new(),
    };
}

/// The fields of a flow phase.
pub(super) const FIELDS: &[FieldDef] = &[
    f("use", FieldType::String, "flow: saved flow name"),
    DEF,
    f(
        "with",
        FieldType::AnyObject,
        "flow: arguments of the sub-flow",
    ),
];

pub(super) fn lower(l: &mut Lowerer, f: &PhaseFields<'_>, cx: &mut Cx<'_>) -> SubFlow {
    let mut k = SubFlow::DEFAULT;
    k.use_flow = l.string(f, "use");
    k.def = lower_def(l, f, cx);
    if let Some(m) = f.get("with")
        && let Some(members) = l.object_members(m, "an object of sub-flow arguments")
    {
        for w in members {
            let value = match &w.value.kind {
                Kind::String(s) => WithValue::Template(Text::new(s.clone())),
                _ => WithValue::Literal(w.value.to_value()),
            };
            let field = Field::new(value, w.key.span, w.value.span);
            match k.with.iter_mut().find(|(name, _)| *name == w.key.value) {
                Some((_, slot)) => *slot = field,
                None => k.with.push((w.key.value.clone(), field)),
            }
        }
    }
    k
}

/// E0301 (`use` or `def`), E0303 (both).
pub(super) fn check(p: &Phase, out: &mut Vec<Diagnostic>) {
    need(
        p,
        "use' or 'def",
        has(p, "use") || has(p, "def"),
        "add \"use\": \"<saved flow>\" or an inline \"def\": {\"phases\": […]}",
        out,
    );
    if p.has("use") && p.has("def") {
        out.push(
            Diagnostic::new(
                Code::ConflictingFields,
                format!(
                    "{}: a flow phase takes exactly one of 'use' and 'def'",
                    p.id
                ),
            )
            .at(p.written["def"])
            .with_label("'def' is given")
            .phase(&p.id)
            .label(p.written["use"], "'use' is given too")
            .help("keep 'use' for a saved flow or 'def' for an inline one"),
        );
    }
}
/// `def`, shared by flow and expand.
pub(super) const DEF: FieldDef = f(
    "def",
    FieldType::StringOrObject,
    "flow/expand: inline definition",
);

/// `def` of a flow or an expand.
pub(super) fn lower_def(
    l: &mut Lowerer,
    f: &PhaseFields<'_>,
    cx: &mut Cx<'_>,
) -> Option<Field<Def>> {
    let m = f.get("def")?;
    let def = l.def(m, cx.id);
    cx.invalid_if_none(f, "def", def)
}

impl Lowerer {
    /// `def` (flow, expand): an inline flow or a template string.
    pub(super) fn def(&mut self, m: &Member, phase: &str) -> Option<Field<Def>> {
        let def = match &m.value.kind {
            Kind::String(s) => Def::Template(Text::new(s.clone())),
            Kind::Object(_) | Kind::Array(_) => {
                let inline = format!("{phase}-inline");
                let flow = self.document(&m.value, None, Some(&inline))?;
                Def::Inline(Box::new(flow))
            }
            _ => {
                self.wrong_type(m, "a flow object, a phases array, or a JSON string");
                return None;
            }
        };
        Some(Field::new(def, m.key.span, m.value.span))
    }
}
