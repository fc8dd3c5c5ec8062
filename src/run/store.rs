//! Persistence (SPEC §10): `.tfc/runs/<flow>/<runId>/run.json` (rewritten atomically: temp
//! file, fsync, rename) and an append-only `journal.jsonl`, flushed per event. A crash at any
//! instant leaves a readable `run.json` (the last complete write) and a journal whose every
//! complete line is an event.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::value::Value;

/// `[^A-Za-z0-9._-]+` and `..` → `_`.
pub fn sanitize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_bad = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || "._-".contains(c) {
            out.push(c);
            in_bad = false;
        } else if !in_bad {
            out.push('_');
            in_bad = true;
        }
    }
    while out.contains("..") {
        out = out.replace("..", "_");
    }
    // `.` names the directory itself, as `..` names its parent.
    if out.is_empty() || out == "." {
        "_".into()
    } else {
        out
    }
}

/// `n` random hex digits (from the OS-seeded hasher; not for cryptography).
pub fn random_hex(n: usize) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::new();
    while out.len() < n {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos(),
        );
        h.write_u32(std::process::id());
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out.truncate(n);
    out
}

/// `<sanitised name ≤24 chars>-<epoch ms base36>-<6 random hex>`.
pub fn new_run_id(flow: &str) -> String {
    let name: String = sanitize(flow).chars().take(24).collect();
    let mut ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let mut b36 = Vec::new();
    while ms > 0 {
        b36.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(ms % 36) as usize]);
        ms /= 36;
    }
    b36.reverse();
    format!("{name}-{}-{}", String::from_utf8_lossy(&b36), random_hex(6))
}

/// One run's directory.
pub struct RunStore {
    dir: PathBuf,
    journal: File,
    /// Journal lines of the step being handled, not yet written (see [`RunStore::queue`]).
    queued: String,
    last_write: Option<Instant>,
    /// How long the last rewrite of `run.json` took (the throttle grows with it).
    last_cost: Duration,
    dirty: bool,
    rewrites: u64,
    /// Where large phase outputs go (each written as soon as it is placed).
    outputs: PendingOutputs,
}

/// The files large phase outputs go to: a stem per record key, each written once per result
/// version. Kept by whoever writes `run.json` (the local store, or a Temporal run, whose
/// worker writes the files), so both name them alike.
#[derive(Debug, Default)]
pub struct OutputNames {
    /// Record key → its file and the version written.
    outputs: HashMap<String, StoredOutput>,
    /// File stems taken in `outputs/phases/`.
    stems: HashSet<String>,
}

impl OutputNames {
    /// The files of `key`'s output at `version`, and whether they must be written (they
    /// are not yet, for this version).
    pub fn place(&mut self, key: &str, version: u64, json: bool) -> (OutputFiles, bool) {
        let stem = match self.outputs.get(key) {
            Some(s) if s.version == version => return (files(&s.stem, s.json), false),
            Some(s) => s.stem.clone(),
            None => {
                let base: String = sanitize(key).chars().take(MAX_FLOW_DIR).collect();
                let mut stem = base.clone();
                let mut n = 1;
                while self.stems.contains(&stem) {
                    n += 1;
                    stem = format!("{base}-{n}");
                }
                self.stems.insert(stem.clone());
                stem
            }
        };
        let f = files(&stem, json);
        self.outputs.insert(
            key.to_owned(),
            StoredOutput {
                stem,
                version,
                json,
            },
        );
        (f, true)
    }
}

/// What takes the outputs too large to stay inline in `run.json`
/// ([`INLINE_OUTPUT_MAX`]): the local store writes them at once; a run on Temporal
/// collects them for its worker to write.
pub trait OutputSink {
    /// Keep `key`'s output (and its `json`) at `version` in files of its own; their names.
    fn externalize(
        &mut self,
        key: &str,
        version: u64,
        output: &str,
        json: Option<&Value>,
    ) -> std::io::Result<OutputFiles>;
    /// Keep the run's final output in `outputs/final.txt`; its name.
    fn final_output(&mut self, text: &str) -> std::io::Result<String>;
}

/// Outputs placed by [`OutputNames`] and not written yet: relative path → content.
#[derive(Debug, Default)]
pub struct PendingOutputs {
    /// The names given so far.
    pub names: OutputNames,
    /// The files to write, relative to the run directory.
    pub files: Vec<(String, String)>,
}

