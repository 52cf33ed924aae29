//! B-WF2Q+: the fair queueing engine of Linux's BFQ (block/bfq-wf2q.c; Checconi and
//! Valente, "High Throughput Disk Scheduling with Fair Bandwidth Distribution", IEEE
//! Transactions on Computers 2010), on its own, for the `bfq` scheduler to drive.
//!
//! Entities (BFQ's queues) have a weight and, while backlogged, a budget: the service (in
//! sectors) they may receive in one turn. The engine keeps a virtual time `V` and, per
//! entity, a virtual start `S` and finish `F = S + budget / weight`:
//! * **Activation** (an idle entity gets a request): `S = max(V, F_old)` when the entity
//!   left recently with a finish still ahead of `V` (it is on the idle tree, so going idle
//!   gains it nothing), else `S = V` and its weight joins the sum `W`; then `F = S +
//!   budget / weight`. A *back-shifted* activation (BFQ's for a queue whose process was
//!   waiting on its own request) starts from `F_old` even when that is behind `V`, and when
//!   `F` is then still behind `V` both move up by `(V - F) / wr_coeff`.
//! * **Selection**: when no active entity is eligible (`S <= V`), `V` jumps to the smallest
//!   start; then the eligible entity with the smallest finish is served (it leaves the
//!   active set while in service).
//! * **Service**: each `served(amount)` advances `V` by `amount / W` (service injected by
//!   an entity not in service counts to it and to `V` alike).
//! * **Expiration**: the entity's finish is recomputed from the service it actually got,
//!   `F = S + service / weight`. Still backlogged: it is requeued with `S = F` and a finish
//!   from its next budget. Empty: with `F > V` it waits on the idle tree, its weight still
//!   in `W`; else it is forgotten at once.
//! * **Forgetting** (after every charge and every jump of `V`): the idle entity with the
//!   smallest finish is forgotten, and its weight leaves `W`, once `V` has reached its
//!   finish — one per call, as BFQ does.
//!
//! One engine is one class's tree: BFQ runs one per I/O priority class, each with its own
//! `V` and `W`, and serves the classes in order (its `bfq` will hold three).
//!
//! Virtual times are fixed point (`service << SHIFT / weight`, BFQ's `WFQ_SERVICE_SHIFT`),
//! in `u128`. Selection scans the active entities in finish order for the first eligible
//! one (BFQ keeps an augmented tree; the sets here are small).
//!
//! The guarantee the tests check: entities backlogged all the time receive service in
//! proportion to their weights, each within a couple of maximal budgets of its exact share.

use std::collections::{BTreeSet, HashMap};
use std::hash::Hash;

/// Fixed-point bits of virtual time (BFQ's `WFQ_SERVICE_SHIFT`).
const SHIFT: u32 = 22;

fn delta(service: u64, weight: u32) -> u128 {
    ((service as u128) << SHIFT) / weight.max(1) as u128
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    Active,
    InService,
    Idle,
    /// Forgotten: in no tree and not in `W`; its last finish is kept for a back-shifted
    /// activation.
    Gone,
}

#[derive(Copy, Clone, Debug)]
struct Entity {
    weight: u32,
    budget: u64,
    start: u128,
    finish: u128,
    /// Service received in the current turn.
    service: u64,
    state: State,
}

/// B-WF2Q+ over entities keyed by `K`.
pub struct Wf2q<K> {
    vtime: u128,
    /// Weights of the active and in-service entities.
    wsum: u64,
    entities: HashMap<K, Entity>,
    active: BTreeSet<(u128, K)>,
    idle: BTreeSet<(u128, K)>,
    in_service: Option<K>,
}

impl<K: Copy + Ord + Hash> Default for Wf2q<K> {
    fn default() -> Self {
        Wf2q {
            vtime: 0,
            wsum: 0,
            entities: HashMap::new(),
            active: BTreeSet::new(),
            idle: BTreeSet::new(),
            in_service: None,
        }
    }
}

