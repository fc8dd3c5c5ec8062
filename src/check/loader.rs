//! Where saved flows come from: the seam through which `use` targets are read, by the checks
//! of sub-flows and by type inference (a sub-flow's final phase).

use std::path::PathBuf;

/// Where saved flows (`use`) come from.
pub trait FlowLoader {
    /// The file and text of the saved flow `name`, or `None` with the places looked in.
    fn load(&self, name: &str) -> Result<(PathBuf, String), Vec<PathBuf>>;

    /// The names it can load, for a did-you-mean on a name it cannot (none by default).
    fn names(&self) -> Vec<String> {
        Vec::new()
    }
}
