pub mod as_sched;
pub mod bfq_budget;
pub mod bfq_history;
pub mod bfq_idle;
pub mod bfq_queue;
pub mod bfq_raise;
pub mod cfq;
pub mod wf2q;
