//! Work deferred off a run's path: what a run tells its trace is turned into spans here, on
//! one thread per process (started when first needed), in the order it was handed over.
//! The run only hands over what happened; building and encoding the spans costs it
//! nothing. [`Later::wait`] lets a flush wait until that work is done before the exporter
//! sends what it made.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::export::lock;

/// A piece of deferred work.
pub type Work = Box<dyn FnOnce() + Send>;

/// Handing work over does not wake the thread (waking a thread costs the run more than the
/// work): it wakes this often, when this much work waits, or for a flush.
const LINGER: Duration = Duration::from_millis(25);
const WAKE_AT: usize = 64;

/// The handle of the deferred-work thread; dropping it lets the thread finish what is
/// queued and stop.
#[derive(Default)]
pub struct Later {
    shared: Arc<Shared>,
    /// The thread was started (or could not be: then the work is done by whoever hands it
    /// over).
    started: OnceLock<bool>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// The thread waits on it.
    wake: Condvar,
    /// Told when the last pending work is done.
    idle: Condvar,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Work>,
    /// Work handed over and not done yet (queued or running).
    pending: usize,
    /// The thread is waiting.
    asleep: bool,
    /// The handle is gone.
    closed: bool,
}

impl Later {
    /// Do `work` on the thread, after the work handed over before it. Without a thread (one
    /// could not be started), it is done here and now.
    pub fn run(&self, work: Work) {
        if !*self.started.get_or_init(|| self.spawn()) {
            work();
            return;
        }
        let mut s = lock(&self.shared.state);
        s.queue.push_back(work);
        s.pending += 1;
        if s.asleep && s.queue.len() >= WAKE_AT {
            self.shared.wake.notify_one();
        }
    }

    fn spawn(&self) -> bool {
        let shared = self.shared.clone();
        std::thread::Builder::new()
            .name("tfc-trace".into())
            .spawn(move || serve(&shared))
            .is_ok()
    }

    /// Wait until the work handed over so far is done, at most until `until`; `false`: the
    /// time ran out first.
    pub fn wait(&self, until: Instant) -> bool {
        let mut s = lock(&self.shared.state);
        while s.pending > 0 {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            self.shared.wake.notify_one();
            s = match self.shared.idle.wait_timeout(s, left) {
                Ok((s, _)) => s,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        true
    }
}

impl Drop for Later {
    fn drop(&mut self) {
        lock(&self.shared.state).closed = true;
        self.shared.wake.notify_one();
    }
}

/// The thread: the queued work in order, taken when it wakes; it stops once the handle is
/// gone and nothing is left.
fn serve(shared: &Shared) {
    loop {
        let work = {
            let mut s = lock(&shared.state);
            while s.queue.is_empty() {
                if s.closed {
                    return;
                }
                s.asleep = true;
                s = match shared.wake.wait_timeout(s, LINGER) {
                    Ok((s, _)) => s,
                    Err(poisoned) => poisoned.into_inner().0,
                };
                s.asleep = false;
            }
            std::mem::take(&mut s.queue)
        };
        let n = work.len();
        for w in work {
            // A failing piece of work loses its spans, not the thread.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(w));
        }
        let mut s = lock(&shared.state);
        s.pending = s.pending.saturating_sub(n);
        if s.pending == 0 {
            shared.idle.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn work_is_done_in_order_and_waited_for() {
        let later = Later::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        for i in 0..100 {
            let seen = seen.clone();
            later.run(Box::new(move || {
                if i == 0 {
                    std::thread::sleep(Duration::from_millis(20));
                }
                seen.lock().unwrap().push(i);
            }));
        }
        assert!(later.wait(Instant::now() + Duration::from_secs(10)));
        assert_eq!(*seen.lock().unwrap(), (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn a_panicking_piece_of_work_does_not_stop_the_rest() {
        let later = Later::default();
        let done = Arc::new(AtomicUsize::new(0));
        later.run(Box::new(|| panic!("lost")));
        let d = done.clone();
        later.run(Box::new(move || {
            d.fetch_add(1, Ordering::Relaxed);
        }));
        assert!(later.wait(Instant::now() + Duration::from_secs(10)));
        assert_eq!(done.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_wait_gives_up_at_its_time() {
        let later = Later::default();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        later.run(Box::new(move || {
            let _ = rx.recv_timeout(Duration::from_secs(10));
        }));
        assert!(!later.wait(Instant::now() + Duration::from_millis(30)));
        drop(tx);
        assert!(later.wait(Instant::now() + Duration::from_secs(10)));
    }
}
