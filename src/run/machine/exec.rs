//! One execution of a phase: the steps every kind shares (pre-read of context files, the
//! working directory, finishing the record), the helpers kinds use (rendering fields with
//! their warnings and reads, prompts), and the delivery of events to the kind's state.

use std::sync::Arc;

use super::super::phases::Kind;
use super::super::record::{PhaseRecord, PhaseStatus};
use super::super::scope::PhaseScope;
use super::kit::{Cx, Exec, KindEvent, Stage, Step};
use super::{
    CallResult, CallSpec, Command, DirSpec, Halt, Machine, OpKind, Purpose, Reuse, Running,
};
use crate::eval::Scope;
use crate::flow::{Cwd, Flow, PhaseType, Text};
use crate::value::Value;

impl Machine {
    /// Start executing phase `i`.
    pub(super) fn launch(
        &mut self,
        i: usize,
        scope: PhaseScope,
        rec: PhaseRecord,
        depth: u32,
        purpose: Purpose,
    ) {
        let ex = Box::new(Exec {
            index: i,
            scope,
            rec,
            pre_read: String::new(),
            rework_depth: depth,
            work_dir: Arc::from(self.cfg.cwd.as_path()),
            oversize: None,
            purpose,
            reuse: Reuse::default(),
            dir_op: None,
            stage: Stage::New,
            shown: None,
        });
        // Ids are never reused: news of an ended execution's operations (a race's late
        // branches) must not reach another.
        self.execs.push(Some(Running { ex, kind: None }));
        let e = self.execs.len() - 1;
        self.deliver(e, KindEvent::Start);
    }

    /// The phase execution `e` runs, while it runs.
    pub(super) fn exec_phase(&self, e: usize) -> Option<usize> {
        self.execs.get(e)?.as_ref().map(|x| x.ex.index)
    }

    /// Deliver an event to execution `e`, after any event it is already handling.
    pub(crate) fn deliver(&mut self, e: usize, ev: KindEvent) {
        self.queue.push_back((e, ev));
        if self.draining {
            return;
        }
        self.draining = true;
        while let Some((e, ev)) = self.queue.pop_front() {
            let Some(mut run) = self.execs.get_mut(e).and_then(Option::take) else {
                continue;
            };
            let Running { ex, kind } = &mut run;
            let step = ex.advance(&mut Cx { m: self, exec: e }, kind, ev);
            match step {
                Step::Wait => self.execs[e] = Some(run),
                Step::Done(halt) => self.complete(e, run.ex, halt),
            }
        }
        self.draining = false;
    }

    fn complete(&mut self, e: usize, ex: Box<Exec>, halt: Halt) {
        let _ = e;
        let flow = self.flow.clone();
        let phase = &flow.phases[ex.index];
        let mut rec = ex.rec;
        if rec.status == PhaseStatus::Running {
            // A kind that forgot to settle its record is an internal error.
            rec.status = PhaseStatus::Failed;
            rec.error = Some(format!(
                "internal error: phase '{}' ended without a status",
                phase.id
            ));
        }
        if !phase.idempotent && rec.status != PhaseStatus::Skipped {
            rec.side_effect = true;
        }
        if rec.status != PhaseStatus::Pending {
            rec.ended_at = Some(self.ts());
        }
        if let Some(op) = ex.dir_op {
            self.out.push(Command::ReleaseDir { op });
        }
        if ex.purpose == Purpose::Main {
            if let Some(f) = &self.cfg.fork
                && f.set.contains(&phase.id)
                && rec.status == PhaseStatus::Done
            {
                rec.cache_hit = Some("set");
                rec.set_from = Some(f.parent.clone());
                rec.usage = crate::agent::Usage::default();
            }
            if rec.input_hash.is_none() {
                rec.input_hash = ex.reuse.key.clone();
            }
            if rec.status == PhaseStatus::Done
                && rec.cache_hit.is_none()
                && ex.reuse.cross_run
                && !self.cfg.settings.dry_run
                && let Some(key) = &ex.reuse.key
            {
                self.out.push(Command::CacheStore {
                    key: key.clone(),
                    record: rec.to_value(),
                });
            }
        }
        match ex.purpose {
            Purpose::Main => self.end(ex.index, rec, halt),
            Purpose::Rework(job) => self.reworked(job, rec),
        }
    }
}

