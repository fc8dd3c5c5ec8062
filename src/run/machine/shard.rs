//! Shards: a run on Temporal hands a large map's item calls to child workflows, a batch at a
//! time, so the run's own history stays small (SPEC §14.3). The decisions stay the machine's:
//! the parent picks the items, renders their prompts and checks the budget and the abort
//! before each batch; a child hosts a machine made by [`Machine::shard`], which runs the
//! batch's calls with the same retries, backoffs, timeouts, output cap and contract as the
//! parent would ([`super::call`]), up to the map's width, and checks the budget before each
//! call. What the child returns ([`ShardResult`]) is one input of the parent
//! ([`Event::ShardEnded`](super::Event::ShardEnded)), so the parent's journal still replays.
//!
//! A local run never shards: its [`Config::shard_items`] is `None`.

use std::collections::VecDeque;
use std::sync::Arc;

use super::Machine;
use super::config::Config;
use super::io::{
    CallDir, Command, Event, Input, Line, ShardCall, ShardEnd, ShardItem, ShardRequest, ShardResult,
};
use super::kit::{CallResult, CallSpec, Meter};
use crate::agent::Purpose;
use crate::flow::Flow;
use crate::value::Map;

/// The execution index a shard machine's calls belong to (it runs no phase).
pub(super) const SHARD_EXEC: usize = usize::MAX;

/// A shard machine's own state.
#[derive(Debug)]
pub(crate) struct ShardState {
    phase: usize,
    width: usize,
    waiting: VecDeque<ShardCall>,
    running: usize,
    result: ShardResult,
    start: Meter,
    /// The run spent past a cap ([`Event::Capped`]).
    capped: bool,
}

impl Machine {
    /// A machine that runs one shard of `flow`'s map phase `req.phase` (the flow and
    /// configuration the run was started with). Feed it [`Event::Start`], then the ends of
    /// the calls and timers it asks for (and [`Event::Interrupt`] to stop it); it ends with
    /// [`Command::EndShard`].
    pub fn shard(flow: Arc<Flow>, cfg: Config, req: ShardRequest) -> Machine {
        let mut m = Machine::new(flow, Map::default(), cfg);
        m.meter.tokens = req.spent_tokens;
        m.meter.cost_micros = req.spent_cost_micros;
        // Its calls are counted against what the run promised it (SPEC §8.7).
        m.meter.max_calls = req.max_calls;
        m.shard = Some(Box::new(ShardState {
            phase: req.phase,
            width: req.width.max(1),
            waiting: req.calls.into(),
            running: 0,
            result: ShardResult::default(),
            start: m.meter,
            capped: false,
        }));
        m
    }

    /// One input of a shard machine.
    pub(super) fn shard_step(&mut self, input: Input) {
        match input.what {
            Event::Start => {
                if self.begun {
                    return;
                }
                self.begun = true;
            }
            Event::Interrupt => {
                self.aborted = true;
                self.abort_ops();
            }
            Event::Capped => {
                if let Some(s) = self.shard.as_mut() {
                    s.capped = true;
                }
            }
            what => self.op_event(input.at, what),
        }
        self.shard_fill();
        // The calls' journal lines go back with the result.
        let mut kept = Vec::with_capacity(self.out.len());
        for c in self.out.drain(..) {
            match c {
                Command::Journal(Line::Event(v)) => {
                    if let Some(s) = self.shard.as_mut() {
                        s.result.lines.push(v.to_json());
                    }
                }
                Command::Journal(_) | Command::Progress(_) | Command::Save => {}
                c => kept.push(c),
            }
        }
        self.out = kept;
        let Some(s) = self.shard.as_mut() else {
            return;
        };
        if s.waiting.is_empty() && s.running == 0 && !self.finished {
            self.finished = true;
            let mut result = std::mem::take(&mut s.result);
            result.tokens = self.meter.tokens - s.start.tokens;
            result.cost_micros = self.meter.cost_micros - s.start.cost_micros;
            result.calls = self.meter.calls - s.start.calls;
            result.refused = self.meter.refused;
            self.out.push(Command::EndShard(Box::new(result)));
        }
    }

