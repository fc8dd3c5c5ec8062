//! The fan-out engine of parallel (SPEC §3.3), map (§3.4) and tournament (§3.10): items run
//! concurrently up to the phase's width, each checked against the budget and the abort
//! before it starts; parallel and map items merge (here), a tournament's go to its judge.
//! What each item asks is its kind's own (`parallel.rs`, `map.rs`, `tournament.rs`).

use super::super::machine::{
    CallDir, CallResult, Cx, Exec, Halt, KindEvent, ShardCall, ShardEnd, ShardRequest, Step,
};
use super::super::record::{ItemInfo, PhaseStatus};
use super::items::{Fanout, ItemDone, Sharding};
use super::tournament::JUDGE;
use crate::agent::Purpose;
use crate::eval::safe_parse::safe_parse;
use crate::flow::{Phase, kinds};
use crate::value::Value;

/// What a shard should weigh at most on the wire (its calls' prompts going out; outputs and
/// journal lines coming back), well under Temporal's 2 MiB per payload: a shard holds
/// fewer items than `shard_items` when they are large. Counted from the prompts and the
/// outputs seen so far, so the split is the same on every replay.
const SHARD_BYTES: usize = 1 << 20;

/// Items of a map's first shard (at least its width): small, so the outputs it brings back
/// size the next shards before a large one is sent.
const FIRST_SHARD: usize = 16;

