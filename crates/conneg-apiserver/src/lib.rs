//! The generic machinery of a Kubernetes-style API server built on conneg, as
//! `k8s.io/apiserver` is to Kubernetes' own servers: what every resource kind needs, written
//! once and kind-agnostic.
//!
//! * [`storage`]: revisioned key-value storage shaped after etcd's v3 API, with three backends
//!   (in memory, embedded on disk with redb, and etcd for more than one replica) behind one
//!   [`Storage`](storage::Storage) trait, and one conformance suite that all three pass.
//! * [`tls`]: secure serving, the rustls configuration Kubernetes' serving flags describe.
//! * [`auth`]: who sent a request and whether they may: client certificates, the front
//!   proxy, tokens (static and TokenReview), anonymous; AlwaysAllow, AlwaysDeny, ABAC,
//!   SubjectAccessReview; impersonation.
//!
//! The example `sample-apiserver` (Kubernetes' wardle.example.com) is built on it.
#![deny(unsafe_code)]

pub mod auth;
pub mod storage;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tls;
