//! Agent definition files (SPEC §9.1): `.tfc/agents/*.md` (project) over
//! `$XDG_CONFIG_HOME/tfc/agents/*.md` (user), Markdown with a small YAML frontmatter:
//!
//! ```markdown
//! ---
//! name: scout
//! description: Reads the code and reports facts.
//! tools: read, grep, glob      # or [read, grep] or a `- item` list
//! model: claude-haiku-4-5
//! thinking: low
//! ---
//! You are a careful code scout. …
//! ```
//!
//! The body is the system prompt. `name` and `description` are required. Only this subset of
//! YAML is read (by hand): `key: value` lines, plain/single-/double-quoted scalars, `|` and `>`
//! block scalars, `[a, b]` and `- a` lists, `#` comments; other keys are ignored. A file that
//! does not fit is skipped with a warning — never fatal.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;

use super::config::split_tools;
use crate::flow::AgentScope;

/// One agent definition.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentDefinition {
    /// Frontmatter `name` (required).
    pub name: String,
    /// Frontmatter `description`.
    pub description: String,
    /// Frontmatter `tools` (a list, or one comma-separated string).
    pub tools: Vec<String>,
    /// Frontmatter `model` (may be a `{{role}}`).
    pub model: Option<String>,
    /// Frontmatter `thinking`.
    pub thinking: Option<String>,
    /// The Markdown body, trimmed.
    pub system_prompt: String,
    /// The file it was read from.
    pub file: PathBuf,
}

/// The definitions visible to a run, by name.
#[derive(Clone, Debug, Default)]
pub struct AgentDefinitions {
    defs: IndexMap<String, AgentDefinition>,
}

impl AgentDefinitions {
    /// Load `<project_root>/.tfc/agents/*.md` and `<user_dir>/agents/*.md` as `scope` allows;
    /// project definitions win over user ones of the same name. Returns the warnings for
    /// skipped files.
    pub fn load(
        project_root: &Path,
        user_dir: Option<&Path>,
        scope: AgentScope,
    ) -> (AgentDefinitions, Vec<String>) {
        let mut dirs = Vec::new();
        if scope != AgentScope::User {
            dirs.push(project_root.join(".tfc").join("agents"));
        }
        if scope != AgentScope::Project
            && let Some(u) = user_dir
        {
            dirs.push(u.join("agents"));
        }
        let mut defs = AgentDefinitions::default();
        let mut warnings = Vec::new();
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file())
                .collect();
            files.sort();
            let mut seen_here = Vec::new();
            for f in files {
                let def = std::fs::read_to_string(&f)
                    .map_err(|e| format!("cannot read it: {e}"))
                    .and_then(|text| parse_definition(&text, &f));
                match def {
                    Err(why) => {
                        warnings.push(format!("agent definition '{}' skipped: {why}", f.display()))
                    }
                    Ok(d) if seen_here.contains(&d.name) => warnings.push(format!(
                        "agent definition '{}' skipped: another file in {} already defines '{}'",
                        f.display(),
                        dir.display(),
                        d.name
                    )),
                    Ok(d) => {
                        seen_here.push(d.name.clone());
                        defs.defs.entry(d.name.clone()).or_insert(d);
                    }
                }
            }
        }
        (defs, warnings)
    }

    /// The definition of `name`.
    pub fn get(&self, name: &str) -> Option<&AgentDefinition> {
        self.defs.get(name)
    }

    /// Add or replace a definition (for library callers and tests).
    pub fn insert(&mut self, def: AgentDefinition) {
        self.defs.insert(def.name.clone(), def);
    }

    /// The names of every definition.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.defs.keys().map(String::as_str)
    }

    /// How many definitions there are.
    pub fn len(&self) -> usize {
        self.defs.len()
    }

    /// Are there none?
    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }
}

/// A frontmatter value.
#[derive(Clone, Debug, PartialEq)]
enum Fm {
    Text(String),
    List(Vec<String>),
}

