//! The dispatcher: the configuration in force (schemas in matching order, levels with their
//! seats and queues) and the admission of one request into its level: run now, wait in its
//! flow's queue until its seats are free, or be refused.
//!
//! The server's seats (`--max-requests-inflight` + `--max-mutating-requests-inflight`) are
//! split among the limited levels by their nominal concurrency shares:
//! `ceil(seats × shares / Σ shares)`. Borrowing between levels (`lendablePercent`) is not
//! done: each level keeps its nominal seats.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::HeaderValue;
use tokio::sync::oneshot;
// Tokio's clock: std's, except in tests that pause time to give requests a duration.
use tokio::time::Instant;

use super::bootstrap;
use super::fair_queuing::{Dispatched, QueueSet, Queuing, Ticket};
use super::matching;
use super::metrics::{FlowStats, LevelReport, Rejection};
use super::objects::{EXEMPT, FlowSchema, PriorityLevelConfiguration, REJECT};
use crate::auth::{Attributes, UserInfo};
use crate::live::Live;
use crate::registry::ObjectCounts;

/// Kubernetes' default share of a limited level that does not say.
const DEFAULT_SHARES: u32 = 30;

/// What waits in a queue: where to send its permit.
type Waiter = (oneshot::Sender<Permit>, Arc<FlowStats>);

/// One priority level.
pub(crate) struct Level {
    pub name: String,
    pub uid: HeaderValue,
    /// Never limited.
    exempt: bool,
    /// Rejects past its seats rather than queue.
    reject: bool,
    queues: Mutex<QueueSet<Waiter>>,
    /// The origin of the queues' real time.
    epoch: Instant,
}

impl std::fmt::Debug for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Level")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Seats held by a running request; dropping it gives them back and lets the next waiting
/// requests of the level run.
#[derive(Debug)]
pub(crate) struct Permit {
    level: Arc<Level>,
    queue: Option<usize>,
    seats: u32,
    stats: Arc<FlowStats>,
    /// When its seats were taken.
    started: Instant,
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.stats.finished();
        if self.level.exempt {
            return;
        }
        let next = {
            let mut qs = self.level.lock();
            qs.finish(self.queue, self.seats, self.started.elapsed());
            drain(&mut qs)
        };
        self.level.start(next);
    }
}

fn drain(qs: &mut QueueSet<Waiter>) -> Vec<Dispatched<Waiter>> {
    std::iter::from_fn(|| qs.dispatch()).collect()
}

impl Level {
    /// The queues, their virtual time brought up to now.
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueSet<Waiter>> {
        let mut qs = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
        qs.advance(self.epoch.elapsed());
        qs
    }

    /// The most seats one request of this level may take.
    pub(crate) fn max_seats(&self) -> u32 {
        self.lock().limit()
    }

    /// Sends their permits to dispatched requests (outside the lock: a permit whose
    /// request has gone is dropped, which takes the lock again).
    fn start(self: &Arc<Self>, dispatched: Vec<Dispatched<Waiter>>) {
        for d in dispatched {
            let (tx, stats) = d.item;
            stats.left_queue();
            stats.started();
            let permit = Permit {
                level: self.clone(),
                queue: Some(d.queue),
                seats: d.seats,
                stats,
                started: Instant::now(),
            };
            drop(tx.send(permit));
        }
    }

    /// Admits a request of the flow hashed to `flow` for `seats`: a permit once its seats
    /// are free, or why not. It waits at most `wait` in its queue.
    pub(crate) async fn admit(
        self: &Arc<Self>,
        flow: u64,
        seats: u32,
        stats: &Arc<FlowStats>,
        wait: Duration,
    ) -> Result<Permit, Rejection> {
        let permit = |queue| Permit {
            level: self.clone(),
            queue,
            seats,
            stats: stats.clone(),
            started: Instant::now(),
        };
        if self.exempt {
            stats.started();
            return Ok(permit(None));
        }
        let (ticket, next, mut rx) = {
            let mut qs = self.lock();
            if self.reject {
                if !qs.try_run(seats) {
                    drop(qs);
                    stats.rejected(Rejection::ConcurrencyLimit);
                    return Err(Rejection::ConcurrencyLimit);
                }
                drop(qs);
                stats.started();
                return Ok(permit(None));
            }
            // Nothing waits and the seats are free (the usual case): it runs now, charged to
            // its queue as if it had gone through it.
            if let Some(queue) = qs.start_now(flow, seats) {
                drop(qs);
                stats.started();
                return Ok(permit(Some(queue)));
            }
            let (tx, rx) = oneshot::channel();
            let Ok(ticket) = qs.enqueue(flow, seats, (tx, stats.clone())) else {
                drop(qs);
                stats.rejected(Rejection::QueueFull);
                return Err(Rejection::QueueFull);
            };
            stats.queued();
            (ticket, drain(&mut qs), rx)
        };
        self.start(next);
        let mut waiting = Waiting {
            level: self,
            ticket: Some(ticket),
        };
        match tokio::time::timeout(wait, &mut rx).await {
            Ok(Ok(permit)) => {
                waiting.ticket = None;
                Ok(permit)
            }
            Ok(Err(_)) => Err(Rejection::TimeOut),
            Err(_) => {
                waiting.ticket = None;
                if self.lock().remove(ticket).is_some() {
                    stats.left_queue();
                    stats.rejected(Rejection::TimeOut);
                    return Err(Rejection::TimeOut);
                }
                // Dispatched meanwhile: the permit is on its way.
                rx.await.map_err(|_| Rejection::TimeOut)
            }
        }
    }
}

