//! The condition machine: resolve the program's distinct placeholders up front (recording the
//! reads a full left-to-right evaluation records; see [`crate::compile::condition`]), then run
//! the ops on a small stack.

use std::borrow::Cow;

use super::compare::{Item, compare};
use crate::compile::condition::{Condition, Op, Program};
use crate::eval::scope::{Scope, dig, read_phases_of, resolve};
use crate::syntax::RefPath;
use crate::value::Value;

impl Condition {
    /// Evaluate against `scope`: the value, and what it read.
    pub fn eval<S: Scope + ?Sized>(&self, scope: &S) -> Evaluated {
        run(self.program(), scope)
    }

    /// Evaluate against `scope`: the value, and what it read as indices into the ref table
    /// (nothing is allocated for up to 64 distinct placeholders); [`Condition::path_texts`]
    /// and [`Condition::read_phases`] turn the reads into text when needed.
    pub fn decide<S: Scope + ?Sized>(&self, scope: &S) -> Decision {
        decide(self.program(), scope)
    }

    /// The paths of `reads`, as written, distinct, in first-resolution order.
    pub fn path_texts(&self, reads: &ReadSet) -> Vec<String> {
        path_texts(self.program(), reads)
    }

    /// The phase ids `reads` read, distinct, in first-read order.
    pub fn read_phases<S: Scope + ?Sized>(&self, scope: &S, reads: &ReadSet) -> Vec<String> {
        read_phases(self.program(), scope, reads)
    }

    /// Evaluate against `scope`, the value only (no read lists are built).
    pub fn holds<S: Scope + ?Sized>(&self, scope: &S) -> bool {
        run_value(self.program(), scope)
    }
}

/// The result of evaluating a condition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evaluated {
    /// The condition's value.
    pub value: bool,
    /// Resolved placeholder paths, distinct, in first-resolution order (every operand counts,
    /// whether or not `&&`/`||` needed it).
    pub reads: Vec<String>,
    /// Phase ids read through `steps.ID…` and `previous.output`, distinct, first-read order.
    pub read_phases: Vec<String>,
}

/// How many placeholders / stack slots live on the native stack before spilling to the heap.
const INLINE_REFS: usize = 8;
pub(super) const INLINE_STACK: usize = 16;

/// Which entries of a program's ref table resolved: one bit per entry, so recording the reads
/// of an evaluation allocates nothing for up to 64 distinct placeholders. The paths are only
/// turned into text when asked for ([`Condition::path_texts`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadSet {
    /// Entries 0–63.
    low: u64,
    /// Entries from 64 on, 64 per word (empty, and unallocated, for most conditions).
    high: Vec<u64>,
}

impl ReadSet {
    #[inline]
    fn insert(&mut self, index: usize) {
        if index < 64 {
            self.low |= 1 << index;
        } else {
            let word = index / 64 - 1;
            if self.high.len() <= word {
                self.high.resize(word + 1, 0);
            }
            self.high[word] |= 1 << (index % 64);
        }
    }

    /// Did entry `index` resolve?
    pub fn contains(&self, index: usize) -> bool {
        if index < 64 {
            self.low & (1 << index) != 0
        } else {
            self.high
                .get(index / 64 - 1)
                .is_some_and(|w| w & (1 << (index % 64)) != 0)
        }
    }

    /// How many entries resolved.
    pub fn len(&self) -> usize {
        let high: u32 = self.high.iter().map(|w| w.count_ones()).sum();
        (self.low.count_ones() + high) as usize
    }

    /// Did nothing resolve?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The resolved entries' indices, ascending (the ref table's first-appearance order).
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        std::iter::once(self.low)
            .chain(self.high.iter().copied())
            .enumerate()
            .flat_map(|(w, mut bits)| {
                std::iter::from_fn(move || {
                    (bits != 0).then(|| {
                        let bit = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        w * 64 + bit
                    })
                })
            })
    }
}

/// A condition's value and which placeholders it read, as indices into the program's ref table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// The condition's value.
    pub value: bool,
    /// The ref-table entries that resolved.
    pub reads: ReadSet,
}

/// Evaluate `program` against `scope`, with its reads as ref-table indices (no text built).
fn decide<S: Scope + ?Sized>(program: &Program, scope: &S) -> Decision {
    with_resolved(program, scope, |slots| {
        let mut reads = ReadSet::default();
        for (i, slot) in slots.iter().enumerate() {
            if slot.is_some() {
                reads.insert(i);
            }
        }
        Decision {
            value: execute(program, slots),
            reads,
        }
    })
}

/// The text of each read path, in order.
fn path_texts(program: &Program, reads: &ReadSet) -> Vec<String> {
    let mut out = Vec::with_capacity(reads.len());
    for i in reads.iter() {
        if let Some(path) = program.refs.get(i) {
            out.push(String::from(&*path.text));
        }
    }
    out
}

/// The phase ids the reads read, distinct, in first-read order.
fn read_phases<S: Scope + ?Sized>(program: &Program, scope: &S, reads: &ReadSet) -> Vec<String> {
    let mut out = Vec::new();
    for i in reads.iter() {
        if let Some(path) = program.refs.get(i) {
            add_read_phases(scope, path, &mut out);
        }
    }
    out
}

