//! What a run's summaries count, defined once: the calls of a run or a phase, and how a
//! fan-out's items ended. The end line of `tfc run`, the live view, `tfc runs`, `tfc show`
//! and the HTML report all count through here, so they never disagree.
//!
//! **Calls are agent calls**: every request sent to an agent backend, retries included (a
//! phase record's `attempts`). A script phase's run of its command is not one, although its
//! record says `attempts: 1` (SPEC §11.1): a call is what a model answers, what tokens and
//! cost are counted for, and what a replay fixture holds one line of. Reused and cached
//! phases made none. The function reads a phase's type and attempts as the record spells
//! them, so typed records and `run.json` files count the same.

/// The agent calls a phase's record stands for: its `attempts`, except for a `script` phase
/// (whose one run is no agent call). `ty` is the record's `type` (`""` when an old record has
/// none: counted as calls).
pub fn phase_calls(ty: &str, attempts: u64) -> u64 {
    if ty == "script" { 0 } else { attempts }
}

/// The agent calls of a run: [`phase_calls`] summed over its phases' `(type, attempts)`.
pub fn run_calls<'a>(phases: impl IntoIterator<Item = (&'a str, u64)>) -> u64 {
    phases.into_iter().map(|(ty, n)| phase_calls(ty, n)).sum()
}

/// `N call` / `N calls`.
pub fn calls_text(n: u64) -> String {
    format!("{n} call{}", if n == 1 { "" } else { "s" })
}

/// The error of an item stopped by an interrupt (Ctrl-C, `tfc cancel`, a lost race).
pub const ABORTED: &str = "Aborted";

/// How the items of a fan-out (`map`, `parallel`, `tournament`, `race`) ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ItemTally {
    /// Every item.
    pub total: usize,
    /// Ended with an output.
    pub done: usize,
    /// Ended with an error (aborted ones not included).
    pub failed: usize,
    /// Stopped by an interrupt before or while it ran.
    pub aborted: usize,
    /// A race's branch stopped because another won (or it did not settle in time).
    pub cancelled: usize,
    /// Not run: the budget was exceeded.
    pub skipped: usize,
}

impl ItemTally {
    /// Count items from their `(status, error)`, spelled as in the record (`done`,
    /// `failed`, `skipped`, …). An item not ended is counted in `total` only.
    pub fn count<'a>(items: impl IntoIterator<Item = (&'a str, Option<&'a str>)>) -> ItemTally {
        let mut t = ItemTally::default();
        for (status, error) in items {
            t.total += 1;
            match status {
                "done" => t.done += 1,
                "failed" if error == Some(ABORTED) => t.aborted += 1,
                "failed" if error.is_some_and(|e| e.starts_with("cancelled:")) => {
                    t.cancelled += 1;
                }
                "failed" => t.failed += 1,
                "skipped" => t.skipped += 1,
                _ => {}
            }
        }
        t
    }

    /// `3/3 items`; `2/3 items, 1 aborted`; `1/4 items, 1 failed, 1 aborted, 1 not run` —
    /// the first number counts the items done, so one that did not succeed is never shown
    /// as if it had.
    pub fn text(&self) -> String {
        let mut s = format!("{}/{} items", self.done, self.total);
        let ended = self.done + self.failed + self.aborted + self.cancelled + self.skipped;
        let not_run = self.total.saturating_sub(ended);
        for (n, what) in [
            (self.failed, "failed"),
            (self.aborted, "aborted"),
            (self.cancelled, "cancelled"),
            (self.skipped, "skipped (budget)"),
            (not_run, "not run"),
        ] {
            if n > 0 {
                s.push_str(&format!(", {n} {what}"));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_are_not_calls() {
        assert_eq!(phase_calls("script", 1), 0);
        assert_eq!(phase_calls("map", 4), 4);
        assert_eq!(phase_calls("", 2), 2);
        let changelog = [("script", 1), ("map", 4), ("script", 1), ("reduce", 1)];
        assert_eq!(run_calls(changelog), 5);
        assert_eq!(calls_text(1), "1 call");
        assert_eq!(calls_text(5), "5 calls");
    }

    #[test]
    fn items_tell_how_they_ended() {
        let t = ItemTally::count([("done", None), ("done", None), ("failed", Some(ABORTED))]);
        assert_eq!(t.text(), "2/3 items, 1 aborted");
        let all = ItemTally::count([("done", None); 3]);
        assert_eq!(all.text(), "3/3 items");
        let mixed = ItemTally::count([
            ("done", None),
            ("failed", Some("exit 1")),
            ("skipped", Some("(skipped: budget exceeded)")),
            ("pending", None),
        ]);
        assert_eq!(
            mixed.text(),
            "1/4 items, 1 failed, 1 skipped (budget), 1 not run"
        );
        let race = ItemTally::count([
            ("done", None),
            ("failed", Some("cancelled: another branch won")),
        ]);
        assert_eq!(race.text(), "1/2 items, 1 cancelled");
    }
}