/// A request waiting in a queue; if its client goes away, it leaves the queue.
struct Waiting<'a> {
    level: &'a Arc<Level>,
    ticket: Option<Ticket>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(t) = self.ticket.take()
            && let Some((_, stats)) = self.level.lock().remove(t)
        {
            stats.left_queue();
        }
    }
}

/// A flow schema in force.
#[derive(Debug)]
pub(crate) struct Classifier {
    pub schema: FlowSchema,
    pub uid: HeaderValue,
    pub level: Arc<Level>,
    pub stats: Arc<FlowStats>,
}

/// The configuration in force.
#[derive(Debug, Default)]
struct Config {
    /// How long a request may wait in its queue.
    queue_wait: Duration,
    /// In matching order.
    schemas: Vec<Classifier>,
    levels: Vec<Arc<Level>>,
}

/// What the configuration is made of.
#[derive(Debug, Clone)]
struct Inputs {
    seats: u32,
    queue_wait: Duration,
    schemas: Vec<FlowSchema>,
    levels: Vec<PriorityLevelConfiguration>,
}

/// Priority and fairness for one server: classifies requests and admits them into their
/// levels; cheap to share (`Arc`).
#[derive(Debug)]
pub(crate) struct Dispatcher {
    config: Live<Config>,
    inputs: Mutex<Inputs>,
    /// Counters by (level, schema), kept across reconfigurations.
    stats: Mutex<BTreeMap<(String, String), Arc<FlowStats>>>,
    /// The last known size of each collection, for the cost of lists.
    pub(crate) counts: ObjectCounts,
}

/// Kubernetes' default seats: `--max-requests-inflight` 400 + `--max-mutating-requests-inflight`
/// 200.
pub(crate) const DEFAULT_SEATS: u32 = 600;
/// How long a request waits in its queue at most, by default (a quarter of the 60 s
/// request timeout).
pub(crate) const DEFAULT_QUEUE_WAIT: Duration = Duration::from_secs(15);

fn header(uid: &str) -> HeaderValue {
    HeaderValue::from_str(uid).unwrap_or_else(|_| HeaderValue::from_static(""))
}

fn uid_of(meta: &mut crate::meta::ObjectMeta) -> HeaderValue {
    if meta.uid.is_empty() {
        meta.uid = crate::names::new_uid();
    }
    header(&meta.uid)
}

impl Dispatcher {
    /// A dispatcher of `seats` with the built-in configuration, estimating lists with
    /// `counts`, letting requests wait at most `queue_wait`.
    pub(crate) fn new(seats: u32, queue_wait: Duration, counts: ObjectCounts) -> Self {
        let mut levels = bootstrap::mandatory_priority_levels();
        levels.extend(bootstrap::suggested_priority_levels());
        let mut schemas = bootstrap::mandatory_flow_schemas();
        schemas.extend(bootstrap::suggested_flow_schemas());
        let d = Dispatcher {
            config: Live::new(Config::default()),
            inputs: Mutex::new(Inputs {
                seats,
                queue_wait,
                schemas: Vec::new(),
                levels: Vec::new(),
            }),
            stats: Mutex::default(),
            counts,
        };
        d.apply(schemas, levels);
        d
    }

    fn inputs(&self) -> std::sync::MutexGuard<'_, Inputs> {
        self.inputs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts `schemas` and `levels` in force (the mandatory ones are added when missing);
    /// requests waiting in a level that stays keep their place.
    pub(crate) fn apply(&self, schemas: Vec<FlowSchema>, levels: Vec<PriorityLevelConfiguration>) {
        let mut inputs = self.inputs();
        inputs.schemas = schemas;
        inputs.levels = levels;
        self.rebuild(&inputs);
    }

    /// Sets the server's seats (every level's share changes with it) and the longest wait
    /// in a queue.
    pub(crate) fn set_limits(&self, seats: u32, queue_wait: Duration) {
        let mut inputs = self.inputs();
        inputs.seats = seats;
        inputs.queue_wait = queue_wait;
        self.rebuild(&inputs);
    }

