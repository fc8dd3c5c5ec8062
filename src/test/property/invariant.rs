//! The invariants every generated run must keep (SPEC §17 "Properties"): it ends (no hang,
//! no panic); every read whose inferred type (§7.5) excludes `missing` and is not `any`
//! resolves once the phase it reads is done, and so does every such condition operand; a
//! completed run's output comes from the final phase unless the flow allows W0109; and the
//! test file's `invariants` hold. Optional properties (`T | missing`) and `any` reads are
//! never violations.
//!
//! The run machine says what did not resolve: a templated field leaves its placeholder intact
//! and records the warning `unresolved refs in <field>: {a}, {b} — left intact …` on the
//! phase; a condition's journal event lists its undefined operands under `unresolved`.

use crate::check::types::{Ty, placeholder_types, type_of_path};
use crate::diag::Code;
use crate::flow::{Flow, PhaseType};
use crate::run::{PhaseStatus, RunRecord, RunStatus};
use crate::syntax::RefPath;
use crate::value::{Map, Value};

use crate::test::{Outcome, TestReport};

/// A read the type system says must resolve.
#[derive(Clone, Debug, PartialEq)]
pub struct Required {
    /// The phase it is in (a top-level phase).
    pub phase: String,
    /// Its field (`task`, `when`, `branches[0].task`, …).
    pub field: String,
    /// Its path, as written.
    pub path: String,
    /// Its inferred type, as `tfc check --types` writes it.
    pub ty: String,
    /// The phase it reads (`steps.<id>…`): it resolves only once that phase is done.
    pub reads: Option<String>,
}

/// The reads of a flow's top-level phases that must resolve.
pub fn required_reads(flow: &Flow) -> Vec<Required> {
    let mut out = Vec::new();
    for t in placeholder_types(flow, None) {
        // Only the flow's own phases: an inline sub-flow's reads run in its own record.
        let Some(index) = flow
            .phases
            .iter()
            .position(|p| p.span.range().contains(&(t.span.start as usize)))
            .filter(|i| flow.phases[*i].id == t.phase)
        else {
            continue;
        };
        let path = RefPath::parse(&t.path);
        let keys: Vec<&str> = path.segs().iter().map(|s| &*s.key).collect();
        let (reads, from) = match keys.first().copied() {
            Some("steps") if keys.get(2) == Some(&"json") => (keys.get(1).copied(), 3),
            Some("steps") => (keys.get(1).copied(), keys.len()),
            // Arguments may be left out, loop locals and `previous` are the machine's own.
            Some("args" | "loop" | "previous" | "reflexion") | None => continue,
            // A map's element.
            Some(_) => (None, 1),
        };
        let root = keys[..from.min(keys.len())].join(".");
        let Some(root_ty) = type_of_path(flow, None, index, &t.field, &root) else {
            continue;
        };
        let Some(ty) = walk(root_ty, &path.segs()[from.min(keys.len())..]) else {
            continue;
        };
        out.push(Required {
            phase: t.phase,
            field: t.field,
            path: t.path,
            ty: ty.to_string(),
            reads: reads.map(str::to_owned),
        });
    }
    out
}

/// The type `segs` reach from `root` when the read must resolve, or `None` when it may be
/// undefined (`missing` on the way: an optional property, a key a type never has) or is
/// `any`. As SPEC §7.5 says, a canonical index into `array<T>` gives `T`: an array whose
/// contract allows it to be empty makes `{….files.0}` a read that must resolve and may not.
fn walk(root: Ty, segs: &[crate::syntax::Seg]) -> Option<Ty> {
    let mut cur = root;
    for seg in segs {
        let members = cur.members();
        if members.iter().any(|m| matches!(m, Ty::Missing)) {
            return None;
        }
        let mut reached = Vec::with_capacity(members.len());
        for m in members {
            let next = match m {
                Ty::Any => return None,
                Ty::Object(o) => match o.props.get(&*seg.key) {
                    Some(p) => p.ty.clone(),
                    None => return None,
                },
                Ty::Array(e) if seg.index.is_some() => e.ty.clone(),
                Ty::Array(_) if &*seg.key == "length" => Ty::Number,
                _ => return None,
            };
            reached.push(next);
        }
        cur = Ty::union(reached);
    }
    let optional = cur.members().iter().any(|m| matches!(m, Ty::Missing));
    (!optional && !cur.is_any()).then_some(cur)
}