/// The kind a fan-out runs, with its own fields (matched, never looked up by type, so a new
/// fan-out kind is flagged wherever the kinds differ).
#[derive(Clone, Copy)]
pub(crate) enum Shape<'p> {
    /// `parallel`: one item per branch.
    Parallel(&'p kinds::Parallel),
    /// `map`: one item per element of `over`.
    Map(&'p kinds::Map),
    /// `tournament`: variants, then a judge.
    Tournament(&'p kinds::Tournament),
}

/// Fan-out width: phase `concurrency`, else the flow's, else 8.
fn width(cx: &Cx<'_>, phase: &Phase) -> usize {
    let flow = cx.flow();
    let w = phase
        .concurrency
        .as_ref()
        .map(|c| c.value)
        .or_else(|| cx.cfg().settings.concurrency.map(|c| c as f64))
        .or_else(|| flow.concurrency.as_ref().map(|c| c.value))
        .unwrap_or(8.0);
    w.floor().max(1.0) as usize
}

impl Fanout {
    pub(crate) fn step(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        shape: Shape<'_>,
        ev: KindEvent,
    ) -> Step {
        let flow = cx.flow();
        let phase = &flow.phases[ex.index];
        match ev {
            KindEvent::Start => {
                self.scope = ex.scope.clone();
                self.width = width(cx, phase);
                self.count = match shape {
                    Shape::Parallel(k) => k.branches.len(),
                    Shape::Tournament(k) => super::tournament::count(k),
                    Shape::Map(k) => match super::map::elements(self, ex, cx, phase, k) {
                        Ok(n) => n,
                        Err(step) => return step,
                    },
                };
                self.done = (0..self.count).map(|_| None).collect();
                self.agents = vec![String::new(); self.count];
                self.keys = vec![None; self.count];
                let cfg = cx.cfg();
                // A fork's `--set` of a map gives its items (SPEC §10.4): reused whatever
                // the map's scope.
                let set_items = cfg.fork.as_ref().is_some_and(|f| f.set.contains(&phase.id));
                self.reusable = matches!(shape, Shape::Map(_))
                    && !cfg.settings.dry_run
                    && (set_items
                        || ((cfg.journaling || !cfg.item_states.is_empty())
                            && crate::run::cache::scope(phase, cfg.incremental)
                                != crate::run::cache::Scope::Off));
                self.cross = matches!(shape, Shape::Map(_))
                    && !cfg.settings.dry_run
                    && crate::run::cache::scope(phase, cfg.incremental)
                        == crate::run::cache::Scope::CrossRun;
                self.looking = (0..self.count).map(|_| None).collect();
                // On a host that shards (Temporal), a large map's calls go out in batches
                // (SPEC §14.3); not inside a sub-flow (a shard is built from the run's own
                // flow), nor when items are looked up across runs one by one.
                self.shard = match shape {
                    Shape::Map(_) if !self.cross && cfg.depth == 0 => {
                        cfg.shard_items.filter(|s| self.count > *s).map(|size| {
                            Box::new(Sharding {
                                size,
                                ..Sharding::default()
                            })
                        })
                    }
                    _ => None,
                };
                self.fill(ex, cx, phase, shape)
            }
            KindEvent::Call(JUDGE, r) => match shape {
                Shape::Tournament(k) => super::tournament::judged(self, ex, k, r),
                Shape::Parallel(_) | Shape::Map(_) => ex.crash(format!(
                    "phase '{}' has no judge, yet a judge answered",
                    phase.id
                )),
            },
            KindEvent::Cached(slot, key, hit, warning) => {
                self.looked_up(ex, cx, phase, slot as usize, key, hit, warning);
                self.fill(ex, cx, phase, shape)
            }
            KindEvent::Call(slot, r) => {
                self.item_ended(ex, cx, phase, slot as usize, r);
                self.fill(ex, cx, phase, shape)
            }
            KindEvent::Shard(items) => {
                let Some(sh) = self.shard.as_mut() else {
                    return Step::Wait;
                };
                sh.out = false;
                sh.bytes = 0;
                for it in &items {
                    if let ShardEnd::Called { output, .. } = &it.end {
                        sh.outputs.0 += 1;
                        sh.outputs.1 += output.len();
                    }
                }
                for it in items {
                    let i = it.slot as usize;
                    if i >= self.count || self.done[i].is_some() {
                        continue;
                    }
                    let aborted = it.end == ShardEnd::Aborted;
                    match CallResult::from_shard_end(it.end) {
                        Some(r) => self.item_ended(ex, cx, phase, i, r),
                        None => {
                            self.running = self.running.saturating_sub(1);
                            let agent = std::mem::take(&mut self.agents[i]);
                            self.not_started(ex, i, agent, aborted);
                        }
                    }
                }
                self.fill(ex, cx, phase, shape)
            }
            _ => Step::Wait,
        }
    }

    /// Item `i` is done without a call: `output` reused under `key` (journaled as `item-end`).
    #[allow(clippy::too_many_arguments)]
    fn reused(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        node: &str,
        i: usize,
        key: &str,
        agent: String,
        output: String,
    ) {
        item_end(cx, node, i, key, &output);
        self.done[i] = Some(ItemDone {
            index: i,
            agent,
            status: PhaseStatus::Done,
            output,
            error: None,
            key: Some(key.to_owned()),
        });
        self.finished += 1;
        self.note_end(ex, i);
    }

    /// A map item whose key is known ended: its entry of the phase's `items` says so at
    /// once (status and `inputHash`), so a snapshot of the running phase has it too.
    fn note_end(&self, ex: &mut Exec, i: usize) {
        let Some(Some(d)) = self.done.get(i).filter(|_| self.reusable) else {
            return;
        };
        let items = ex.rec.items.get_or_insert_with(Vec::new);
        if items.len() != self.count {
            *items = (0..self.count)
                .map(|index| ItemInfo {
                    index,
                    status: PhaseStatus::Pending,
                    error: None,
                    input_hash: None,
                })
                .collect();
        }
        items[i] = item_info(d);
    }

    /// Start items while slots are free; merge when all have ended.
    fn fill(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, phase: &Phase, shape: Shape<'_>) -> Step {
        let room = |f: &Fanout| match &f.shard {
            // Until outputs have come back, a shard is one wave of calls: what they weigh
            // sizes the next ones.
            Some(sh) => {
                let size = match sh.outputs.0 {
                    0 => sh.size.min(f.width.max(FIRST_SHARD)),
                    _ => sh.size,
                };
                !sh.out && f.running < size && sh.bytes < SHARD_BYTES
            }
            None => f.running < f.width,
        };
        while room(self) && self.next < self.count {
            let i = self.next;
            self.next += 1;
            let (agent, prompt, dir) = self.item(ex, cx, phase, shape, i);
            if self.reusable {
                let key = ex.item_key(cx, &agent, &prompt);
                let node = cx.node(&format!("{}#{i}", phase.id));
                let reused = cx
                    .cfg()
                    .item_states
                    .get(&node)
                    .filter(|(k, _)| *k == key || k == SET_ITEM)
                    .map(|(_, out)| out.clone());
                if let Some(output) = reused {
                    self.reused(ex, cx, &node, i, &key, agent, output);
                    continue;
                }
                self.keys[i] = Some(key);
            }
            self.launch(ex, cx, phase, i, agent, prompt, dir);
        }
        if let Some(sh) = self.shard.as_mut()
            && !sh.batch.is_empty()
        {
            sh.out = true;
            cx.shard(ShardRequest {
                phase: ex.index,
                width: self.width,
                calls: std::mem::take(&mut sh.batch),
                spent_tokens: 0,
                spent_cost_micros: 0,
                max_calls: None,
            });
        }
        if self.running > 0 || self.next < self.count {
            return Step::Wait;
        }
        let items: Vec<ItemDone> = std::mem::take(&mut self.done)
            .into_iter()
            .flatten()
            .collect();
        ex.rec.usage.add(&self.usage);
        if let Shape::Tournament(k) = shape {
            return super::tournament::judge(self, ex, cx, phase, k, items);
        }
        merge(ex, items);
        Step::Done(Halt::None)
    }

    /// The cross-run lookup of item `i` ended: a hit is the item's result, else it runs.
    #[allow(clippy::too_many_arguments)]
    fn looked_up(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
        i: usize,
        key: String,
        hit: Option<Box<super::super::machine::CacheHit>>,
        warning: Option<String>,
    ) {
        let Some((agent, prompt, dir)) = self.looking.get_mut(i).and_then(Option::take) else {
            return;
        };
        self.running -= 1;
        if let Some(w) = warning {
            cx.notice(&phase.id, &w);
            ex.rec.warn(w);
        }
        let output = hit.and_then(|h| h.record.done_output());
        if let Some(output) = output {
            let node = cx.node(&format!("{}#{i}", phase.id));
            self.reused(ex, cx, &node, i, &key, agent, output);
            return;
        }
        self.keys[i] = Some(key);
        self.start_item(ex, cx, phase, i, agent, prompt, dir);
    }

    /// Item `i` was not reused: look it up across runs, or start it.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
        i: usize,
        agent: String,
        prompt: String,
        dir: CallDir,
    ) {
        if self.cross && !cx.aborted() && cx.over().is_none() {
            let parts = ex.item_parts(cx, &agent, &prompt).parts(None);
            let node = cx.node(&format!("{}#{i}", phase.id));
            let fingerprints = crate::run::cache::fingerprints(phase);
            let ttl_ms = crate::run::cache::ttl_ms(phase);
            let cwd = cx.cfg().cwd.clone();
            self.looking[i] = Some((agent, prompt, dir));
            self.running += 1;
            cx.io(i as u32, super::super::machine::OpKind::Other, |op| {
                super::super::machine::Command::CacheLookup {
                    op,
                    node,
                    parts,
                    fingerprints,
                    run_only: false,
                    cross_run: true,
                    ttl_ms,
                    cwd,
                }
            });
            return;
        }
        self.start_item(ex, cx, phase, i, agent, prompt, dir);
    }

    /// Start item `i`'s call (or end it at once: aborted, over budget).
    #[allow(clippy::too_many_arguments)]
    fn start_item(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
        i: usize,
        agent: String,
        prompt: String,
        dir: CallDir,
    ) {
        if cx.aborted() {
            self.not_started(ex, i, agent, true);
            return;
        }
        if cx.refuse_call().is_some() {
            self.not_started(ex, i, agent, false);
            return;
        }
        self.running += 1;
        let mut spec = ex
            .spec(format!("{}#{i}", phase.id), &agent, prompt, Purpose::Task)
            .checked(phase);
        spec.item_index = Some(i);
        spec.caught = true;
        self.agents[i] = agent;
        match (dir, self.shard.as_mut()) {
            (CallDir::At(cwd), Some(sh)) if spec.refused.is_none() => {
                sh.bytes += 2 * spec.prompt.len() + 2 * sh.expected_output() + 1024;
                sh.batch.push(ShardCall {
                    slot: i as u32,
                    node: spec.node,
                    agent: spec.agent,
                    prompt: spec.prompt,
                    contract: spec.contract,
                    cwd: cwd.to_path_buf(),
                });
            }
            (dir, _) => {
                spec.cwd = dir;
                cx.call(ex, i as u32, spec);
            }
        }
    }

    /// Item `i` ends without a call: the run was aborted, or the budget is exceeded.
    fn not_started(&mut self, ex: &mut Exec, i: usize, agent: String, aborted: bool) {
        let (status, error) = if aborted {
            (PhaseStatus::Failed, "Aborted")
        } else {
            ex.rec.budget_truncated = true;
            (PhaseStatus::Skipped, "(skipped: budget exceeded)")
        };
        self.done[i] = Some(ItemDone {
            index: i,
            agent,
            status,
            output: String::new(),
            error: Some(error.into()),
            key: None,
        });
    }

    /// Item `i`'s agent, prompt and directory.
    fn item(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
        shape: Shape<'_>,
        i: usize,
    ) -> (String, String, CallDir) {
        let (text, agent, dir) = match shape {
            Shape::Parallel(k) => super::parallel::item(self, ex, cx, phase, k, i),
            Shape::Map(k) => super::map::item(self, ex, cx, phase, k, i),
            Shape::Tournament(k) => super::tournament::item(self, ex, cx, phase, k, i),
        };
        let prompt = ex.prompt(cx, &text);
        (agent, prompt, dir)
    }

    fn item_ended(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
        i: usize,
        mut r: CallResult,
    ) {
        self.running -= 1;
        ex.rec.attempts += r.attempts;
        self.usage.add(&r.usage);
        ex.rec.timed_out |= r.timed_out;
        if ex.rec.model.is_none() {
            ex.rec.model = r.model.take();
        }
        for w in r.warnings.drain(..) {
            ex.rec.warn(w);
        }
        let agent = std::mem::take(&mut self.agents[i]);
        let mut done_key = None;
        if let Some(key) = self.keys.get_mut(i).and_then(Option::take)
            && r.ok
        {
            let node = cx.node(&format!("{}#{i}", phase.id));
            item_end(cx, &node, i, &key, &r.output);
            if self.cross {
                let mut m = crate::value::Map::default();
                m.insert("status".into(), Value::from("done"));
                m.insert("output".into(), Value::from(r.output.as_str()));
                cx.push(super::super::machine::Command::CacheStore {
                    key: key.clone(),
                    record: Value::Object(m),
                });
            }
            done_key = Some(key);
        }
        self.done[i] = Some(ItemDone {
            index: i,
            agent,
            status: if r.ok {
                PhaseStatus::Done
            } else {
                PhaseStatus::Failed
            },
            output: std::mem::take(&mut r.output),
            error: r.error.take(),
            key: done_key,
        });
        self.finished += 1;
        self.note_end(ex, i);
        if cx.cfg().progress {
            let note = super::super::machine::Progress {
                phase: cx.node(&phase.id),
                status: "running",
                kind: Some(ex.rec.ty),
                detail: Some(format!("{}/{} items", self.finished, self.count)),
                attempts: ex.rec.attempts,
                tokens: self.usage.billable_tokens(),
                cost_usd: self.usage.cost_usd,
                facts: super::super::machine::Facts {
                    items: Some((self.finished, self.count)),
                    ..Default::default()
                },
            };
            cx.push(super::super::machine::Command::Progress(Box::new(note)));
        }
    }
}

/// Journal a finished map item with its key and output (`item-end`): a resumed run reuses
/// it when its key is unchanged.
fn item_end(cx: &mut Cx<'_>, node: &str, index: usize, key: &str, output: &str) {
    cx.journal("item-end", |m| {
        m.insert("node".into(), Value::from(node));
        m.insert("index".into(), Value::Number(index as f64));
        m.insert("inputHash".into(), Value::from(key));
        m.insert("output".into(), Value::from(output));
    });
}

/// An ended item's entry in the phase's `items`.
fn item_info(it: &ItemDone) -> ItemInfo {
    let done = it.status == PhaseStatus::Done;
    ItemInfo {
        index: it.index,
        status: it.status,
        error: it.error.clone().filter(|_| !done),
        input_hash: it.key.clone().filter(|_| done),
    }
}

/// The shared merge of map and parallel items (SPEC §3.3).
/// The key of an item a fork's `--set` gave (SPEC §10.4): it stands whatever the item's
/// prompt renders to now.
pub(crate) const SET_ITEM: &str = "set";

fn merge(ex: &mut Exec, items: Vec<ItemDone>) {
    use std::fmt::Write as _;
    let n = items.len();
    let mut output = String::new();
    let mut first = true;
    let mut block = |output: &mut String| {
        if !std::mem::take(&mut first) {
            output.push_str("\n\n---\n\n");
        }
    };
    let mut json = Vec::with_capacity(n);
    let mut errors = Vec::new();
    let mut skipped = 0;
    let mut infos = Vec::with_capacity(n);
    for it in &items {
        infos.push(item_info(it));
        match it.status {
            PhaseStatus::Done => {
                block(&mut output);
                let _ = write!(output, "### [{}/{n}] {}\n\n", it.index + 1, it.agent);
                output.push_str(&it.output);
                json.push(
                    safe_parse(&it.output)
                        .value
                        .unwrap_or_else(|| Value::from(it.output.as_str())),
                );
            }
            PhaseStatus::Failed => {
                let err = it.error.clone().unwrap_or_default();
                block(&mut output);
                let _ = write!(
                    output,
                    "### [{}/{n}] {} (failed)\n\n{err}",
                    it.index + 1,
                    it.agent
                );
                errors.push(format!("{}: {err}", it.agent));
            }
            _ => skipped += 1,
        }
    }
    ex.rec.items = Some(infos);
    let skip_note = (skipped > 0).then(|| format!("{skipped} item(s) skipped: budget exceeded"));
    if skipped > 0 {
        ex.rec.budget_truncated = true;
    }
    if errors.is_empty() {
        if let Some(note) = skip_note {
            ex.rec.warn(note);
        }
        ex.succeed(output);
    } else {
        let mut err = errors.join("; ");
        if let Some(note) = skip_note {
            err.push_str("; ");
            err.push_str(&note);
        }
        ex.fail(output, err);
    }
    ex.rec.json = Some(Value::Array(json));
}
