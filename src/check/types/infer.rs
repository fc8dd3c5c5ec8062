//! Inference over the DAG: the type of every placeholder's root (SPEC §7.5 "Sources") and of
//! the path dug from it.
//!
//! A phase's `{steps.X.json}` type depends only on X itself (its contract, its kind, and for a
//! sub-flow the child's final phase), and a map element's type on the map's `over`, which
//! reads phases upstream of it. Types are computed on demand and memoised, so each contract
//! is converted once per phase, and a flow whose placeholders have no path beyond their root
//! (most of them: `{steps.X.output}`, `{args.topic}`) costs nothing here.

use std::collections::HashMap;
use std::sync::Arc;

use super::lattice::{Obj, Prop, Step, Stuck, Ty};
use super::schema;
use crate::check::loader::FlowLoader;
use crate::eval::coerce::WRAPPER_KEYS;
use crate::flow::{Def, Flow, Join, LowerOptions, Phase, PhaseKind, PhaseType, lower_source};
use crate::source::Span;
use crate::syntax::{RefPath, Target};

/// A type and the declaration that fixed it (a contract's key, an ArgSpec, …).
#[derive(Clone, Debug, PartialEq)]
pub struct Typed {
    /// The type.
    pub ty: Ty,
    /// Where it was declared, when a declaration fixed it.
    pub decl: Option<Span>,
}

impl Typed {
    fn any() -> Typed {
        Typed {
            ty: Ty::Any,
            decl: None,
        }
    }
}

/// Where a placeholder's value comes from, and its type there.
#[derive(Clone, Debug)]
pub struct Root {
    /// The root value's type.
    pub typed: Typed,
    /// How many leading segments name the root (`steps.X.json` = 3, `args.X` = 2, `item` = 1).
    pub from: usize,
    /// Who promised the shape, for messages: `'triage'`, `argument 'mode'`, `map 'audit'`.
    pub owner: String,
    /// The declaration of the placeholder's root: the phase, the argument, the map.
    pub root_decl: Option<Span>,
    /// Did a contract fix the type (undeclared properties are then W0106)?
    pub contract: bool,
    /// For a map's element (`item` / the `as` name): who fixed its type — the owner of the
    /// root `over` reads, e.g. `'scan'` — so messages name the contract, not the map.
    pub item_from: Option<String>,
}

/// The result of digging a path from its root.
#[derive(Clone, Debug)]
pub struct Dug {
    /// The type reached (`any` after an undeclared property).
    pub typed: Typed,
    /// The first segment that never resolves, its index, and why.
    pub stuck: Option<(usize, Stuck, Typed)>,
    /// The first segment an object type does not declare (W0106), its index, and the
    /// object's type and declaration.
    pub undeclared: Option<(usize, Typed)>,
}

/// The types of one flow's phases, computed on demand.
pub struct Env<'f> {
    flow: &'f Flow,
    loader: Option<&'f dyn FlowLoader>,
    /// Saved flows being typed, outermost first (a recursive `use` is `any`).
    chain: Vec<String>,
    json: HashMap<usize, Typed>,
    items: HashMap<usize, Typed>,
}

