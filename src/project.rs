//! Where a project's files live (SPEC §10.1): the project root (nearest ancestor holding
//! `.tfc/`, not above `$HOME`), saved flows, and resolving a `FLOW` argument.

use std::path::{Path, PathBuf};

use crate::check::FlowLoader;
use crate::value::{Map, Value};

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
        SavedFlows::at_root(&project_root(cwd))
    }

    /// The saved-flow folders of the project rooted at `root` (taken as it is), then the
    /// user's.
    pub fn at_root(root: &Path) -> SavedFlows {
        let mut dirs = vec![root.join(".tfc").join("flows")];
        if let Some(u) = user_config_dir() {
            dirs.push(u.join("flows"));
        }
        SavedFlows { dirs }
    }

    /// The folders with their scope (`project`, then `user`).
    pub fn places(&self) -> impl Iterator<Item = (&'static str, &Path)> {
        ["project", "user"]
            .into_iter()
            .zip(self.dirs.iter().map(PathBuf::as_path))
    }

    /// Every saved flow, the project's then the user's, each folder sorted by name; a user flow
    /// with a project flow's name is `shadowed`. `shown` turns a file's path into the one
    /// messages name (e.g. relative to the working directory).
    pub fn list(&self, shown: impl Fn(&Path) -> PathBuf) -> Vec<SavedFlow> {
        let mut flows: Vec<SavedFlow> = Vec::new();
        for (scope, dir) in self.places() {
            for (name, path) in flow_files(dir) {
                let shadowed = flows.iter().any(|f| f.name == name);
                let doc = read_saved(&path, &shown(&path));
                flows.push(SavedFlow {
                    name,
                    scope,
                    path,
                    doc,
                    shadowed,
                });
            }
        }
        flows
    }

    /// Is `name` a valid saved-flow name (`[A-Za-z0-9._-]+`, no `..`)?
    pub fn valid_name(name: &str) -> bool {
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

/// One saved flow as `tfc list` shows it.
#[derive(Clone, Debug)]
pub struct SavedFlow {
    /// Its name (the file stem).
    pub name: String,
    /// `project` or `user`.
    pub scope: &'static str,
    /// Its file.
    pub path: PathBuf,
    /// The flow document, or why it cannot be read (a sentence naming the file as shown).
    pub doc: Result<Value, String>,
    /// A project flow of the same name comes first.
    pub shadowed: bool,
}

impl SavedFlow {
    /// The declared arguments: name and spec as written.
    pub fn args(&self) -> Vec<(String, Value)> {
        let args = self
            .doc
            .as_ref()
            .ok()
            .and_then(|d| d.as_object()?.get("args"));
        args.and_then(Value::as_object)
            .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    }

    /// The flow's `description`, when it is a string.
    pub fn description(&self) -> Option<&str> {
        let doc = self.doc.as_ref().ok()?.as_object()?;
        doc.get("description")?.as_str()
    }

    /// One element of `tfc list --format json`: `{name, scope, path, shadowed, description,
    /// args: [{name, type?, default?, required?, description?, values?}], error?}`.
    pub fn to_json(&self) -> Value {
        let mut o = Map::default();
        o.insert("name".into(), Value::from(self.name.as_str()));
        o.insert("scope".into(), Value::from(self.scope));
        o.insert("path".into(), Value::from(self.path.display().to_string()));
        o.insert("shadowed".into(), Value::Bool(self.shadowed));
        o.insert(
            "description".into(),
            self.description().map_or(Value::Null, Value::from),
        );
        let args = self
            .args()
            .into_iter()
            .map(|(name, spec)| {
                let mut a = Map::default();
                a.insert("name".into(), Value::from(name));
                for k in ["type", "default", "required", "description", "values"] {
                    if let Some(v) = spec.as_object().and_then(|s| s.get(k)) {
                        a.insert(k.into(), v.clone());
                    }
                }
                Value::Object(a)
            })
            .collect();
        o.insert("args".into(), Value::Array(args));
        if let Err(e) = &self.doc {
            o.insert("error".into(), Value::from(e.as_str()));
        }
        Value::Object(o)
    }
}

/// `<name>.json` files of `dir` with valid saved-flow names, sorted by name.
fn flow_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = rd
        .filter_map(Result::ok)
        .filter_map(|e| {
            let file = e.file_name().into_string().ok()?;
            let name = file.strip_suffix(".json")?.to_owned();
            (SavedFlows::valid_name(&name) && e.path().is_file()).then(|| (name, e.path()))
        })
        .collect();
    out.sort();
    out
}

/// A saved flow's document: a JSON(C) object, or why not (naming the file as `shown`).
fn read_saved(path: &Path, shown: &Path) -> Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot be read: {e}"))?;
    let parsed = crate::json::parse_bytes(&bytes);
    if let Some(d) = parsed.diagnostics.iter().find(|d| d.is_error()) {
        return Err(format!(
            "is not valid JSON ({}); `tfc check {}` shows where",
            d.message,
            shown.display()
        ));
    }
    match parsed.root.map(|n| n.to_value()) {
        Some(v @ Value::Object(_)) => Ok(v),
        _ => Err("is not a flow (a JSON object)".into()),
    }
}

/// One file a set-up plans (`tfc init`'s project files, host registrations and editor
/// settings): its new content, or kept as it is.
#[derive(Debug)]
pub struct PlannedFile {
    /// The file.
    pub path: PathBuf,
    /// What to write; `None`: the file is there and stays as it is.
    pub content: Option<String>,
    /// Whether the file exists (an update rather than a creation).
    pub exists: bool,
}

impl PlannedFile {
    /// A file written only when it is not there yet.
    pub fn create_unless_present(path: PathBuf, content: String) -> PlannedFile {
        let exists = path.exists();
        PlannedFile {
            content: (!exists).then_some(content),
            path,
            exists,
        }
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

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .dirs
            .iter()
            .flat_map(|d| flow_files(d).into_iter().map(|(name, _)| name))
            .collect();
        names.sort();
        names.dedup();
        names
    }
}
