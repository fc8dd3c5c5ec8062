//! Asking for an approval on the terminal.

use crate::run::machine::Decision;

/// Ask on the terminal (stderr), reading the answer from stdin.
pub(super) fn ask(message: &str, upstream: &str) -> (Decision, Option<String>) {
    use std::io::{BufRead, Write};
    let mut err = std::io::stderr();
    let shown: String = upstream.chars().take(2000).collect();
    let _ = writeln!(err, "\n── approval ──\n{message}");
    if !shown.is_empty() {
        let _ = writeln!(err, "\n{shown}");
    }
    let stdin = std::io::stdin();
    loop {
        let _ = write!(err, "[a]pprove / [r]eject / [e]dit note: ");
        let _ = err.flush();
        let mut line = String::new();
        if stdin.lock().read_line(&mut line).unwrap_or(0) == 0 {
            return (Decision::Reject, Some("no answer (stdin closed)".into()));
        }
        match line.trim() {
            "a" | "approve" => return (Decision::Approve, None),
            "r" | "reject" => return (Decision::Reject, None),
            "e" | "edit" => {
                let _ = write!(err, "note: ");
                let _ = err.flush();
                let mut note = String::new();
                let _ = stdin.lock().read_line(&mut note);
                return (Decision::Edit, Some(note.trim().to_owned()));
            }
            _ => {}
        }
    }
}
