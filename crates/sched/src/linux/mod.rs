pub mod as_sched;
pub mod cfq;
pub mod wf2q;