/// Parse one definition file; `Err` says why it is skipped.
pub(crate) fn parse_definition(text: &str, file: &Path) -> Result<AgentDefinition, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n");
    let mut lines = text.split('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("no frontmatter (the file must start with a `---` line)".into());
    }
    let mut front = Vec::new();
    let mut closed = false;
    for line in lines.by_ref() {
        let t = line.trim_end();
        if t == "---" || t == "..." {
            closed = true;
            break;
        }
        front.push(line);
    }
    if !closed {
        return Err("the frontmatter is not closed by a `---` line".into());
    }
    let body: Vec<&str> = lines.collect();
    let fields = parse_frontmatter(&front)?;
    let text_field = |k: &str| -> Result<Option<String>, String> {
        match fields.get(k) {
            None => Ok(None),
            Some(Fm::Text(s)) => Ok(Some(s.clone()).filter(|s| !s.is_empty())),
            Some(Fm::List(_)) => Err(format!("`{k}` must be text, not a list")),
        }
    };
    let name = text_field("name")?.ok_or("missing `name`")?;
    let description = text_field("description")?.ok_or("missing `description`")?;
    let tools = match fields.get("tools") {
        None => Vec::new(),
        Some(Fm::Text(s)) => split_tools(s),
        Some(Fm::List(l)) => l.iter().filter(|t| !t.is_empty()).cloned().collect(),
    };
    Ok(AgentDefinition {
        name,
        description,
        tools,
        model: text_field("model")?,
        thinking: text_field("thinking")?,
        system_prompt: body.join("\n").trim().to_owned(),
        file: file.to_path_buf(),
    })
}

fn indented(line: &str) -> bool {
    line.starts_with([' ', '\t'])
}

fn blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

fn parse_frontmatter(lines: &[&str]) -> Result<IndexMap<String, Fm>, String> {
    let mut out = IndexMap::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        // The file's 1-based line number (line 1 is the opening `---`).
        let n = i + 2;
        i += 1;
        if blank_or_comment(line) {
            continue;
        }
        if indented(line) {
            return Err(format!("frontmatter line {n}: unexpected indentation"));
        }
        let (key, rest) = line
            .split_once(':')
            .ok_or_else(|| format!("frontmatter line {n}: expected `key: value`"))?;
        let key = key.trim();
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!("frontmatter line {n}: invalid key '{key}'"));
        }
        let rest = rest.trim();
        // Continuation lines: indented ones, and `- item` lines for a key with no value.
        let start = i;
        while i < lines.len()
            && (indented(lines[i])
                || lines[i].trim().is_empty()
                || (rest.is_empty() && lines[i].starts_with('-')))
        {
            i += 1;
        }
        let more: Vec<&str> = lines[start..i].to_vec();
        let value = if rest.is_empty() {
            block(&more, n)?
        } else if let Some(style) = rest.strip_prefix(['|', '>']) {
            if !style.trim().trim_start_matches(['-', '+']).is_empty()
                && !style.trim().starts_with('#')
            {
                return Err(format!(
                    "frontmatter line {n}: unsupported block scalar '{rest}'"
                ));
            }
            let folded = rest.starts_with('>');
            let texts: Vec<&str> = trim_blank_ends(&more).iter().map(|l| l.trim()).collect();
            Fm::Text(if folded {
                texts.join(" ")
            } else {
                texts.join("\n")
            })
        } else {
            if more.iter().any(|l| !l.trim().is_empty()) {
                // A plain scalar continued on indented lines.
                if rest.starts_with(['"', '\'', '[']) {
                    return Err(format!(
                        "frontmatter line {n}: multi-line quoted values are not supported"
                    ));
                }
                for (k, l) in more.iter().enumerate() {
                    let t = l.trim();
                    if t.starts_with("- ") || t.contains(": ") || t.ends_with(':') {
                        return Err(format!(
                            "frontmatter line {}: nested values are not supported",
                            n + 1 + k
                        ));
                    }
                }
                let mut parts = vec![strip_comment(rest).to_owned()];
                parts.extend(
                    more.iter()
                        .map(|l| l.trim().to_owned())
                        .filter(|l| !l.is_empty()),
                );
                Fm::Text(parts.join(" "))
            } else {
                inline(rest, n)?
            }
        };
        if out.insert(key.to_owned(), value).is_some() {
            return Err(format!("frontmatter line {n}: `{key}` appears twice"));
        }
    }
    Ok(out)
}