impl<'f> Env<'f> {
    /// Types of `flow`'s phases; `loader` resolves `use` targets.
    pub fn new(flow: &'f Flow, loader: Option<&'f dyn FlowLoader>) -> Env<'f> {
        Env {
            flow,
            loader,
            chain: vec![flow.name.clone()],
            json: HashMap::new(),
            items: HashMap::new(),
        }
    }

    /// The flow.
    pub fn flow(&self) -> &'f Flow {
        self.flow
    }

    /// The root of `path` used in `field` of phase `phase`; `None` for a placeholder that is
    /// not typed (unbound locals, shapes that never resolve: other checks report them).
    pub fn root(&mut self, phase: usize, field: &str, path: &RefPath) -> Option<Root> {
        let flow = self.flow;
        let p = flow.phases.get(phase)?;
        let plain = |ty: Ty, from: usize, owner: String, root_decl: Option<Span>| Root {
            typed: Typed { ty, decl: None },
            from,
            owner,
            root_decl,
            contract: false,
            item_from: None,
        };
        match path.target {
            Target::StepOutput => {
                let x = flow.index_of(path.step_id()?)?;
                Some(plain(
                    Ty::String,
                    3,
                    format!("'{}'", flow.phases[x].id),
                    Some(flow.phases[x].id_span),
                ))
            }
            Target::StepJson => {
                let x = flow.index_of(path.step_id()?)?;
                let typed = self.json_type(x);
                Some(Root {
                    contract: typed.decl.is_some(),
                    typed,
                    from: 3,
                    owner: format!("'{}'", flow.phases[x].id),
                    root_decl: Some(flow.phases[x].id_span),
                    item_from: None,
                })
            }
            Target::Previous => Some(plain(Ty::String, path.segs().len(), String::new(), None)),
            Target::Reflexion => Some(plain(Ty::String, 1, String::new(), None)),
            Target::Args => {
                let Some(name) = path.keys().nth(1) else {
                    return Some(plain(args_object(flow), 1, "args".into(), flow.args_key));
                };
                let spec = flow.args.get(name);
                // An inline def's arguments are its phase's `with` values, converted to the
                // def's ArgSpecs at run time like an invocation's (SPEC §7.5).
                let ty = spec.map_or(Ty::Any, schema::arg);
                Some(Root {
                    typed: Typed {
                        ty,
                        decl: spec.map(|s| s.name_span),
                    },
                    from: 2,
                    owner: format!("argument '{name}'"),
                    root_decl: spec.map(|s| s.name_span),
                    contract: false,
                    item_from: None,
                })
            }
            Target::Local => {
                let head = path.head();
                if p.ty() == PhaseType::Map && head == p.local_name() && field == "task" {
                    let typed = self.item_type(phase);
                    let decl = match &p.kind {
                        PhaseKind::Map(m) => m
                            .as_name
                            .as_ref()
                            .map(|a| a.key)
                            .or_else(|| m.over.as_ref().map(|o| o.span())),
                        _ => None,
                    };
                    return Some(Root {
                        contract: typed.decl.is_some(),
                        typed,
                        from: 1,
                        owner: format!("the item of map '{}'", p.id),
                        root_decl: decl,
                        item_from: self.over_owner(phase),
                    });
                }
                if head == "loop"
                    && p.ty() == PhaseType::Loop
                    && (field == "task" || field == "until")
                {
                    return Some(plain(
                        loop_object(),
                        1,
                        format!("loop '{}'", p.id),
                        Some(p.id_span),
                    ));
                }
                None
            }
            Target::Never => None,
        }
    }

    /// The type of `path` in `field` of phase `phase`: its root dug along the path.
    pub fn dig(&mut self, phase: usize, field: &str, path: &RefPath) -> Option<(Root, Dug)> {
        let root = self.root(phase, field, path)?;
        let dug = dig_from(&root, path);
        Some((root, dug))
    }

    /// `{steps.X.json}`: a contract-bearing phase's contract, a map's array of item outputs, a
    /// sub-flow's final phase's output; `any` otherwise (a parallel's JSON is left `any`: SPEC
    /// §7.5 types only the map's).
    pub fn json_type(&mut self, x: usize) -> Typed {
        if let Some(t) = self.json.get(&x) {
            return t.clone();
        }
        let p = &self.flow.phases[x];
        let t = match &p.kind {
            PhaseKind::Map(_) => match contract_of(p) {
                Some(item) => Typed {
                    ty: Ty::array(item.ty, item.decl),
                    decl: item.decl,
                },
                None => Typed {
                    ty: Ty::array(Ty::Any, None),
                    decl: None,
                },
            },
            _ => self.output_json_type(x),
        };
        self.json.insert(x, t.clone());
        t
    }

    /// The type of `safeParse(output)` of phase `x`: what a sub-flow whose final phase is `x`
    /// hands to its parent. Only a contract (checked on every successful call) or a nested
    /// sub-flow tell it; a map's merged output is text.
    fn output_json_type(&mut self, x: usize) -> Typed {
        let p = &self.flow.phases[x];
        match &p.kind {
            PhaseKind::Flow(k) => {
                if let Some(def) = &k.def {
                    return match &def.value {
                        Def::Inline(child) => self.child_final(child),
                        Def::Template(_) => Typed::any(),
                    };
                }
                let (Some(name), Some(loader)) = (&k.use_flow, self.loader) else {
                    return Typed::any();
                };
                if self.chain.contains(&name.value) {
                    return Typed::any();
                }
                let Ok((_, text)) = loader.load(&name.value) else {
                    return Typed::any();
                };
                let lowered = lower_source(
                    &text,
                    &LowerOptions {
                        default_name: Some(name.value.clone()),
                    },
                );
                let Some(child) = lowered.flow else {
                    return Typed::any();
                };
                // The child's declarations lie in another file: no span of this one.
                let mut t = self.child_final_in(&child, Some(name.value.clone()));
                t.decl = None;
                t.ty = strip_decls(t.ty);
                t
            }
            PhaseKind::Agent(_) | PhaseKind::Reduce(_) | PhaseKind::Loop(_) => {
                contract_of(p).unwrap_or_else(Typed::any)
            }
            // The merged text of a map's items: safeParse finds the first item's JSON, so an
            // item contract types it. A parallel's branches have no contract: `any`.
            PhaseKind::Map(_) => contract_of(p).unwrap_or_else(Typed::any),
            // A scoring gate's JSON is its score report, whatever `expect` says.
            PhaseKind::Gate(g) if g.score.is_none() => contract_of(p).unwrap_or_else(Typed::any),
            _ => Typed::any(),
        }
    }

    fn child_final(&mut self, child: &Flow) -> Typed {
        self.child_final_in(child, None)
    }

    /// The final phase's output type in a child flow. A child's final output falls back to
    /// another phase's when the final phase is skipped or fails (SPEC §8.9), so a final phase
    /// that may be skipped (a `when` on it or above it) or is `optional` gives `any`.
    fn child_final_in(&mut self, child: &Flow, name: Option<String>) -> Typed {
        let Some(f) = child.final_phase() else {
            return Typed::any();
        };
        if child.phases[f].optional || skippable(child, f) {
            return Typed::any();
        }
        let mut env = Env {
            flow: child,
            loader: self.loader,
            chain: self.chain.clone(),
            json: HashMap::new(),
            items: HashMap::new(),
        };
        if let Some(n) = name {
            env.chain.push(n);
        }
        env.output_json_type(f)
    }

    /// The element type a map phase binds to its local: `over`'s type through coerceArray
    /// (SPEC §5.2) when `over` is one whole placeholder; `any` otherwise.
    pub fn item_type(&mut self, m: usize) -> Typed {
        if let Some(t) = self.items.get(&m) {
            return t.clone();
        }
        let t = match self.over_type(m) {
            Some(over) => element_of(&over.ty).unwrap_or_else(Typed::any),
            None => Typed::any(),
        };
        self.items.insert(m, t.clone());
        t
    }

    /// The type of a map's `over` when it is exactly one placeholder (its raw value is used);
    /// `None` otherwise (text that goes through safeParse can be anything).
    pub fn over_type(&mut self, m: usize) -> Option<Typed> {
        let path = self.over_path(m)?;
        let (_, dug) = self.dig(m, "over", path)?;
        dug.stuck.is_none().then_some(dug.typed)
    }

    /// Who fixed the type of a map's `over` (the owner of the root it reads, e.g. `'scan'`).
    fn over_owner(&mut self, m: usize) -> Option<String> {
        let path = self.over_path(m)?;
        self.root(m, "over", path)
            .map(|r| r.owner)
            .filter(|o| !o.is_empty())
    }

    /// A map's `over` when it is exactly one placeholder.
    fn over_path(&self, m: usize) -> Option<&'f RefPath> {
        let flow = self.flow;
        let PhaseKind::Map(k) = &flow.phases[m].kind else {
            return None;
        };
        let over = k.over.as_ref()?;
        let t = &over.template;
        let [only] = t.refs() else { return None };
        if only.span.start != 0 || only.span.end as usize != t.source().len() {
            return None;
        }
        Some(&t.paths()[only.path as usize])
    }
}