impl OutputSink for PendingOutputs {
    fn externalize(
        &mut self,
        key: &str,
        version: u64,
        output: &str,
        json: Option<&Value>,
    ) -> std::io::Result<OutputFiles> {
        let (f, write) = self.names.place(key, version, json.is_some());
        if write {
            self.files.push((f.output.clone(), output.to_owned()));
            if let (Some(path), Some(j)) = (&f.json, json) {
                self.files.push((path.clone(), j.to_json()));
            }
        }
        Ok(f)
    }

    fn final_output(&mut self, text: &str) -> std::io::Result<String> {
        self.files.push((FINAL_OUTPUT.to_owned(), text.to_owned()));
        Ok(FINAL_OUTPUT.to_owned())
    }
}

/// Where the run's final output goes when it is too large to stay inline.
const FINAL_OUTPUT: &str = "outputs/final.txt";

/// Write `files` (paths relative to `dir`, as [`PendingOutputs`] gives them).
pub fn write_outputs(dir: &Path, files: &[(String, String)]) -> std::io::Result<()> {
    for (rel, content) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| annotate(e, parent))?;
        }
        write_file(&path, content.as_bytes()).map_err(|e| annotate(e, &path))?;
    }
    Ok(())
}

/// A phase output kept in a file of its own rather than inline in `run.json`.
#[derive(Debug)]
struct StoredOutput {
    stem: String,
    version: u64,
    json: bool,
}

/// Where a large phase output went, relative to the run directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFiles {
    /// `outputs/phases/<stem>.txt`: the output text, byte for byte.
    pub output: String,
    /// `outputs/phases/<stem>.json`: the phase's `json`, when it has one.
    pub json: Option<String>,
}

/// How often `run.json` may be rewritten while phases keep changing (the journal has every
/// transition as it happens; the record catches up at most this much later and at the end).
/// The interval also stays at least ten times what the last rewrite cost, so rewriting a
/// large record never takes more than a tenth of the run's time.
pub const MIN_INTERVAL: Duration = Duration::from_millis(200);

/// Outputs longer than this (bytes) are written once to `outputs/` and referenced from
/// `run.json` (`outputFile`, `jsonFile`) instead of being re-serialised with every rewrite.
pub const INLINE_OUTPUT_MAX: usize = 64 * 1024;

/// The longest `<flow>` directory name; longer sanitised names keep their first characters
/// and end in a hash of the whole name, so distinct long names stay distinct.
const MAX_FLOW_DIR: usize = 100;

/// `.tfc/runs/<flow>`: the sanitised flow name (SPEC §10.1), shortened when very long.
pub fn flow_dir_name(flow: &str) -> String {
    let name = sanitize(flow);
    if name.len() <= MAX_FLOW_DIR {
        return name;
    }
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(flow.as_bytes());
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    // Sanitised names are ASCII, so any byte index is a char boundary.
    format!("{}-{hex}", &name[..MAX_FLOW_DIR - 9])
}