fn trim_blank_ends<'a>(lines: &'a [&'a str]) -> &'a [&'a str] {
    let start = lines
        .iter()
        .position(|l| !l.trim().is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(start, |e| e + 1);
    &lines[start..end]
}

/// The lines after `key:` with nothing on the line: a `- item` list, or empty.
fn block(more: &[&str], n: usize) -> Result<Fm, String> {
    let items: Vec<&str> = more
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    if items.is_empty() {
        return Ok(Fm::Text(String::new()));
    }
    items
        .iter()
        .map(|l| match l.strip_prefix('-') {
            Some(item) if item.is_empty() || item.starts_with(' ') => scalar(item.trim(), n),
            _ => Err(format!(
                "frontmatter line {n}: nested values are not supported (only `- item` lists)"
            )),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Fm::List)
}

/// A value on the key's own line: `[a, b]`, a quoted or a plain scalar.
fn inline(rest: &str, n: usize) -> Result<Fm, String> {
    if let Some(inner) = rest.strip_prefix('[') {
        let inner = strip_comment(inner);
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| format!("frontmatter line {n}: unclosed `[`"))?;
        let items = split_flow_list(inner)
            .into_iter()
            .map(|s| scalar(s.trim(), n))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Fm::List(
            items.into_iter().filter(|s| !s.is_empty()).collect(),
        ));
    }
    scalar(rest, n).map(Fm::Text)
}

/// Split `a, "b, c", d` at commas outside quotes.
fn split_flow_list(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quote) = (0, None);
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ',') => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// A quoted or plain scalar.
fn scalar(s: &str, n: usize) -> Result<String, String> {
    if let Some(inner) = s.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    let after = chars.as_str().trim();
                    if !after.is_empty() && !after.starts_with('#') {
                        return Err(format!("frontmatter line {n}: text after a quoted value"));
                    }
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('"') => out.push('"'),
                    Some('\\') => out.push('\\'),
                    Some('/') => out.push('/'),
                    Some(other) => {
                        out.push('\\');
                        out.push(other);
                    }
                    None => break,
                },
                c => out.push(c),
            }
        }
        return Err(format!("frontmatter line {n}: unclosed `\"`"));
    }
    if let Some(inner) = s.strip_prefix('\'') {
        let mut out = String::new();
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    out.push('\'');
                    continue;
                }
                let after: String = chars.collect();
                let after = after.trim();
                if !after.is_empty() && !after.starts_with('#') {
                    return Err(format!("frontmatter line {n}: text after a quoted value"));
                }
                return Ok(out);
            }
            out.push(c);
        }
        return Err(format!("frontmatter line {n}: unclosed `'`"));
    }
    Ok(strip_comment(s).to_owned())
}

