//! How a write that lost a compare-and-swap race waits before it retries.

/// Waits before retrying a write that lost a compare-and-swap race: a yield for the first
/// retries, then a short sleep that doubles up to ~16 ms, jittered so that racing writers
/// spread out. Retries go on while the request lives; `--request-timeout` bounds them.
#[derive(Debug, Default)]
pub(crate) struct ConflictBackoff {
    attempt: u32,
}

impl ConflictBackoff {
    /// Waits the next step.
    pub(crate) async fn wait(&mut self) {
        self.attempt = self.attempt.saturating_add(1);
        if self.attempt <= 2 {
            tokio::task::yield_now().await;
            return;
        }
        let ceiling_us = 250u64 << self.attempt.min(8).saturating_sub(3);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::from(d.subsec_nanos()));
        let jitter = nanos % ceiling_us.max(1);
        tokio::time::sleep(std::time::Duration::from_micros(
            ceiling_us / 2 + jitter / 2,
        ))
        .await;
    }
}
