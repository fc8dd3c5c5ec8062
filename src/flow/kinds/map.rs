//! `map` (SPEC §3.4): one call per element of an upstream array.

use super::common::{Cx, has, need};
use crate::diag::{Code, Diagnostic};
use crate::flow::enums::PhaseType;
use crate::flow::fields::FieldDef;
use crate::flow::fields::{FieldType, f};
use crate::flow::ir::{Field, Phase, Text};
use crate::flow::lowerer::{Lowerer, PhaseFields, spaced_placeholder};
use crate::json::Kind;
use crate::syntax::path::is_placeholder_path;

/// A map phase.
#[derive(Clone, Debug)]
pub struct Map {
    /// `over`: a placeholder producing the array.
    pub over: Option<Text>,
    /// `as`: the local name of each element.
    pub as_name: Option<Field<String>>,
}

impl Map {
    /// The defaults.
    pub const DEFAULT: Map = Map {
        over: None,
        as_name: None,
    };

    /// The name each element is bound to (`as`, default `item`).
    pub fn local_name(&self) -> &str {
        self.as_name.as_ref().map_or("item", |f| f.value.as_str())
    }
}

/// The fields of a map phase.
pub(super) const FIELDS: &[FieldDef] = &[
    f(
        "over",
        FieldType::String,
        "map: the array to fan out over (a placeholder)",
    ),
    f(
        "as",
        FieldType::String,
        "map: the local name of each element (default item)",
    ),
];

/// E0204 (`over` a literal), E0207 (`as` not a usable name).
pub(super) fn lower(l: &mut Lowerer, f: &PhaseFields<'_>, cx: &mut Cx<'_>) -> Map {
    let mut k = Map::DEFAULT;
    if let Some(m) = f.get("over") {
        let literal = match &m.value.kind {
            Kind::String(s) => {
                let text = Text::new(s.clone());
                // A string without a placeholder is a literal too (`"[\"a\", \"b\"]"`).
                let literal = cx.ty == PhaseType::Map && !text.template.has_placeholders();
                k.over = Some(text);
                literal.then_some("a string without a placeholder")
            }
            _ => Some(m.value.type_name()),
        };
        if let Some(found) = literal {
            cx.invalid.push("over");
            let spaced = k.over.as_ref().and_then(|t| spaced_placeholder(t.as_str()));
            let help = match spaced {
                Some(fixed) => format!("a placeholder has no spaces inside its braces: write \"over\": \"{fixed}\""),
                None => "emit the array from an upstream phase (output: \"json\") and reference it: \"over\": \"{steps.list.json}\"".to_owned(),
            };
            l.push(
                Diagnostic::new(Code::MapOverLiteral, format!("{}: 'over' must be a placeholder string such as \"{{steps.scan.json}}\", found {found}", cx.id))
                    .at(m.value.span)
                    .with_label("a literal, not a reference to upstream output")
                    .help(help),
            );
        }
    }
    if let Some(name) = l.string(f, "as") {
        let ok = is_placeholder_path(&name.value) && !name.value.contains('.');
        if !ok || ["args", "steps", "previous", "reflexion"].contains(&name.value.as_str()) {
            cx.invalid.push("as");
            l.push(
                Diagnostic::new(Code::InvalidLocalName, format!("{}: 'as' name '{}' cannot be used as a placeholder head", cx.id, name.value))
                    .at(name.span)
                    .with_label(if ok { "a reserved placeholder family" } else { "not a single placeholder segment" })
                    .help("use letters, digits, '_' or '-', and not args, steps, previous or reflexion (e.g. \"file\")"),
            );
        } else {
            k.as_name = Some(name);
        }
    }
    k
}

/// E0301: a map needs a task and `over`.
pub(super) fn check(p: &Phase, out: &mut Vec<Diagnostic>) {
    need(
        p,
        "task",
        has(p, "task"),
        "add \"task\": the prompt run for each element",
        out,
    );
    need(
        p,
        "over",
        has(p, "over"),
        "add \"over\": the array to fan out over, e.g. \"{steps.list.json}\"",
        out,
    );
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, spans};

    #[test]
    fn map_over_must_reference_something() {
        let text = r#"[{"id": "m", "type": "map", "over": "[\"a\", \"b\"]", "task": "{item}"}]"#;
        assert_eq!(spans(text), [("E0204", r#""[\"a\", \"b\"]""#.to_owned())]);
        // On another type 'over' is only ignored.
        assert_eq!(
            codes(r#"[{"id": "a", "task": "x", "over": "[1]"}]"#),
            ["W0308"]
        );
    }
}