    /// Start calls while the width allows (each checked against the abort and the budget,
    /// as a fan-out checks its items).
    fn shard_fill(&mut self) {
        loop {
            let Some(s) = self.shard.as_mut() else {
                return;
            };
            if s.running >= s.width {
                return;
            }
            let Some(c) = s.waiting.pop_front() else {
                return;
            };
            let phase = s.phase;
            let over = if self.aborted {
                Some(ShardEnd::Aborted)
            } else if s.capped || self.meter.refuse().is_some() {
                Some(ShardEnd::OverBudget)
            } else {
                None
            };
            if let Some(end) = over {
                s.result.items.push(ShardItem { slot: c.slot, end });
                continue;
            }
            s.running += 1;
            let spec = CallSpec {
                node: c.node,
                agent: c.agent,
                prompt: c.prompt,
                purpose: Purpose::Task,
                iteration: None,
                item_index: Some(c.slot as usize),
                contract: c.contract,
                cwd: CallDir::At(Arc::from(c.cwd.as_path())),
                refused: None,
                caught: true,
            };
            self.start_call(SHARD_EXEC, c.slot, phase, spec);
        }
    }

    /// Whether this shard machine was told the run is over budget (no more retries either).
    pub(super) fn shard_capped(&self) -> bool {
        self.shard.as_ref().is_some_and(|s| s.capped)
    }

    /// The parent's side: once the spend passes a cap, every shard out is told (once), so
    /// it starts nothing more, as a map here would not (SPEC §8.7).
    pub(super) fn cap_shards(&mut self) {
        if self.meter.over().is_none() {
            return;
        }
        let out: Vec<u64> = self
            .ops
            .iter()
            .filter(|(op, o)| matches!(o, super::Owner::Shard(..)) && !self.capped.contains(op))
            .map(|(op, _)| *op)
            .collect();
        for op in out {
            self.capped.insert(op);
            self.out.push(Command::CapShard { op });
        }
    }

    /// A shard's call ended.
    pub(super) fn shard_call_done(&mut self, slot: u32, result: CallResult) {
        if let Some(s) = self.shard.as_mut() {
            s.running = s.running.saturating_sub(1);
            let end = if result.capped {
                ShardEnd::OverBudget
            } else {
                result.into_shard_end()
            };
            s.result.items.push(ShardItem { slot, end });
        }
    }

    /// The parent's side: a shard ended; its lines join the journal, its spend the meter
    /// (the calls it was promised are given back for those it made), its items go to the
    /// map (execution `exec`).
    pub(super) fn shard_ended(&mut self, exec: usize, promised: u64, result: ShardResult) {
        if self.cfg.journaling {
            for line in result.lines {
                self.out.push(Command::Journal(Line::Raw(line)));
            }
        }
        self.meter.tokens += result.tokens;
        self.meter.cost_micros += result.cost_micros;
        self.meter.reserved = self.meter.reserved.saturating_sub(promised);
        self.meter.calls += result.calls;
        // A shard refuses a call only when it was promised every call left.
        self.meter.refused |= result.refused;
        self.deliver(exec, super::kit::KindEvent::Shard(result.items));
    }
}

#[cfg(test)]
mod tests {
    use super::super::io::{CallEnd, CallOutcome, CallRequest, UsageData};
    use super::*;
    use crate::check::{CheckOptions, check_source};
    use crate::flow::LowerOptions;
    use crate::run::record::RunRecord;