/// Dig `path` from its root.
pub fn dig_from(root: &Root, path: &RefPath) -> Dug {
    let mut cur = root.typed.clone();
    let mut undeclared = None;
    let segs = path.segs();
    for (i, seg) in segs.iter().enumerate().skip(root.from) {
        if cur.ty.is_any() {
            break;
        }
        match cur.ty.dig(&seg.key, seg.index) {
            Step::To(ty, decl) => {
                cur = Typed {
                    ty,
                    decl: decl.or(cur.decl),
                }
            }
            Step::Undeclared => {
                if root.contract && undeclared.is_none() {
                    undeclared = Some((i, cur.clone()));
                }
                cur = Typed::any();
            }
            Step::Stuck(why) => {
                return Dug {
                    typed: Typed {
                        ty: Ty::Missing,
                        decl: None,
                    },
                    stuck: Some((i, why, cur)),
                    undeclared,
                };
            }
        }
    }
    Dug {
        typed: cur,
        stuck: None,
        undeclared,
    }
}

/// A phase's contract as a type, with the `expect` key as its declaration.
fn contract_of(p: &Phase) -> Option<Typed> {
    let c = p.expect.as_deref()?;
    Some(Typed {
        ty: schema::contract(c),
        decl: Some(p.written.get("expect").copied().unwrap_or(c.span)),
    })
}

