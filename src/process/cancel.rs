//! Cancellation: a [`CancelSource`] fires once; every [`Cancel`] cloned from it sees it.

/// The firing side. Dropping it does not cancel; [`CancelSource::cancel`] does.
#[derive(Debug)]
pub struct CancelSource {
    tx: async_channel::Sender<()>,
    rx: async_channel::Receiver<()>,
}

/// The observing side, cheap to clone.
#[derive(Clone, Debug)]
pub struct Cancel {
    /// `None`: never fires.
    rx: Option<async_channel::Receiver<()>>,
}

impl Default for CancelSource {
    fn default() -> Self {
        Self::new()
    }
}

impl CancelSource {
    /// A source that has not fired.
    pub fn new() -> CancelSource {
        let (tx, rx) = async_channel::bounded(1);
        CancelSource { tx, rx }
    }

    /// A token that observes this source.
    pub fn token(&self) -> Cancel {
        Cancel {
            rx: Some(self.rx.clone()),
        }
    }

    /// Fire: every token's `cancelled()` completes. Idempotent.
    pub fn cancel(&self) {
        self.tx.close();
    }
}

impl Cancel {
    /// A token that never fires.
    pub fn never() -> Cancel {
        Cancel { rx: None }
    }

    /// Has the source fired?
    pub fn is_cancelled(&self) -> bool {
        self.rx.as_ref().is_some_and(|rx| rx.is_closed())
    }

    /// Completes when the source fires.
    pub async fn cancelled(&self) {
        match &self.rx {
            // Nothing is ever sent: `recv` returns only when the channel is closed.
            Some(rx) => {
                let _ = rx.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_all_tokens() {
        let s = CancelSource::new();
        let (a, b) = (s.token(), s.token().clone());
        assert!(!a.is_cancelled());
        s.cancel();
        assert!(a.is_cancelled() && b.is_cancelled());
        smol::block_on(a.cancelled());
        assert!(!Cancel::never().is_cancelled());
    }
}
