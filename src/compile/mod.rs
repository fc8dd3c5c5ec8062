//! Lowering parsed languages to flat programs: a `Vec` of ops with a parallel span table.

pub mod condition;
