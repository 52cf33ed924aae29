//! DiskSim 4.0's synthetic workloads (`disksim_synthio`): DiskSim's random numbers
//! ([`rand48`]), its distributions ([`dist`]), one generator's requests ([`gen`]), the
//! process-flow model that times the generators ([`flow`]), and the blocks of a `.parv`
//! that set them up ([`SynthSpec::from_document`]).
//!
//! A DiskSim synthetic run is one process per generator on `Number of processors`
//! simulated CPUs (`disksim_pf Proc`): each thinks (computes) for its request's think time,
//! issues it, and blocks on it according to its class ([`gen::Class`]). The run stops at
//! `Number of I/O requests to generate` generations or at `Maximum time of trace
//! generated`. Every draw comes from one [`rand48::Rand48`] stream: seeded with the
//! `disksim_global`'s seed for the generators' first requests (the last generator first),
//! then reseeded with DiskSim's fixed run seed for the rest ([`flow`]).
//!
//! `headway simulate FILE.parv` runs the experiment (the engine's synthetic source): on the
//! one device (or array) the generators address, or on the several devices they name, each
//! simulated on its own, a drive or an array. A generator's device name goes where DiskSim
//! sends its requests ([`headway_disk::parv::request_destination`]): device number `i`
//! is the file's `i`-th logorg when that is an array. A `Storage
//! capacity per device` above a device's is DiskSim's to allow: as in DiskSim, the run
//! fails at the first request that lands past its device.

pub mod dist;
pub mod flow;
pub mod gen;
pub mod rand48;

use std::fmt;

use headway_disk::parv::syntax::{Block, Document, Pos, Value};

use dist::Dist;
use gen::GenSpec;

/// A synthetic-workload parameter that cannot be used, where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthError {
    pub at: Pos,
    pub msg: String,
}

impl fmt::Display for SynthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.msg)
    }
}

impl std::error::Error for SynthError {}

/// A `.parv`'s synthetic workload.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthSpec {
    /// `disksim_global`'s `Init Seed`/`Real Seed`, the later of the two (0 if neither).
    pub seed: i64,
    /// `disksim_pf`: `Number of processors`, `Process-Flow Time Scale`.
    pub processors: u32,
    pub time_scale: f64,
    /// `Number of I/O requests to generate`.
    pub requests: u64,
    /// `Maximum time of trace generated`, in ms (the file gives seconds).
    pub max_time_ms: f64,
    /// `System call/return with each request`, and its two think times (ms).
    pub syscalls: bool,
    pub call_ms: f64,
    pub return_ms: f64,
    pub generators: Vec<GenSpec>,
    /// The names the generators' `devices` give, each once, in the order they appear.
    pub device_names: Vec<String>,
}

fn err<T>(at: &Pos, msg: impl Into<String>) -> Result<T, SynthError> {
    Err(SynthError { at: at.clone(), msg: msg.into() })
}

/// A block's entries by key, each required.
struct Keys<'a>(&'a Block);

impl<'a> Keys<'a> {
    fn get(&self, key: &str) -> Result<&'a Value, SynthError> {
        match self.0.entries.iter().find(|e| e.key == key) {
            Some(e) => Ok(&e.value),
            None => err(&self.0.at, format!("`{}` block lacks `{key}`", self.0.ty)),
        }
    }
    fn num(&self, key: &str) -> Result<f64, SynthError> {
        match self.get(key)? {
            Value::Num(x, _) => Ok(*x),
            v => err(v.pos(), format!("`{key}` must be a number")),
        }
    }
    fn prob(&self, key: &str) -> Result<f64, SynthError> {
        let p = self.num(key)?;
        if !(0.0..=1.0).contains(&p) {
            return err(self.get(key)?.pos(), format!("`{key}` = {p}: a probability is in 0..1"));
        }
        Ok(p)
    }
    fn whole(&self, key: &str, min: f64) -> Result<u64, SynthError> {
        let x = self.num(key)?;
        if x.fract() != 0.0 || x < min {
            return err(self.get(key)?.pos(), format!("`{key}` = {x}: a whole number >= {min}"));
        }
        Ok(x as u64)
    }
    fn dist(&self, key: &str) -> Result<Dist, SynthError> {
        Dist::parse(self.get(key)?, key)
    }
    /// Keys not in `known`: an error at the first.
    fn only(&self, known: &[&str]) -> Result<(), SynthError> {
        match self.0.entries.iter().find(|e| !known.contains(&e.key.as_str())) {
            Some(e) => err(&e.at, format!("unknown key `{}` in {}", e.key, self.0.ty)),
            None => Ok(()),
        }
    }
}