impl Exec {
    fn advance(&mut self, cx: &mut Cx<'_>, kind: &mut Option<Box<Kind>>, ev: KindEvent) -> Step {
        match (self.stage, ev) {
            (Stage::New, KindEvent::Start) => {
                let ts = cx.ts();
                self.rec.started_at.get_or_insert(ts);
                let paths = self.context_paths(cx);
                if paths.is_empty() {
                    return self.cache(cx, kind);
                }
                let limit = cx.flow().phases[self.index].context_limit.max(0.0) as usize;
                self.stage = Stage::Context;
                let base = cx.cfg().cwd.clone();
                let node = cx.node(&cx.flow().phases[self.index].id);
                cx.io(0, OpKind::Other, |op| Command::ReadContext {
                    op,
                    paths,
                    limit,
                    base,
                    node,
                });
                Step::Wait
            }
            (Stage::Context, KindEvent::Context(text)) => {
                self.pre_read = text;
                self.cache(cx, kind)
            }
            (Stage::Cache, KindEvent::Cached(_, key, hit, warning)) => {
                self.cached(cx, kind, key, hit, warning)
            }
            (Stage::Dir, KindEvent::Dir(path, warning)) => match path {
                Ok(dir) => {
                    if let Some(w) = warning {
                        let id = cx.flow().phases[self.index].id.clone();
                        cx.notice(&id, &w);
                        self.rec.warn(w);
                    }
                    self.work_dir = Arc::from(dir.as_path());
                    self.run_kind(cx, kind)
                }
                Err(e) => {
                    self.fail(String::new(), e);
                    Step::Done(Halt::None)
                }
            },
            (Stage::Kind, ev) => {
                let Some(mut state) = kind.take() else {
                    return Step::Wait;
                };
                let step = state.step(self, cx, ev);
                if matches!(step, Step::Wait) {
                    self.tell(cx, state.live());
                }
                *kind = Some(state);
                step
            }
            _ => Step::Wait,
        }
    }

    /// Tell the progress display when what it shows of this running phase changed (a loop's
    /// next iteration, a gate's verdict or rework round).
    fn tell(&mut self, cx: &mut Cx<'_>, live: Option<u32>) {
        if !cx.cfg().progress || self.purpose != Purpose::Main || live.is_none() {
            return;
        }
        let flow = cx.flow();
        let phase = &flow.phases[self.index];
        let facts = super::Facts::of(phase, &self.rec, live);
        // The start already told the phase is running: only news is told.
        if self.shown.as_ref().unwrap_or(&super::Facts::default()) == &facts {
            return;
        }
        self.shown = Some(facts.clone());
        let note = super::Progress {
            phase: cx.node(&phase.id),
            status: "running",
            kind: Some(self.rec.ty),
            detail: None,
            attempts: self.rec.agent_calls(),
            tokens: self.rec.usage.billable_tokens(),
            cost_usd: self.rec.usage.cost_usd,
            facts,
        };
        cx.push(Command::Progress(Box::new(note)));
    }

    /// Compute the phase's key; ask for a reusable state when one may exist (SPEC §10.4,
    /// §10.5), else go on to the working directory.
    fn cache(&mut self, cx: &mut Cx<'_>, kind: &mut Option<Box<Kind>>) -> Step {
        use super::super::cache::{Scope, fingerprints, ttl_ms};
        if self.purpose != Purpose::Main {
            return self.dir(cx, kind);
        }
        let flow = cx.flow();
        let phase = &flow.phases[self.index];
        let cfg = cx.cfg();
        if cfg.rerun_warn.iter().any(|p| p == &phase.id) {
            let w = "idempotent:false phase re-executed on resume (a prior attempt had completed) — its side effect fired again";
            cx.notice(&phase.id, w);
            self.rec.warn(w);
        }
        let cfg = cx.cfg();
        let (scope, may) = super::cache::lookup_scope(phase, cfg.incremental);
        let cross = scope == Scope::CrossRun && !cfg.settings.dry_run;
        self.reuse.cross_run = cross;
        if !(cfg.journaling || cfg.lookups || cross) {
            // Nothing keeps or looks for the key (an in-memory run): not computed.
            return self.dir(cx, kind);
        }
        let parts = self.key_parts(cx);
        let cfg = cx.cfg();
        // A fork copies (or was given) this phase's state whatever its kind and key.
        let forked = cfg.fork.as_ref().is_some_and(|f| {
            f.copy.contains(&phase.id)
                || (f.set.contains(&phase.id) && phase.ty() != PhaseType::Map)
        });
        if forked || (may && !cfg.settings.dry_run && (cfg.lookups || cross)) {
            self.stage = Stage::Cache;
            let cross = cross && !forked;
            let (run_only, cwd) = (cfg.lookups, cfg.cwd.clone());
            let node = cx.node(&phase.id);
            let fingerprints = if cross {
                fingerprints(phase)
            } else {
                Vec::new()
            };
            let ttl = ttl_ms(phase);
            let parts = parts.parts(None);
            cx.io(0, OpKind::Other, |op| Command::CacheLookup {
                op,
                node,
                parts,
                fingerprints,
                run_only,
                cross_run: cross,
                ttl_ms: ttl,
                cwd,
            });
            return Step::Wait;
        }
        self.reuse.key = Some(parts.key(None));
        self.dir(cx, kind)
    }

