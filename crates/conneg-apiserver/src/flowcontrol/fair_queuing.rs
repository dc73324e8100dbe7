//! Fair queuing of one priority level, with shuffle sharding: the data structure alone (no
//! clocks, no tasks), so its order can be tested exactly.
//!
//! Each flow (a schema and its distinguisher, hashed) is dealt a hand of queues from the
//! level's deck ([`deal`]); a request joins the emptiest queue of its hand, so a flow that
//! floods fills its own few queues while another flow almost always finds a queue of its
//! own. Queues are served in virtual time, as in Kubernetes' fair queuing: a queue's head
//! starts where the queue's previous request finished (or at the level's virtual time, when
//! the queue was empty) and finishes its seats later; the head that finishes first goes next,
//! as soon as its seats are free. A queue that has sent many requests is behind one that has
//! sent few, and a narrow request goes ahead of a wide one that started with it.

use std::collections::VecDeque;

/// How a limited level queues (Kubernetes' `QueuingConfiguration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Queuing {
    /// Queues of the level.
    pub(crate) queues: usize,
    /// Queues dealt to each flow.
    pub(crate) hand_size: usize,
    /// Requests waiting in one queue at most.
    pub(crate) queue_length_limit: usize,
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
    /// Virtual start of the queue's head: the finish of the request dispatched before it.
    next_start: u64,
    /// Seats waiting and executing (what "emptiest" compares).
    seats: u64,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Self {
            waiting: VecDeque::new(),
            next_start: 0,
            seats: 0,
        }
    }
}

/// Where a request waits: its queue and its id, to take it out again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket {
    pub(crate) queue: usize,
    pub(crate) id: u64,
}

/// A request that may run now: its item, its queue and its seats (to give back with
/// [`QueueSet::finish`]).
#[derive(Debug)]
pub(crate) struct Dispatched<T> {
    pub(crate) item: T,
    pub(crate) queue: usize,
    pub(crate) seats: u32,
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
    /// The virtual start of the last request dispatched: where a queue that was empty
    /// starts again.
    virtual_time: u64,
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
            virtual_time: 0,
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
    /// with its id, when that queue has room; the queue's virtual start moved to the level's
    /// when it was empty, and the request's seats counted in it.
    fn join(&mut self, flow: u64, seats: u32) -> Option<Ticket> {
        let hand = deal(flow, self.queues.len(), self.queuing.hand_size);
        let queue = hand.into_iter().min_by_key(|q| self.queues[*q].seats)?;
        let q = &mut self.queues[queue];
        if q.waiting.len() >= self.queuing.queue_length_limit {
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        if q.waiting.is_empty() {
            q.next_start = q.next_start.max(self.virtual_time);
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

    /// The head of `queue`, `seats` wide, starts: the level's virtual time reaches its start.
    fn start(&mut self, queue: usize, seats: u32) {
        let q = &mut self.queues[queue];
        self.virtual_time = self.virtual_time.max(q.next_start);
        q.next_start += u64::from(seats);
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
                Some(((q.next_start + u64::from(w.seats), w.id), i))
            })
            .min()?
            .1;
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
    /// finished: its seats are free again.
    pub(crate) fn finish(&mut self, queue: Option<usize>, seats: u32) {
        self.executing = self.executing.saturating_sub(seats);
        if let Some(q) = queue.and_then(|q| self.queues.get_mut(q)) {
            q.seats = q.seats.saturating_sub(u64::from(seats));
        }
    }

    /// Takes a waiting request out (it timed out or its client left), or `None` when it is
    /// no longer waiting (dispatched meanwhile).
    pub(crate) fn remove(&mut self, ticket: Ticket) -> Option<T> {
        let q = self.queues.get_mut(ticket.queue)?;
        let at = q.waiting.iter().position(|w| w.id == ticket.id)?;
        let w = q.waiting.remove(at)?;
        self.waiting -= 1;
        q.seats = q.seats.saturating_sub(u64::from(w.seats));
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
                direct.finish(Some(queue), seats);
                queued.finish(Some(queue), seats);
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
        qs.finish(Some(q), s);
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
            qs.finish(Some(d.queue), d.seats);
            let (q, s) = running.pop_front().unwrap();
            qs.finish(Some(q), s);
        }
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
        qs.finish(Some(narrow.queue), narrow.seats);
        let wide = qs.dispatch().unwrap();
        assert_eq!((wide.item, wide.seats), ("wide", 10));
        assert!(!qs.try_run(1), "the level is past its seats");
        qs.finish(Some(wide.queue), wide.seats);
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
            qs.finish(Some(d.queue), d.seats);
            got += 1;
        }
        assert_eq!(got, 20);
    }
}
