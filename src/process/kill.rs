//! Process groups and stopping them: every child leads a group of its own, a [`GroupGuard`]
//! kills that group on every exit path, and a [`Stopper`] escalates SIGTERM → SIGKILL.

use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// Stopping the group: SIGTERM, then SIGKILL after the grace (or SIGKILL at once).
pub(crate) struct Stopper {
    grace: Duration,
    kill_on_cancel: bool,
    term_sent: bool,
    kill_at: Option<Instant>,
    killed: bool,
}

impl Stopper {
    /// Nothing sent yet; `grace` is the SIGTERM → SIGKILL delay (zero: SIGKILL at once), and
    /// `kill_on_cancel` makes cancellation SIGKILL at once.
    pub(crate) fn new(grace: Duration, kill_on_cancel: bool) -> Stopper {
        Stopper {
            grace,
            kill_on_cancel,
            term_sent: false,
            kill_at: None,
            killed: false,
        }
    }

    /// Has stopping begun (SIGTERM or SIGKILL sent)?
    pub(crate) fn term_sent(&self) -> bool {
        self.term_sent
    }

    /// SIGKILL the group now, with no grace (the output cap).
    pub(crate) fn kill_now(&mut self, guard: &GroupGuard) {
        guard.signal(Signal::SIGKILL);
        self.killed = true;
        self.term_sent = true;
    }

    /// Begin stopping: SIGTERM and a SIGKILL due after the grace, or SIGKILL at once when the
    /// grace is zero or this is a cancellation with `kill_on_cancel`. Idempotent.
    pub(crate) fn stop(&mut self, guard: &GroupGuard, cancel: bool) {
        if self.killed {
            return;
        }
        if (cancel && self.kill_on_cancel) || self.grace.is_zero() {
            guard.signal(Signal::SIGKILL);
            self.killed = true;
            self.term_sent = true;
        } else if !self.term_sent {
            guard.signal(Signal::SIGTERM);
            self.term_sent = true;
            self.kill_at = Some(Instant::now() + self.grace);
        }
    }

    /// SIGKILL once the grace is over.
    pub(crate) fn tick(&mut self, guard: &GroupGuard, now: Instant) {
        if let Some(at) = self.pending_kill()
            && now >= at
        {
            guard.signal(Signal::SIGKILL);
            self.killed = true;
        }
    }

    /// When the escalation's SIGKILL is due, if it is still pending.
    pub(crate) fn pending_kill(&self) -> Option<Instant> {
        self.kill_at.filter(|_| !self.killed)
    }
}

/// Kills the process group when dropped (every exit path, a dropped future included).
pub(crate) struct GroupGuard {
    pgid: Pid,
    live: bool,
}

/// Process groups of children still running, so an exiting tfc can take them along.
static LIVE_GROUPS: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// SIGKILL every process group a call still runs (for an immediate exit, e.g. a second
/// Ctrl-C, when no destructor will run).
pub fn kill_all_groups() {
    if let Ok(groups) = LIVE_GROUPS.lock() {
        for &g in groups.iter() {
            let _ = killpg(Pid::from_raw(g), Signal::SIGKILL);
        }
    }
}

impl GroupGuard {
    /// Guard the group `pgid` (registered in the live list until dropped).
    pub(crate) fn new(pgid: Pid) -> GroupGuard {
        if let Ok(mut groups) = LIVE_GROUPS.lock() {
            groups.push(pgid.as_raw());
        }
        GroupGuard { pgid, live: true }
    }

    /// Send `sig` to the whole group.
    pub(crate) fn signal(&self, sig: Signal) {
        // ESRCH (nobody left in the group) is the expected answer once everything exited.
        let _ = killpg(self.pgid, sig);
    }
}

impl GroupGuard {
    /// The supervision is over: SIGKILL whatever is left of the group, and drop it from the
    /// live list without signalling it again.
    pub(crate) fn finish(&mut self) {
        self.signal(Signal::SIGKILL);
        self.live = false;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.live {
            self.signal(Signal::SIGKILL);
        }
        if let Ok(mut groups) = LIVE_GROUPS.lock() {
            groups.retain(|&g| g != self.pgid.as_raw());
        }
    }
}