    /// A deterministic agent: `FLAKY` items fail their first attempt with a transient
    /// error, `BAD` items always fail, the others answer at once.
    fn answer(r: &CallRequest) -> CallEnd {
        let flaky = r.prompt.contains("FLAKY") && r.attempt == 1;
        let bad = r.prompt.contains("BAD");
        let error = (flaky || bad).then(|| "connection reset (ECONNRESET)".to_owned());
        CallEnd::Outcome(Box::new(CallOutcome {
            output: if error.is_some() {
                String::new()
            } else {
                format!("answer to {}", r.prompt.len())
            },
            usage: UsageData {
                input: 10,
                output: 5,
                cost_usd: Some(0.001),
                turns: 1,
                ..UsageData::default()
            },
            model: Some("m1".into()),
            stop: if error.is_some() {
                "failed"
            } else {
                "completed"
            }
            .into(),
            error,
            stderr: String::new(),
            warnings: Vec::new(),
            backend: "test".into(),
            elapsed_ms: 1,
            exit_code: None,
        }))
    }

    /// Drive `m` to its end, answering calls and timers first in, first out; shards run
    /// in a machine of their own, as a child workflow would. The inputs, the journal lines
    /// and the final command.
    fn drive(m: &mut Machine, run: &(Arc<Flow>, Config)) -> (Vec<Input>, Vec<String>, Command) {
        let mut queue = VecDeque::from([Event::Start]);
        let (mut inputs, mut lines) = (Vec::new(), Vec::new());
        let mut at = 1_700_000_000_000;
        while let Some(what) = queue.pop_front() {
            at += 1;
            let input = Input { at, what };
            inputs.push(input.clone());
            for c in m.handle(input) {
                match c {
                    Command::StartCall { op, request } => queue.push_back(Event::CallEnded {
                        op,
                        node: request.node.clone(),
                        attempt: request.attempt,
                        end: answer(&request),
                    }),
                    Command::StartTimer { op, .. } => queue.push_back(Event::TimerFired { op }),
                    Command::StartShard { op, shard } => {
                        let mut child = Machine::shard(run.0.clone(), run.1.clone(), *shard);
                        let (_, _, end) = drive(&mut child, run);
                        let Command::EndShard(result) = end else {
                            panic!("a shard ends with its result");
                        };
                        queue.push_back(Event::ShardEnded { op, result });
                    }
                    Command::Journal(Line::Event(v)) => lines.push(v.to_json()),
                    Command::Journal(Line::Raw(t)) => lines.push(t),
                    Command::CapShard { op } => lines.push(format!("cap-shard {op}")),
                    c @ (Command::Finish(_) | Command::EndShard(_)) => return (inputs, lines, c),
                    _ => {}
                }
            }
        }
        panic!("the machine stopped asking before it finished");
    }

    fn run(flow: &str, shard_items: Option<usize>) -> (RunRecord, Vec<String>, Vec<Input>) {
        let checked = check_source(flow, &LowerOptions::default(), &CheckOptions::default());
        assert!(!checked.has_errors(), "{:?}", checked.diagnostics);
        let flow = Arc::new(checked.flow.expect("flow"));
        let args = crate::flow::effective_args(&flow, Map::default());
        let cfg = Config {
            run_id: "r".into(),
            max_output: 1 << 20,
            max_prompt: 1 << 20,
            journaling: true,
            cwd: "/t".into(),
            shard_items,
            max_tokens: flow.budget.as_ref().and_then(|b| b.value.max_tokens),
            max_calls: flow.budget.as_ref().and_then(|b| b.value.max_calls),
            ..Config::default()
        };
        let mut m = Machine::new(flow.clone(), args.clone(), cfg.clone());
        let (inputs, lines, end) = drive(&mut m, &(flow.clone(), cfg.clone()));
        let Command::Finish(record) = end else {
            panic!("a run ends with its record");
        };
        // The parent's journal of inputs replays to the same record.
        let replayed = crate::run::journal::replay(flow, args, cfg, &inputs).expect("replays");
        assert_eq!(replayed, *record, "the replay gives the same record");
        (*record, lines, inputs)
    }

    /// How many items each shard of a run brought back, in order.
    fn shard_sizes(inputs: &[Input]) -> Vec<usize> {
        inputs
            .iter()
            .filter_map(|i| match &i.what {
                Event::ShardEnded { result, .. } => Some(result.items.len()),
                _ => None,
            })
            .collect()
    }

