pub mod as_sched;
pub mod cfq;