    fn rebuild(&self, inputs: &Inputs) {
        let mut levels = inputs.levels.clone();
        for m in bootstrap::mandatory_priority_levels() {
            if !levels.iter().any(|l| l.metadata.name == m.metadata.name) {
                levels.push(m);
            }
        }
        let mut schemas = inputs.schemas.clone();
        for m in bootstrap::mandatory_flow_schemas() {
            if !schemas.iter().any(|s| s.metadata.name == m.metadata.name) {
                schemas.push(m);
            }
        }
        schemas.sort_by(matching::precedence);
        let shares = |pl: &PriorityLevelConfiguration| -> u32 {
            match (&pl.spec.limited, &pl.spec.exempt) {
                (Some(l), _) => l
                    .nominal_concurrency_shares
                    .map_or(DEFAULT_SHARES, |s| u32::try_from(s).unwrap_or(0)),
                (None, Some(e)) => e
                    .nominal_concurrency_shares
                    .map_or(0, |s| u32::try_from(s).unwrap_or(0)),
                (None, None) => 0,
            }
        };
        let total: u64 = levels
            .iter()
            .map(|l| u64::from(shares(l)))
            .sum::<u64>()
            .max(1);
        let old = self.config.get();
        let mut built: Vec<Arc<Level>> = Vec::new();
        for mut pl in levels {
            let nominal = (u64::from(inputs.seats) * u64::from(shares(&pl))).div_ceil(total);
            let nominal = u32::try_from(nominal).unwrap_or(u32::MAX).max(1);
            let exempt = pl.spec.type_ == EXEMPT;
            let limited = pl.spec.limited.clone().unwrap_or_default();
            let reject = !exempt && limited.limit_response.type_ == REJECT;
            let q = limited.limit_response.queuing.unwrap_or_default();
            let queuing = Queuing {
                queues: usize::try_from(q.queues).unwrap_or(0).max(1),
                hand_size: usize::try_from(q.hand_size).unwrap_or(0).max(1),
                queue_length_limit: usize::try_from(q.queue_length_limit).unwrap_or(0),
            };
            let uid = uid_of(&mut pl.metadata);
            let level = match old.levels.iter().find(|l| {
                l.name == pl.metadata.name
                    && l.exempt == exempt
                    && l.reject == reject
                    && l.uid == uid
            }) {
                Some(l) => {
                    l.lock().reconfigure(nominal, queuing);
                    l.clone()
                }
                None => Arc::new(Level {
                    name: pl.metadata.name.clone(),
                    uid,
                    exempt,
                    reject,
                    queues: Mutex::new(QueueSet::new(nominal, queuing)),
                    epoch: Instant::now(),
                }),
            };
            built.push(level);
        }
        let mut stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        let classifiers = schemas
            .into_iter()
            .filter_map(|mut fs| {
                let level = built
                    .iter()
                    .find(|l| l.name == fs.spec.priority_level_configuration.name)?
                    .clone();
                let stats = stats
                    .entry((level.name.clone(), fs.metadata.name.clone()))
                    .or_default()
                    .clone();
                let uid = uid_of(&mut fs.metadata);
                Some(Classifier {
                    schema: fs,
                    uid,
                    level,
                    stats,
                })
            })
            .collect();
        self.config.update(|_| Config {
            queue_wait: inputs.queue_wait,
            schemas: classifiers,
            levels: built,
        });
    }

    /// The schema the request of `user` doing `attrs` falls under (`catch-all` when none
    /// matches), and its flow.
    pub(crate) fn classify(&self, user: &UserInfo, attrs: &Attributes) -> Option<Classified> {
        let config = self.config.get();
        let at = config
            .schemas
            .iter()
            .position(|c| matching::matches(&c.schema, user, attrs))
            .or_else(|| {
                config
                    .schemas
                    .iter()
                    .position(|c| c.schema.metadata.name == "catch-all")
            })?;
        let c = &config.schemas[at];
        let mut h = std::hash::DefaultHasher::new();
        c.schema.metadata.name.hash(&mut h);
        matching::distinguisher(&c.schema, user, attrs).hash(&mut h);
        let flow = h.finish();
        Some(Classified { config, at, flow })
    }

    /// The metrics text.
    pub(crate) fn render_metrics(&self) -> String {
        let config = self.config.get();
        let levels: Vec<LevelReport<'_>> = config
            .levels
            .iter()
            .map(|l| {
                let qs = l.lock();
                LevelReport {
                    name: &l.name,
                    nominal_seats: qs.limit(),
                    executing_seats: qs.executing_seats(),
                }
            })
            .collect();
        let stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        super::metrics::render(
            stats
                .iter()
                .map(|((l, s), st)| (l.as_str(), s.as_str(), &**st)),
            &levels,
        )
    }
}

/// A request's schema and flow (the configuration it was read from is kept alive with it).
pub(crate) struct Classified {
    config: Arc<Config>,
    at: usize,
    /// The hash of the flow (schema and distinguisher).
    pub flow: u64,
}

impl Classified {
    /// The schema, its level and counters.
    pub(crate) fn classifier(&self) -> &Classifier {
        &self.config.schemas[self.at]
    }

    /// How long it may wait in its queue.
    pub(crate) fn queue_wait(&self) -> Duration {
        self.config.queue_wait
    }
}
