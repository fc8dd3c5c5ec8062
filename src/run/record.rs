//! The run record (SPEC §11.1): what `tfc run --format json` prints and `run.json` holds.

use indexmap::IndexMap;

use crate::agent::Usage;
use crate::flow::PhaseType;
use crate::value::{Map, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// Where a phase is in its life.
pub enum PhaseStatus {
    /// Not started (or waiting for an approval).
    Pending,
    /// Started, not ended.
    Running,
    /// Ended with an output.
    Done,
    /// Ended with an error.
    Failed,
    /// Not run (its join did not hold, its `when` was false, or the run halted).
    Skipped,
}

impl PhaseStatus {
    /// The record's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseStatus::Pending => "pending",
            PhaseStatus::Running => "running",
            PhaseStatus::Done => "done",
            PhaseStatus::Failed => "failed",
            PhaseStatus::Skipped => "skipped",
        }
    }

    /// Done, failed or skipped.
    pub fn ended(self) -> bool {
        matches!(
            self,
            PhaseStatus::Done | PhaseStatus::Failed | PhaseStatus::Skipped
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// How a run ended (or that it still runs).
pub enum RunStatus {
    /// Still running.
    Running,
    /// Every required phase is done.
    Completed,
    /// A required phase failed, or the run crashed.
    Failed,
    /// Interrupted, over budget, or awaiting an approval.
    Paused,
    /// A gate blocked or an approval was rejected.
    Blocked,
}

impl RunStatus {
    /// The record's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Paused => "paused",
            RunStatus::Blocked => "blocked",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
/// A gate's verdict (also a rejected approval's).
pub struct GateInfo {
    /// `pass` or `block`.
    pub verdict: &'static str,
    /// Why it blocked.
    pub reason: Option<String>,
    /// Rework rounds, with `onBlock: "retry"`.
    pub rounds: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
/// An approval's decision.
pub struct ApprovalInfo {
    /// `approve`, `edit`, `reject`, `pending` or `expired` (a deadline with `onTimeout: fail`).
    pub decision: &'static str,
    /// The edit note or the rejection reason.
    pub note: Option<String>,
    /// `tty`, `flag`, `signal` or `timeout`.
    pub source: Option<&'static str>,
    /// The deadline (SPEC §8.8), RFC 3339 UTC with ms, when the approval has a `timeout`.
    pub expires_at: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
/// How a loop went.
pub struct LoopInfo {
    /// Iterations made.
    pub iterations: u32,
    /// `until`, `converged`, `max`, `budget`, `failed`.
    pub stop: &'static str,
    /// The last reflexion summary fed back.
    pub reflexion: Option<String>,
    /// Failed iterations (the last 20): iteration and error.
    pub failures: Vec<(u32, String)>,
}

#[derive(Clone, Debug, PartialEq)]
/// One item of a fan-out or race.
pub struct ItemInfo {
    /// Its 0-based index.
    pub index: usize,
    /// How it ended.
    pub status: PhaseStatus,
    /// Why it did not succeed.
    pub error: Option<String>,
    /// A map item's cache key (SPEC §10.5 "map item"), set the moment it ends `done`.
    pub input_hash: Option<String>,
}

/// One phase's record.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseRecord {
    /// Where the phase is.
    pub status: PhaseStatus,
    /// Its output (on failure: any partial output).
    pub output: String,
    /// `output: "json"`: the parsed output; fan-outs: the items' values.
    pub json: Option<Value>,
    /// Run-time warnings, each once.
    pub warnings: Vec<String>,
    /// Agent calls made (retries included); a script phase's run counts 1 here (SPEC
    /// §11.1), though no summary counts it as a call ([`PhaseRecord::agent_calls`]).
    pub attempts: u32,
    /// The phases whose state it read.
    pub reads: Vec<String>,
    /// Tokens and cost of its calls.
    pub usage: Usage,
    /// When it started.
    pub started_at: Option<String>,
    /// When it ended.
    pub ended_at: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// Why it was skipped.
    pub skip_reason: Option<String>,
    /// Its kind.
    pub ty: PhaseType,
    /// The agent it calls (kinds that call one).
    pub agent: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// A wall timeout stopped a call.
    pub timed_out: bool,
    /// The budget cut it short.
    pub budget_truncated: bool,
    /// It may have changed the world (not idempotent).
    pub side_effect: bool,
    /// Its failure does not fail the run.
    pub optional: bool,
    /// A gate's verdict (or a rejection).
    pub gate: Option<GateInfo>,
    /// An approval's decision.
    pub approval: Option<ApprovalInfo>,
    /// A loop's iterations.
    pub loop_info: Option<LoopInfo>,
    /// (winner, variants)
    pub tournament: Option<(usize, usize)>,
    /// Fan-out and race items.
    pub items: Option<Vec<ItemInfo>>,
    /// Why a generated sub-flow definition was not run (fail-open).
    pub def_error: Option<String>,
    /// A sub-flow's own record.
    pub sub_run: Option<Box<RunRecord>>,
    /// (chars, estimated tokens)
    pub prompt_stats: Option<(usize, usize)>,
    /// The cache key of its inputs (SPEC §10.5), set when it ends.
    pub input_hash: Option<String>,
    /// `run-only` or `cross-run` when its `done` state was reused instead of run; `set` when
    /// a fork gave its output (`tfc fork --set`, SPEC §10.4).
    pub cache_hit: Option<&'static str>,
    /// The run a fork's `--set` replaced this phase's output of (SPEC §10.4 `setFrom`).
    pub set_from: Option<String>,
}

impl PhaseRecord {
    /// A pending record of a phase of kind `ty`.
    pub fn new(ty: PhaseType) -> PhaseRecord {
        PhaseRecord {
            status: PhaseStatus::Pending,
            output: String::new(),
            json: None,
            warnings: Vec::new(),
            attempts: 0,
            reads: Vec::new(),
            usage: Usage::default(),
            started_at: None,
            ended_at: None,
            error: None,
            skip_reason: None,
            ty,
            agent: None,
            model: None,
            timed_out: false,
            budget_truncated: false,
            side_effect: false,
            optional: false,
            gate: None,
            approval: None,
            loop_info: None,
            tournament: None,
            items: None,
            def_error: None,
            sub_run: None,
            prompt_stats: None,
            input_hash: None,
            cache_hit: None,
            set_from: None,
        }
    }

    /// The agent calls this record stands for ([`super::summary::phase_calls`]: its
    /// `attempts`, none for a script phase), with those of its sub-run (a sub-flow's child
    /// run, at any depth) unless the phase was reused (see [`super::summary`]).
    pub fn agent_calls(&self) -> u32 {
        u32::try_from(self.calls()).unwrap_or(u32::MAX)
    }

    /// [`PhaseRecord::agent_calls`], uncapped.
    fn calls(&self) -> u64 {
        let own = |r: &PhaseRecord| super::summary::phase_calls(r.ty.as_str(), r.attempts.into());
        fn sub(r: &PhaseRecord) -> Option<&RunRecord> {
            r.sub_run.as_deref().filter(|_| r.cache_hit.is_none())
        }
        let mut total = own(self);
        // A list, not recursion: sub-flows may nest deeply.
        let mut runs: Vec<&RunRecord> = sub(self).into_iter().collect();
        while let Some(run) = runs.pop() {
            for p in run.phases.values() {
                total += own(p);
                runs.extend(sub(p));
            }
        }
        total
    }

    /// Record a warning once (a phase records identical warnings once).
    pub fn warn(&mut self, w: impl Into<String>) {
        let w = w.into();
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// Record a read phase id once.
    pub fn read(&mut self, id: &str) {
        if !self.reads.iter().any(|r| r == id) {
            self.reads.push(id.to_owned());
        }
    }

    /// The record as JSON (SPEC §11.1).
    pub fn to_value(&self) -> Value {
        self.to_value_stored(None)
    }

    /// The record as `run.json` holds it: with `files`, the output (and `json`) are kept in
    /// those files (`outputFile`, `jsonFile`, relative to the run directory) instead of inline.
    pub fn to_value_stored(&self, files: Option<&super::store::OutputFiles>) -> Value {
        let mut o = Map::default();
        self.members(files, |k, v| {
            o.insert(k.into(), v.into_value());
        });
        Value::Object(o)
    }

    /// The text `write_readable_at(&self.to_value(), out, depth)` writes, without making
    /// the value first (a `run.json` of many phases is mostly their records).
    pub fn write_readable_at(&self, out: &mut String, depth: usize) {
        use crate::value::{READABLE_DEPTH, newline, write_readable_at, write_string};
        // Members and their lists' items are indented (a record nested this deep is not one
        // tfc writes; it is written the general way).
        if depth + 2 > READABLE_DEPTH {
            write_readable_at(&self.to_value(), out, depth);
            return;
        }
        out.push('{');
        let mut first = true;
        self.members(None, |k, v| {
            if !std::mem::replace(&mut first, false) {
                out.push(',');
            }
            newline(out, depth + 1);
            write_string(k, out);
            out.push_str(": ");
            match v {
                Member::Str(s) => write_string(s, out),
                Member::OptStr(None) => out.push_str("null"),
                Member::OptStr(Some(s)) => write_string(s, out),
                Member::Strings([]) => out.push_str("[]"),
                Member::Strings(list) => {
                    out.push('[');
                    for (i, s) in list.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        newline(out, depth + 2);
                        write_string(s, out);
                    }
                    newline(out, depth + 1);
                    out.push(']');
                }
                Member::Num(n) => crate::value::write_readable(&Value::Number(n), out),
                Member::True => out.push_str("true"),
                Member::Usage(u) if *u == Usage::default() => {
                    static ZERO: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
                    let zero = ZERO.get_or_init(|| Usage::default().to_value());
                    write_readable_at(zero, out, depth + 1);
                }
                Member::Usage(u) => write_readable_at(&u.to_value(), out, depth + 1),
                Member::Ref(v) => write_readable_at(v, out, depth + 1),
                Member::Val(v) => write_readable_at(&v, out, depth + 1),
            }
        });
        newline(out, depth);
        out.push('}');
    }

    /// The record's members in their order, as [`PhaseRecord::to_value_stored`] has them.
    fn members<'a>(
        &'a self,
        files: Option<&'a super::store::OutputFiles>,
        mut emit: impl FnMut(&'static str, Member<'a>),
    ) {
        use Member::{Num, OptStr, Str, Strings, True, Val};
        emit("status", Str(self.status.as_str()));
        match files {
            Some(f) => {
                emit("outputFile", Str(&f.output));
                emit("outputBytes", Num(self.output.len() as f64));
            }
            None => emit("output", Str(&self.output)),
        }
        match (files.and_then(|f| f.json.as_ref()), &self.json) {
            (Some(file), Some(_)) => emit("jsonFile", Str(file)),
            (_, Some(j)) => emit("json", Member::Ref(j)),
            _ => {}
        }
        emit("warnings", Strings(&self.warnings));
        emit("attempts", Num(self.attempts as f64));
        emit("reads", Strings(&self.reads));
        emit("usage", Member::Usage(&self.usage));
        emit("startedAt", OptStr(self.started_at.as_deref()));
        emit("endedAt", OptStr(self.ended_at.as_deref()));
        if let Some(e) = &self.error {
            emit("error", Str(e));
        }
        if let Some(r) = &self.skip_reason {
            emit("skipReason", Str(r));
        }
        emit("type", Str(self.ty.as_str()));
        if let Some(a) = &self.agent {
            emit("agent", Str(a));
        }
        if let Some(m) = &self.model {
            emit("model", Str(m));
        }
        if let Some(h) = &self.input_hash {
            emit("inputHash", Str(h));
        }
        if let Some(h) = self.cache_hit {
            emit("cacheHit", Str(h));
        }
        if let Some(f) = &self.set_from {
            emit("setFrom", Str(f));
        }
        for (key, flag) in [
            ("timedOut", self.timed_out),
            ("budgetTruncated", self.budget_truncated),
            ("sideEffect", self.side_effect),
            ("optional", self.optional),
        ] {
            if flag {
                emit(key, True);
            }
        }
        let s = |v: &str| Value::from(v);
        if let Some(g) = &self.gate {
            let mut m = Map::default();
            m.insert("verdict".into(), s(g.verdict));
            if let Some(r) = &g.reason {
                m.insert("reason".into(), s(r));
            }
            if let Some(r) = g.rounds {
                m.insert("rounds".into(), Value::Number(r as f64));
            }
            emit("gate", Val(Value::Object(m)));
        }
        if let Some(a) = &self.approval {
            let mut m = Map::default();
            m.insert("decision".into(), s(a.decision));
            if let Some(n) = &a.note {
                m.insert("note".into(), s(n));
            }
            if let Some(src) = a.source {
                m.insert("source".into(), s(src));
            }
            if let Some(e) = &a.expires_at {
                m.insert("expiresAt".into(), s(e));
            }
            emit("approval", Val(Value::Object(m)));
        }
        if let Some(l) = &self.loop_info {
            let mut m = Map::default();
            m.insert("iterations".into(), Value::Number(l.iterations as f64));
            m.insert("stop".into(), s(l.stop));
            if let Some(r) = &l.reflexion {
                m.insert("reflexion".into(), s(r));
            }
            if !l.failures.is_empty() {
                let f = l
                    .failures
                    .iter()
                    .map(|(i, e)| {
                        let mut fm = Map::default();
                        fm.insert("iteration".into(), Value::Number(*i as f64));
                        fm.insert("error".into(), s(e));
                        Value::Object(fm)
                    })
                    .collect();
                m.insert("failures".into(), Value::Array(f));
            }
            emit("loop", Val(Value::Object(m)));
        }
        if let Some((winner, variants)) = self.tournament {
            let mut m = Map::default();
            m.insert("winner".into(), Value::Number(winner as f64));
            m.insert("variants".into(), Value::Number(variants as f64));
            emit("tournament", Val(Value::Object(m)));
        }
        if let Some(items) = &self.items {
            let list = items
                .iter()
                .map(|it| {
                    let mut m = Map::default();
                    m.insert("index".into(), Value::Number(it.index as f64));
                    m.insert("status".into(), s(it.status.as_str()));
                    if let Some(e) = &it.error {
                        m.insert("error".into(), s(e));
                    }
                    if let Some(h) = &it.input_hash {
                        m.insert("inputHash".into(), s(h));
                    }
                    Value::Object(m)
                })
                .collect();
            emit("items", Val(Value::Array(list)));
        }
        if let Some(d) = &self.def_error {
            emit("defError", Str(d));
        }
        if let Some(sub) = &self.sub_run {
            emit("subRun", Val(sub.to_value()));
        }
        if let Some((chars, est)) = self.prompt_stats {
            let mut m = Map::default();
            m.insert("chars".into(), Value::Number(chars as f64));
            m.insert("estTokens".into(), Value::Number(est as f64));
            emit("promptStats", Val(Value::Object(m)));
        }
    }
}

/// One member of a phase record, as its writers take it.
enum Member<'a> {
    Str(&'a str),
    OptStr(Option<&'a str>),
    Strings(&'a [String]),
    Num(f64),
    True,
    Usage(&'a Usage),
    Ref(&'a Value),
    Val(Value),
}

impl Member<'_> {
    fn into_value(self) -> Value {
        match self {
            Member::Str(s) => Value::from(s),
            Member::OptStr(s) => s.map_or(Value::Null, Value::from),
            Member::Strings(list) => strings(list),
            Member::Num(n) => Value::Number(n),
            Member::True => Value::Bool(true),
            Member::Usage(u) => u.to_value(),
            Member::Ref(v) => v.clone(),
            Member::Val(v) => v,
        }
    }
}

/// A whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRecord {
    /// The run id.
    pub run_id: String,
    /// The flow's name.
    pub flow: String,
    /// The run this one resumes or nests in.
    pub parent_run_id: Option<String>,
    /// How it ended.
    pub status: RunStatus,
    /// Why (interrupted, budget, block, crash, awaiting approval).
    pub reason: Option<String>,
    /// The final output (SPEC §8.9).
    pub final_output: String,
    /// The phase the final output comes from.
    pub output_phase: Option<String>,
    /// The invocation arguments, defaults included.
    pub args: Map,
    /// When it started.
    pub started_at: String,
    /// When it ended.
    pub ended_at: Option<String>,
    /// Tokens and cost of every call.
    pub usage: Usage,
    /// Spend of earlier runs this one resumes.
    pub spent_before: Option<Usage>,
    /// Every phase's warnings, prefixed with its id.
    pub warnings: Vec<String>,
    /// agent → backend name.
    pub backends: IndexMap<String, String>,
    /// Every phase's record, in definition order (grafted fragments after their expand).
    pub phases: IndexMap<String, PhaseRecord>,
    /// Whether answers came from a replay fixture.
    pub replay: bool,
    /// Problems writing the run's directory (also in `warnings`): the run went on, but what
    /// is on disk may be incomplete.
    pub store_errors: Vec<String>,
}

impl RunRecord {
    /// The run's agent calls, as every summary shows them: [`PhaseRecord::agent_calls`]
    /// summed over its phases (a sub-flow's calls included).
    pub fn agent_calls(&self) -> u64 {
        self.phases.values().map(PhaseRecord::calls).sum()
    }
}

impl RunRecord {
    /// The record as JSON (SPEC §11.1).
    pub fn to_value(&self) -> Value {
        self.to_value_with(|_, p| p.to_value())
    }

    /// The record with each phase's value made by `phase` (key, record).
    pub fn to_value_with(&self, mut phase: impl FnMut(&str, &PhaseRecord) -> Value) -> Value {
        let mut o = self.fields();
        o.insert(
            "phases".into(),
            Value::Object(
                self.phases
                    .iter()
                    .map(|(k, p)| (k.clone(), phase(k, p)))
                    .collect(),
            ),
        );
        Value::Object(o)
    }

    /// The record's members in order, with `phases` as `null` (for writers that write the
    /// phases one at a time, see [`RunRecord::to_value_with`]).
    pub fn fields(&self) -> Map {
        let mut o = Map::default();
        o.insert("schemaVersion".into(), Value::Number(1.0));
        o.insert("runId".into(), Value::from(self.run_id.as_str()));
        o.insert("flow".into(), Value::from(self.flow.as_str()));
        o.insert("parentRunId".into(), opt(&self.parent_run_id));
        o.insert("status".into(), Value::from(self.status.as_str()));
        o.insert("reason".into(), opt(&self.reason));
        o.insert(
            "finalOutput".into(),
            Value::from(self.final_output.as_str()),
        );
        o.insert("outputPhase".into(), opt(&self.output_phase));
        o.insert("args".into(), Value::Object(self.args.clone()));
        o.insert("startedAt".into(), Value::from(self.started_at.as_str()));
        o.insert("endedAt".into(), opt(&self.ended_at));
        o.insert("usage".into(), self.usage.to_value());
        o.insert(
            "spentBefore".into(),
            self.spent_before
                .as_ref()
                .map_or(Value::Null, Usage::to_value),
        );
        o.insert("warnings".into(), strings(&self.warnings));
        o.insert(
            "backends".into(),
            Value::Object(
                self.backends
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                    .collect(),
            ),
        );
        if self.replay {
            o.insert("replay".into(), Value::Bool(true));
        }
        o.insert("phases".into(), Value::Null);
        o
    }
}

fn strings(list: &[String]) -> Value {
    Value::Array(list.iter().map(|s| Value::from(s.as_str())).collect())
}

fn opt(v: &Option<String>) -> Value {
    v.as_deref().map_or(Value::Null, Value::from)
}

/// RFC 3339 UTC with milliseconds, e.g. `2026-11-30T10:00:00.000Z`.
pub fn timestamp(t: std::time::SystemTime) -> String {
    let d = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let ms = d.subsec_millis();
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // Civil from days (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = if month <= 2 { y + 1 } else { y };
    if !(0..=9999).contains(&year) {
        return format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z");
    }
    // Written digit by digit: one is made for every journal line.
    let mut out = String::with_capacity(24);
    for (n, width, after) in [
        (year, 4, '-'),
        (month, 2, '-'),
        (day, 2, 'T'),
        (h, 2, ':'),
        (m, 2, ':'),
        (s, 2, '.'),
        (i64::from(ms), 3, 'Z'),
    ] {
        for p in (0..width).rev() {
            let d = (n / 10i64.pow(p)).rem_euclid(10);
            out.push(char::from(b'0' + d as u8));
        }
        out.push(after);
    }
    out
}

/// The current time as a record timestamp.
pub fn now() -> String {
    timestamp(std::time::SystemTime::now())
}

impl PhaseStatus {
    /// Parse the record's spelling.
    pub fn parse(s: &str) -> Option<PhaseStatus> {
        Some(match s {
            "pending" => PhaseStatus::Pending,
            "running" => PhaseStatus::Running,
            "done" => PhaseStatus::Done,
            "failed" => PhaseStatus::Failed,
            "skipped" => PhaseStatus::Skipped,
            _ => return None,
        })
    }
}

impl RunStatus {
    /// Parse the record's spelling.
    pub fn parse(s: &str) -> Option<RunStatus> {
        Some(match s {
            "running" => RunStatus::Running,
            "completed" => RunStatus::Completed,
            "failed" => RunStatus::Failed,
            "paused" => RunStatus::Paused,
            "blocked" => RunStatus::Blocked,
            _ => return None,
        })
    }
}

/// One of `known`, as the `'static` spelling the record keeps.
fn known(v: Option<&Value>, known: &[&'static str]) -> Option<&'static str> {
    let s = v?.as_str()?;
    known.iter().copied().find(|k| *k == s)
}

/// [`Usage`] from its record form (`null` or missing fields are zero / unknown cost).
pub fn usage_from_value(v: &Value) -> Usage {
    let n = |k: &str| match v {
        Value::Object(m) => match m.get(k) {
            Some(Value::Number(x)) if x.is_finite() && *x >= 0.0 => Some(*x),
            _ => None,
        },
        _ => None,
    };
    Usage {
        input: n("input").unwrap_or(0.0) as u64,
        output: n("output").unwrap_or(0.0) as u64,
        cache_read: n("cacheRead").unwrap_or(0.0) as u64,
        cache_write: n("cacheWrite").unwrap_or(0.0) as u64,
        cost_usd: n("costUSD"),
        turns: n("turns").unwrap_or(0.0) as u32,
        calls: n("calls").unwrap_or(0.0) as u64,
    }
}

impl PhaseRecord {
    /// Read a phase record back from its §11.1 form (`run.json`, a cache entry); `ty` when
    /// the record does not say. `None` when it is not a phase record. An output kept in a
    /// file (`outputFile`) is not read here: such a record has an empty `output`.
    pub fn from_value(v: &Value, ty: PhaseType) -> Option<PhaseRecord> {
        PhaseRecord::from_value_at(v, ty, 0)
    }

    /// [`PhaseRecord::from_value`] at sub-run nesting `depth` (a `subRun` nested deeper
    /// than [`MAX_SUB_RUN_DEPTH`] is dropped, never recursed into).
    fn from_value_at(v: &Value, ty: PhaseType, depth: usize) -> Option<PhaseRecord> {
        let Value::Object(m) = v else {
            return None;
        };
        let mut r = PhaseMembers::new(ty, depth);
        for (k, v) in m {
            r.member(k, v);
        }
        r.finish()
    }
}

/// A phase record read member by member, in any order (a `run.json` read without a value
/// tree of its phases, or an object's members): each member sets what it means alone, so a
/// repeated member's last value wins, as in an object.
pub(crate) struct PhaseMembers {
    r: PhaseRecord,
    status: Option<PhaseStatus>,
    /// The kind when the record does not say.
    ty: PhaseType,
    depth: usize,
}

impl PhaseMembers {
    /// An empty record of kind `ty` (unless it says), at sub-run nesting `depth`.
    pub(crate) fn new(ty: PhaseType, depth: usize) -> PhaseMembers {
        PhaseMembers {
            r: PhaseRecord::new(ty),
            status: None,
            ty,
            depth,
        }
    }

    /// The record, when it had a known `status`.
    pub(crate) fn finish(self) -> Option<PhaseRecord> {
        let mut r = self.r;
        r.status = self.status?;
        Some(r)
    }

    /// A member whose value is the string `s`; `false` when `key` is not a text member (it is
    /// then given as a value, see [`PhaseMembers::member`]).
    pub(crate) fn text(&mut self, key: &str, s: &str) -> bool {
        let r = &mut self.r;
        let slot = match key {
            "status" => {
                self.status = PhaseStatus::parse(s);
                return true;
            }
            "type" => {
                r.ty = PhaseType::parse(s).unwrap_or(self.ty);
                return true;
            }
            "cacheHit" => {
                r.cache_hit = ["run-only", "cross-run", "set"]
                    .into_iter()
                    .find(|k| *k == s);
                return true;
            }
            "output" => {
                r.output = s.to_owned();
                return true;
            }
            "startedAt" => &mut r.started_at,
            "endedAt" => &mut r.ended_at,
            "error" => &mut r.error,
            "skipReason" => &mut r.skip_reason,
            "agent" => &mut r.agent,
            "model" => &mut r.model,
            "inputHash" => &mut r.input_hash,
            "setFrom" => &mut r.set_from,
            "defError" => &mut r.def_error,
            _ => return false,
        };
        *slot = Some(s.to_owned());
        true
    }

    /// A `warnings` or `reads` member that is a list of strings (other keys are ignored).
    pub(crate) fn strings(&mut self, key: &str, list: Vec<String>) {
        match key {
            "warnings" => self.r.warnings = list,
            "reads" => self.r.reads = list,
            _ => {}
        }
    }

    /// The `usage` member, read already.
    pub(crate) fn usage(&mut self, u: Usage) {
        self.r.usage = u;
    }

    /// One member (unknown keys are ignored).
    pub(crate) fn member(&mut self, key: &str, v: &Value) {
        if let Some(s) = v.as_str()
            && self.text(key, s)
        {
            return;
        }
        let text = || v.as_str().map(str::to_owned);
        let list = || match v {
            Value::Array(a) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        let flag = matches!(v, Value::Bool(true));
        let num = |o: &Map, k: &str| match o.get(k) {
            Some(Value::Number(x)) if x.is_finite() && *x >= 0.0 => Some(*x),
            _ => None,
        };
        let r = &mut self.r;
        match key {
            // Not a string (a string was taken above).
            "status" => self.status = None,
            "type" => r.ty = self.ty,
            "cacheHit" => r.cache_hit = None,
            "output" => r.output = String::new(),
            "startedAt" => r.started_at = text(),
            "endedAt" => r.ended_at = text(),
            "error" => r.error = text(),
            "skipReason" => r.skip_reason = text(),
            "agent" => r.agent = text(),
            "model" => r.model = text(),
            "inputHash" => r.input_hash = text(),
            "setFrom" => r.set_from = text(),
            "defError" => r.def_error = text(),
            "json" => r.json = Some(v.clone()),
            "warnings" => r.warnings = list(),
            "reads" => r.reads = list(),
            "attempts" => {
                r.attempts = match v {
                    Value::Number(x) if x.is_finite() && *x >= 0.0 => *x as u32,
                    _ => 0,
                }
            }
            "usage" => r.usage = usage_from_value(v),
            "timedOut" => r.timed_out = flag,
            "budgetTruncated" => r.budget_truncated = flag,
            "sideEffect" => r.side_effect = flag,
            "optional" => r.optional = flag,
            "gate" => {
                r.gate = match v {
                    Value::Object(g) => Some(GateInfo {
                        verdict: known(g.get("verdict"), &["pass", "block"]).unwrap_or("pass"),
                        reason: g.get("reason").and_then(Value::as_str).map(str::to_owned),
                        rounds: num(g, "rounds").map(|x| x as u32),
                    }),
                    _ => None,
                }
            }
            "approval" => {
                r.approval = match v {
                    Value::Object(a) => Some(ApprovalInfo {
                        decision: known(
                            a.get("decision"),
                            &["approve", "edit", "reject", "pending", "expired"],
                        )
                        .unwrap_or("pending"),
                        note: a.get("note").and_then(Value::as_str).map(str::to_owned),
                        source: known(a.get("source"), &["tty", "flag", "signal", "timeout"]),
                        expires_at: a
                            .get("expiresAt")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    }),
                    _ => None,
                }
            }
            "loop" => r.loop_info = loop_info(v, num),
            "tournament" => {
                r.tournament = match v {
                    Value::Object(t) => Some((
                        num(t, "winner").unwrap_or(0.0) as usize,
                        num(t, "variants").unwrap_or(0.0) as usize,
                    )),
                    _ => None,
                }
            }
            "items" => {
                r.items = match v {
                    Value::Array(items) => Some(
                        items
                            .iter()
                            .filter_map(|it| match it {
                                Value::Object(o) => Some(ItemInfo {
                                    index: num(o, "index")? as usize,
                                    status: PhaseStatus::parse(o.get("status")?.as_str()?)?,
                                    error: o
                                        .get("error")
                                        .and_then(Value::as_str)
                                        .map(str::to_owned),
                                    input_hash: o
                                        .get("inputHash")
                                        .and_then(Value::as_str)
                                        .map(str::to_owned),
                                }),
                                _ => None,
                            })
                            .collect(),
                    ),
                    _ => None,
                }
            }
            "subRun" if self.depth < MAX_SUB_RUN_DEPTH => {
                r.sub_run = RunRecord::from_value_at(v, self.depth + 1).map(Box::new);
            }
            "promptStats" => {
                r.prompt_stats = match v {
                    Value::Object(p) => Some((
                        num(p, "chars").unwrap_or(0.0) as usize,
                        num(p, "estTokens").unwrap_or(0.0) as usize,
                    )),
                    _ => None,
                }
            }
            _ => {}
        }
    }
}

/// A `loop` member's value.
fn loop_info(v: &Value, num: impl Fn(&Map, &str) -> Option<f64>) -> Option<LoopInfo> {
    let Value::Object(l) = v else {
        return None;
    };
    Some(LoopInfo {
        iterations: num(l, "iterations").unwrap_or(0.0) as u32,
        stop: known(
            l.get("stop"),
            &["until", "converged", "max", "budget", "failed"],
        )
        .unwrap_or("max"),
        reflexion: l
            .get("reflexion")
            .and_then(Value::as_str)
            .map(str::to_owned),
        failures: match l.get("failures") {
            Some(Value::Array(f)) => f
                .iter()
                .filter_map(|x| match x {
                    Value::Object(fm) => Some((
                        num(fm, "iteration")? as u32,
                        fm.get("error")?.as_str()?.to_owned(),
                    )),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        },
    })
}

/// One member of a `usage` object into `u` (as [`usage_from_value`] reads it).
pub(crate) fn usage_member(u: &mut Usage, key: &str, v: &Value) {
    let n = match v {
        Value::Number(x) if x.is_finite() && *x >= 0.0 => Some(*x),
        _ => None,
    };
    let z = n.unwrap_or(0.0);
    match key {
        "input" => u.input = z as u64,
        "output" => u.output = z as u64,
        "cacheRead" => u.cache_read = z as u64,
        "cacheWrite" => u.cache_write = z as u64,
        "costUSD" => u.cost_usd = n,
        "turns" => u.turns = z as u32,
        "calls" => u.calls = z as u64,
        _ => {}
    }
}

/// How deep [`RunRecord::from_value`] reads nested `subRun`s (a flow nests flows at most a
/// few levels; a record nested deeper is not one tfc wrote).
pub const MAX_SUB_RUN_DEPTH: usize = 32;

impl RunRecord {
    /// Read a run record back from its §11.1 form (`run.json`, a phase's `subRun`). `None`
    /// when it is not one (no `runId` or no known `status`). Outputs kept in files
    /// (`outputFile`) are not read here.
    pub fn from_value(v: &Value) -> Option<RunRecord> {
        RunRecord::from_value_at(v, 0)
    }

    fn from_value_at(v: &Value, depth: usize) -> Option<RunRecord> {
        let Value::Object(m) = v else {
            return None;
        };
        let text = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_owned);
        let mut phases = IndexMap::new();
        if let Some(Value::Object(ps)) = m.get("phases") {
            for (id, p) in ps {
                if let Some(r) = PhaseRecord::from_value_at(p, PhaseType::Agent, depth) {
                    phases.insert(id.clone(), r);
                }
            }
        }
        let warnings = match m.get("warnings") {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        Some(RunRecord {
            run_id: text("runId")?,
            flow: text("flow").unwrap_or_default(),
            parent_run_id: text("parentRunId"),
            status: RunStatus::parse(m.get("status")?.as_str()?)?,
            reason: text("reason"),
            final_output: text("finalOutput").unwrap_or_default(),
            output_phase: text("outputPhase"),
            args: match m.get("args") {
                Some(Value::Object(a)) => a.clone(),
                _ => Map::default(),
            },
            started_at: text("startedAt").unwrap_or_default(),
            ended_at: text("endedAt"),
            usage: m.get("usage").map(usage_from_value).unwrap_or_default(),
            spent_before: m
                .get("spentBefore")
                .filter(|v| !matches!(v, Value::Null))
                .map(usage_from_value),
            warnings,
            backends: match m.get("backends") {
                Some(Value::Object(b)) => b
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect(),
                _ => IndexMap::new(),
            },
            phases,
            replay: matches!(m.get("replay"), Some(Value::Bool(true))),
            store_errors: Vec::new(),
        })
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
