//! The two small languages of a flow: `{placeholder}` templates and `when`/`until` conditions.

pub mod path;

pub use path::{RefPath, Seg, Target};