impl<K: Copy + Ord + Hash + std::fmt::Debug> Wf2q<K> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The entity being served.
    pub fn in_service(&self) -> Option<K> {
        self.in_service
    }

    /// Is `k` backlogged (active or in service)?
    pub fn is_busy(&self, k: K) -> bool {
        self.entities.get(&k).is_some_and(|e| matches!(e.state, State::Active | State::InService))
    }

    /// Service `k` received in its current turn.
    pub fn service(&self, k: K) -> u64 {
        self.entities.get(&k).map_or(0, |e| e.service)
    }

    /// Forget the first idle entity if `V` has reached its finish (Linux
    /// `bfq_forget_idle`); its weight leaves `W`.
    fn forget_idle(&mut self) {
        if let Some(&(f, k)) = self.idle.first() {
            if f <= self.vtime {
                self.idle.pop_first();
                let e = self.entities.get_mut(&k).expect("idle");
                e.state = State::Gone;
                self.wsum -= e.weight as u64;
            }
        }
    }

    /// The virtual time.
    pub fn vtime(&self) -> u128 {
        self.vtime
    }

    /// `k` becomes backlogged with `weight` and `budget` (sectors, > 0).
    pub fn activate(&mut self, k: K, weight: u32, budget: u64) {
        self.activate_with(k, weight, budget, false, 1);
    }

    /// [`Wf2q::activate`], back-shifted when `backshift` (start from the old finish even
    /// behind `V`, then pushed up by `(V - F) / wr_coeff` if still behind).
    pub fn activate_with(&mut self, k: K, weight: u32, budget: u64, backshift: bool, wr_coeff: u32) {
        let v = self.vtime;
        let weight = weight.max(1);
        let old = self.entities.get(&k).map(|e| (e.state, e.finish, e.weight));
        // back-shifted: from the old finish when V has passed it
        let shifted = match old {
            Some((_, f, _)) if backshift && v > f => Some(f),
            _ => None,
        };
        let min_start = shifted.unwrap_or(v);
        let start = match old {
            Some((State::Idle, f, w)) => {
                self.idle.remove(&(f, k));
                // its weight is still in W: only a change of weight counts
                self.wsum = self.wsum - w as u64 + weight as u64;
                min_start.max(f)
            }
            Some((State::Active | State::InService, _, _)) => panic!("wf2q: {k:?} activated while busy"),
            Some((State::Gone, _, _)) | None => {
                self.wsum += weight as u64;
                min_start
            }
        };
        let mut e = Entity {
            weight,
            budget,
            start,
            finish: start + delta(budget, weight),
            service: 0,
            state: State::Active,
        };
        if shifted.is_some() && v > e.finish {
            let up = (v - e.finish) / wr_coeff.max(1) as u128;
            e.start += up;
            e.finish += up;
        }
        self.active.insert((e.finish, k));
        self.entities.insert(k, e);
    }

    /// Give active entity `k` a new budget (its finish moves; BFQ does this to a waiting
    /// queue whose budget changed).
    pub fn set_budget(&mut self, k: K, budget: u64) {
        let Some(e) = self.entities.get_mut(&k) else { return };
        e.budget = budget;
        if e.state == State::Active {
            self.active.remove(&(e.finish, k));
            e.finish = e.start + delta(budget, e.weight);
            self.active.insert((e.finish, k));
        }
    }

    /// Choose the next entity to serve (it stays in service until [`Wf2q::expire`]).
    pub fn serve_next(&mut self) -> Option<K> {
        assert!(self.in_service.is_none(), "wf2q: next with {:?} in service", self.in_service);
        // when nothing is eligible, V jumps to the smallest start
        let min_start = self.active.iter().map(|(_, k)| self.entities[k].start).min()?;
        if min_start > self.vtime {
            self.vtime = min_start;
            self.forget_idle();
        }
        let v = self.vtime;
        let &(f, k) = self.active.iter().find(|(_, k)| self.entities[k].start <= v).expect("one is eligible");
        self.active.remove(&(f, k));
        let e = self.entities.get_mut(&k).expect("active");
        e.state = State::InService;
        e.service = 0;
        self.in_service = Some(k);
        Some(k)
    }

    /// The entity in service received `amount` sectors of service.
    pub fn served(&mut self, amount: u64) {
        let k = self.in_service.expect("wf2q: service with nothing in service");
        self.served_by(k, amount);
    }

    /// Entity `k` (in service, or injecting while another is) received `amount` sectors.
    pub fn served_by(&mut self, k: K, amount: u64) {
        if let Some(e) = self.entities.get_mut(&k) {
            e.service += amount;
        }
        if self.wsum > 0 {
            self.vtime += ((amount as u128) << SHIFT) / self.wsum as u128;
        }
        self.forget_idle();
    }

    /// The entity in service ends its turn: requeued with `next_budget` when it is still
    /// backlogged, else deactivated.
    pub fn expire(&mut self, next_budget: Option<u64>) {
        let k = self.in_service.take().expect("wf2q: expire with nothing in service");
        let e = self.entities.get_mut(&k).expect("in service");
        e.finish = e.start + delta(e.service, e.weight);
        e.service = 0;
        match next_budget {
            Some(b) => {
                e.budget = b;
                e.start = e.finish;
                e.finish = e.start + delta(b, e.weight);
                e.state = State::Active;
                self.active.insert((e.finish, k));
            }
            None => self.retire(k),
        }
    }

    /// Entity `k` leaves the active set: idle while its finish is ahead of V (its weight
    /// stays in W until it is forgotten), else gone.
    fn retire(&mut self, k: K) {
        let e = self.entities.get_mut(&k).expect("an entity");
        if e.finish > self.vtime {
            e.state = State::Idle;
            self.idle.insert((e.finish, k));
        } else {
            self.wsum -= e.weight as u64;
            e.state = State::Gone;
        }
    }

    /// A waiting (active, not in service) entity leaves the active set without a turn:
    /// Linux's deactivation of a queue emptied by injection. Its finish becomes what the
    /// service it received since activation is worth, `F = S + service / weight` (not the
    /// finish of the whole budget it did not use); it goes to the idle set while that is
    /// ahead of V (its weight stays in the sum), else it is forgotten.
    pub fn deactivate(&mut self, k: K) {
        let Some(e) = self.entities.get_mut(&k) else { return };
        assert!(e.state == State::Active, "wf2q: {k:?} deactivated while {:?}", e.state);
        self.active.remove(&(e.finish, k));
        e.finish = e.start + delta(e.service, e.weight);
        e.service = 0;
        self.retire(k);
    }

    /// Change `k`'s weight: for an active entity its finish is recomputed from its start;
    /// an entity in service keeps its weight until its turn ends.
    pub fn set_weight(&mut self, k: K, weight: u32) {
        let weight = weight.max(1);
        let Some(e) = self.entities.get_mut(&k) else { return };
        match e.state {
            State::Active => {
                self.active.remove(&(e.finish, k));
                self.wsum = self.wsum - e.weight as u64 + weight as u64;
                e.weight = weight;
                e.finish = e.start + delta(e.budget, weight);
                self.active.insert((e.finish, k));
            }
            State::Idle => {
                self.wsum = self.wsum - e.weight as u64 + weight as u64;
                e.weight = weight;
            }
            State::InService => {
                self.wsum = self.wsum - e.weight as u64 + weight as u64;
                e.weight = weight;
            }
            State::Gone => e.weight = weight,
        }
    }

    /// Check the invariants (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut wsum = 0u64;
        for (k, e) in &self.entities {
            match e.state {
                State::Active => {
                    assert!(self.active.contains(&(e.finish, *k)));
                    wsum += e.weight as u64;
                }
                State::InService => {
                    assert_eq!(self.in_service, Some(*k));
                    wsum += e.weight as u64;
                }
                State::Idle => {
                    assert!(self.idle.contains(&(e.finish, *k)));
                    wsum += e.weight as u64;
                }
                State::Gone => {}
            }
            assert!(e.start <= e.finish);
        }
        assert_eq!(wsum, self.wsum);
        let gone = self.entities.values().filter(|e| e.state == State::Gone).count();
        assert_eq!(
            self.active.len() + self.idle.len() + self.in_service.is_some() as usize + gone,
            self.entities.len()
        );
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// One turn: serve the next entity for `amount`, then requeue it with `next` (or let it
    /// go idle); the entity served.
    fn turn(w: &mut Wf2q<u32>, amount: u64, next: Option<u64>) -> u32 {
        let k = w.serve_next().expect("something to serve");
        w.served(amount);
        w.expire(next);
        k
    }

    /// Serve always-backlogged entities with `weights` for `turns` turns, each using its
    /// whole budget; the service each received.
    fn run(weights: &[u32], budgets: &[u64], turns: usize) -> Vec<u64> {
        let mut w = Wf2q::new();
        for (i, (&wt, &b)) in weights.iter().zip(budgets).enumerate() {
            w.activate(i, wt, b);
        }
        let mut got = vec![0u64; weights.len()];
        for _ in 0..turns {
            let k = w.serve_next().unwrap();
            w.served(budgets[k]);
            got[k] += budgets[k];
            w.expire(Some(budgets[k]));
            w.check();
        }
        got
    }

    #[test]
    fn weights_one_and_two_get_one_third_and_two_thirds() {
        let got = run(&[1, 2], &[1024, 1024], 3000);
        let share = got[1] as f64 / (got[0] + got[1]) as f64;
        assert!((share - 2.0 / 3.0).abs() < 0.005, "share {share}");
    }

    #[test]
    fn an_entity_that_was_idle_gets_no_credit_for_it() {
        let mut w = Wf2q::new();
        w.activate(0u32, 1, 100);
        // 0 alone for 50 turns
        for _ in 0..50 {
            turn(&mut w, 100, Some(100));
        }
        // 1 arrives: it starts at V, so 0 and 1 alternate from here, 1 does not get 50 turns
        w.activate(1, 1, 100);
        let mut order = Vec::new();
        for _ in 0..10 {
            let k = w.serve_next().unwrap();
            order.push(k);
            w.served(100);
            w.expire(Some(100));
        }
        let ones = order.iter().filter(|&&k| k == 1).count();
        assert!((4..=6).contains(&ones), "{order:?}");
    }

    #[test]
    fn leaving_and_coming_back_at_once_gains_nothing() {
        let mut w = Wf2q::new();
        w.activate(0u32, 1, 100);
        w.activate(1, 1, 100);
        let mut got = [0u64; 2];
        for _ in 0..200 {
            let k = w.serve_next().unwrap();
            w.served(100);
            got[k as usize] += 100;
            if k == 1 {
                // 1 empties its queue after each turn and gets a request right away
                w.expire(None);
                w.check();
                w.activate(1, 1, 100);
            } else {
                w.expire(Some(100));
            }
        }
        assert!(got[0].abs_diff(got[1]) <= 200, "{got:?}");
    }

    #[test]
    fn a_turn_charged_less_than_its_budget_comes_back_sooner() {
        let mut w = Wf2q::new();
        w.activate(0u32, 1, 1000);
        w.activate(1, 1, 1000);
        let mut got = [0u64; 2];
        for _ in 0..400 {
            let k = w.serve_next().unwrap();
            // 0 uses a tenth of its budget each turn (a sync queue that runs dry)
            let used = if k == 0 { 100 } else { 1000 };
            w.served(used);
            got[k as usize] += used;
            w.expire(Some(1000));
        }
        // service, not turns, is what is shared
        let share = got[0] as f64 / (got[0] + got[1]) as f64;
        assert!((share - 0.5).abs() < 0.05, "{got:?}");
    }

    #[test]
    fn idle_entities_are_forgotten_once_virtual_time_passes_them() {
        let mut w = Wf2q::new();
        w.activate(0u32, 1, 100);
        w.activate(1, 1, 100);
        turn(&mut w, 100, None);
        assert_eq!(w.idle.len(), 1, "left with its finish ahead of V");
        for _ in 0..5 {
            turn(&mut w, 100, Some(100));
        }
        w.activate(2, 1, 100);
        assert!(w.idle.is_empty(), "forgotten");
        w.check();
    }

    #[test]
    fn an_idle_entity_keeps_its_weight_in_the_sum_until_forgotten() {
        let mut w = Wf2q::new();
        w.activate(0u32, 1, 100);
        w.activate(1, 1, 100);
        let k = turn(&mut w, 100, None);
        assert!(!w.is_busy(k) && w.wsum == 2, "idle, still weighed");
        let v = w.vtime();
        w.serve_next();
        w.served(100);
        // V advanced by 100 / 2, not 100 / 1
        assert_eq!(w.vtime() - v, (100u128 << SHIFT) / 2);
        w.check();
        w.expire(Some(100));
        for _ in 0..3 {
            turn(&mut w, 100, Some(100));
        }
        assert_eq!(w.wsum, 1, "forgotten once V passed its finish");
        w.check();
    }

    #[test]
    fn a_back_shifted_activation_starts_from_the_old_finish() {
        let mut w = Wf2q::new();
        w.activate(0u32, 1, 100);
        w.activate(1, 1, 100);
        let k = turn(&mut w, 100, None);
        let f_old = w.entities[&k].finish;
        let other = 1 - k;
        for _ in 0..4 {
            turn(&mut w, 100, Some(100));
        }
        assert!(w.vtime() > f_old && w.entities[&k].state == State::Gone);
        let v = w.vtime();
        // plain: from V; back-shifted: from the old finish, pushed up by (V - F) / wr_coeff
        w.activate_with(k, 1, 100, true, 2);
        let e = w.entities[&k];
        let f = f_old + delta(100, 1);
        let up = if v > f { (v - f) / 2 } else { 0 };
        assert_eq!((e.start, e.finish), (f_old + up, f + up));
        assert!(e.start < v, "it starts behind V: it is served before {other:?}");
        assert_eq!(w.serve_next(), Some(k));
        w.check();
    }

    #[test]
    fn a_deactivated_waiting_entity_idles_until_v_passes_its_finish() {
        let mut w = Wf2q::new();
        w.activate(0u32, 1, 100);
        w.activate(1, 1, 100);
        let k = w.serve_next().unwrap();
        let other = 1 - k;
        w.served_by(other, 50);
        w.deactivate(other);
        w.check();
        assert!(!w.is_busy(other) && w.wsum == 2, "idle, still weighed: its finish is ahead of V");
        w.served(100);
        w.expire(Some(100));
        for _ in 0..3 {
            turn(&mut w, 100, Some(100));
        }
        assert_eq!(w.wsum, 1, "forgotten once V passed its finish");
        w.check();
    }

    #[test]
    fn a_deactivated_entity_is_charged_only_the_service_it_got() {
        // entity 1 waits with a large budget, gets 10 sectors injected, empties and comes
        // back: it restarts from S + 10 / w, not from the finish of its unused budget
        let mut w = Wf2q::new();
        w.activate(0u32, 1, 100);
        w.activate(1, 1, 10_000);
        assert_eq!(w.serve_next(), Some(0));
        let s1 = w.entities[&1].start;
        w.served_by(1, 10);
        w.deactivate(1);
        assert_eq!(w.entities[&1].finish, s1 + delta(10, 1));
        w.activate(1, 1, 10_000);
        assert_eq!(w.entities[&1].start, s1 + delta(10, 1), "back at its finish, V being behind");
        w.check();
    }

    #[test]
    fn a_new_budget_moves_a_waiting_entity() {
        let mut w = Wf2q::new();
        w.activate(0u32, 1, 1000);
        w.activate(1, 1, 1000);
        w.set_budget(1, 10);
        assert_eq!(w.serve_next(), Some(1), "its finish is now the earlier");
        w.check();
    }

    #[test]
    fn injected_service_counts_to_the_injector_and_to_v() {
        let mut w = Wf2q::new();
        w.activate(0u32, 1, 100);
        w.activate(1, 1, 100);
        let k = w.serve_next().unwrap();
        let v = w.vtime();
        w.served_by(1 - k, 50);
        assert_eq!(w.service(1 - k), 50);
        assert_eq!(w.vtime() - v, (50u128 << SHIFT) / 2);
        w.check();
    }

    proptest! {
        /// Always-backlogged entities with random weights and budgets: each one's service
        /// stays within two of its largest budgets (scaled by weight) of its exact share.
        #[test]
        fn backlogged_entities_get_their_weighted_share(
            spec in prop::collection::vec((1u32..10, 8u64..2048), 2..6),
            turns in 200usize..2000,
        ) {
            let (weights, budgets): (Vec<u32>, Vec<u64>) = spec.into_iter().unzip();
            let got = run(&weights, &budgets, turns);
            let total: u64 = got.iter().sum();
            let wsum: u32 = weights.iter().sum();
            let bmax = *budgets.iter().max().unwrap() as f64;
            for i in 0..weights.len() {
                let fair = total as f64 * weights[i] as f64 / wsum as f64;
                let lag = (got[i] as f64 - fair).abs();
                prop_assert!(lag <= 2.0 * bmax + budgets[i] as f64,
                    "entity {i} (weight {}, budget {}) got {} of {total}, fair {fair:.0}", weights[i], budgets[i], got[i]);
            }
        }
    }
}
