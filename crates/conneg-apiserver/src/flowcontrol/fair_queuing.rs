//! Fair queuing of one priority level, with shuffle sharding: the data structure alone (no
//! clocks, no tasks), so its order can be tested exactly.
//!
//! Each flow (a schema and its distinguisher, hashed) is dealt a hand of queues from the
//! level's deck ([`deal`]); a request joins the emptiest queue of its hand, so a flow that
//! floods fills its own few queues while another flow almost always finds a queue of its
//! own. Queues are served in virtual time, as in Kubernetes' fair queuing, where service is
//! seats held times how long they are held (seat-seconds):
//! - the level's virtual time advances with real time, by the seats in use shared among the
//!   queues that have requests waiting or running ([`QueueSet::advance`]): one virtual
//!   second is what each such queue would get of one seat in one real second;
//! - a queue that had nothing waiting nor running starts again at the level's virtual time
//!   (what it sent before is forgotten: a client polling one object is a new flow each time);
//! - a request's duration is known only when it ends, so a dispatched request charges its
//!   queue a large guess ([`GUESS_SECONDS`] per seat) at once, and the difference is given
//!   back when it finishes ([`QueueSet::finish`]);
//! - the head whose virtual finish (its queue's virtual start plus its seats times the
//!   guess) comes first goes next, as soon as its seats are free.
//!
//! So a flow that has held many seat-seconds is behind one that has held few (a flood of
//! long LISTs behind a client of short GETs, however many GETs it sends), and a narrow
//! request goes ahead of a wide one that started with it.

use std::collections::VecDeque;
use std::time::Duration;

/// The duration a request is charged per seat when it is dispatched, before its own is
/// known (the request timeout: a guess on the long side, so a queue with requests running is
/// behind one that has none, and gets back what they did not use when they end).
pub(crate) const GUESS_SECONDS: f64 = 60.0;

/// How a limited level queues (Kubernetes' `QueuingConfiguration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Queuing {
    /// Queues of the level.
    pub queues: usize,
    /// Queues dealt to each flow.
    pub hand_size: usize,
    /// Requests waiting in one queue at most.
    pub queue_length_limit: usize,
}

/// A waiting request.
#[derive(Debug)]
struct Waiting<T> {
    id: u64,
    seats: u32,
    item: T,
}

#[derive(Debug)]
struct Queue<T> {
    waiting: VecDeque<Waiting<T>>,
    /// Virtual start of the queue's head (seat-seconds): the level's virtual time when the
    /// queue was idle, plus what its requests since then were charged.
    next_start: f64,
    /// Seats waiting and executing (what "emptiest" compares).
    seats: u64,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Self {
            waiting: VecDeque::new(),
            next_start: 0.0,
            seats: 0,
        }
    }
}

/// Where a request waits: its queue and its id, to take it out again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket {
    pub queue: usize,
    pub id: u64,
}

/// A request that may run now: its item, its queue and its seats (to give back with
/// [`QueueSet::finish`]).
#[derive(Debug)]
pub(crate) struct Dispatched<T> {
    pub item: T,
    pub queue: usize,
    pub seats: u32,
}

/// The queues of one level and its seats.
#[derive(Debug)]
pub(crate) struct QueueSet<T> {
    queues: Vec<Queue<T>>,
    queuing: Queuing,
    /// Seats of the level.
    limit: u32,
    /// Seats taken by running requests.
    executing: u32,
    /// The level's virtual time (seat-seconds per busy queue): where an idle queue starts
    /// again.
    virtual_time: f64,
    /// The real time virtual time was last advanced to.
    clock: Duration,
    /// Queues with requests waiting or running.
    busy: usize,
    next_id: u64,
    /// Requests waiting in all queues (none: nothing to dispatch, no queue to look at).
    waiting: usize,
}

