//! The two small languages of a flow: `{placeholder}` templates and `when`/`until` conditions.

pub mod condition;
pub mod path;
pub mod template;

pub use path::{RefPath, Seg, Target};