/// Drop a ` # comment` from a plain value.
fn strip_comment(s: &str) -> &str {
    match s.find(" #") {
        Some(i) => s[..i].trim_end(),
        None => s.trim_end(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_support::test_dir;

    fn parse(text: &str) -> Result<AgentDefinition, String> {
        parse_definition(text, Path::new("a.md"))
    }

    #[test]
    fn full_definition() {
        let d = parse(
            "---\r\nname: scout\r\ndescription: \"Reads code: reports facts\"  # why\r\ntools: read, grep ,glob\r\nmodel: '{{fast}}'\r\nthinking: low\r\ncolor: blue\r\n---\r\n\r\nYou are a scout.\r\n\r\nBe brief.\r\n",
        )
        .unwrap();
        assert_eq!(d.name, "scout");
        assert_eq!(d.description, "Reads code: reports facts");
        assert_eq!(d.tools, ["read", "grep", "glob"]);
        assert_eq!(d.model.as_deref(), Some("{{fast}}"));
        assert_eq!(d.thinking.as_deref(), Some("low"));
        assert_eq!(d.system_prompt, "You are a scout.\n\nBe brief.");
    }

    #[test]
    fn list_forms_and_block_scalars() {
        let d = parse("---\nname: a\ndescription: >\n  one\n  two\ntools: [Read, \"Grep, x\", 'Glob']\n---\nbody").unwrap();
        assert_eq!(d.description, "one two");
        assert_eq!(d.tools, ["Read", "Grep, x", "Glob"]);
        let d = parse("---\nname: a\ndescription: |\n  line one\n  line two\n\ntools:\n- read\n  - \"edit\"\n# trailing comment\n---\n").unwrap();
        assert_eq!(d.description, "line one\nline two");
        assert_eq!(d.tools, ["read", "edit"]);
        assert_eq!(d.system_prompt, "");
        let d = parse("---\nname: a\ndescription: a long\n  folded plain value\n---\nx").unwrap();
        assert_eq!(d.description, "a long folded plain value");
        let d = parse("---\nname: 'it''s'\ndescription: d\ntools: []\n---\n").unwrap();
        assert_eq!((d.name.as_str(), d.tools.len()), ("it's", 0));
    }

    #[test]
    fn malformed_files_say_why() {
        let e = |t: &str| parse(t).unwrap_err();
        assert!(e("no frontmatter").contains("no frontmatter"));
        assert!(e("---\nname: a\ndescription: b\n").contains("not closed"));
        assert!(e("---\nname: a\n---\nbody").contains("missing `description`"));
        assert!(e("---\ndescription: d\n---\n").contains("missing `name`"));
        assert!(e("---\nname: a\ndescription: \"\"\n---\n").contains("missing `description`"));
        assert!(e("---\nname a\n---\n").contains("line 2: expected `key: value`"));
        assert!(e("---\nname: a\n  oops: 1\ndescription: d\n---\n").contains("line 3: nested"));
        assert!(
            e("---\nname: a\ndescription: d\ntools: x\n  - y\n---\n").contains("line 5: nested")
        );
        assert!(e("---\n  name: a\n---\n").contains("line 2: unexpected indentation"));
        assert!(e("---\nname: [a, b]\ndescription: d\n---\n").contains("`name` must be text"));
        assert!(e("---\nname: \"a\ndescription: d\n---\n").contains("unclosed"));
        assert!(e("---\nname: a\nname: b\ndescription: d\n---\n").contains("twice"));
        assert!(e("---\nname: a\ndescription: d\ntools:\n  read: yes\n---\n").contains("nested"));
        assert!(e("---\nname: a\ndescription: d\ntools: [a, b\n---\n").contains("unclosed `[`"));
    }

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn project_over_user_filtered_by_scope() {
        let d = test_dir("defs");
        let (project, user) = (d.join("p"), d.join("u"));
        let def =
            |name: &str, body: &str| format!("---\nname: {name}\ndescription: d\n---\n{body}\n");
        write(
            &project.join(".tfc/agents/scout.md"),
            &def("scout", "project scout"),
        );
        write(&project.join(".tfc/agents/z-dup.md"), &def("scout", "dup"));
        write(
            &project.join(".tfc/agents/broken.md"),
            "---\nname: broken\n",
        );
        write(&project.join(".tfc/agents/notes.txt"), "ignored");
        write(&user.join("agents/scout.md"), &def("scout", "user scout"));
        write(
            &user.join("agents/writer.md"),
            &def("writer", "user writer"),
        );

        let (defs, warnings) = AgentDefinitions::load(&project, Some(&user), AgentScope::Both);
        assert_eq!(defs.get("scout").unwrap().system_prompt, "project scout");
        assert_eq!(defs.get("writer").unwrap().system_prompt, "user writer");
        assert_eq!(defs.len(), 2);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("broken.md' skipped: the frontmatter is not closed"));
        assert!(warnings[1].contains("z-dup.md' skipped: another file"));

        let (defs, _) = AgentDefinitions::load(&project, Some(&user), AgentScope::User);
        assert_eq!(defs.get("scout").unwrap().system_prompt, "user scout");
        let (defs, _) = AgentDefinitions::load(&project, Some(&user), AgentScope::Project);
        assert!(defs.get("writer").is_none());
        let (defs, w) = AgentDefinitions::load(&d.join("none"), None, AgentScope::Both);
        assert!(defs.is_empty() && w.is_empty());
        std::fs::remove_dir_all(d).ok();
    }
}