/// A broken invariant.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// Which invariant: `ends`, `reads-resolve`, `conditions-defined`, `final-output`,
    /// `invariants`.
    pub invariant: &'static str,
    /// What exactly broke, as a stable key: a shrunk plan must break the same one.
    pub key: String,
    /// The name of the test case that reproduces it (`property: {…} resolves in …`).
    pub title: String,
    /// The invariant and how the run broke it, for people.
    pub message: String,
    /// An `expect` that fails on the reproducing test case, when the invariant can be said
    /// in the `expect` syntax.
    pub expect: Option<Value>,
}

/// What one property run is checked against.
pub struct Invariants<'a> {
    /// The flow.
    pub flow: &'a Flow,
    /// Its reads that must resolve.
    pub required: &'a [Required],
    /// The test file's `invariants`, as written (the case's `expect` was made from them).
    pub file: Option<&'a Value>,
}

/// The first invariant `report` (with its kept `condition` events) breaks.
pub fn check(inv: &Invariants<'_>, report: &TestReport, conditions: &[Value]) -> Option<Violation> {
    let record = match (&report.outcome, &report.record) {
        (Outcome::Error(_), _) | (_, None) => {
            let e = match &report.outcome {
                Outcome::Error(e) => e.clone(),
                _ => "no record".into(),
            };
            let why = if e.starts_with("internal error") {
                "panicked"
            } else {
                "did not end"
            };
            return Some(Violation {
                invariant: "ends",
                key: format!("ends:{why}"),
                title: "property: the run ends".into(),
                message: format!("the run must end without a panic: it {why} ({e})"),
                expect: None,
            });
        }
        (_, Some(r)) => r,
    };
    if let Some(v) = unresolved_read(inv, record) {
        return Some(v);
    }
    if let Some(v) = undefined_operand(inv, record, conditions) {
        return Some(v);
    }
    if let Some(v) = final_output(inv.flow, record) {
        return Some(v);
    }
    if let (Outcome::Failed(failures), Some(written)) = (&report.outcome, inv.file) {
        let what: Vec<String> = failures.iter().map(|f| f.what.clone()).collect();
        let lines: Vec<String> = failures
            .iter()
            .map(|f| format!("{}: expected {}, got {}", f.what, f.expected, f.actual))
            .collect();
        return Some(Violation {
            invariant: "invariants",
            key: format!("invariants:{}", what.join(",")),
            title: format!("property: the invariants hold ({})", what.join(", ")),
            message: format!("the file's invariants must hold: {}", lines.join("; ")),
            expect: Some(written.clone()),
        });
    }
    None
}

/// The paths a phase's `unresolved refs in <field>: …` warning names, by field.
fn unresolved_in(warning: &str) -> Option<(&str, Vec<&str>)> {
    let rest = warning.strip_prefix("unresolved refs in ")?;
    let (field, rest) = rest.split_once(": {")?;
    let (list, _) = rest.split_once("} — left intact")?;
    Some((field, list.split("}, {").collect()))
}

impl Invariants<'_> {
    /// The required read at `path` in `field` of phase `id`, once the phase it reads is done
    /// in `record` (before that, an unresolved read is no violation).
    fn required_at(
        &self,
        record: &RunRecord,
        id: &str,
        field: &str,
        path: &str,
    ) -> Option<&Required> {
        self.required.iter().find(|r| {
            r.phase == id
                && r.field == field
                && r.path == path
                && r.reads.as_deref().is_none_or(|x| done(record, x))
        })
    }
}

fn done(record: &RunRecord, id: &str) -> bool {
    record
        .phases
        .get(id)
        .is_some_and(|p| p.status == PhaseStatus::Done)
}

