//! `tfc_fork` (SPEC §10.4 "Fork", §13.2): a new run from any ended run, as `tfc fork`. The
//! fork is planned here first, so a bad request (an unknown phase, a `--set` that breaks its
//! phase's contract, a run that has not ended) is the tool's error and nothing starts; with
//! `plan: true` only the plan is returned (what is copied, what runs, and why).

use serde_json::{Map, Value, json};

use super::call::{Args, Call, ToolError, ToolOutput};
use super::runs::{Runner, caps};
use super::store::find;
use crate::run::fork::{Action, plan};
use crate::run::resume::{Caps, ForkRequest, SetOutput, open};
use crate::run::store::new_run_id;

impl Runner {
    /// `tfc_fork`.
    pub fn tool_fork(&self, mut args: Args, call: &Call) -> Result<ToolOutput, ToolError> {
        let parent = args.str("runId")?;
        let from = args.opt_strings("from")?;
        let set = args.opt_object("set")?.unwrap_or_default();
        let overrides = args.opt_object("args")?;
        let max_usd = args.opt_num("maxUsd", 0.0)?;
        let max_tokens = args.opt_num("maxTokens", 0.0)?;
        let max_calls = args.opt_u64("maxCalls", 1)?;
        let only_plan = args.opt_bool("plan")?.unwrap_or(false);
        let wait = args.opt_bool("wait")?.unwrap_or(false);
        let timeout = args
            .opt_u64("timeoutMs", 0)?
            .unwrap_or(super::runs::DEFAULT_WAIT_MS);
        args.finish(&[
            "runId",
            "from",
            "set",
            "args",
            "maxUsd",
            "maxTokens",
            "maxCalls",
            "plan",
            "wait",
            "timeoutMs",
        ])?;
        let entry = find(&self.root, &parent).map_err(|e| ToolError::arg("runId", e))?;
        let req = ForkRequest {
            from: from.clone(),
            set: set_outputs(&set)?,
            args: overrides
                .as_ref()
                .map(|o| Value::Object(o.clone()).to_string()),
            pairs: Vec::new(),
        };
        let record = open(&entry.dir).map_err(|e| ToolError::arg("runId", e))?;
        let caps_given = Caps {
            max_usd,
            max_tokens,
            max_calls,
        };
        let fork = plan(&record, &entry.status, &req, None, caps_given).map_err(|e| {
            ToolError::new(format!("the fork was refused; nothing was started: {e}"))
        })?;
        if only_plan {
            let phases: Vec<Value> = fork
                .actions
                .iter()
                .map(|(id, a)| {
                    let (action, reason) = match a {
                        Action::Copy => ("copy", None),
                        Action::Set => ("set", None),
                        Action::Run(why) => ("run", Some(why.as_str())),
                    };
                    json!({"phase": id, "action": action, "reason": reason})
                })
                .collect();
            let runs = phases.iter().filter(|p| p["action"] == "run").count();
            let text = format!(
                "fork of run {}: {} phase(s) copied or set, {runs} to run",
                record.run_id,
                phases.len() - runs
            );
            return Ok(ToolOutput::new(
                json!({"runId": record.run_id, "phases": phases}),
                text,
            ));
        }
        let flow_name = entry.record["flow"]
            .as_str()
            .unwrap_or(&entry.flow)
            .to_owned();
        let run_id = new_run_id(&flow_name);
        let mut argv: Vec<String> = vec!["fork".into(), entry.run_id.clone()];
        for p in from {
            argv.extend(["--from".into(), p]);
        }
        for s in &req.set {
            let target = match s.item {
                Some(i) => format!("{}#{i}", s.phase),
                None => s.phase.clone(),
            };
            argv.extend(["--set".into(), format!("{target}={}", s.text)]);
        }
        if let Some(o) = &overrides {
            argv.extend(["--args".into(), Value::Object(o.clone()).to_string()]);
        }
        caps(&mut argv, max_usd, max_tokens);
        if let Some(n) = max_calls {
            argv.extend(["--max-calls".into(), n.to_string()]);
        }
        argv.extend(["--run-id".into(), run_id.clone()]);
        std::fs::create_dir_all(self.launch_dir(&flow_name, &run_id))
            .map_err(|e| ToolError::new(format!("cannot create the launch folder: {e}")))?;
        self.start(&flow_name, &run_id, &argv, call)?;
        self.answer(&run_id, wait, timeout, call)
    }
}

/// `set`: phase id (or `P#i`) → its output (a string as it is, any other value as JSON).
fn set_outputs(set: &Map<String, Value>) -> Result<Vec<SetOutput>, ToolError> {
    set.iter()
        .map(|(target, v)| {
            let (phase, item) = match target.split_once('#') {
                Some((p, i)) => match i.parse::<usize>() {
                    Ok(i) => (p, Some(i)),
                    Err(_) => {
                        return Err(ToolError::arg(
                            "set",
                            format!(
                                "'{target}': '{i}' is not an item index (P#0 is a map's first item)"
                            ),
                        ));
                    }
                },
                None => (target.as_str(), None),
            };
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            Ok(SetOutput {
                phase: phase.to_owned(),
                item,
                text,
            })
        })
        .collect()
}