    /// The driver's answer to the lookup: a hit ends the phase with the reused state.
    fn cached(
        &mut self,
        cx: &mut Cx<'_>,
        kind: &mut Option<Box<Kind>>,
        key: String,
        hit: Option<Box<super::CacheHit>>,
        warning: Option<String>,
    ) -> Step {
        self.reuse.key = Some(key.clone());
        if let Some(w) = warning {
            let id = cx.flow().phases[self.index].id.clone();
            cx.notice(&id, &w);
            self.rec.warn(w);
        }
        if let Some(hit) = hit
            && let Some(r) = super::cache::restored(&hit.record, &self.rec, &key, &hit.source)
        {
            self.rec = r;
            return Step::Done(Halt::None);
        }
        // The run halted (budget, block, Ctrl-C) while the lookup was out: the phase had
        // started but does no work now; it fails with the halt's reason (a resume runs it).
        let halted = match cx.m.stop() {
            Some(super::Stop::Abort) => Some("Aborted".to_owned()),
            Some(other) => Some(super::sched::stop_reason(other)),
            None if cx.aborted() => Some("Aborted".to_owned()),
            None => cx
                .over()
                .map(|r| super::sched::stop_reason(&super::Stop::Budget(r))),
        };
        if let Some(reason) = halted {
            self.fail(String::new(), reason);
            return Step::Done(Halt::None);
        }
        self.dir(cx, kind)
    }

    fn run_kind(&mut self, cx: &mut Cx<'_>, kind: &mut Option<Box<Kind>>) -> Step {
        self.stage = Stage::Kind;
        *kind = Some(Box::new(Kind::new(&cx.flow().phases[self.index])));
        self.advance(cx, kind, KindEvent::Start)
    }

    /// Prepare the working directory (SPEC §3.1 `cwd`), then run the kind.
    fn dir(&mut self, cx: &mut Cx<'_>, kind: &mut Option<Box<Kind>>) -> Step {
        let flow = cx.flow();
        let phase = &flow.phases[self.index];
        let base = cx.cfg().cwd.clone();
        let Some(cwd) = &phase.cwd else {
            return self.run_kind(cx, kind);
        };
        let (dry, scripts) = (cx.cfg().settings.dry_run, cx.cfg().settings.dry_run_scripts);
        // Only processes care where they start: a pure dry run starts none.
        let real = !dry || (scripts && phase.ty() == PhaseType::Script);
        let spec = match &cwd.value {
            Cwd::Path(p) if p.is_empty() => return self.run_kind(cx, kind),
            Cwd::Path(p) => DirSpec::Existing {
                path: p.clone(),
                shown: format!("\"{p}\""),
            },
            Cwd::Arg(name) => {
                let value = match cx.m.args().as_ref() {
                    Value::Object(m) => m.get(name.as_str()),
                    _ => None,
                };
                match value {
                    Some(Value::String(s)) if !crate::value::js_trim(s).is_empty() => {
                        DirSpec::Existing {
                            path: s.clone(),
                            shown: format!("{{args.{name}}} = \"{s}\""),
                        }
                    }
                    Some(v) => {
                        self.fail(String::new(), format!(
                            "working directory {{args.{name}}} is not a path (found {}); pass {name}=<relative path>",
                            v.to_json()
                        ));
                        return Step::Done(Halt::None);
                    }
                    None => {
                        self.fail(
                            String::new(),
                            format!(
                                "working directory {{args.{name}}} has no value; pass {name}=<relative path>"
                            ),
                        );
                        return Step::Done(Halt::None);
                    }
                }
            }
            Cwd::Temp => DirSpec::Temp,
            Cwd::Dedicated => DirSpec::Dedicated,
            Cwd::Worktree => DirSpec::Worktree,
        };
        match spec {
            DirSpec::Existing { path, .. } if !real => {
                self.work_dir = Arc::from(base.join(path).as_path());
                return self.run_kind(cx, kind);
            }
            DirSpec::Existing { .. } => {}
            _ if !real => return self.run_kind(cx, kind),
            _ => {}
        }
        self.stage = Stage::Dir;
        let (id, run_id) = (phase.id.clone(), cx.cfg().run_id.clone());
        let op = cx.io(0, OpKind::Other, |op| Command::PrepareDir {
            op,
            phase: id,
            dir: spec,
            base,
            run_id,
        });
        self.dir_op = Some(op);
        Step::Wait
    }

