//! `tfc fork RUN …` (SPEC §10.4 "Fork"): a new run from any ended run, re-running only the
//! phases `--from`, `--set` and changed arguments reach; everything else is copied, never
//! paid for again. Same output, progress and exit codes as `tfc run`; `--plan` shows what is
//! copied and what runs before anything starts.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use super::resume::{ChildFlags, PatchFlags, parent_of};
use super::run::{code, go_ahead, launch};
use tfc::run::fork::{Action, Fork, plan};
use tfc::run::resume::{ForkRequest, SetOutput};
use tfc::source::Source;

#[derive(Args, Debug)]
pub struct ForkArgs {
    /// The run: its id, a unique prefix of it, or `last`.
    #[arg(value_name = "RUN")]
    run: String,
    /// Argument overrides: NAME=VALUE (the parent's arguments otherwise).
    #[arg(value_name = "K=V")]
    pairs: Vec<String>,
    /// Argument overrides as a JSON object (K=V pairs override it).
    #[arg(long = "args", value_name = "JSON")]
    args_json: Option<String>,
    /// Re-run this phase and its descendants (repeatable).
    #[arg(long, value_name = "P")]
    from: Vec<String>,
    /// Give phase P this output and re-run only its descendants: P=TEXT, P=@FILE, or
    /// P#i=… for one item of a map (repeatable).
    #[arg(long, value_name = "P=TEXT|P=@FILE")]
    set: Vec<String>,
    /// Print what is copied and what runs (with call bounds) and ask before starting; with
    /// no terminal to ask on, nothing runs without the yes flag.
    #[arg(long)]
    plan: bool,
    /// With --plan: start after printing it, without asking.
    #[arg(long, requires = "plan")]
    yes: bool,
    #[command(flatten)]
    patch: PatchFlags,
    #[command(flatten)]
    child: ChildFlags,
}

pub fn run(a: ForkArgs) -> ExitCode {
    let refuse = |m: String| {
        sayln!("error: {m}");
        ExitCode::from(code::INVALID)
    };
    let req = match request(&a) {
        Ok(r) => r,
        Err(m) => return refuse(m),
    };
    let (parent, status) = match parent_of(&a.run, a.child.quiet) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let fork = match plan(
        &parent,
        &status,
        &req,
        a.patch.patch().as_ref(),
        a.child.caps(),
    ) {
        Ok(f) => f,
        Err(m) => return refuse(m),
    };
    if a.plan {
        say!(
            "{}",
            plan_text(&fork, &parent.run_id, a.child.caps().max_calls)
        );
        if let Err(code) = go_ahead(a.yes) {
            return code;
        }
    }
    let args = a.child.run_args(&parent, &fork.args);
    let Fork { plan, .. } = fork;
    let source = Source::new(
        format!("{} (forked from {})", parent.flow, parent.run_id),
        plan.def.to_pretty_json(),
    );
    launch(
        args,
        source,
        parent.flow.clone(),
        Some(Arc::new(plan.carried)),
    )
}

/// The fork's request from the flags; `@FILE` values read.
fn request(a: &ForkArgs) -> Result<ForkRequest, String> {
    let inv = super::input::invocation(&a.pairs, a.args_json.as_deref())?;
    if let Some(v) = inv.positional {
        return Err(format!(
            "a fork's argument overrides are NAME=VALUE pairs; '{v}' has no name"
        ));
    }
    let mut set = Vec::new();
    for s in &a.set {
        set.push(set_output(s)?);
    }
    Ok(ForkRequest {
        from: a.from.clone(),
        set,
        args: (!inv.json.is_empty()).then(|| tfc::value::Value::Object(inv.json).to_json()),
        pairs: inv.pairs,
    })
}

/// One `--set P=TEXT | P=@FILE | P#i=…`.
fn set_output(s: &str) -> Result<SetOutput, String> {
    let Some((target, value)) = s.split_once('=') else {
        return Err(format!(
            "--set {s}: expected P=TEXT, P=@FILE or P#INDEX=… (the phase id, '=', its output)"
        ));
    };
    let (phase, item) = match target.split_once('#') {
        Some((p, i)) => match i.parse::<usize>() {
            Ok(i) => (p, Some(i)),
            Err(_) => {
                return Err(format!(
                    "--set {target}=…: '{i}' is not an item index (P#0 is a map's first item)"
                ));
            }
        },
        None => (target, None),
    };
    if phase.is_empty() {
        return Err(format!("--set {s}: the phase id before '=' is missing"));
    }
    let text = match value.strip_prefix('@') {
        Some(path) => super::input::read_text(path, &format!("--set {target}'s file"))?,
        None => value.to_owned(),
    };
    Ok(SetOutput {
        phase: phase.to_owned(),
        item,
        text,
    })
}

/// `--plan`: each phase copied, set or run (and why), with §18's bounds for what runs.
fn plan_text(fork: &Fork, parent: &str, max_calls: Option<u64>) -> String {
    use std::fmt::Write as _;
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let flow = tfc::flow::lower_source(
        &fork.plan.def.to_json(),
        &tfc::flow::LowerOptions::default(),
    )
    .flow;
    let inv = tfc::flow::Invocation {
        json: fork.args.clone(),
        ..Default::default()
    };
    let plan_with = |items: Option<u64>| {
        flow.as_ref()
            .map(|f| super::plan::plan_of(f, &inv, items, None, max_calls, &cwd))
    };
    // Each phase's calls, by id (a map over the parent's items planned with their number).
    let by_id =
        |plan: Option<tfc::plan::Plan>| -> std::collections::HashMap<String, tfc::plan::Calls> {
            plan.map(|p| p.phases.into_iter().map(|ph| (ph.id, ph.calls)).collect())
                .unwrap_or_default()
        };
    let bounds = by_id(plan_with(None));
    let calls_of = |id: &String| -> Option<tfc::plan::Calls> {
        match fork.known_items.get(id) {
            Some(&n) => by_id(plan_with(Some(n))).get(id).copied(),
            None => bounds.get(id).copied(),
        }
    };
    let width = fork
        .actions
        .keys()
        .map(String::len)
        .max()
        .unwrap_or(5)
        .max(5);
    let mut out = String::new();
    let _ = writeln!(out, "fork of run {parent}");
    let _ = writeln!(
        out,
        "{:<width$}  {:<28}  calls min/max/worst",
        "phase", "action"
    );
    let (mut copied, mut runs) = (0, 0);
    let mut total = tfc::plan::Calls::exactly(0, 1);
    for (id, action) in &fork.actions {
        let calls = match action {
            Action::Run(_) => {
                runs += 1;
                let c = calls_of(id);
                if let Some(c) = c {
                    total = total.plus(c);
                }
                c.map_or("?".to_owned(), |c| {
                    format!(
                        "{}/{}/{}",
                        tfc::plan::show_count(c.min),
                        tfc::plan::show_count(c.max),
                        tfc::plan::show_count(c.worst)
                    )
                })
            }
            _ => {
                copied += 1;
                "0".to_owned()
            }
        };
        let _ = writeln!(out, "{id:<width$}  {:<28}  {calls}", action.label());
    }
    let _ = writeln!(
        out,
        "{copied} phase(s) copied or set (not paid again), {runs} to run: calls {}/{}/{} (min/max/worst)",
        tfc::plan::show_count(total.min),
        tfc::plan::show_count(total.max),
        tfc::plan::show_count(total.worst)
    );
    out
}