/// The `hand_size` distinct queues out of `deck` that the flow hashed to `hash` is dealt:
/// each draw takes a digit of `hash` in a decreasing base, as an index into the cards not
/// dealt yet.
pub(crate) fn deal(hash: u64, deck: usize, hand_size: usize) -> Vec<usize> {
    let hand_size = hand_size.clamp(1, deck.max(1));
    let mut hand: Vec<usize> = Vec::with_capacity(hand_size);
    let mut sorted: Vec<usize> = Vec::with_capacity(hand_size);
    let mut h = hash;
    for i in 0..hand_size {
        let remaining = (deck - i) as u64;
        let mut card = usize::try_from(h % remaining).unwrap_or(0);
        h /= remaining;
        for taken in &sorted {
            if *taken <= card {
                card += 1;
            }
        }
        let at = sorted.partition_point(|c| *c < card);
        sorted.insert(at, card);
        hand.push(card);
    }
    hand
}

impl<T> QueueSet<T> {
    /// A level of `limit` seats (at least one) queuing as `queuing` says.
    pub(crate) fn new(limit: u32, queuing: Queuing) -> Self {
        let mut qs = Self {
            queues: Vec::new(),
            queuing,
            limit: 1,
            executing: 0,
            virtual_time: 0.0,
            clock: Duration::ZERO,
            busy: 0,
            next_id: 0,
            waiting: 0,
        };
        qs.reconfigure(limit, queuing);
        qs
    }

    /// New seats or queues; waiting requests stay, those of queues that go away join the
    /// remaining ones in order.
    pub(crate) fn reconfigure(&mut self, limit: u32, queuing: Queuing) {
        let queues = queuing.queues.max(1);
        self.limit = limit.max(1);
        self.queuing = Queuing { queues, ..queuing };
        if self.queues.len() > queues {
            let extra: Vec<Queue<T>> = self.queues.drain(queues..).collect();
            for (i, q) in extra.into_iter().enumerate() {
                let into = &mut self.queues[i % queues];
                into.seats += q.seats;
                into.waiting.extend(q.waiting);
            }
        }
        self.queues.resize_with(queues, Queue::default);
        self.busy = self.queues.iter().filter(|q| q.seats > 0).count();
    }

    /// Advances virtual time to the real time `now` (since any fixed origin; earlier times
    /// are ignored): by the seats in use, shared among the busy queues.
    pub(crate) fn advance(&mut self, now: Duration) {
        let Some(elapsed) = now.checked_sub(self.clock) else {
            return;
        };
        self.clock = now;
        if self.busy > 0 {
            let in_use = self.executing.min(self.limit);
            self.virtual_time += elapsed.as_secs_f64() * f64::from(in_use) / self.busy as f64;
        }
    }

    /// Seats of the level.
    pub(crate) fn limit(&self) -> u32 {
        self.limit
    }

    /// Seats taken by running requests.
    pub(crate) fn executing_seats(&self) -> u32 {
        self.executing
    }