impl RunStore {
    /// Create the run's directory with its first `run.json`, its lock and the journal's first
    /// event, all at once: they are written into a hidden staging directory that is renamed
    /// into place, so a run killed at any instant leaves either no directory or one with a
    /// readable `run.json`.
    pub fn create(
        root: &Path,
        flow: &str,
        run_id: &str,
        record: &str,
        first_event: &Value,
    ) -> std::io::Result<RunStore> {
        let parent = root.join(".tfc").join("runs").join(flow_dir_name(flow));
        std::fs::create_dir_all(&parent).map_err(|e| annotate(e, &parent))?;
        let dir = parent.join(run_id);
        let staging = parent.join(format!(".{run_id}.creating"));
        let made = (|| {
            std::fs::create_dir(&staging)?;
            write_atomic(&staging, record)?;
            let mut lock = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(staging.join("lock"))?;
            writeln!(lock, "{}", std::process::id())?;
            let mut journal = OpenOptions::new()
                .create(true)
                .append(true)
                .open(staging.join("journal.jsonl"))?;
            append_line(&mut journal, first_event)?;
            File::open(&staging)?.sync_all()?;
            std::fs::rename(&staging, &dir)?;
            Ok::<File, std::io::Error>(journal)
        })();
        let journal = match made {
            Ok(j) => j,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(annotate(e, &dir));
            }
        };
        Ok(RunStore {
            dir,
            journal,
            queued: String::new(),
            last_write: Some(Instant::now()),
            last_cost: Duration::ZERO,
            dirty: false,
            rewrites: 1,
            outputs: PendingOutputs::default(),
        })
    }

    /// The run's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Append one event line and flush it.
    pub fn append(&mut self, event: &Value) -> std::io::Result<()> {
        append_line(&mut self.journal, event)
            .map_err(|e| annotate(e, &self.dir.join("journal.jsonl")))
    }

    /// Append one ready-made JSON line (no newline) and flush it.
    pub fn append_text(&mut self, line: &str) -> std::io::Result<()> {
        let mut text = String::with_capacity(line.len() + 1);
        text.push_str(line);
        text.push('\n');
        self.journal
            .write_all(text.as_bytes())
            .and_then(|()| self.journal.flush())
            .map_err(|e| annotate(e, &self.dir.join("journal.jsonl")))
    }

    /// Queue one event line: it is written with the other lines of the same step by the next
    /// [`RunStore::flush_queued`], which the caller makes before anything depends on them (the
    /// next input, an effect outside the process, a `run.json` rewrite).
    pub fn queue(&mut self, event: &Value) {
        crate::value::write_compact(event, &mut self.queued);
        self.queued.push('\n');
    }

    /// Queue ready-made text (whole lines, each ending in a newline); see [`RunStore::queue`].
    pub fn queue_raw(&mut self, lines: &str) {
        self.queued.push_str(lines);
    }

    /// Write and flush the queued lines (in one write); nothing queued, nothing done.
    pub fn flush_queued(&mut self) -> std::io::Result<()> {
        if self.queued.is_empty() {
            return Ok(());
        }
        let r = self
            .journal
            .write_all(self.queued.as_bytes())
            .and_then(|()| self.journal.flush())
            .map_err(|e| annotate(e, &self.dir.join("journal.jsonl")));
        self.queued.clear();
        if self.queued.capacity() > 1 << 20 {
            self.queued.shrink_to(64 << 10);
        }
        r
    }

    /// Append ready-made text (whole lines, each ending in a newline) and flush it.
    pub fn append_raw(&mut self, lines: &str) -> std::io::Result<()> {
        self.journal
            .write_all(lines.as_bytes())
            .and_then(|()| self.journal.flush())
            .map_err(|e| annotate(e, &self.dir.join("journal.jsonl")))
    }

    /// Whether a rewrite of `run.json` is allowed now (see [`MIN_INTERVAL`]).
    pub fn due(&self) -> bool {
        self.last_write
            .is_none_or(|t| t.elapsed() >= self.interval())
    }

    /// How long after the last rewrite the next one is due.
    pub fn wait(&self) -> Duration {
        self.last_write.map_or(Duration::ZERO, |t| {
            self.interval().saturating_sub(t.elapsed())
        })
    }

    fn interval(&self) -> Duration {
        MIN_INTERVAL.max(self.last_cost * 10)
    }

    /// The record changed; it is rewritten when next due.
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Rewrite `run.json` (its JSON text) atomically; `since`: when building the record began
    /// (the cost of building and writing it sets the throttle).
    pub fn save(&mut self, record: &str, since: Instant) -> std::io::Result<()> {
        write_atomic(&self.dir, record).map_err(|e| annotate(e, &self.dir.join("run.json")))?;
        self.last_cost = since.elapsed();
        self.last_write = Some(Instant::now());
        self.dirty = false;
        self.rewrites += 1;
        Ok(())
    }

    /// Whether a rewrite is owed.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// How many times `run.json` was written so far.
    pub fn rewrites(&self) -> u64 {
        self.rewrites
    }

    /// Release the lock.
    pub fn close(self) -> std::io::Result<()> {
        let lock = self.dir.join("lock");
        std::fs::remove_file(&lock).map_err(|e| annotate(e, &lock))
    }
}

impl OutputSink for RunStore {
    fn externalize(
        &mut self,
        key: &str,
        version: u64,
        output: &str,
        json: Option<&Value>,
    ) -> std::io::Result<OutputFiles> {
        let f = self.outputs.externalize(key, version, output, json)?;
        write_outputs(&self.dir, &std::mem::take(&mut self.outputs.files))?;
        Ok(f)
    }

    fn final_output(&mut self, text: &str) -> std::io::Result<String> {
        let f = self.outputs.final_output(text)?;
        write_outputs(&self.dir, &std::mem::take(&mut self.outputs.files))?;
        Ok(f)
    }
}

fn files(stem: &str, json: bool) -> OutputFiles {
    OutputFiles {
        output: format!("outputs/phases/{stem}.txt"),
        json: json.then(|| format!("outputs/phases/{stem}.json")),
    }
}

