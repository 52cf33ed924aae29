//! Which issuer the scheduler is told a request comes from (`--context`), decided here
//! for every request a workload source submits.
//!
//! The mode's mapping is [`ContextMode::issuer`], used for every source: a fio job's own
//! context is its process, thread or VM under `process`, `thread` and `vm`, none under
//! `none` (set once per job when the jobs are expanded); a trace record's is its trace
//! context, which is its process and its thread (a trace knows one level, and `vm` is
//! refused for traces before a run starts). Under `pool:N` every request gets one of N
//! daemon threads drawn at random, the way an NFS server's or a hypervisor's worker pool
//! hides the process that asked (seeds/000 Section 2): the draws come from the run's seed,
//! in submission order.

use headway_sched::ContextId;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::workload::ContextMode;

pub(super) struct Issuers {
    /// `pool:N`: N and the draws.
    pool: Option<(u32, ChaCha8Rng)>,
    mode: ContextMode,
}

impl Issuers {
    pub fn new(mode: ContextMode, seed: u64) -> Self {
        let pool = match mode {
            ContextMode::Pool(n) => Some((n, ChaCha8Rng::seed_from_u64(seed ^ 0x706f_6f6c))),
            _ => None,
        };
        Issuers { pool, mode }
    }

    /// The context of a job's next request, the job's own being `own`.
    #[inline]
    pub fn of_job(&mut self, own: Option<ContextId>) -> Option<ContextId> {
        match &mut self.pool {
            Some((n, rng)) => Some(ContextId(rng.gen_range(0..*n))),
            None => own,
        }
    }

    /// The context of a request of trace context `c`.
    pub fn of_trace_context(&mut self, c: u32) -> Option<ContextId> {
        let own = self.mode.issuer(c, c, c);
        self.of_job(own)
    }

    /// The scheduler knows trace contexts (and is told when one exits).
    pub fn tells_trace_contexts(&self) -> bool {
        self.pool.is_none() && self.mode.issuer(0, 0, 0).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_keep_their_own_context_unless_a_pool_hides_it() {
        let mut i = Issuers::new(ContextMode::Process, 1);
        assert_eq!(i.of_job(Some(ContextId(7))), Some(ContextId(7)));
        assert_eq!(i.of_trace_context(3), Some(ContextId(3)));
        let mut i = Issuers::new(ContextMode::None, 1);
        assert_eq!(i.of_trace_context(3), None);
        assert!(!i.tells_trace_contexts());
    }

    #[test]
    fn a_pool_draws_from_its_threads_reproducibly() {
        let draw = |seed| {
            let mut i = Issuers::new(ContextMode::Pool(4), seed);
            (0..200).map(|_| i.of_job(Some(ContextId(99))).unwrap().0).collect::<Vec<u32>>()
        };
        let a = draw(5);
        assert!(a.iter().all(|&c| c < 4));
        assert!((0..4).all(|c| a.contains(&c)), "every thread is drawn: {a:?}");
        assert_eq!(a, draw(5));
        assert_ne!(a, draw(6));
    }
}