/// Evaluate `program` against `scope`, with its reads.
pub(super) fn run<S: Scope + ?Sized>(program: &Program, scope: &S) -> Evaluated {
    let Decision { value, reads } = decide(program, scope);
    Evaluated {
        value,
        reads: path_texts(program, &reads),
        read_phases: read_phases(program, scope, &reads),
    }
}

/// Evaluate `program` against `scope`, the value only.
fn run_value<S: Scope + ?Sized>(program: &Program, scope: &S) -> bool {
    with_resolved(program, scope, |slots| execute(program, slots))
}

/// Add the phase ids a resolved path read, as `Rendered::read_phases` records them: the step
/// of a `steps.ID…` path, the phases behind `previous.output`.
pub(super) fn add_read_phases<S: Scope + ?Sized>(scope: &S, path: &RefPath, out: &mut Vec<String>) {
    let add = |phase: &str, out: &mut Vec<String>| {
        if !out.iter().any(|p| p == phase) {
            out.push(phase.to_owned());
        }
    };
    match path.step_id() {
        // A `steps.ID…` path reads its step: no list to build.
        Some(id) => add(id, out),
        None => {
            for phase in read_phases_of(scope, path) {
                add(phase, out);
            }
        }
    }
}

type Slot<'s> = Option<Cow<'s, Value>>;

/// Resolve every entry of the ref table, in order, into slots (on the stack when few).
fn with_resolved<'s, S: Scope + ?Sized, R>(
    program: &Program,
    scope: &'s S,
    f: impl FnOnce(&[Slot<'s>]) -> R,
) -> R {
    let refs = &program.refs;
    let mut resolver = Resolver { scope, step: None };
    if refs.len() <= INLINE_REFS {
        let mut slots: [Slot<'s>; INLINE_REFS] = Default::default();
        for (slot, path) in slots.iter_mut().zip(refs) {
            *slot = resolver.resolve(path);
        }
        f(&slots[..refs.len()])
    } else {
        let slots: Vec<Slot<'s>> = refs.iter().map(|path| resolver.resolve(path)).collect();
        f(&slots)
    }
}

/// [`resolve`], remembering the last step whose JSON it looked up: a condition usually reads
/// several fields of one step in a row, and each lookup hashes the step id.
struct Resolver<'p, 's, S: ?Sized> {
    scope: &'s S,
    /// The step id of the last `steps.ID.json…` path and that step's JSON.
    step: Option<(&'p str, Option<&'s Value>)>,
}

impl<'p, 's, S: Scope + ?Sized> Resolver<'p, 's, S> {
    fn resolve(&mut self, path: &'p RefPath) -> Slot<'s> {
        let Some((id, keys)) = path.step_json_keys() else {
            return resolve(self.scope, path);
        };
        let json = match self.step {
            Some((last, json)) if last == id => json,
            _ => {
                let json = self.scope.step_json_of(path, id);
                self.step = Some((id, json));
                json
            }
        };
        dig(json?, keys)
    }
}

/// The operand stack: a fixed array, spilling to a `Vec` for unusually deep programs.
struct Stack<'a> {
    inline: [Item<'a>; INLINE_STACK],
    len: usize,
    spill: Vec<Item<'a>>,
}

impl<'a> Stack<'a> {
    fn new() -> Self {
        Stack {
            inline: [Item::Undefined; INLINE_STACK],
            len: 0,
            spill: Vec::new(),
        }
    }

    fn push(&mut self, item: Item<'a>) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = item,
            None => self.spill.push(item),
        }
        self.len += 1;
    }

    /// Pop; an (impossible) underflow reads as undefined rather than panicking.
    fn pop(&mut self) -> Item<'a> {
        if self.len == 0 {
            return Item::Undefined;
        }
        self.len -= 1;
        match self.inline.get(self.len) {
            Some(item) => *item,
            None => self.spill.pop().unwrap_or_default(),
        }
    }
}

/// The machine loop. `slots[r]` is the resolved value of `program.refs[r]`.
fn execute(program: &Program, slots: &[Slot<'_>]) -> bool {
    let mut stack = Stack::new();
    let mut pc = 0;
    while let Some(&op) = program.ops.get(pc) {
        pc += 1;
        match op {
            Op::Const(k) => stack.push(
                program
                    .consts
                    .get(k as usize)
                    .map_or(Item::Undefined, Item::Value),
            ),
            Op::Ref(r) => stack.push(match slots.get(r as usize) {
                Some(Some(value)) => Item::Value(value),
                _ => Item::Undefined,
            }),
            Op::Compare(op) => {
                let b = stack.pop();
                let a = stack.pop();
                stack.push(Item::Bool(compare(op, a, b)));
            }
            Op::Not => {
                let v = stack.pop();
                stack.push(Item::Bool(!v.truthy()));
            }
            Op::Truthy => {
                let v = stack.pop();
                stack.push(Item::Bool(v.truthy()));
            }
            Op::JumpIfFalse(target) => {
                if !stack.pop().truthy() {
                    stack.push(Item::Bool(false));
                    pc = target as usize;
                }
            }
            Op::JumpIfTrue(target) => {
                if stack.pop().truthy() {
                    stack.push(Item::Bool(true));
                    pc = target as usize;
                }
            }
        }
    }
    stack.pop().truthy()
}
