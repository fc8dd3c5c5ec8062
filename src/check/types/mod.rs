//! Types through the DAG (SPEC §7.5): every placeholder and condition operand gets a static
//! type, inferred from the declarations that fix it — `expect` contracts, ArgSpecs, map items
//! through coerceArray, sub-flows' final phases, loop locals — and is checked against it.
//!
//! - `lattice`: the types (`any`, `missing`, scalars, literal sets, `array<T>`, open objects,
//!   unions) and one `dig` step through them;
//! - `schema`: contract and ArgSpec → type, once per declaration;
//! - `infer`: the root type of each placeholder, memoised per phase;
//! - `rules`: the diagnostics (E0209, E0211, E0212, W0106, W0107, W0108).
//!
//! Soundness: `any` is never reported, and undefined (a phase that failed or was skipped, an
//! argument not given) is always assumed possible, so a flow that runs correctly gains no
//! diagnostic. [`placeholder_types`] and [`type_at`] expose the inferred types to the CLI
//! (`tfc check --types`) and to editors.

mod infer;
mod lattice;
mod rules;
mod schema;

pub use infer::Typed;
pub use lattice::Ty;

use super::loader::FlowLoader;
use super::refs::{Use, uses_into};
use crate::diag::Diagnostic;
use crate::flow::{Def, Flow};
use crate::source::Span;

/// Every type rule over one flow's placeholders (`all`, from [`super::refs::uses_into`]).
pub fn check(
    flow: &Flow,
    all: &[Use<'_>],
    loader: Option<&dyn FlowLoader>,
    out: &mut Vec<Diagnostic>,
) {
    let mut env = infer::Env::new(flow, loader);
    rules::paths(&mut env, all, out);
    rules::map_over(&mut env, all, out);
    rules::comparisons(&mut env, out);
}

/// One placeholder's inferred type.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaceholderType {
    /// The placeholder in the file, braces included.
    pub span: Span,
    /// Its path, as written.
    pub path: String,
    /// The id of the phase it is in.
    pub phase: String,
    /// The field it is in (`task`, `when`, `branches[0].task`, …).
    pub field: String,
    /// The type of its value (`missing` for a path that never resolves).
    pub ty: Ty,
    /// What it reads: the phase, argument or map that binds its root.
    pub root_decl: Option<Span>,
    /// The declaration of the value reached: the contract property, the ArgSpec, …; the
    /// root's declaration when no deeper one fixed it.
    pub decl: Option<Span>,
}

/// The inferred type of every placeholder of `flow` and of its inline sub-flows, in file order.
/// Placeholders whose root is not bound there (a local out of its scope, `{steps.nope…}`)
/// are left out.
pub fn placeholder_types(flow: &Flow, loader: Option<&dyn FlowLoader>) -> Vec<PlaceholderType> {
    let mut out = Vec::new();
    collect(flow, loader, &mut out);
    out.sort_by_key(|t| (t.span.start, t.span.end));
    out
}

fn collect(flow: &Flow, loader: Option<&dyn FlowLoader>, out: &mut Vec<PlaceholderType>) {
    let mut all = Vec::new();
    for (i, p) in flow.phases.iter().enumerate() {
        uses_into(i, p, &mut all);
    }
    let mut env = infer::Env::new(flow, loader);
    for u in &all {
        let Some((root, dug)) = env.dig(u.phase, &u.field, u.path) else {
            continue;
        };
        out.push(PlaceholderType {
            span: u.span,
            path: u.path.text.to_string(),
            phase: flow.phases[u.phase].id.clone(),
            field: u.field.to_string(),
            decl: dug.typed.decl.or(root.root_decl),
            ty: dug.typed.ty,
            root_decl: root.root_decl,
        });
    }
    for p in &flow.phases {
        if let Some(def) = p.def()
            && let Def::Inline(child) = &def.value
        {
            collect(child, loader, out);
        }
    }
}

impl PlaceholderType {
    /// The `--types` entry of `tfc check --format json`: `{span, path, type}` plus the
    /// phase, the field and the declaration's span when there is one.
    pub fn to_json(&self, source: &crate::source::Source) -> crate::value::Value {
        use crate::diag::render::span_json;
        use crate::value::{Map, Value};
        let mut o = Map::default();
        o.insert("span".into(), span_json(self.span, source));
        o.insert("path".into(), Value::from(self.path.as_str()));
        o.insert("type".into(), Value::from(self.ty.to_string()));
        o.insert("phase".into(), Value::from(self.phase.as_str()));
        o.insert("field".into(), Value::from(self.field.as_str()));
        if let Some(d) = self.decl {
            o.insert("declaration".into(), span_json(d, source));
        }
        Value::Object(o)
    }
}

/// The type `path` (a placeholder's text without braces) has, or would have, in `field` of
/// phase `phase` of `flow`: for an editor completing a placeholder being typed. `None` when
/// its root is not bound there.
pub fn type_of_path(
    flow: &Flow,
    loader: Option<&dyn FlowLoader>,
    phase: usize,
    field: &str,
    path: &str,
) -> Option<Ty> {
    let path = crate::syntax::RefPath::parse(path);
    let mut env = infer::Env::new(flow, loader);
    env.dig(phase, field, &path).map(|(_, dug)| dug.typed.ty)
}

/// The `description` annotation of the contract declared at `decl` in `flow` (a phase's
/// `expect` key, a property's key or an `items` key: what [`PlaceholderType::decl`] points
/// at), for an editor's hover.
pub fn contract_description(flow: &Flow, decl: Span) -> Option<&str> {
    fn described(c: &crate::flow::Contract) -> Option<&str> {
        c.description.as_ref().map(|d| d.value.as_str())
    }
    for p in &flow.phases {
        let Some(c) = p.expect.as_deref() else {
            continue;
        };
        if p.written.get("expect") == Some(&decl) {
            return described(c);
        }
        // Contracts nest as deep as the file does: walked without recursion.
        let mut work = vec![c];
        while let Some(c) = work.pop() {
            for f in c.properties.values().chain(c.items.as_deref()) {
                if f.key == decl {
                    return described(&f.value);
                }
                work.push(&f.value);
            }
        }
    }
    None
}

/// The placeholder at byte `offset` of the file (the innermost, when spans nest).
pub fn type_at(types: &[PlaceholderType], offset: usize) -> Option<&PlaceholderType> {
    types
        .iter()
        .filter(|t| t.span.range().contains(&offset))
        .min_by_key(|t| t.span.len())
}

#[cfg(test)]
mod item_tests;
#[cfg(test)]
mod tests;
