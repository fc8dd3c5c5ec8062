//! Persistence (SPEC §10): `.tfc/runs/<flow>/<runId>/run.json` (rewritten atomically: temp
//! file, fsync, rename) and an append-only `journal.jsonl`, flushed per event. A crash at any
//! instant leaves a readable `run.json` (the last complete write) and a journal whose every
//! complete line is an event.

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
    if out.is_empty() { "_".into() } else { out }
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
    last_write: Option<Instant>,
    dirty: bool,
}

/// How often `run.json` may be rewritten while phases keep changing (the journal has every
/// transition as it happens; the record catches up at most this much later and at the end).
const MIN_INTERVAL: Duration = Duration::from_millis(200);

impl RunStore {
    pub fn create(root: &Path, flow: &str, run_id: &str) -> std::io::Result<RunStore> {
        let dir = root
            .join(".tfc")
            .join("runs")
            .join(sanitize(flow))
            .join(run_id);
        std::fs::create_dir_all(&dir)?;
        let mut lock = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join("lock"))?;
        writeln!(lock, "{}", std::process::id())?;
        let journal = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("journal.jsonl"))?;
        Ok(RunStore {
            dir,
            journal,
            last_write: None,
            dirty: false,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Append one event line and flush it.
    pub fn append(&mut self, event: &Value) -> std::io::Result<()> {
        let mut line = event.to_json();
        line.push('\n');
        self.journal.write_all(line.as_bytes())?;
        self.journal.flush()
    }

    /// Rewrite `run.json` now if enough time has passed, else remember to.
    pub fn save_soon(&mut self, record: impl FnOnce() -> Value) -> std::io::Result<()> {
        self.dirty = true;
        if self.last_write.is_none_or(|t| t.elapsed() >= MIN_INTERVAL) {
            self.save(record())?;
        }
        Ok(())
    }

    /// Rewrite `run.json` atomically.
    pub fn save(&mut self, record: Value) -> std::io::Result<()> {
        let tmp = self.dir.join("run.json.tmp");
        let mut f = File::create(&tmp)?;
        f.write_all(record.to_pretty_json().as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        std::fs::rename(&tmp, self.dir.join("run.json"))?;
        self.last_write = Some(Instant::now());
        self.dirty = false;
        Ok(())
    }

    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Release the lock.
    pub fn close(self) {
        let _ = std::fs::remove_file(self.dir.join("lock"));
    }
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
    }
}