/// The element type after coerceArray: an array's elements; for an object, the first of the
/// wrapper keys its type declares as an array (one that may be missing lets the next ones
/// count too); `None` when no member of the type can give an array.
pub fn element_of(t: &Ty) -> Option<Typed> {
    let mut found: Vec<Ty> = Vec::new();
    let mut decl = None;
    for m in t.members() {
        match m {
            Ty::Array(e) => {
                decl = decl.or(e.decl);
                found.push(e.ty.clone());
            }
            Ty::Object(obj) => {
                for key in WRAPPER_KEYS {
                    let Some(p) = obj.props.get(key) else {
                        continue;
                    };
                    let mut arrays = p.ty.members().iter().filter_map(|t| match t {
                        Ty::Array(e) => Some(e),
                        _ => None,
                    });
                    let Some(e) = arrays.next() else { continue };
                    decl = decl.or(e.decl).or(p.decl);
                    found.push(e.ty.clone());
                    if !p.ty.members().contains(&Ty::Missing) {
                        break;
                    }
                }
                if obj.props.is_empty() && !obj.closed {
                    return Some(Typed::any());
                }
            }
            Ty::Any | Ty::String => return Some(Typed::any()),
            // A string literal that is JSON text of an array could be one.
            Ty::Lits(values) => {
                let coerces = values.iter().any(|v| match v {
                    crate::value::Value::String(s) => crate::eval::safe_parse::safe_parse(s)
                        .value
                        .is_some_and(|p| crate::eval::coerce::coerce_array(&p).is_some()),
                    _ => false,
                });
                if coerces {
                    return Some(Typed::any());
                }
            }
            _ => {}
        }
    }
    if found.is_empty() {
        return None;
    }
    Some(Typed {
        ty: Ty::union(found),
        decl,
    })
}

/// Can phase `at` be skipped (SPEC §8.2)? When its own `when` can be false, when it joins
/// `all` and some dependency can be skipped, or joins `any` and every dependency can. (A
/// dependency that fails fails the child run, so only skips matter.) A cycle counts as
/// skippable: nothing is promised about a flow that does not run.
fn skippable(flow: &Flow, at: usize) -> bool {
    let n = flow.phases.len();
    let mut memo: Vec<Option<bool>> = vec![None; n];
    let mut stack = vec![(at, false)];
    while let Some((v, expanded)) = stack.pop() {
        if memo[v].is_some() {
            continue;
        }
        let deps = flow.phases[v]
            .deps
            .iter()
            .map(|d| d.index())
            .filter(|&d| d < n);
        if !expanded {
            stack.push((v, true));
            stack.extend(deps.filter(|&d| memo[d].is_none()).map(|d| (d, false)));
            continue;
        }
        let p = &flow.phases[v];
        let dep_skips = |d: usize| memo[d].unwrap_or(true);
        let mut deps = deps.peekable();
        let skips = p
            .when
            .as_ref()
            .is_some_and(|w| crate::check::lints::is_guard(w))
            || (deps.peek().is_some()
                && if p.join == Join::Any {
                    deps.all(dep_skips)
                } else {
                    deps.any(dep_skips)
                });
        memo[v] = Some(skips);
    }
    memo[at].unwrap_or(true)
}

/// `{args}`: an object of the declared arguments.
fn args_object(flow: &Flow) -> Ty {
    let mut obj = Obj::default();
    for (name, spec) in &flow.args {
        obj.props.insert(
            name.as_str().into(),
            Prop {
                ty: schema::arg(spec),
                decl: Some(spec.name_span),
            },
        );
    }
    if obj.props.is_empty() {
        return Ty::Any;
    }
    Ty::Object(Arc::new(obj))
}

/// `{loop}`: `{iteration, lastOutput, maxIterations}` (SPEC §3.9).
fn loop_object() -> Ty {
    let mut obj = Obj::default();
    for (k, t) in [
        ("iteration", Ty::Number),
        ("lastOutput", Ty::String),
        ("maxIterations", Ty::Number),
    ] {
        obj.props.insert(k.into(), Prop { ty: t, decl: None });
    }
    Ty::Object(Arc::new(obj))
}

/// A type from another file keeps its shape but none of its spans.
fn strip_decls(t: Ty) -> Ty {
    match t {
        Ty::Array(e) => Ty::array(strip_decls(e.ty.clone()), None),
        Ty::Object(obj) => {
            let mut out = Obj {
                closed: obj.closed,
                ..Obj::default()
            };
            for (k, p) in &obj.props {
                out.props.insert(
                    k.clone(),
                    Prop {
                        ty: strip_decls(p.ty.clone()),
                        decl: None,
                    },
                );
            }
            Ty::Object(Arc::new(out))
        }
        Ty::Union(ms) => Ty::union(ms.iter().cloned().map(strip_decls)),
        other => other,
    }
}
