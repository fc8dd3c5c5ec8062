//! flow (SPEC §3.8): a saved flow (`use`, read by the driver and checked here, never
//! recursively) or an inline definition, run with the phase's `with` values as arguments on
//! the sub-flow engine.

use super::super::machine::{Command, Cx, Exec, Halt, OpKind, Step};
use super::child::Subflow;
use crate::check::{ArgReads, CheckOptions};
use crate::flow::{Flow, LowerOptions, Phase, WithValue, kinds, resolve_args};
use crate::value::Map;

/// Ask for saved flow `target` (a recursive use fails the phase).
pub(super) fn load_saved(
    sf: &mut Subflow,
    ex: &mut Exec,
    cx: &mut Cx<'_>,
    phase: &Phase,
    target: String,
) -> Step {
    let own = cx.flow().name.clone();
    if cx.cfg().flow_stack.contains(&target) || own == target {
        let mut chain = cx.cfg().flow_stack.clone();
        chain.push(own);
        chain.push(target.clone());
        ex.fail(
            String::new(),
            format!(
                "flow phase '{}': recursive sub-flow {}",
                phase.id,
                chain.join(" -> ")
            ),
        );
        return Step::Done(Halt::None);
    }
    let base = cx.cfg().cwd.clone();
    sf.name = target.clone();
    cx.io(0, OpKind::Other, |op| Command::LoadFlow {
        op,
        name: target,
        cwd: base,
    });
    Step::Wait
}

/// A saved flow was read: check it.
pub(super) fn loaded(
    sf: &mut Subflow,
    ex: &mut Exec,
    cx: &mut Cx<'_>,
    phase: &Phase,
    text: Option<String>,
) -> Step {
    let target = sf.name.clone();
    let Some(text) = text else {
        ex.fail(
            String::new(),
            format!(
                "flow phase '{}': saved flow not found: '{target}'",
                phase.id
            ),
        );
        return Step::Done(Halt::None);
    };
    let c = crate::check::check_source(
        &text,
        &LowerOptions {
            default_name: Some(target.clone()),
        },
        &CheckOptions::default(),
    );
    match c.flow {
        Some(flow) if !c.has_errors() => sf.proceed(ex, cx, phase, flow, target),
        _ => {
            let first = c
                .diagnostics
                .iter()
                .find(|d| d.is_error())
                .map(|d| d.message.clone())
                .unwrap_or_default();
            ex.fail(
                String::new(),
                format!(
                    "flow phase '{}': saved flow '{target}' has errors: {first}",
                    phase.id
                ),
            );
            Step::Done(Halt::None)
        }
    }
}

/// The child's arguments: the `with` values (templates in value mode).
pub(super) fn given(ex: &mut Exec, cx: &mut Cx<'_>, k: &kinds::SubFlow) -> Map {
    let mut given = Map::default();
    let scope = ex.scope.clone();
    for (key, v) in &k.with {
        let value = match &v.value {
            WithValue::Template(t) => ex.render_value(cx, &format!("with.{key}"), t, &scope),
            WithValue::Literal(v) => v.clone(),
        };
        given.insert(key.clone(), value);
    }
    given
}

/// resolveArgs (SPEC §2.2) of the child: the `with` values converted to the child's declared
/// types as `tfc check` converts them, then its defaults; the E050x messages, joined by `; `,
/// when they do not fit.
pub(super) fn resolve(child: &Flow, given: Map) -> Result<Map, String> {
    let reads = ArgReads::of(child);
    resolve_args(child, given, |name| reads.reads(name)).map_err(|problems| {
        problems
            .iter()
            .map(|p| p.message.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    })
}
