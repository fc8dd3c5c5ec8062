//! The cross-run cache (SPEC §10.5): `.tfc/cache/<key>.json`, one `done` phase state per
//! file, written atomically (temp file, fsync, rename); at most [`MAX_ENTRIES`] files (the
//! oldest go first), none older than [`BACKSTOP_MS`], an optional per-phase TTL. A file that
//! cannot be read or parsed is a miss with a warning, never a failure.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::value::{Map, Value};

/// Entries kept at most.
pub const MAX_ENTRIES: usize = 1000;
/// No entry is used (or kept) beyond 90 days.
pub const BACKSTOP_MS: u64 = 90 * 24 * 3600 * 1000;

/// `<root>/.tfc/cache`.
pub fn dir(root: &Path) -> PathBuf {
    root.join(".tfc").join("cache")
}

/// Whether `key` is a key (16 hex digits): nothing else names a file here.
fn valid(key: &str) -> bool {
    key.len() == 16 && key.bytes().all(|b| b.is_ascii_hexdigit())
}

/// What a lookup found.
#[derive(Debug, PartialEq)]
pub enum Lookup {
    /// The stored phase record.
    Hit(Value),
    /// Nothing usable.
    Miss,
    /// A file that could not be used: a miss, with this warning.
    Corrupt(String),
}

/// Look `key` up at time `now` (ms since the epoch); `ttl`: the phase's `cache.ttl`.
pub fn lookup(root: &Path, key: &str, now: u64, ttl: Option<u64>) -> Lookup {
    if !valid(key) {
        return Lookup::Miss;
    }
    let path = dir(root).join(format!("{key}.json"));
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
        Err(e) => {
            return Lookup::Corrupt(format!(
                "cache entry {} could not be read ({e}); the phase runs again",
                path.display()
            ));
        }
    };
    let corrupt = || {
        Lookup::Corrupt(format!(
            "cache entry {} is corrupt (not a stored phase state); the phase runs again and the entry is rewritten",
            path.display()
        ))
    };
    let Some(v) = crate::json::parse(&text).root.map(|r| r.to_value()) else {
        return corrupt();
    };
    let mut v = v;
    let Value::Object(m) = &mut v else {
        return corrupt();
    };
    let stored = match m.get("storedAt") {
        Some(Value::Number(n)) if n.is_finite() && *n >= 0.0 => *n as u64,
        _ => return corrupt(),
    };
    let Some(record @ Value::Object(_)) = m.shift_remove("record") else {
        return corrupt();
    };
    let age = now.saturating_sub(stored);
    if age > BACKSTOP_MS || ttl.is_some_and(|t| age > t) {
        return Lookup::Miss;
    }
    Lookup::Hit(record)
}

/// Store `record` (a `done` phase state) under `key` at time `now`; then keep the store
/// within [`MAX_ENTRIES`] and [`BACKSTOP_MS`].
pub fn store(root: &Path, key: &str, record: &Value, now: u64) -> std::io::Result<()> {
    if !valid(key) {
        return Ok(());
    }
    let d = dir(root);
    std::fs::create_dir_all(&d)?;
    let mut m = Map::default();
    m.insert("key".into(), Value::from(key));
    m.insert("storedAt".into(), Value::Number(now as f64));
    m.insert("record".into(), record.clone());
    let text = Value::Object(m).to_json();
    let tmp = d.join(format!(".{key}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, d.join(format!("{key}.json")))
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    // Counting names is cheap; the full sweep (a stat per entry) runs when the store is
    // over its size, and once per process for the backstop.
    static SWEPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let first = !SWEPT.swap(true, std::sync::atomic::Ordering::Relaxed);
    let count = std::fs::read_dir(&d).map_or(0, |rd| rd.count());
    if first || count > MAX_ENTRIES {
        evict(root, now);
    }
    Ok(())
}

/// Remove entries past the backstop, then the oldest beyond [`MAX_ENTRIES`] (by mtime, the
/// time each was stored). Returns how many went.
pub fn evict(root: &Path, now: u64) -> usize {
    let Ok(rd) = std::fs::read_dir(dir(root)) else {
        return 0;
    };
    let mut entries: Vec<(u64, PathBuf)> = rd
        .flatten()
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.ends_with(".json") && valid(n.trim_end_matches(".json"))
        })
        .map(|e| {
            let t = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis() as u64);
            (t, e.path())
        })
        .collect();
    let mut removed = 0;
    entries.retain(|(t, p)| {
        if now.saturating_sub(*t) > BACKSTOP_MS {
            removed += usize::from(std::fs::remove_file(p).is_ok());
            false
        } else {
            true
        }
    });
    if entries.len() > MAX_ENTRIES {
        entries.sort();
        let extra = entries.len() - MAX_ENTRIES;
        for (_, p) in &entries[..extra] {
            removed += usize::from(std::fs::remove_file(p).is_ok());
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(out: &str) -> Value {
        let mut m = Map::default();
        m.insert("status".into(), Value::from("done"));
        m.insert("output".into(), Value::from(out));
        Value::Object(m)
    }

    #[test]
    fn hit_miss_ttl_backstop_and_corruption() {
        let root = tempfile::tempdir().expect("temp");
        let r = root.path();
        let key = "0123456789abcdef";
        assert_eq!(lookup(r, key, 10, None), Lookup::Miss);
        store(r, key, &rec("x"), 1_000).expect("store");
        assert_eq!(lookup(r, key, 2_000, None), Lookup::Hit(rec("x")));
        // TTL in ms: older than it is a miss.
        assert_eq!(lookup(r, key, 2_000, Some(500)), Lookup::Miss);
        assert_eq!(lookup(r, key, 1_400, Some(500)), Lookup::Hit(rec("x")));
        assert_eq!(lookup(r, key, 1_000 + BACKSTOP_MS + 1, None), Lookup::Miss);
        std::fs::write(
            dir(r).join(format!("{key}.json")),
            "{\"storedAt\": 1, \"rec",
        )
        .expect("w");
        assert!(matches!(lookup(r, key, 2_000, None), Lookup::Corrupt(w) if w.contains("corrupt")));
        // Not a key: never a path.
        assert_eq!(lookup(r, "../../etc/passwd", 1, None), Lookup::Miss);
    }

    #[test]
    fn the_oldest_entries_are_evicted() {
        let root = tempfile::tempdir().expect("temp");
        let r = root.path();
        let d = dir(r);
        std::fs::create_dir_all(&d).expect("mkdir");
        let now = std::time::SystemTime::now();
        for i in 0..(MAX_ENTRIES + 5) {
            let p = d.join(format!("{i:016x}.json"));
            std::fs::write(&p, "{}").expect("write");
            let t = now - std::time::Duration::from_secs((MAX_ENTRIES + 5 - i) as u64);
            std::fs::File::options()
                .write(true)
                .open(&p)
                .and_then(|f| f.set_modified(t))
                .expect("mtime");
        }
        let ms = now
            .duration_since(std::time::UNIX_EPOCH)
            .expect("epoch")
            .as_millis() as u64;
        assert_eq!(evict(r, ms), 5);
        for i in 0..5 {
            assert!(!d.join(format!("{i:016x}.json")).exists());
        }
        assert!(d.join(format!("{:016x}.json", 5)).exists());
        assert_eq!(std::fs::read_dir(&d).expect("dir").count(), MAX_ENTRIES);
    }
}
