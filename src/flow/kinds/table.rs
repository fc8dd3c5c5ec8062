//! The field tables: each kind's own fields (from its file), the whole phase table, and the
//! closed field set of every object kind. They drive unknown-field detection, did-you-mean,
//! "has no effect on this type" and `tfc schema`.

use std::sync::OnceLock;

use super::{
    agent, approval, expand, flow, gate, loop_kind, map, parallel, race, reduce, script, tournament,
};
use crate::flow::enums::PhaseType;
use crate::flow::fields::{FieldDef, ObjectKind, PHASE_COMMON, object_fields};
use crate::flow::ir::Phase;

/// The fields of type `ty` besides the common ones.
pub fn fields_of_type(ty: PhaseType) -> &'static [FieldDef] {
    match ty {
        PhaseType::Agent => agent::FIELDS,
        PhaseType::Parallel => parallel::FIELDS,
        PhaseType::Map => map::FIELDS,
        PhaseType::Gate => gate::FIELDS,
        PhaseType::Reduce => reduce::FIELDS,
        PhaseType::Approval => approval::FIELDS,
        PhaseType::Flow => flow::FIELDS,
        PhaseType::Loop => loop_kind::FIELDS,
        PhaseType::Tournament => tournament::FIELDS,
        PhaseType::Script => script::FIELDS,
        PhaseType::Race => race::FIELDS,
        PhaseType::Expand => expand::FIELDS,
    }
}

/// Is `key` a field of type `ty` (besides the common ones)?
pub(crate) fn is_field_of(ty: PhaseType, key: &str) -> bool {
    fields_of_type(ty).iter().any(|f| f.name == key)
}

/// Is `key` a field of some kind (not a common field)?
pub(crate) fn is_kind_field(key: &str) -> bool {
    PhaseType::ALL.iter().any(|t| is_field_of(*t, key))
}

/// The whole phase table: the common fields, then each kind's own in [`PhaseType::ALL`]
/// order, a field shared by several kinds listed once.
fn phase_table() -> &'static [FieldDef] {
    static TABLE: OnceLock<Vec<FieldDef>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut out = PHASE_COMMON.to_vec();
        for ty in PhaseType::ALL {
            for field in fields_of_type(*ty) {
                if !out.iter().any(|f| f.name == field.name) {
                    out.push(*field);
                }
            }
        }
        out
    })
}

/// The closed field set of an object kind.
pub fn fields_of(kind: ObjectKind) -> &'static [FieldDef] {
    match kind {
        ObjectKind::Phase => phase_table(),
        other => object_fields(other),
    }
}

/// The interned name of a known field (so phases can record `&'static str` keys).
#[inline]
pub fn field_name(kind: ObjectKind, name: &str) -> Option<&'static str> {
    if kind == ObjectKind::Phase {
        // The fields nearly every phase is written with, named without a search.
        let common = match name {
            "id" => Some("id"),
            "agent" => Some("agent"),
            "task" => Some("task"),
            "dependsOn" => Some("dependsOn"),
            _ => None,
        };
        if common.is_some() {
            return common;
        }
    }
    fields_of(kind)
        .iter()
        .find(|f| f.name == name)
        .map(|f| f.name)
}

impl Phase {
    /// Does this phase's type read the templated field `field` (a name from [`Phase::texts`],
    /// `when`, `until` or `eval`)? A field its type ignores (W0302/W0308) never runs, so its
    /// placeholders are not checked either.
    pub fn reads_field(&self, field: &str) -> bool {
        // Nearly every text is a task: answered without splitting the name.
        if field == "task" {
            return self.ty().reads_task();
        }
        let base = field.split(['.', '[']).next().unwrap_or(field);
        let ty = self.ty();
        match base {
            "task" => ty.reads_task(),
            _ if is_kind_field(base) => is_field_of(ty, base),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phase_fields_named_without_a_search_are_in_the_table() {
        for name in ["id", "agent", "task", "dependsOn"] {
            let listed = fields_of(ObjectKind::Phase)
                .iter()
                .find(|f| f.name == name)
                .map(|f| f.name);
            assert_eq!(field_name(ObjectKind::Phase, name), listed);
            assert!(listed.is_some(), "{name}");
        }
        assert_eq!(field_name(ObjectKind::Phase, "dependOn"), None);
        assert_eq!(field_name(ObjectKind::Retry, "task"), None);
    }
}
