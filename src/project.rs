//! Where a project's files live (SPEC §10.1): the project root (nearest ancestor holding
//! `.tfc/`, not above `$HOME`), saved flows, and resolving a `FLOW` argument.

use std::path::{Path, PathBuf};

use crate::check::FlowLoader;

/// The nearest ancestor of `cwd` containing `.tfc/`, not above `$HOME`; else `cwd`.
pub fn project_root(cwd: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if d.join(".tfc").is_dir() {
            return d.to_path_buf();
        }
        if home.as_deref() == Some(d) {
            break;
        }
        dir = d.parent();
    }
    cwd.to_path_buf()
}

/// The user configuration directory: `$XDG_CONFIG_HOME/tfc`, default `~/.config/tfc`.
pub fn user_config_dir() -> Option<PathBuf> {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(x) => Some(PathBuf::from(x).join("tfc")),
        None => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config").join("tfc")),
    }
}

/// Saved flows: `.tfc/flows/<name>.json` in the project, then in the user config dir.
pub struct SavedFlows {
    dirs: Vec<PathBuf>,
}

impl SavedFlows {
    /// The saved-flow folders seen from `cwd`: the project's, then the user's.
    pub fn new(cwd: &Path) -> SavedFlows {
        let mut dirs = vec![project_root(cwd).join(".tfc").join("flows")];
        if let Some(u) = user_config_dir() {
            dirs.push(u.join("flows"));
        }
        SavedFlows { dirs }
    }

    /// Is `name` a valid saved-flow name (`[A-Za-z0-9._-]+`, no `..`)?
    pub(crate) fn valid_name(name: &str) -> bool {
        !name.is_empty()
            && !name.contains("..")
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    }

    /// Where a saved flow named `name` may be, in lookup order.
    pub fn candidates(&self, name: &str) -> Vec<PathBuf> {
        self.dirs
            .iter()
            .map(|d| d.join(format!("{name}.json")))
            .collect()
    }
}

/// Resolve a `FLOW` argument: a path if that file exists, else a saved flow's name. Returns
/// the file and the flow's default name (the file stem, or the saved name).
pub fn locate_flow(flow: &str, cwd: &Path) -> Option<(PathBuf, String)> {
    let p = Path::new(flow);
    if p.is_file() {
        let stem = p
            .file_stem()
            .map_or_else(|| "flow".into(), |s| s.to_string_lossy().into_owned());
        return Some((p.to_path_buf(), stem));
    }
    if !SavedFlows::valid_name(flow) {
        return None;
    }
    SavedFlows::new(cwd)
        .candidates(flow)
        .into_iter()
        .find(|c| c.is_file())
        .map(|c| (c, flow.to_owned()))
}

impl FlowLoader for SavedFlows {
    fn load(&self, name: &str) -> Result<(PathBuf, String), Vec<PathBuf>> {
        let places = self.candidates(name);
        if !SavedFlows::valid_name(name) {
            return Err(places);
        }
        for p in &places {
            if let Ok(text) = std::fs::read_to_string(p) {
                return Ok((p.clone(), text));
            }
        }
        Err(places)
    }
}
