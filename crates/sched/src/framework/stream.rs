//! placeholder, replaced below
use crate::device::DeviceView;
use crate::params::{ParamError, Settings, Tunable};
use crate::policy::Policy;
use crate::request::Request;
use crate::scheduler::{Arrival, Decision, Scheduler, WorkConserving};
use crate::time::Time;
pub const TUNABLES: &[Tunable] = &[];
pub struct StreamParams;
impl StreamParams { pub fn from_settings(_s: &mut Settings) -> Result<Self, ParamError> { Ok(StreamParams) } }
pub struct Stream<P: Policy>(WorkConserving<P>);
impl<P: Policy> Stream<P> { pub fn new(p: P, _x: StreamParams, m: u32) -> Self { Stream(WorkConserving::new(p, m)) } }
impl<P: Policy> Scheduler for Stream<P> {
    fn name(&self) -> String { format!("stream:{}", self.0.name()) }
    fn arrive(&mut self, now: Time, rq: Request) -> Arrival { self.0.arrive(now, rq) }
    fn decide(&mut self, now: Time, dev: &dyn DeviceView) -> Decision { self.0.decide(now, dev) }
    fn completed(&mut self, now: Time, rq: &Request, dev: &dyn DeviceView) { self.0.completed(now, rq, dev) }
    fn pending(&self) -> usize { self.0.pending() }
}
