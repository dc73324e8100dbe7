//! How a server protects itself from overload ([`Overload`]), as its serving flags say.

use std::time::Duration;

use super::dispatcher::{DEFAULT_QUEUE_WAIT, DEFAULT_SEATS};

/// How requests are limited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overload {
    /// Not at all.
    Off,
    /// At most `reads` reads and `mutating` writes at once (0: no limit), 429 past them
    /// (`--enable-priority-and-fairness=false`).
    MaxInFlight {
        /// `--max-requests-inflight`.
        reads: usize,
        /// `--max-mutating-requests-inflight`.
        mutating: usize,
    },
    /// API Priority and Fairness over `seats` seats, a request waiting at most `queue_wait`
    /// in its queue.
    PriorityAndFairness {
        /// The server's seats, split among the priority levels.
        seats: u32,
        /// The longest wait in a queue before 429.
        queue_wait: Duration,
    },
}

impl Default for Overload {
    /// Priority and fairness over Kubernetes' 400 + 200 seats, 15 s of queuing at most.
    fn default() -> Self {
        Overload::PriorityAndFairness {
            seats: DEFAULT_SEATS,
            queue_wait: DEFAULT_QUEUE_WAIT,
        }
    }
}
