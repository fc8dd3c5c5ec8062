//! map (SPEC §3.4): one item per element of `over`, the task rendered with the element as
//! a local; the items run on the fan-out engine and merge like a parallel's.

use std::borrow::Cow;

use super::super::machine::{CallDir, Cx, Exec, Halt, Step};
use super::super::scope::{PhaseScope, WithLocal};
use super::items::{Elements, Fanout};
use crate::eval::coerce_array;
use crate::flow::{Phase, kinds};
use crate::value::Value;

/// What a missing element reads as.
static NULL: Value = Value::Null;

/// A map's elements (SPEC §3.4): `Err` when the phase ends at once.
pub(super) fn elements(
    f: &mut Fanout,
    ex: &mut Exec,
    cx: &mut Cx<'_>,
    phase: &Phase,
    k: &kinds::Map,
) -> Result<usize, Step> {
    let scope = f.scope.clone();
    let over = over_value(ex, cx, k, &scope);
    let borrowed = matches!(over, Some(Cow::Borrowed(_)));
    let Some(elements) = over.as_deref().and_then(coerce_array) else {
        let over = k.over.as_ref().map_or("", |o| o.as_str());
        ex.fail(
            String::new(),
            format!(
                "map phase '{}': 'over' ({over}) did not resolve to an array",
                phase.id
            ),
        );
        return Err(Step::Done(Halt::None));
    };
    const MAX_DYNAMIC_MAP_ITEMS: usize = 200;
    let elements = if cx.cfg().generated && elements.len() > MAX_DYNAMIC_MAP_ITEMS {
        ex.rec
            .warn("map fan-out truncated to MAX_DYNAMIC_MAP_ITEMS (200) inside a dynamic sub-flow");
        &elements[..MAX_DYNAMIC_MAP_ITEMS]
    } else {
        &elements[..]
    };
    if elements.is_empty() {
        ex.rec.items = Some(Vec::new());
        ex.succeed(String::new());
        ex.rec.json = Some(Value::Array(Vec::new()));
        return Err(Step::Done(Halt::None));
    }
    let n = elements.len();
    f.elements = if borrowed {
        Elements::Scoped
    } else {
        Elements::Owned(elements.to_vec())
    };
    Ok(n)
}

/// Item `i`'s text, agent and directory.
pub(super) fn item(
    f: &Fanout,
    ex: &mut Exec,
    cx: &mut Cx<'_>,
    phase: &Phase,
    k: &kinds::Map,
    i: usize,
) -> (String, String, CallDir) {
    let looked_up;
    let value = match &f.elements {
        Elements::Owned(v) => v.get(i),
        Elements::Scoped => {
            looked_up = k
                .over
                .as_ref()
                .and_then(|o| crate::eval::resolve(&f.scope, &o.template.paths()[0]));
            looked_up
                .as_deref()
                .and_then(coerce_array)
                .and_then(|a| a.get(i))
        }
        Elements::None => None,
    };
    let item = WithLocal {
        base: &f.scope,
        name: phase.local_name(),
        value: value.unwrap_or(&NULL),
    };
    let text = match &phase.task {
        Some(t) => ex.render(cx, "task", t, &item),
        None => String::new(),
    };
    (
        text,
        phase.agent.value.clone(),
        CallDir::At(ex.work_dir.clone()),
    )
}

/// The value a map fans out over (SPEC §3.4), before coerceArray: a lone placeholder's raw
/// value (strings go through safeParse), else the rendered text through safeParse.
fn over_value<'s>(
    ex: &mut Exec,
    cx: &mut Cx<'_>,
    k: &kinds::Map,
    scope: &'s PhaseScope,
) -> Option<Cow<'s, Value>> {
    let over = k.over.as_ref()?;
    let paths = over.template.paths();
    let whole = over.template.refs().len() == 1
        && over.template.refs()[0].span.range() == (0..over.as_str().len());
    if !whole {
        let text = ex.render(cx, "over", over, scope);
        return ex.parse_json(&text).map(Cow::Owned);
    }
    match crate::eval::resolve(scope, &paths[0]) {
        Some(v) => {
            for id in over.template.read_phases(scope, &[0]) {
                ex.rec.read(&id);
            }
            match &*v {
                Value::String(s) => ex.parse_json(s).map(Cow::Owned),
                _ => Some(v),
            }
        }
        None => {
            ex.missing_warning(cx, "over", &[paths[0].text.to_string()]);
            None
        }
    }
}