    /// The `agent-call` lines, without their timestamps, sorted.
    fn calls(lines: &[String]) -> Vec<String> {
        let mut v: Vec<String> = lines
            .iter()
            .filter(|l| l.contains("\"type\":\"agent-call\""))
            .map(|l| {
                let ts = l.find("\"ts\":").expect("ts");
                let end = ts + l[ts + 6..].find('"').expect("ts value") + 7;
                let end = end + l[end..].find('"').expect("ts end") + 1;
                format!("{}{}", &l[..ts], &l[end..])
            })
            .collect();
        v.sort();
        v
    }

    const MAP: &str = r#"{"name": "m",
        "args": {"items": {"default": [1, 2, "FLAKY 3", 4, 5, "BAD 6", 7, 8, 9, 10, 11]}},
        "phases": [
        {"id": "each", "type": "map", "concurrency": 3, "retry": {"max": 1, "backoffMs": 5},
         "over": "{args.items}", "task": "do {item}"},
        {"id": "sum", "dependsOn": ["each"], "task": "sum {steps.each.output}"}]}"#;

    #[test]
    fn a_sharded_map_gives_the_record_of_an_unsharded_one() {
        let (plain, plain_lines, _) = run(MAP, None);
        for size in [1, 4, 10] {
            let (sharded, lines, _) = run(MAP, Some(size));
            let mut a = plain.clone();
            let mut b = sharded.clone();
            for r in [&mut a, &mut b] {
                r.started_at.clear();
                r.ended_at = None;
                for p in r.phases.values_mut() {
                    p.started_at = None;
                    p.ended_at = None;
                }
            }
            assert_eq!(a, b, "shards of {size}");
            assert_eq!(
                calls(&plain_lines),
                calls(&lines),
                "shards of {size}: calls"
            );
        }
        let each = &plain.phases["each"];
        // FLAKY fails once; BAD fails four times (the transient layer's attempts).
        assert_eq!(each.attempts, 15);
        assert_eq!(each.status, crate::run::record::PhaseStatus::Failed);
    }

    #[test]
    fn a_map_no_larger_than_the_shard_size_is_not_sharded() {
        let shards = |inputs: &[Input]| shard_sizes(inputs).len();
        assert_eq!(shards(&run(MAP, Some(11)).2), 0);
        assert_eq!(shards(&run(MAP, Some(10)).2), 2);
        assert_eq!(shards(&run(MAP, Some(4)).2), 3);
    }

    #[test]
    fn large_prompts_make_smaller_shards() {
        // Each prompt weighs 300 KB: two fill a shard's megabyte.
        let pad = "x".repeat(300_000);
        let flow = MAP.replace("\"do {item}\"", &format!("\"do {{item}} {pad}\""));
        let (plain, _, _) = run(&flow, None);
        let (sharded, _, inputs) = run(&flow, Some(10));
        let sizes = shard_sizes(&inputs);
        assert_eq!(sizes, [2, 2, 2, 2, 2, 1]);
        assert_eq!(plain.phases["each"].items, sharded.phases["each"].items);
        assert_eq!(plain.phases["each"].output, sharded.phases["each"].output);
    }

    #[test]
    fn a_run_over_budget_caps_the_shard_out() {
        // `other` ends first and spends past the cap while the map's first shard is out.
        let flow = r#"{"name": "m", "budget": {"maxTokens": 10},
            "args": {"items": {"default": [1, 2, 3, 4, 5]}},
            "phases": [
            {"id": "other", "task": "other"},
            {"id": "each", "type": "map", "over": "{args.items}", "task": "do {item}"},
            {"id": "end", "dependsOn": ["each", "other"], "task": "end"}]}"#;
        let (rec, lines, _) = run(flow, Some(2));
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("cap-shard")).count(),
            1,
            "the shard out is told once"
        );
        assert_eq!(rec.status, crate::run::record::RunStatus::Paused);
        assert!(rec.phases["each"].budget_truncated);
    }

    #[test]
    fn the_call_cap_holds_across_shards() {
        // `other` runs beside the map; every shard is promised no more calls than are left,
        // so the run makes exactly five calls however its items are sharded.
        let flow = r#"{"name": "m", "budget": {"maxCalls": 5},
            "args": {"items": {"default": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}},
            "phases": [
            {"id": "other", "task": "other"},
            {"id": "each", "type": "map", "concurrency": 3, "over": "{args.items}", "task": "do {item}"}]}"#;
        for size in [None, Some(2), Some(4)] {
            let (rec, lines, _) = run(flow, size);
            assert_eq!(calls(&lines).len(), 5, "shards of {size:?}");
            assert_eq!(rec.usage.calls, 5, "shards of {size:?}");
            assert_eq!(rec.status, crate::run::record::RunStatus::Paused);
            assert_eq!(
                rec.reason.as_deref(),
                Some("budget exceeded: calls 5 reached cap 5"),
                "shards of {size:?}"
            );
            assert!(rec.phases["each"].budget_truncated);
        }
    }

    #[test]
    fn a_shard_starts_no_call_past_what_it_was_promised() {
        let mut m = shard_of(4, 4);
        // As `ShardRequest::max_calls` promises.
        m.meter.max_calls = Some(2);
        let started = m.handle(Input {
            at: 1,
            what: Event::Start,
        });
        let ops: Vec<(u64, CallRequest)> = started
            .into_iter()
            .filter_map(|c| match c {
                Command::StartCall { op, request } => Some((op, *request)),
                _ => None,
            })
            .collect();
        assert_eq!(ops.len(), 2, "two calls promised, two started");
        let mut last = Vec::new();
        for (i, (op, request)) in ops.into_iter().enumerate() {
            last = m.handle(Input {
                at: 2 + i as u64,
                what: Event::CallEnded {
                    op,
                    node: request.node.clone(),
                    attempt: 1,
                    end: answer(&request),
                },
            });
        }
        let Some(Command::EndShard(result)) = last.pop() else {
            panic!("the shard ends");
        };
        assert_eq!(result.calls, 2);
        assert!(result.refused);
        let over = result
            .items
            .iter()
            .filter(|i| i.end == ShardEnd::OverBudget)
            .count();
        assert_eq!(over, 2);
    }

    /// A shard machine of `MAP`'s map with `n` calls, `width` at once.
    fn shard_of(n: u32, width: usize) -> Machine {
        let checked = check_source(MAP, &LowerOptions::default(), &CheckOptions::default());
        let flow = Arc::new(checked.flow.expect("flow"));
        let cfg = Config {
            run_id: "r".into(),
            max_output: 1 << 20,
            max_prompt: 1 << 20,
            journaling: true,
            ..Config::default()
        };
        let calls = (0..n)
            .map(|i| ShardCall {
                slot: i,
                node: format!("each#{i}"),
                agent: "default".into(),
                prompt: format!("do {i}"),
                contract: false,
                cwd: "/t".into(),
            })
            .collect();
        let req = ShardRequest {
            phase: 0,
            width,
            calls,
            spent_tokens: 0,
            spent_cost_micros: 0,
            max_calls: None,
        };
        Machine::shard(flow, cfg, req)
    }

    #[test]
    fn the_first_shard_is_one_wave_and_the_outputs_size_the_next() {
        // 40 items of width 3, shards of at most 30: the first holds 16 (no output seen
        // yet), the next the 24 left.
        let items: Vec<String> = (0..40).map(|i| i.to_string()).collect();
        let flow = MAP.replace(
            "[1, 2, \"FLAKY 3\", 4, 5, \"BAD 6\", 7, 8, 9, 10, 11]",
            &format!("[{}]", items.join(", ")),
        );
        let (_, _, inputs) = run(&flow, Some(30));
        let sizes = shard_sizes(&inputs);
        assert_eq!(sizes, [16, 24]);
    }

    #[test]
    fn a_capped_shard_starts_nothing_more() {
        let mut m = shard_of(4, 2);
        let mut ops = Vec::new();
        for c in m.handle(Input {
            at: 1,
            what: Event::Start,
        }) {
            if let Command::StartCall { op, request } = c {
                ops.push((op, *request));
            }
        }
        assert_eq!(ops.len(), 2);
        assert!(
            m.handle(Input {
                at: 2,
                what: Event::Capped
            })
            .is_empty(),
            "the calls running go on"
        );
        let mut last = Vec::new();
        for (i, (op, request)) in ops.into_iter().enumerate() {
            last = m.handle(Input {
                at: 3 + i as u64,
                what: Event::CallEnded {
                    op,
                    node: request.node.clone(),
                    attempt: 1,
                    end: answer(&request),
                },
            });
            assert!(
                !last.iter().any(|c| matches!(c, Command::StartCall { .. })),
                "nothing starts once capped"
            );
        }
        let Some(Command::EndShard(result)) = last.pop() else {
            panic!("the shard ends");
        };
        let ends: Vec<bool> = result
            .items
            .iter()
            .map(|i| i.end == ShardEnd::OverBudget)
            .collect();
        assert_eq!(ends, [false, true, true, false]);
    }

    #[test]
    fn an_interrupted_shard_reports_every_item() {
        let mut m = shard_of(5, 2);
        let started = m.handle(Input {
            at: 1,
            what: Event::Start,
        });
        let ops: Vec<u64> = started
            .iter()
            .filter_map(|c| match c {
                Command::StartCall { op, .. } => Some(*op),
                _ => None,
            })
            .collect();
        assert_eq!(ops.len(), 2, "the width holds");
        let cancels = m.handle(Input {
            at: 2,
            what: Event::Interrupt,
        });
        assert_eq!(
            cancels
                .iter()
                .filter(|c| matches!(c, Command::Cancel { .. }))
                .count(),
            2
        );
        let mut end = Vec::new();
        for (i, op) in ops.into_iter().enumerate() {
            end = m.handle(Input {
                at: 3 + i as u64,
                what: Event::CallEnded {
                    op,
                    node: format!("each#{i}"),
                    attempt: 1,
                    end: CallEnd::Outcome(Box::new(CallOutcome {
                        output: String::new(),
                        usage: UsageData::default(),
                        model: None,
                        stop: "cancelled".into(),
                        error: Some("Aborted".into()),
                        stderr: String::new(),
                        warnings: Vec::new(),
                        backend: String::new(),
                        elapsed_ms: 0,
                        exit_code: None,
                    })),
                },
            });
        }
        let Some(Command::EndShard(result)) = end.pop() else {
            panic!("the shard ends once its calls have");
        };
        // The first running call's end frees a slot: the three never started end then,
        // aborted, without a call.
        let slots: Vec<u32> = result.items.iter().map(|i| i.slot).collect();
        assert_eq!(slots, [0, 2, 3, 4, 1]);
        assert!(
            result.items[1..4]
                .iter()
                .all(|i| i.end == ShardEnd::Aborted)
        );
        assert!(matches!(
            &result.items[0].end,
            ShardEnd::Called { aborted: true, .. }
        ));
        assert!(m.is_finished());
    }

    #[test]
    fn a_shard_result_round_trips_through_serde() {
        let r = ShardResult {
            items: vec![
                ShardItem {
                    slot: 3,
                    end: ShardEnd::Called {
                        ok: true,
                        output: "x".into(),
                        error: None,
                        attempts: 2,
                        usage: UsageData {
                            input: 5,
                            ..UsageData::default()
                        },
                        timed_out: false,
                        aborted: false,
                        model: Some("m".into()),
                        warnings: vec!["w".into()],
                    },
                },
                ShardItem {
                    slot: 4,
                    end: ShardEnd::OverBudget,
                },
            ],
            lines: vec!["{}".into()],
            tokens: 7,
            cost_micros: 9,
            calls: 3,
            refused: true,
        };
        let text = serde_json::to_string(&r).expect("serialise");
        let back: ShardResult = serde_json::from_str(&text).expect("parse");
        assert_eq!(back, r);
    }
}
