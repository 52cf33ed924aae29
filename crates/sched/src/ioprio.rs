//! I/O priorities: Linux's `ioprio` — a class (real time, best effort, idle) and, for the
//! first two, a level from 0 (highest) to 7 — as `ioprio_set(2)` gives them to a process
//! and fio's `prioclass`/`prio` options to a job. Schedulers that serve classes (mq-deadline,
//! BFQ) learn an issuer's through [`crate::Scheduler::set_ioprio`]; the others ignore it.

/// An I/O priority class (Linux `IOPRIO_CLASS_*`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IoClass {
    /// Real time: served before everything else.
    Rt,
    /// Best effort: what a process has unless it asks otherwise.
    Be,
    /// Idle: served only when nothing else wants the disk.
    Idle,
}

impl IoClass {
    /// Linux's number for the class (`IOPRIO_CLASS_RT` = 1, `BE` = 2, `IDLE` = 3).
    pub const fn number(self) -> u8 {
        match self {
            IoClass::Rt => 1,
            IoClass::Be => 2,
            IoClass::Idle => 3,
        }
    }

    /// Index from the highest class (RT = 0) to the lowest (IDLE = 2).
    pub const fn index(self) -> usize {
        self.number() as usize - 1
    }
}

/// An issuer's I/O priority: class and level (0 highest .. 7 lowest; the idle class has a
/// single level, kept as 7).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct IoPrio {
    pub class: IoClass,
    pub level: u8,
}

/// The level a process has when it never set one (Linux derives it from nice 0).
pub const DEFAULT_LEVEL: u8 = 4;

impl Default for IoPrio {
    fn default() -> Self {
        IoPrio { class: IoClass::Be, level: DEFAULT_LEVEL }
    }
}

impl IoPrio {
    /// From fio's `prioclass` (1 RT, 2 BE, 3 IDLE; `None`: not given) and `prio` (0..7;
    /// `None`: not given), as fio applies them: a level without a class is best effort, a
    /// class without a level has level 0.
    pub fn from_fio(class: Option<u8>, level: Option<u8>) -> Result<IoPrio, String> {
        let class = match class.unwrap_or(2) {
            1 => IoClass::Rt,
            2 => IoClass::Be,
            3 => IoClass::Idle,
            c => return Err(format!("prioclass {c} is not 1 (real time), 2 (best effort) or 3 (idle)")),
        };
        let level = level.unwrap_or(0);
        if level > 7 {
            return Err(format!("prio {level} is not between 0 and 7"));
        }
        Ok(IoPrio { class, level: if class == IoClass::Idle { 7 } else { level } })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_options_map_as_fio_applies_them() {
        assert_eq!(IoPrio::from_fio(Some(1), Some(3)), Ok(IoPrio { class: IoClass::Rt, level: 3 }));
        assert_eq!(IoPrio::from_fio(None, Some(6)), Ok(IoPrio { class: IoClass::Be, level: 6 }));
        assert_eq!(IoPrio::from_fio(Some(1), None), Ok(IoPrio { class: IoClass::Rt, level: 0 }));
        assert_eq!(IoPrio::from_fio(Some(3), Some(2)), Ok(IoPrio { class: IoClass::Idle, level: 7 }));
        assert!(IoPrio::from_fio(Some(4), None).unwrap_err().contains("prioclass 4"));
        assert!(IoPrio::from_fio(None, Some(8)).unwrap_err().contains("prio 8"));
        assert_eq!(IoPrio::default(), IoPrio { class: IoClass::Be, level: 4 });
        assert!(IoClass::Rt.index() < IoClass::Be.index() && IoClass::Be.index() < IoClass::Idle.index());
    }
}