/// `run.json` in `dir` (the record's text and a newline), via a temp file, fsync and rename.
fn write_atomic(dir: &Path, record: &str) -> std::io::Result<()> {
    let tmp = dir.join("run.json.tmp");
    let mut f = File::create(&tmp)?;
    f.write_all(record.as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, dir.join("run.json"))
}

fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

fn append_line(journal: &mut File, event: &Value) -> std::io::Result<()> {
    let mut line = event.to_json();
    line.push('\n');
    journal.write_all(line.as_bytes())?;
    journal.flush()
}

/// The error with the path it concerns.
fn annotate(e: std::io::Error, path: &Path) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids() {
        assert_eq!(sanitize("release check/v2"), "release_check_v2");
        assert_eq!(sanitize("a..b"), "a_b");
        let id = new_run_id("a very long flow name that goes on");
        assert!(id.starts_with("a_very_long_flow_name_th-"), "{id}");
        assert!(
            id.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        );
        assert_eq!(random_hex(6).len(), 6);
        assert_eq!(sanitize("."), "_");
        assert_eq!(sanitize(".."), "_");
    }

    #[test]
    fn long_flow_names_are_shortened_and_stay_distinct() {
        let a = flow_dir_name(&"n".repeat(300));
        let b = flow_dir_name(&format!("{}m", "n".repeat(299)));
        assert!(a.len() <= MAX_FLOW_DIR && b.len() <= MAX_FLOW_DIR, "{a}");
        assert_ne!(a, b);
        assert_eq!(flow_dir_name("short name"), "short_name");
    }

    #[test]
    fn pending_outputs_are_named_as_the_store_names_them() {
        let root = tempfile::tempdir().expect("temp dir");
        let rec = Value::from("first").to_pretty_json();
        let ev = Value::from("start");
        let mut store = RunStore::create(root.path(), "f", "f-1", &rec, &ev).expect("create");
        let mut pending = PendingOutputs::default();
        let json = Value::from("j");
        for (key, version, json) in [
            ("a b", 1, None),
            ("a_b", 1, Some(&json)),
            ("a b", 1, None),
            ("a b", 2, None),
        ] {
            let written = store
                .externalize(key, version, "text", json)
                .expect("store");
            let placed = pending
                .externalize(key, version, "text", json)
                .expect("pending");
            assert_eq!(written, placed);
        }
        // What was pending is what the store wrote.
        let dir = root.path().join(".tfc").join("runs").join("f").join("f-1");
        for (rel, content) in &pending.files {
            let on_disk = std::fs::read_to_string(dir.join(rel)).expect(rel);
            assert_eq!(&on_disk, content, "{rel}");
        }
        assert_eq!(pending.files.len(), 4, "a b, a_b and its json, a b again");
        let again = tempfile::tempdir().expect("temp dir");
        write_outputs(again.path(), &pending.files).expect("write");
        assert_eq!(
            std::fs::read_to_string(again.path().join("outputs/phases/a_b-2.json")).expect("json"),
            "\"j\""
        );
    }

    #[test]
    fn outputs_are_written_once_per_version() {
        let root = tempfile::tempdir().expect("temp dir");
        let rec = Value::from("first").to_pretty_json();
        let ev = Value::from("start");
        let mut store = RunStore::create(root.path(), "f", "f-1", &rec, &ev).expect("create");
        assert!(store.dir().join("run.json").exists() && store.dir().join("lock").exists());
        let files = store.externalize("a/b", 1, "one", None).expect("write");
        assert_eq!(files.output, "outputs/phases/a_b.txt");
        let path = store.dir().join(&files.output);
        std::fs::write(&path, "changed behind its back").expect("write");
        // Same version: not written again.
        store.externalize("a/b", 1, "one", None).expect("same");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "changed behind its back"
        );
        // A new result is.
        store.externalize("a/b", 2, "two", None).expect("new");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "two");
        // Another key that sanitises the same gets a file of its own.
        let other = store.externalize("a_b", 1, "three", Some(&Value::Bool(true)));
        let other = other.expect("other");
        assert_eq!(other.output, "outputs/phases/a_b-2.txt");
        assert_eq!(other.json.as_deref(), Some("outputs/phases/a_b-2.json"));
        store.close().expect("close");
        // The same run id cannot be created twice.
        assert!(RunStore::create(root.path(), "f", "f-1", &rec, &ev).is_err());
    }
}
