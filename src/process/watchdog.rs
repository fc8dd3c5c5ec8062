//! The idle and wall deadlines of one supervised process (SPEC §9.4).
//!
//! The idle deadline moves with every byte of output; the wall deadline is fixed at the spawn.
//! A zero duration means no watchdog, like `None`. Pure bookkeeping over instants: the event
//! loop asks when the next deadline is due and whether one has passed.

use std::time::{Duration, Instant};

use super::spec::End;

/// The deadlines of one process.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Watchdog {
    started: Instant,
    idle: Option<Duration>,
    wall: Option<Duration>,
    last_output: Instant,
}

impl Watchdog {
    /// Deadlines counted from `started`; zero durations are no watchdog.
    pub(crate) fn new(
        started: Instant,
        idle: Option<Duration>,
        wall: Option<Duration>,
    ) -> Watchdog {
        Watchdog {
            started,
            idle: idle.filter(|d| !d.is_zero()),
            wall: wall.filter(|d| !d.is_zero()),
            last_output: started,
        }
    }

    /// Output arrived at `now`: the idle deadline starts over.
    pub(crate) fn output(&mut self, now: Instant) {
        self.last_output = now;
    }

    /// The deadline that has passed at `now`, if any; the wall clock wins when both have.
    pub(crate) fn expired(&self, now: Instant) -> Option<End> {
        if self.wall.is_some_and(|w| now >= self.started + w) {
            Some(End::WallTimeout)
        } else if self.idle.is_some_and(|i| now >= self.last_output + i) {
            Some(End::IdleTimeout)
        } else {
            None
        }
    }

    /// The earliest instant a deadline falls due (`None`: no watchdog).
    pub(crate) fn next_due(&self) -> Option<Instant> {
        let wall = self.wall.map(|w| self.started + w);
        let idle = self.idle.map(|i| self.last_output + i);
        match (wall, idle) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn zero_or_none_is_no_watchdog() {
        let t0 = Instant::now();
        let w = Watchdog::new(t0, Some(Duration::ZERO), None);
        assert_eq!(w.next_due(), None);
        assert_eq!(w.expired(t0 + 1000 * MS), None);
    }

    #[test]
    fn output_moves_the_idle_deadline_only() {
        let t0 = Instant::now();
        let mut w = Watchdog::new(t0, Some(10 * MS), Some(25 * MS));
        assert_eq!(w.next_due(), Some(t0 + 10 * MS));
        assert_eq!(w.expired(t0 + 9 * MS), None);
        assert_eq!(w.expired(t0 + 10 * MS), Some(End::IdleTimeout));
        w.output(t0 + 8 * MS);
        assert_eq!(w.expired(t0 + 10 * MS), None);
        assert_eq!(w.next_due(), Some(t0 + 18 * MS));
        w.output(t0 + 20 * MS);
        assert_eq!(w.next_due(), Some(t0 + 25 * MS));
        assert_eq!(w.expired(t0 + 25 * MS), Some(End::WallTimeout));
    }

    #[test]
    fn wall_wins_when_both_passed() {
        let t0 = Instant::now();
        let w = Watchdog::new(t0, Some(5 * MS), Some(5 * MS));
        assert_eq!(w.expired(t0 + 6 * MS), Some(End::WallTimeout));
    }
}