    /// The context paths of the phase (SPEC §3.16), rendered.
    fn context_paths(&mut self, cx: &mut Cx<'_>) -> Vec<String> {
        let flow = cx.flow();
        let phase = &flow.phases[self.index];
        let mut paths: Vec<String> = Vec::new();
        if phase.context.is_empty() {
            return paths;
        }
        let scope = self.scope.clone();
        for entry in &phase.context {
            let rendered = self.render(cx, "context", entry, &scope);
            if rendered == entry.as_str() {
                paths.push(rendered);
                continue;
            }
            if rendered.starts_with('{') {
                self.rec.warn(format!(
                    "context entry dropped: '{}' did not resolve to a path",
                    entry.as_str()
                ));
                continue;
            }
            match &self.parse_json(&rendered) {
                Some(Value::Array(items)) => paths.extend(
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned),
                ),
                _ => paths.push(rendered),
            }
        }
        paths
    }

    /// The phase's id.
    pub fn id<'f>(&self, flow: &'f Flow) -> &'f str {
        &flow.phases[self.index].id
    }

    /// Render a text-mode field, recording the phases it read and one warning for the
    /// placeholders it could not resolve.
    pub fn render<S: Scope + ?Sized>(
        &mut self,
        cx: &mut Cx<'_>,
        field: &str,
        text: &Text,
        scope: &S,
    ) -> String {
        let cap = cx.cfg().max_prompt;
        let r = match text.template.render_capped(scope, cap) {
            Ok(r) => r,
            Err(over) => {
                let most = match text.template.paths().get(over.path as usize) {
                    Some(p) if over.bytes > 0 => format!(
                        "{{{}}} contributed the most (at least {} bytes)",
                        p.text, over.bytes
                    ),
                    _ => "its literal text alone is that long".to_owned(),
                };
                self.oversize.get_or_insert(format!(
                    "the prompt rendered from {field} would weigh over {cap} bytes (`max_prompt_bytes` under `[limits]` in .tfc/config.toml); {most}: pass a smaller part of it (e.g. one field, or .output instead of .json), or raise the limit"
                ));
                over.partial
            }
        };
        for id in text.template.read_phases(scope, &r.reads) {
            self.json_warning(&id);
            self.rec.read(&id);
        }
        // A `{steps.X.json…}` that did not resolve may have failed on the stray-key pattern.
        for &m in &r.missing {
            if let Some(id) = text.template.paths()[m as usize].step_id() {
                self.json_warning(id);
            }
        }
        self.missing_warning(cx, field, &text.template.path_texts(&r.missing));
        r.text
    }

    /// Render a value-mode field (`with` values).
    pub fn render_value<S: Scope + ?Sized>(
        &mut self,
        cx: &mut Cx<'_>,
        field: &str,
        text: &Text,
        scope: &S,
    ) -> Value {
        let (v, r) = text.template.render_value(scope);
        for id in text.template.read_phases(scope, &r.reads) {
            self.rec.read(&id);
        }
        self.missing_warning(cx, field, &text.template.path_texts(&r.missing));
        v
    }

    /// safeParse text this phase consumes, recording its warning (the stray-key hint).
    pub fn parse_json(&mut self, text: &str) -> Option<Value> {
        let p = crate::eval::safe_parse::safe_parse(text);
        if let Some(w) = p.warning {
            self.rec.warn(w);
        }
        p.value
    }

    /// `output: "json"`: store `safeParse(output)` as the phase's json.
    pub fn store_json(&mut self, output: &str) {
        self.rec.json = self.parse_json(output);
    }

    /// Record the safeParse warning of an upstream step this phase read as JSON.
    pub fn json_warning(&mut self, id: &str) {
        let warning = self
            .scope
            .steps
            .iter()
            .find(|(k, _)| k == id)
            .and_then(|(_, s)| s.json_warning());
        if let Some(w) = warning {
            self.rec.warn(w);
        }
    }

    pub fn missing_warning(&mut self, cx: &mut Cx<'_>, field: &str, missing: &[String]) {
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(|m| format!("{{{m}}}")).collect();
            let w = format!(
                "unresolved refs in {field}: {} — left intact (check dependsOn / placeholder spelling)",
                list.join(", ")
            );
            if !self.rec.warnings.contains(&w) {
                let id = cx.flow().phases[self.index].id.clone();
                cx.notice(&id, &w);
            }
            self.rec.warn(w);
        }
    }

    /// The full prompt of a call: prefix + pre-read + text; records prompt stats once.
    pub fn prompt(&mut self, cx: &Cx<'_>, text: &str) -> String {
        let prefix = &cx.cfg().prompt_prefix;
        let mut p = String::with_capacity(prefix.len() + self.pre_read.len() + text.len());
        p.push_str(prefix);
        p.push_str(&self.pre_read);
        p.push_str(text);
        let cap = cx.cfg().max_prompt;
        if p.len() > cap && self.oversize.is_none() {
            self.oversize = Some(format!(
                "the prompt weighs {} bytes, over the limit of {cap} bytes (`max_prompt_bytes` under `[limits]` in .tfc/config.toml): {} bytes of pre-read context and {} of rendered text; pass less into it, or raise the limit",
                p.len(),
                prefix.len() + self.pre_read.len(),
                text.len()
            ));
        }
        if self.rec.prompt_stats.is_none() {
            let chars = p.chars().count();
            let est = chars.div_ceil(4);
            self.rec.prompt_stats = Some((chars, est));
            if est >= 32_000 {
                self.rec.warn(format!("prompt is large (~{est} tokens)"));
            }
        }
        p
    }

    /// A call spec for this phase in its working directory, refused when a prompt of the
    /// phase passed the cap.
    pub fn spec(
        &self,
        node: String,
        agent: &str,
        prompt: String,
        purpose: crate::agent::Purpose,
    ) -> CallSpec {
        CallSpec::new(node, agent, prompt, purpose, &self.work_dir).refuse(self.oversize.clone())
    }

    pub fn succeed(&mut self, output: String) {
        self.rec.status = PhaseStatus::Done;
        self.rec.output = output;
        self.rec.error = None;
    }

    /// The phase did no work after all: its call was refused at the call cap (SPEC §8.7).
    pub fn skip(&mut self, reason: String) {
        self.rec.status = PhaseStatus::Skipped;
        self.rec.output = String::new();
        self.rec.error = None;
        self.rec.skip_reason = Some(reason);
    }

    /// [`Exec::skip`] with `Budget exceeded: <reason>`.
    pub fn skip_over_budget(&mut self, reason: &str) {
        self.skip(super::kit::budget_reason(reason));
    }

    pub fn fail(&mut self, output: String, error: impl Into<String>) {
        self.rec.status = PhaseStatus::Failed;
        self.rec.output = output;
        self.rec.error = Some(error.into());
    }

    /// Fold a call's accounting into the record (attempts, usage, model, timeouts, warnings).
    pub fn account(&mut self, r: &CallResult) {
        self.rec.attempts += r.attempts;
        self.rec.usage.add(&r.usage);
        self.rec.timed_out |= r.timed_out;
        for w in &r.warnings {
            self.rec.warn(w.clone());
        }
    }

    /// A call's backend panicked: the phase fails and the run crashes.
    pub fn crash(&mut self, msg: String) -> Step {
        self.fail(String::new(), format!("internal error: {msg}"));
        Step::Done(Halt::Crash(msg))
    }
}