    /// Requests waiting.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        debug_assert_eq!(
            self.waiting,
            self.queues.iter().map(|q| q.waiting.len()).sum::<usize>()
        );
        self.waiting
    }

    /// The queue a request of the flow hashed to `flow` joins (the emptiest of its hand),
    /// with its id, when that queue has room; the queue starts at the level's virtual time
    /// when it was idle, and the request's seats are counted in it.
    fn join(&mut self, flow: u64, seats: u32) -> Option<Ticket> {
        let hand = deal(flow, self.queues.len(), self.queuing.hand_size);
        let queue = hand.into_iter().min_by_key(|q| self.queues[*q].seats)?;
        let q = &mut self.queues[queue];
        if q.waiting.len() >= self.queuing.queue_length_limit {
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        if q.seats == 0 {
            q.next_start = self.virtual_time;
            self.busy += 1;
        }
        q.seats += u64::from(seats);
        Some(Ticket { queue, id })
    }

    /// Queues `item` of the flow hashed to `flow` for `seats`, or gives it back when the
    /// emptiest queue of the flow's hand is full.
    pub(crate) fn enqueue(&mut self, flow: u64, seats: u32, item: T) -> Result<Ticket, T> {
        let Some(ticket) = self.join(flow, seats) else {
            return Err(item);
        };
        self.queues[ticket.queue].waiting.push_back(Waiting {
            id: ticket.id,
            seats,
            item,
        });
        self.waiting += 1;
        Ok(ticket)
    }

    /// When nothing waits and `seats` fit, what [`QueueSet::enqueue`] then
    /// [`QueueSet::dispatch`] would do for one request at once (the same queue charged the
    /// same virtual time), without the item: the queue it runs from, to give back with
    /// [`QueueSet::finish`]. `None`: it must queue (or be refused) as usual.
    pub(crate) fn start_now(&mut self, flow: u64, seats: u32) -> Option<usize> {
        if self.waiting > 0 || !self.fits(seats) {
            return None;
        }
        let ticket = self.join(flow, seats)?;
        self.start(ticket.queue, seats);
        Some(ticket.queue)
    }

    /// The head of `queue`, `seats` wide, starts: its queue is charged the guess.
    fn start(&mut self, queue: usize, seats: u32) {
        self.queues[queue].next_start += f64::from(seats) * GUESS_SECONDS;
        self.executing += seats;
    }

    /// Whether `seats` more fit now: within the limit, or nothing runs at all (a request
    /// wider than the level still runs, alone).
    fn fits(&self, seats: u32) -> bool {
        self.executing == 0 || self.executing + seats <= self.limit
    }

    /// Runs `seats` now without queuing, if they fit (levels that reject past their seats).
    pub(crate) fn try_run(&mut self, seats: u32) -> bool {
        let fits = self.fits(seats);
        if fits {
            self.executing += seats;
        }
        fits
    }

    /// The next waiting request, if its seats are free: the head with the smallest virtual
    /// finish (the earlier arrival on a tie).
    pub(crate) fn dispatch(&mut self) -> Option<Dispatched<T>> {
        if self.waiting == 0 {
            return None;
        }
        let queue = self
            .queues
            .iter()
            .enumerate()
            .filter_map(|(i, q)| {
                let w = q.waiting.front()?;
                Some((q.next_start + f64::from(w.seats) * GUESS_SECONDS, w.id, i))
            })
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))?
            .2;
        let seats = self.queues[queue].waiting.front()?.seats;
        if !self.fits(seats) {
            return None;
        }
        let w = self.queues[queue].waiting.pop_front()?;
        self.waiting -= 1;
        self.start(queue, seats);
        Some(Dispatched {
            item: w.item,
            queue,
            seats,
        })
    }

    /// A request dispatched from `queue` (or run by [`QueueSet::try_run`], with no queue)
    /// finished after holding its seats for `held`: its seats are free again, and its queue
    /// is charged what it used instead of the guess.
    pub(crate) fn finish(&mut self, queue: Option<usize>, seats: u32, held: Duration) {
        self.executing = self.executing.saturating_sub(seats);
        if let Some(q) = queue.and_then(|q| self.queues.get_mut(q)) {
            q.next_start -= f64::from(seats) * (GUESS_SECONDS - held.as_secs_f64());
            self.busy -= usize::from(q.seats > 0);
            q.seats = q.seats.saturating_sub(u64::from(seats));
            self.busy += usize::from(q.seats > 0);
        }
    }

    /// Takes a waiting request out (it timed out or its client left), or `None` when it is
    /// no longer waiting (dispatched meanwhile).
    pub(crate) fn remove(&mut self, ticket: Ticket) -> Option<T> {
        let q = self.queues.get_mut(ticket.queue)?;
        let at = q.waiting.iter().position(|w| w.id == ticket.id)?;
        let w = q.waiting.remove(at)?;
        self.waiting -= 1;
        self.busy -= usize::from(q.seats > 0);
        q.seats = q.seats.saturating_sub(u64::from(w.seats));
        self.busy += usize::from(q.seats > 0);
        Some(w.item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: Queuing = Queuing {
        queues: 128,
        hand_size: 6,
        queue_length_limit: 50,
    };

    #[test]
    fn a_hand_is_distinct_cards_of_the_deck() {
        for hash in [0, 1, 42, u64::MAX, 0x9e37_79b9_7f4a_7c15] {
            let hand = deal(hash, 128, 6);
            assert_eq!(hand.len(), 6);
            let mut sorted = hand.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 6, "{hand:?}");
            assert!(hand.iter().all(|c| *c < 128));
        }
        assert_eq!(deal(7, 4, 4).len(), 4);
        // A hand larger than the deck is the whole deck.
        let mut all = deal(7, 3, 9);
        all.sort_unstable();
        assert_eq!(all, [0, 1, 2]);
        // Different flows get different hands.
        assert_ne!(deal(1, 128, 6), deal(2, 128, 6));
    }

    /// A request started at once ([`QueueSet::start_now`]) leaves the level as going
    /// through its queue does (enqueue, then dispatch): the same queue charged the same
    /// virtual time, whatever ran and waited before; and it is refused exactly when
    /// something waits or its seats do not fit.
    #[test]
    fn starting_now_is_queuing_then_dispatching() {
        let q = Queuing {
            queues: 8,
            hand_size: 3,
            queue_length_limit: 4,
        };
        let (mut direct, mut queued) = (QueueSet::new(6, q), QueueSet::new(6, q));
        let mut running = Vec::new();
        let mut h = 0x9e37_79b9_7f4a_7c15_u64;
        for step in 0..400_u32 {
            h ^= h << 13;
            h ^= h >> 7;
            h ^= h << 17;
            let (flow, seats) = (h % 5, 1 + u32::try_from(h % 3).unwrap());
            if h.is_multiple_of(4) && !running.is_empty() {
                let (queue, seats) = running.remove(0);
                direct.finish(Some(queue), seats, Duration::ZERO);
                queued.finish(Some(queue), seats, Duration::ZERO);
                drain_both(&mut direct, &mut queued, &mut running);
                continue;
            }
            match direct.start_now(flow, seats) {
                Some(queue) => {
                    queued.enqueue(flow, seats, step).unwrap();
                    let d = queued.dispatch().expect("dispatched at once");
                    assert_eq!((d.item, d.queue, d.seats), (step, queue, seats));
                    assert!(queued.dispatch().is_none());
                    running.push((queue, seats));
                }
                None => {
                    assert!(direct.waiting() > 0 || !direct.fits(seats));
                    let (a, b) = (
                        direct.enqueue(flow, seats, step),
                        queued.enqueue(flow, seats, step),
                    );
                    assert_eq!(a, b);
                    drain_both(&mut direct, &mut queued, &mut running);
                }
            }
            assert_eq!(format!("{direct:?}"), format!("{queued:?}"), "step {step}");
        }
    }

    /// Dispatches from both sets while they can, the same requests from the same queues.
    fn drain_both(a: &mut QueueSet<u32>, b: &mut QueueSet<u32>, running: &mut Vec<(usize, u32)>) {
        loop {
            match (a.dispatch(), b.dispatch()) {
                (Some(x), Some(y)) => {
                    assert_eq!((x.item, x.queue, x.seats), (y.item, y.queue, y.seats));
                    running.push((x.queue, x.seats));
                }
                (None, None) => return,
                (x, y) => panic!("{x:?} and {y:?}"),
            }
        }
    }

    /// A flood of 10-seat requests by one flow, then one 1-seat request by another: the
    /// other's goes next, ahead of every flood request that arrived before it.
    #[test]
    fn a_flood_does_not_starve_another_flow() {
        let mut qs = QueueSet::new(20, Q);
        let (flood, other) = (0xA11CE, 0xB0B);
        for i in 0..60 {
            qs.enqueue(flood, 10, format!("a{i}")).unwrap();
        }
        let mut order = Vec::new();
        let mut running = Vec::new();
        while let Some(d) = qs.dispatch() {
            running.push((d.queue, d.seats));
            order.push(d.item);
        }
        assert_eq!(order, ["a0", "a1"], "two 10-seat requests fill 20 seats");
        qs.enqueue(other, 1, "b0".to_owned()).unwrap();
        // One flood request finishes: the other flow's request is next, then the flood's.
        let (q, s) = running.remove(0);
        qs.finish(Some(q), s, Duration::ZERO);
        let next: Vec<String> = std::iter::from_fn(|| qs.dispatch())
            .map(|d| d.item)
            .collect();
        assert_eq!(
            next,
            ["b0"],
            "the waiting flood request no longer fits beside b0"
        );
        assert_eq!(qs.executing_seats(), 11);
    }

    /// A flood that has been served for a while, from every queue of its hand, by a level
    /// with seats left over (49 seats, 10-seat requests: 9 always free): another flow's
    /// 1-seat request runs at once, every time, never behind a flood request that does not
    /// fit (which would hold it until a flood request finished).
    #[test]
    fn a_narrow_request_is_not_held_behind_a_wide_one_that_does_not_fit() {
        let mut qs = QueueSet::new(49, Q);
        let (flood, other) = (0xA11CE, 0xB0B);
        let mut running = std::collections::VecDeque::new();
        let mut next = 0;
        for round in 0..200 {
            while qs.enqueue(flood, 10, format!("a{next}")).is_ok() {
                next += 1;
            }
            while let Some(d) = qs.dispatch() {
                assert!(d.item.starts_with('a'), "{}", d.item);
                running.push_back((d.queue, d.seats));
            }
            assert_eq!(qs.executing_seats(), 40);
            let ticket = qs.enqueue(other, 1, format!("b{round}")).unwrap();
            let d = qs.dispatch().expect("the narrow request runs now");
            assert_eq!((d.item, d.queue), (format!("b{round}"), ticket.queue));
            qs.finish(Some(d.queue), d.seats, Duration::ZERO);
            let (q, s) = running.pop_front().unwrap();
            qs.finish(Some(q), s, Duration::ZERO);
        }
    }

    /// While a flood's wide requests run (2 s each) and wait, another flow sends many short
    /// requests (0.3 ms each) one after the other: each runs at once (the level has seats
    /// left), never behind a flood request that does not fit. However many they are, its
    /// requests are little service, so they do not put its queue behind the flood's.
    #[test]
    fn a_flow_of_many_short_requests_is_not_put_behind_a_flood() {
        let mut qs = QueueSet::new(49, Q);
        let (flood, other) = (0xA11CE, 0xB0B);
        let mut now = Duration::ZERO;
        let mut running = std::collections::VecDeque::new();
        let mut next = 0;
        while qs.enqueue(flood, 10, format!("a{next}")).is_ok() {
            next += 1;
        }
        while let Some(d) = qs.dispatch() {
            running.push_back((d.queue, d.seats, now));
        }
        assert_eq!(qs.executing_seats(), 40);
        for round in 0..20_000 {
            now += Duration::from_millis(1);
            qs.advance(now);
            qs.enqueue(other, 1, format!("b{round}")).unwrap();
            let d = qs.dispatch().expect("the short request runs now");
            assert_eq!(d.item, format!("b{round}"));
            qs.finish(Some(d.queue), d.seats, Duration::from_micros(300));
            if round % 500 == 499 {
                let (q, s, started) = running.pop_front().unwrap();
                qs.finish(Some(q), s, now - started);
                while let Some(d) = qs.dispatch() {
                    assert!(d.item.starts_with('a'), "{}", d.item);
                    running.push_back((d.queue, d.seats, now));
                }
                while qs.enqueue(flood, 10, format!("a{next}")).is_ok() {
                    next += 1;
                }
            }
        }
        assert!(next > 40, "the flood went on: {next}");
    }

    /// Two flows that keep the level full, one with requests ten times longer than the
    /// other's: each gets about half of the seat-seconds (not half of the requests).
    #[test]
    fn flows_share_seat_seconds_not_requests() {
        let mut qs = QueueSet::new(4, Q);
        let (long, short) = (0x9e37_79b9_7f4a_7c15_u64, 0xc2b2_ae3d_27d4_eb4f_u64);
        let hand = |flow| deal(flow, Q.queues, Q.hand_size);
        assert!(hand(long).iter().all(|q| !hand(short).contains(q)));
        let duration = |flow| Duration::from_millis(if flow == long { 100 } else { 10 });
        let mut now = Duration::ZERO;
        // (finishes at, queue, seats, flow)
        let mut running: Vec<(Duration, usize, u32, u64)> = Vec::new();
        let (mut held_long, mut held_short) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..10_000 {
            for flow in [long, short] {
                while qs.enqueue(flow, 1, flow).is_ok() {}
            }
            while let Some(d) = qs.dispatch() {
                running.push((now + duration(d.item), d.queue, d.seats, d.item));
            }
            running.sort_by_key(|r| r.0);
            let (end, queue, seats, flow) = running.remove(0);
            now = end;
            qs.advance(now);
            qs.finish(Some(queue), seats, duration(flow));
            *if flow == long {
                &mut held_long
            } else {
                &mut held_short
            } += duration(flow);
        }
        let ratio = held_long.as_secs_f64() / held_short.as_secs_f64();
        assert!(
            (0.8..1.25).contains(&ratio),
            "long/short seat-seconds {ratio}"
        );
    }

    #[test]
    fn past_the_queue_limit_requests_are_refused() {
        let q = Queuing {
            queues: 4,
            hand_size: 2,
            queue_length_limit: 3,
        };
        let mut qs = QueueSet::new(1, q);
        // Nothing dispatched: two queues of three, then full.
        for i in 0..6 {
            assert!(qs.enqueue(9, 1, i).is_ok(), "{i}");
        }
        assert_eq!(qs.enqueue(9, 1, 6), Err(6));
        assert_eq!(qs.waiting(), 6);
        // Another flow's hand still has room.
        let other = (0..u64::MAX)
            .find(|h| {
                let mut a = deal(*h, 4, 2);
                a.sort_unstable();
                let mut b = deal(9, 4, 2);
                b.sort_unstable();
                a.iter().all(|c| !b.contains(c))
            })
            .unwrap();
        assert!(qs.enqueue(other, 1, 7).is_ok());
    }

    #[test]
    fn a_removed_request_is_not_dispatched() {
        let mut qs = QueueSet::new(1, Q);
        let t0 = qs.enqueue(1, 1, "x").unwrap();
        let t1 = qs.enqueue(1, 1, "y").unwrap();
        assert_eq!(qs.remove(t0), Some("x"));
        assert_eq!(qs.remove(t0), None);
        assert_eq!(qs.dispatch().map(|d| d.item), Some("y"));
        assert_eq!(qs.remove(t1), None, "already dispatched");
    }

    #[test]
    fn a_request_wider_than_the_level_runs_alone() {
        let mut qs = QueueSet::new(4, Q);
        qs.enqueue(1, 10, "wide").unwrap();
        qs.enqueue(2, 1, "narrow").unwrap();
        // The narrow one finishes first in virtual time: it goes first.
        let narrow = qs.dispatch().unwrap();
        assert_eq!(narrow.item, "narrow");
        assert!(qs.dispatch().is_none(), "10 seats do not fit beside 1 of 4");
        qs.finish(Some(narrow.queue), narrow.seats, Duration::ZERO);
        let wide = qs.dispatch().unwrap();
        assert_eq!((wide.item, wide.seats), ("wide", 10));
        assert!(!qs.try_run(1), "the level is past its seats");
        qs.finish(Some(wide.queue), wide.seats, Duration::ZERO);
        assert!(qs.try_run(3));
        assert!(!qs.try_run(2));
    }

    #[test]
    fn fewer_queues_keep_their_waiting_requests() {
        let mut qs = QueueSet::new(1, Q);
        for i in 0..20 {
            qs.enqueue(i, 1, i).unwrap();
        }
        qs.reconfigure(1, Queuing { queues: 2, ..Q });
        assert_eq!(qs.waiting(), 20);
        let mut got = 0;
        while let Some(d) = qs.dispatch() {
            qs.finish(Some(d.queue), d.seats, Duration::ZERO);
            got += 1;
        }
        assert_eq!(got, 20);
    }
}
