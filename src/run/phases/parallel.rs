//! parallel (SPEC §3.3): one item per branch — its own task, agent and `cwd` — on the
//! fan-out engine; the items merge into one output.

use super::super::machine::{CallDir, Cx, Exec};
use super::items::Fanout;
use crate::flow::{Phase, kinds};

/// Item `i`'s text, agent and directory.
pub(super) fn item(
    f: &Fanout,
    ex: &mut Exec,
    cx: &mut Cx<'_>,
    phase: &Phase,
    k: &kinds::Parallel,
    i: usize,
) -> (String, String, CallDir) {
    let b = &k.branches[i];
    let text = match &b.task {
        Some(t) => ex.render(cx, &format!("branches[{i}].task"), t, &f.scope),
        None => String::new(),
    };
    let dir = match &b.cwd {
        // A pure dry run starts no process: nothing to check.
        Some(c) if cx.cfg().settings.dry_run => CallDir::At(cx.cfg().cwd.join(&c.value).into()),
        Some(c) => CallDir::Branch {
            index: i,
            path: c.value.clone(),
            phase: phase.id.clone(),
            base: cx.cfg().cwd.clone(),
        },
        None => CallDir::At(ex.work_dir.clone()),
    };
    let agent = b
        .agent
        .as_ref()
        .map_or_else(|| phase.agent.value.clone(), |a| a.value.clone());
    (text, agent, dir)
}