impl SynthSpec {
    /// The synthetic workload of a parsed `.parv`: `None` when it has no
    /// `disksim_synthio Synthio` block.
    pub fn from_document(doc: &Document) -> Result<Option<SynthSpec>, SynthError> {
        let named =
            |ty: &str, name: &str| doc.blocks.iter().find(|b| b.ty == ty && b.name.as_deref() == Some(name));
        let Some(synth) = named("disksim_synthio", "Synthio") else { return Ok(None) };
        let Some(pf) = named("disksim_pf", "Proc") else {
            return err(&synth.at, "a synthetic workload needs its processors: a `disksim_pf Proc` block");
        };
        let p = Keys(pf);
        p.only(&["Number of processors", "Process-Flow Time Scale"])?;
        let processors = p.whole("Number of processors", 1.0)? as u32;
        let time_scale = p.num("Process-Flow Time Scale")?;
        if time_scale < 0.0 {
            return err(p.get("Process-Flow Time Scale")?.pos(), "`Process-Flow Time Scale` must be >= 0");
        }
        let seed = match named("disksim_global", "Global") {
            // both keys set the same seed: the later one wins
            Some(g) => g
                .entries
                .iter()
                .rfind(|e| e.key == "Init Seed" || e.key == "Real Seed")
                .map(|e| match &e.value {
                    Value::Num(x, _) if x.fract() == 0.0 => Ok(*x as i64),
                    v => err(v.pos(), format!("`{}` must be a whole number", e.key)),
                })
                .transpose()?
                .unwrap_or(0),
            None => 0,
        };
        let s = Keys(synth);
        s.only(&[
            "Number of I/O requests to generate",
            "Maximum time of trace generated",
            "System call/return with each request",
            "Think time from call to request",
            "Think time from request to return",
            "Generators",
        ])?;
        let syscalls = match s.whole("System call/return with each request", 0.0)? {
            0 => false,
            1 => true,
            _ => return err(s.get("System call/return with each request")?.pos(), "must be 0 or 1"),
        };
        let Value::List(gens, gat) = s.get("Generators")? else {
            return err(
                s.get("Generators")?.pos(),
                "`Generators` must be a [ list ] of disksim_synthgen blocks",
            );
        };
        let devices = device_numbers(doc);
        let mut device_names: Vec<String> = Vec::new();
        let generators = gens
            .iter()
            .map(|g| match g {
                Value::Block(b) if b.ty == "disksim_synthgen" => generator(b, &devices, &mut device_names),
                v => err(v.pos(), "`Generators` lists disksim_synthgen blocks"),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if generators.is_empty() {
            return err(gat, "`Generators` is empty");
        }
        Ok(Some(SynthSpec {
            seed,
            processors,
            time_scale,
            requests: s.whole("Number of I/O requests to generate", 1.0)?,
            max_time_ms: s.num("Maximum time of trace generated")? * 1000.0,
            syscalls,
            call_ms: s.num("Think time from call to request")?,
            return_ms: s.num("Think time from request to return")?,
            generators,
            device_names,
        }))
    }
}

/// What a generator's `devices` names resolve to: storage devices by instantiation order,
/// then logorgs by their place in the file.
fn device_numbers(doc: &Document) -> (Vec<String>, Vec<String>) {
    let storage = |t: &str| {
        doc.blocks.iter().any(|b| {
            matches!(b.ty.as_str(), "disksim_disk" | "disksim_simpledisk") && b.name.as_deref() == Some(t)
        })
    };
    let devices = doc
        .instances
        .iter()
        .filter(|(_, t, _)| storage(t))
        .flat_map(|(names, _, _)| names.iter().cloned())
        .collect();
    let logorgs =
        doc.blocks.iter().filter(|b| b.ty == "disksim_logorg").filter_map(|b| b.name.clone()).collect();
    (devices, logorgs)
}

/// Generator block `b`; the names its `devices` give join `names` (each once).
fn generator(
    b: &Block,
    (devices, logorgs): &(Vec<String>, Vec<String>),
    names_seen: &mut Vec<String>,
) -> Result<GenSpec, SynthError> {
    let k = Keys(b);
    k.only(&[
        "Storage capacity per device",
        "devices",
        "Blocking factor",
        "Probability of sequential access",
        "Probability of local access",
        "Probability of read access",
        "Probability of time-critical request",
        "Probability of time-limited request",
        "Time-limited think times",
        "General inter-arrival times",
        "Sequential inter-arrival times",
        "Local inter-arrival times",
        "Local distances",
        "Sizes",
    ])?;
    let Value::List(names, at) = k.get("devices")? else {
        return err(k.get("devices")?.pos(), "`devices` must be a [ list ] of device or logorg names");
    };
    let mut numbers = Vec::new();
    for v in names {
        let Value::Word(n, at) = v else { return err(v.pos(), "`devices` lists names") };
        if !devices.contains(n) && !logorgs.contains(n) {
            return err(at, format!("`{n}` is neither a device nor a logorg of the file"));
        }
        let place = match names_seen.iter().position(|s| s == n) {
            Some(i) => i,
            None => {
                names_seen.push(n.clone());
                names_seen.len() - 1
            }
        };
        numbers.push(place as u32);
    }
    if numbers.is_empty() {
        return err(at, "`devices` is empty");
    }
    let capacity = k.whole("Storage capacity per device", 1.0)?;
    let blocking = k.whole("Blocking factor", 1.0)?;
    if capacity / blocking < 2 {
        return err(&b.at, format!("{capacity} sectors in blocks of {blocking}: fewer than two blocks"));
    }
    Ok(GenSpec {
        capacity,
        devices: numbers,
        blocking,
        p_seq: k.prob("Probability of sequential access")?,
        p_local: k.prob("Probability of local access")?,
        p_read: k.prob("Probability of read access")?,
        p_critical: k.prob("Probability of time-critical request")?,
        p_limited: k.prob("Probability of time-limited request")?,
        time_limit: k.dist("Time-limited think times")?,
        general: k.dist("General inter-arrival times")?,
        sequential: k.dist("Sequential inter-arrival times")?,
        local: k.dist("Local inter-arrival times")?,
        local_distance: k.dist("Local distances")?,
        size: k.dist("Sizes")?,
    })
}

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod testutil;
