//! Executing one phase: the pieces every phase kind uses (rendering fields with their
//! warnings and reads, the pre-read of context files, finishing the record) and the dispatch
//! to the kind's own module in `phases/`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ctx::{Halt, Shared};
use super::phases;
use super::record::{PhaseRecord, PhaseStatus, now};
use super::scope::PhaseScope;
use crate::eval::Scope;
use crate::flow::{Phase, Text};
use crate::value::Value;

/// A phase being executed: its definition, its view of the run, and the record it fills.
pub struct Exec<'a> {
    pub sh: &'a Arc<Shared>,
    pub index: usize,
    pub phase: &'a Phase,
    pub scope: PhaseScope,
    pub rec: PhaseRecord,
    /// The pre-read context files, prefixed to every prompt of the phase.
    pub pre_read: String,
    /// 0 normally; 1 when re-run by a gate's rework (which then does not rework again).
    pub rework_depth: u32,
    /// Where the phase's agents and scripts run (SPEC §3.1 `cwd`).
    pub work_dir: PathBuf,
    /// Set when a prompt of this phase passed `[limits] max_prompt_bytes`: the error its calls
    /// fail with (see [`CallSpec::refuse`](super::call::CallSpec::refuse)).
    pub oversize: Option<String>,
}

impl Exec<'_> {
    /// Render a text-mode field, recording the phases it read and one warning for the
    /// placeholders it could not resolve.
    pub fn render<S: Scope + ?Sized>(&mut self, field: &str, text: &Text, scope: &S) -> String {
        let cap = self.sh.opts.max_prompt();
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
        self.missing_warning(field, &text.template.path_texts(&r.missing));
        r.text
    }

    /// Render a value-mode field (`with` values).
    pub fn render_value<S: Scope + ?Sized>(
        &mut self,
        field: &str,
        text: &Text,
        scope: &S,
    ) -> Value {
        let (v, r) = text.template.render_value(scope);
        for id in text.template.read_phases(scope, &r.reads) {
            self.rec.read(&id);
        }
        self.missing_warning(field, &text.template.path_texts(&r.missing));
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

    pub fn missing_warning(&mut self, field: &str, missing: &[String]) {
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(|m| format!("{{{m}}}")).collect();
            let w = format!(
                "unresolved refs in {field}: {} — left intact (check dependsOn / placeholder spelling)",
                list.join(", ")
            );
            if !self.rec.warnings.contains(&w) {
                self.sh.notice(&self.phase.id, &w);
            }
            self.rec.warn(w);
        }
    }

    /// The full prompt of a call: pre-read + text (+ suffix); records prompt stats once.
    pub fn prompt(&mut self, text: &str) -> String {
        let prefix = &self.sh.prompt_prefix;
        let mut p = String::with_capacity(prefix.len() + self.pre_read.len() + text.len());
        p.push_str(prefix);
        p.push_str(&self.pre_read);
        p.push_str(text);
        let cap = self.sh.opts.max_prompt();
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

    pub fn succeed(&mut self, output: String) {
        self.rec.status = PhaseStatus::Done;
        self.rec.output = output;
        self.rec.error = None;
    }

    pub fn fail(&mut self, output: String, error: impl Into<String>) {
        self.rec.status = PhaseStatus::Failed;
        self.rec.output = output;
        self.rec.error = Some(error.into());
    }
}

/// Run phase `index` to completion and return its record and what it asks of the run.
pub async fn execute(
    sh: Arc<Shared>,
    index: usize,
    scope: PhaseScope,
    mut rec: PhaseRecord,
    rework_depth: u32,
) -> (PhaseRecord, Halt) {
    let phase = &sh.flow.phases[index];
    rec.started_at.get_or_insert_with(now);
    let mut ex = Exec {
        sh: &sh,
        index,
        phase,
        scope,
        rec,
        pre_read: String::new(),
        rework_depth,
        work_dir: sh.cwd.clone(),
        oversize: None,
    };
    ex.pre_read = pre_read(&mut ex);
    // The directory lives (a temporary one exists) until the phase has ended.
    let (halt, _dir) = match super::workdir::prepare(&sh, phase).await {
        Ok((dir, warning)) => {
            if let Some(w) = warning {
                sh.notice(&phase.id, &w);
                ex.rec.warn(w);
            }
            ex.work_dir = dir.path().to_path_buf();
            (phases::run(&mut ex).await, Some(dir))
        }
        Err(e) => {
            ex.fail(String::new(), e);
            (super::ctx::Halt::None, None)
        }
    };
    if ex.rec.status == PhaseStatus::Running {
        // A kind that forgot to settle its record is an internal error, not a silent success.
        ex.fail(
            String::new(),
            format!(
                "internal error: phase '{}' ended without a status",
                phase.id
            ),
        );
    }
    if !phase.idempotent && ex.rec.status != PhaseStatus::Skipped {
        ex.rec.side_effect = true;
    }
    if ex.rec.status != PhaseStatus::Pending {
        ex.rec.ended_at = Some(now());
    }
    (ex.rec, halt)
}

/// The pre-read context files of a phase (SPEC §3.16), as one prompt prefix.
fn pre_read(ex: &mut Exec<'_>) -> String {
    const TOTAL: usize = 200_000;
    let phase = ex.phase;
    if phase.context.is_empty() {
        return String::new();
    }
    let scope = ex.scope.clone();
    let mut paths: Vec<String> = Vec::new();
    for entry in &phase.context {
        let rendered = ex.render("context", entry, &scope);
        if rendered == entry.as_str() {
            paths.push(rendered);
            continue;
        }
        if rendered.starts_with('{') {
            ex.rec.warn(format!(
                "context entry dropped: '{}' did not resolve to a path",
                entry.as_str()
            ));
            continue;
        }
        match &ex.parse_json(&rendered) {
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
    let limit = phase.context_limit.max(0.0) as usize;
    let mut blocks: Vec<String> = Vec::new();
    for p in paths {
        let full = ex.sh.cwd.join(&p);
        let Ok(meta) = std::fs::metadata(&full) else {
            continue;
        };
        if !meta.is_file() || meta.len() > 10 * 1024 * 1024 {
            continue;
        }
        let Ok(bytes) = std::fs::read(&full) else {
            continue;
        };
        let content = String::from_utf8_lossy(&bytes);
        let ext = Path::new(&p)
            .extension()
            .and_then(|e| e.to_str())
            .filter(|e| !e.is_empty())
            .unwrap_or("txt");
        let total_chars = content.chars().count();
        let mut block = format!("## File: {p}\n\n```{ext}\n");
        if total_chars > limit {
            block.extend(content.chars().take(limit));
            block.push_str(&format!("\n... [truncated {} chars]", total_chars - limit));
        } else {
            block.push_str(&content);
        }
        block.push_str("\n```");
        blocks.push(block);
    }
    if blocks.is_empty() {
        return String::new();
    }
    let mut out = blocks.join("\n\n");
    out.push_str("\n\n");
    if out.chars().count() > TOTAL {
        out = out.chars().take(TOTAL).collect();
    }
    out
}