fn unresolved_read(inv: &Invariants<'_>, record: &RunRecord) -> Option<Violation> {
    for (id, p) in &record.phases {
        for w in &p.warnings {
            let Some((field, paths)) = unresolved_in(w) else {
                continue;
            };
            for path in paths {
                let Some(r) = inv.required_at(record, id, field, path) else {
                    continue;
                };
                return Some(Violation {
                    invariant: "reads-resolve",
                    key: format!("read:{id}:{field}:{path}"),
                    title: format!("property: {{{path}}} resolves in the {field} of '{id}'"),
                    message: format!(
                        "every read whose type excludes `missing` must resolve: {{{path}}} in the {field} of phase '{id}' did not (its type is {}){}",
                        r.ty,
                        index_hint(path)
                    ),
                    expect: prompt_expect(inv.flow, id, field, path),
                });
            }
        }
    }
    None
}

fn undefined_operand(
    inv: &Invariants<'_>,
    record: &RunRecord,
    conditions: &[Value],
) -> Option<Violation> {
    for c in conditions.iter().filter_map(Value::as_object) {
        let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
        let (id, field) = (s("phase"), s("field"));
        let paths = c.get("unresolved").and_then(Value::as_array);
        for path in paths.into_iter().flatten().filter_map(Value::as_str) {
            let Some(r) = inv.required_at(record, id, field, path) else {
                continue;
            };
            return Some(Violation {
                invariant: "conditions-defined",
                key: format!("operand:{id}:{field}:{path}"),
                title: format!("property: {{{path}}} is defined in the {field} of '{id}'"),
                message: format!(
                    "no condition operand whose type excludes `missing` may be undefined: {{{path}}} in the {field} of phase '{id}' was (its type is {}){}",
                    r.ty,
                    index_hint(path)
                ),
                expect: None,
            });
        }
    }
    None
}

/// For an index read, the usual cause and fix.
fn index_hint(path: &str) -> &'static str {
    if path.split('.').any(|s| s.parse::<u32>().is_ok()) {
        "; the array may be empty: give its contract `minItems: 1`, or guard the read"
    } else {
        ""
    }
}

/// `{"prompts": {"<phase>": {"not": {"contains": "{path}"}}}}` when the read is in a field
/// that becomes a prompt: an unresolved placeholder is left in the prompt as written.
fn prompt_expect(flow: &Flow, id: &str, field: &str, path: &str) -> Option<Value> {
    let p = flow.phase(id)?;
    let prompt = field == "task" || (field.starts_with("branches[") && field.ends_with("].task"));
    if !prompt
        || matches!(
            p.ty(),
            PhaseType::Script | PhaseType::Approval | PhaseType::Flow
        )
    {
        return None;
    }
    let one = |k: &str, v: Value| {
        let mut m = Map::default();
        m.insert(k.into(), v);
        Value::Object(m)
    };
    let matcher = one("not", one("contains", Value::from(format!("{{{path}}}"))));
    Some(one("prompts", one(id, matcher)))
}

fn final_output(flow: &Flow, record: &RunRecord) -> Option<Violation> {
    if record.status != RunStatus::Completed || flow.lint_allow.contains(&Code::FinalGuarded) {
        return None;
    }
    let last = &flow.phases[flow.final_phase()?].id;
    if record.output_phase.as_deref() == Some(last.as_str()) {
        return None;
    }
    let came = match &record.output_phase {
        Some(p) => format!("phase '{p}'"),
        None => "no phase".into(),
    };
    let mut m = Map::default();
    m.insert("outputPhase".into(), Value::from(last.as_str()));
    Some(Violation {
        invariant: "final-output",
        key: "final-output".into(),
        title: format!("property: the output comes from the final phase '{last}'"),
        message: format!(
            "a completed run's output must come from the final phase '{last}': it came from {came} (W0109; add it to `lint.allow` if skipping the final phase is meant)"
        ),
        expect: Some(Value::Object(m)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machines_warning_reads_back() {
        let w = "unresolved refs in branches[0].task: {steps.t.json.files.0}, {item.x} — left intact (check dependsOn / placeholder spelling)";
        assert_eq!(
            unresolved_in(w),
            Some(("branches[0].task", vec!["steps.t.json.files.0", "item.x"]))
        );
        assert_eq!(unresolved_in("prompt is large"), None);
    }
}
