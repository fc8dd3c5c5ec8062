//! Golden files shared by the golden harnesses: compare with the recorded text, or rewrite it
//! under `TFC_BLESS=1`.

use std::path::Path;

/// Whether the goldens are being rewritten (`TFC_BLESS=1`).
pub fn bless() -> bool {
    std::env::var_os("TFC_BLESS").is_some_and(|v| v == "1")
}

/// Compare `actual` with the golden at `path`, or write it when blessing. Returns a problem.
pub fn compare(path: &Path, actual: &str) -> Option<String> {
    if bless() {
        std::fs::write(path, actual).expect("write golden");
        return None;
    }
    match std::fs::read_to_string(path) {
        Ok(expected) if expected == actual => None,
        Ok(expected) => Some(format!(
            "{} differs:\n{}",
            path.display(),
            diff(&expected, actual)
        )),
        Err(_) => Some(format!(
            "{} is missing (run with TFC_BLESS=1 to create it)",
            path.display()
        )),
    }
}

/// A small line diff: the first differing line of each side, with context.
fn diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let first = e
        .iter()
        .zip(&a)
        .position(|(x, y)| x != y)
        .unwrap_or(e.len().min(a.len()));
    let from = first.saturating_sub(2);
    let show = |lines: &[&str]| {
        lines
            .iter()
            .enumerate()
            .skip(from)
            .take(8)
            .map(|(i, l)| format!("  {:>4} | {l}", i + 1))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!("--- expected\n{}\n+++ actual\n{}", show(&e), show(&a))
}
