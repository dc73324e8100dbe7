//! Overload protection: API Priority and Fairness, as Kubernetes defines it, and the simple
//! in-flight limits it replaces when turned off (`docs/flowcontrol.md`).
//!
//! A request goes, after authentication, through [`filter`]: `matching` finds its
//! [`FlowSchema`](objects::FlowSchema) (by precedence, then name) and its flow (by user or
//! namespace); `work_estimate` says how many seats it takes (a LIST by the objects it
//! reads); the [`dispatcher`] admits it into its priority level, whose seats are a share of
//! the server's, through the level's `fair_queuing` (shuffle-sharded queues served in
//! virtual time). Past a full queue or the wait limit the answer is 429 with `Retry-After`.
//! The configuration is the [`bootstrap`] one until objects of
//! `flowcontrol.apiserver.k8s.io/v1` ([`objects`], served when the server is standalone)
//! say otherwise: [`configuration`] follows them; `metrics` reports
//! `apiserver_flowcontrol_*`. With priority and fairness off, [`max_in_flight`] applies
//! `--max-requests-inflight` and `--max-mutating-requests-inflight` as two plain limits.

pub(crate) mod bootstrap;
pub(crate) mod configuration;
pub(crate) mod dispatcher;
pub(crate) mod fair_queuing;
pub(crate) mod filter;
pub(crate) mod limits;
pub(crate) mod matching;
pub(crate) mod max_in_flight;
pub(crate) mod metrics;
pub(crate) mod objects;
mod strategy;
#[cfg(test)]
mod tests;
pub(crate) mod work_estimate;

pub(crate) use dispatcher::Dispatcher;
pub use limits::Overload;
