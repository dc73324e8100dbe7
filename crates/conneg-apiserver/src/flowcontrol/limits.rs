//! How a server protects itself from overload ([`Overload`]), as its serving flags say.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::response::Response;

use super::dispatcher::{DEFAULT_QUEUE_WAIT, DEFAULT_SEATS, Dispatcher};
use super::max_in_flight::MaxInFlight;
use crate::middleware::{Inner, Middleware, Next};

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

impl Overload {
    /// The filter that applies these limits; priority and fairness goes through `dispatcher`
    /// (its seats and queue wait set here).
    pub(crate) fn filter(self, dispatcher: Arc<Dispatcher>) -> Limiter {
        match self {
            Overload::Off => Limiter::Off,
            Overload::MaxInFlight { reads, mutating } => {
                Limiter::MaxInFlight(Arc::new(MaxInFlight::new(reads, mutating)))
            }
            Overload::PriorityAndFairness { seats, queue_wait } => {
                dispatcher.set_limits(seats, queue_wait);
                Limiter::Fairness(dispatcher)
            }
        }
    }
}

/// The overload filter of a server ([`Overload::filter`]).
#[derive(Debug, Clone)]
pub(crate) enum Limiter {
    Off,
    MaxInFlight(Arc<MaxInFlight>),
    Fairness(Arc<Dispatcher>),
}

impl Middleware for Limiter {
    async fn run<S: Inner>(self, req: Request, next: Next<S>) -> Response {
        match self {
            Limiter::Off => next.run(req).await,
            Limiter::MaxInFlight(m) => m.run(req, next).await,
            Limiter::Fairness(d) => d.run(req, next).await,
        }
    }
}
