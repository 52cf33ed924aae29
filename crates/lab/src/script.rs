//! The guest's `/init`: a busybox shell script written for one point of a lab spec.
//!
//! In order: mount proc, sysfs and devtmpfs; load the modules of `/modules.order`
//! (virtio_blk with `queue_depth=` the spec's guest queue depth); find the disks by their
//! virtio serial numbers (`hw-tools`, `hw-results`, `hw-disk0`, ...) rather than by probe
//! order; mount the tools disk and point the dynamic loader at it; set the guest scheduler
//! and its tunables on every headway disk (read back: a scheduler the kernel did not take
//! fails the run); make and mount the file system; drop the page cache; run the workload
//! with `/proc/diskstats` read before and after, and bounded in the servers' traces by
//! markers: a read of each headway disk's last 4 KiB block just before the workload and
//! of the one before it just after ([`BEGIN_MARK_FROM_END`], [`END_MARK_FROM_END`]); unmount;
//! list every file of each headway disk's `queue/iosched/` (`/results/iosched.DEV`: `== NAME
//! MODE` then the file's lines: the scheduler's tunables and, for `stream`, its counters);
//! write `/results` as a tar onto the results disk; power off.
//!
//! Each step's output goes to `/results/NAME.out` and its start and end (the guest's
//! `/proc/uptime`) and exit code to `/results/steps`. A failing step writes `failed: STEP:
//! CODE` to `/results/status`, prints its last lines on the console, and ends the run; a
//! run that got to the end writes `ok`. The console shows `HEADWAY-STEP NAME` as steps
//! start and `HEADWAY-DONE` just before power-off, which the host watches for.

use std::fmt::Write as _;

use crate::spec::{DdSpec, Fs, GuestScheduler, PostmarkSpec, Value};

/// Serial numbers of the guest's disks (virtio-blk `serial=`).
pub const TOOLS_SERIAL: &str = "hw-tools";
pub const RESULTS_SERIAL: &str = "hw-results";
pub fn disk_serial(i: usize) -> String {
    format!("hw-disk{i}")
}

/// Printed on the console by the guest at the end of a completed run.
pub const DONE_MARK: &str = "HEADWAY-DONE";
pub const STEP_MARK: &str = "HEADWAY-STEP";

/// The workload's bounds in a server's trace: reads of the 4 KiB block this many blocks from
/// the end of the guest's disk (1: the last block, read just before the workload; 2: just after).
pub const BEGIN_MARK_FROM_END: u64 = 1;
pub const END_MARK_FROM_END: u64 = 2;

/// Where the server sees the marker `k` blocks from the end of each guest's disk: guest `g`
/// has `part` bytes from `g * part` on (one guest: the whole `disk_bytes`). The guest counts
/// whole 4 KiB blocks of its disk (`mark` in the init script).
pub fn marker_sectors(disk_bytes: u64, part: Option<u64>, guests: u64, k: u64) -> Vec<u64> {
    (0..guests)
        .map(|g| {
            let (base, size) = part.map_or((0, disk_bytes), |p| (g * p, p));
            base / 512 + (size / 4096 - k) * 8
        })
        .collect()
}

/// What the guest runs after mounting (already expanded for the guest).
pub enum GuestWork<'a> {
    /// `work/job.fio` in the initramfs.
    Fio,
    Postmark(&'a PostmarkSpec),
    Dd(&'a DdSpec, u64, u64),
    Steps(&'a [String]),
    /// Only boot and power off (the accelerator probe).
    Nothing,
}

pub struct InitScript<'a> {
    pub disks: usize,
    pub queue_depth: u32,
    pub guest_scheduler: GuestScheduler,
    pub tunables: &'a [(String, Value)],
    pub fs: Fs,
    pub mkfs_options: &'a str,
    pub mount_options: &'a str,
    pub work: GuestWork<'a>,
}

/// Single-quote `s` for the shell.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl InitScript<'_> {
    /// Mount point of headway disk `i` in the guest.
    pub fn mount_point(i: usize) -> String {
        format!("/mnt/hw{i}")
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        s.push_str(PRELUDE);
        let _ = writeln!(s, "QD={}", self.queue_depth);
        s.push_str(MODULES_AND_DISKS);
        let mut disks = Vec::new();
        for i in 0..self.disks {
            let _ = writeln!(s, "D{i}=$(dev_of {}) || fail find-disk{i} 1\nexport D{i}", disk_serial(i));
            disks.push(format!("$D{i}"));
        }
        let _ = writeln!(s, "HEADWAY_DISKS=\"{}\"", disks.join(" "));
        let _ = writeln!(s, "HEADWAY_DISK=$D0\nexport HEADWAY_DISK HEADWAY_DISKS");
        let _ = writeln!(s, "uname -r > /results/kernel\ncat /proc/meminfo > /results/meminfo");
        let sched = self.guest_scheduler.name();
        let _ = writeln!(s, "for d in $HEADWAY_DISKS; do b=${{d#/dev/}}");
        let _ = writeln!(s, "  echo {sched} > /sys/block/$b/queue/scheduler");
        let _ = writeln!(
            s,
            "  grep -q '\\[{sched}\\]' /sys/block/$b/queue/scheduler || fail scheduler-{sched} 1"
        );
        // A tunable of another guest scheduler of the spec (bfq's low_latency on the
        // mq-deadline points) is not this point's to set.
        let mine = |k: &str| {
            self.guest_scheduler.tunables().contains(&k) || crate::spec::QUEUE_TUNABLES.contains(&k)
        };
        for (k, v) in self.tunables.iter().filter(|(k, _)| mine(k)) {
            let v = quote(&v.to_string());
            let _ = writeln!(
                s,
                "  t=/sys/block/$b/queue/iosched/{k}; [ -e $t ] || t=/sys/block/$b/queue/{k}\n  \
                 echo {v} > $t || fail tunable-{k} 1"
            );
        }
        let _ = writeln!(s, "  cat /sys/block/$b/queue/scheduler > /results/scheduler.$b");
        let _ = writeln!(s, "  (cd /sys/block/$b/queue && for f in iosched/* read_ahead_kb nr_requests; do echo \"$f $(cat $f)\"; done) > /results/queue.$b 2>/dev/null");
        let _ = writeln!(s, "done");
        let mut dirs = Vec::new();
        if let Some(mkfs) = self.fs.mkfs() {
            for i in 0..self.disks {
                let mp = Self::mount_point(i);
                let opts = [self.fs.mount_base(), self.mount_options]
                    .iter()
                    .filter(|o| !o.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join(",");
                let _ =
                    writeln!(s, "step mkfs{i} {mkfs} {} {} $D{i}", self.fs.mkfs_quiet(), self.mkfs_options);
                let o = if opts.is_empty() { String::new() } else { format!("-o {opts}") };
                let _ =
                    writeln!(s, "mkdir -p {mp}\nstep mount{i} mount -t {} {o} $D{i} {mp}", self.fs.name());
                dirs.push(mp);
            }
            let _ = writeln!(s, "HEADWAY_DIR={}\nexport HEADWAY_DIR", dirs[0]);
        }
        s.push_str("sync; echo 3 > /proc/sys/vm/drop_caches\n");
        let begin = format!("mark {BEGIN_MARK_FROM_END}; cat /proc/diskstats > /results/diskstats.before\n");
        let begin = begin.as_str();
        match &self.work {
            GuestWork::Fio => {
                s.push_str(begin);
                s.push_str(
                    "step workload fio --output-format=json --output=/results/fio.json /work/job.fio\n",
                );
            }
            GuestWork::Postmark(_) => {
                s.push_str(begin);
                s.push_str("step workload postmark /work/postmark.pmrc\n");
            }
            GuestWork::Dd(d, size, bs) => {
                // coreutils' dd from the tools disk, by path: the shell prefers busybox's
                // applet, which prints no summary line (bytes, seconds)
                let count = size.div_ceil(*bs);
                let drop = if d.drop_caches { "sync; echo 3 > /proc/sys/vm/drop_caches" } else { "true" };
                if self.fs == Fs::Raw {
                    let _ = writeln!(s, "dd_read() {{ /tools/bin/dd if=$HEADWAY_DISK of=/dev/null bs={bs} count={count} skip=$(( $1 * {count} )) 2> /results/dd$1.out; }}");
                } else {
                    let _ = writeln!(s, "dd_write() {{ /tools/bin/dd if=/dev/zero of=$HEADWAY_DIR/dd$1 bs={bs} count={count} conv=fsync 2> /results/ddw$1.out; }}");
                    let _ = writeln!(
                        s,
                        "dd_read() {{ /tools/bin/dd if=$HEADWAY_DIR/dd$1 of=/dev/null bs={bs} count={count} 2> /results/dd$1.out; }}"
                    );
                    let _ = writeln!(s, "lay_out() {{ i=0; while [ $i -lt {} ]; do dd_write $i || return 1; i=$((i+1)); done; }}", d.readers);
                    s.push_str("step layout lay_out\n");
                }
                let _ = writeln!(s, "{drop}\n{}", begin.trim_end());
                let _ = writeln!(
                    s,
                    "readers() {{ i=0; while [ $i -lt {} ]; do dd_read $i & i=$((i+1)); done; wait; }}",
                    d.readers
                );
                s.push_str("step workload readers\n");
            }
            GuestWork::Steps(steps) => {
                s.push_str(begin);
                for (i, cmd) in steps.iter().enumerate() {
                    let _ = writeln!(s, "step workload{i} sh -c {}", quote(cmd));
                }
            }
            GuestWork::Nothing => {}
        }
        let _ = writeln!(s, "cat /proc/diskstats > /results/diskstats.after; mark {END_MARK_FROM_END}");
        for (i, mp) in dirs.iter().enumerate() {
            let _ = writeln!(s, "step umount{i} umount {mp}");
        }
        // the scheduler's files once the disks are quiet (unmounted: written back)
        s.push_str(IOSCHED_LISTING);
        s.push_str("finish ok\n");
        s
    }
}

/// PostMark's configuration file (`postmark FILE` runs its commands) for location `dir`.
pub fn postmark_config(p: &PostmarkSpec, dir: &str) -> String {
    format!(
        "set location {dir}\nset number {}\nset transactions {}\nset size {} {}\nset read {}\nset write {}\n\
         set bias read {}\nset bias create {}\nset buffering {}\nset subdirectories {}\nset seed {}\n\
         set report terse\nrun /results/postmark.report\nquit\n",
        p.number,
        p.transactions,
        p.size_min,
        p.size_max,
        p.read,
        p.write,
        p.bias_read,
        p.bias_create,
        p.buffering,
        p.subdirectories,
        p.seed
    )
}

const PRELUDE: &str = r#"#!/bin/sh
# headway lab guest init (generated)
/bin/busybox --install -s /bin
export PATH=/tools/bin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /results
# emergencies only on the console (a panic still prints)
echo 1 > /proc/sys/kernel/printk 2>/dev/null
RES=
up() { cut -d' ' -f1 /proc/uptime; }
finish() {
  echo "$1" > /results/status
  cat /proc/diskstats > /results/diskstats.end 2>/dev/null
  if [ -n "$RES" ]; then (cd /results && tar -cf "$RES" .); sync; fi
  echo "HEADWAY-DONE $1"
  poweroff -f
}
fail() {
  echo "HEADWAY-FAILED $1 exited $2"
  [ -f /results/$1.out ] && tail -n 20 /results/$1.out
  finish "failed: $1: $2"
}
step() {
  name=$1; shift
  echo "HEADWAY-STEP $name"
  t0=$(up)
  "$@" > /results/$name.out 2>&1
  rc=$?
  echo "$name $t0 $(up) $rc" >> /results/steps
  [ $rc -eq 0 ] || fail $name $rc
}
# the workload's bounds in the servers' traces: a read of 4 KiB block size-$1 of every
# headway disk (1: the last block, before; 2: the one before it, after), out of a dropped
# page cache so that it reaches the disk
mark() {
  echo 1 > /proc/sys/vm/drop_caches
  for d in $HEADWAY_DISKS; do
    n=$(cat /sys/class/block/${d#/dev/}/size)
    dd if=$d of=/dev/null bs=4096 count=1 skip=$((n / 8 - $1)) iflag=direct 2>/dev/null
  done
}
"#;

/// `/results/iosched.DEV` for each headway disk: `== NAME MODE` (octal permissions: a file
/// no one may write is a counter) then the file's contents, for every file of
/// `queue/iosched/` (none under `none`).
const IOSCHED_LISTING: &str = r#"for d in $HEADWAY_DISKS; do b=${d#/dev/}
  for f in /sys/block/$b/queue/iosched/*; do
    [ -f "$f" ] || continue
    echo "== ${f##*/} $(stat -c %a "$f")"; cat "$f" 2>/dev/null
  done > /results/iosched.$b
done
"#;

const MODULES_AND_DISKS: &str = r#"while read name file; do
  if [ "$name" = virtio_blk ]; then insmod $file queue_depth=$QD; else insmod $file; fi || echo "HEADWAY: insmod $name failed"
done < /modules.order
# the device whose virtio serial is $1, once its node exists (probing and devtmpfs may lag
# the module load by a moment): up to 10 s
dev_of() {
  n=0
  while [ $n -lt 100 ]; do
    for d in /sys/block/vd*; do
      [ "$(cat $d/serial 2>/dev/null)" = "$1" ] && [ -b /dev/${d##*/} ] && { echo /dev/${d##*/}; return 0; }
    done
    sleep 0.1; n=$((n+1))
  done
  return 1
}
RES=$(dev_of hw-results) || { echo "HEADWAY-FAILED no results disk"; poweroff -f; }
T=$(dev_of hw-tools) || fail find-tools 1
mount -t ext4 -o ro $T /tools || { echo "loaded modules:"; cut -d' ' -f1 /proc/modules | tr '\n' ' '; echo; fail mount-tools 1; }
ln -s /tools/lib/ld-linux-x86-64.so.2 /lib64/ld-linux-x86-64.so.2
export LD_LIBRARY_PATH=/tools/lib
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn script(fs: Fs, work: GuestWork<'_>) -> String {
        InitScript {
            disks: 2,
            queue_depth: 8,
            guest_scheduler: GuestScheduler::Bfq,
            tunables: &[("low_latency".into(), Value::Int(0))],
            fs,
            mkfs_options: "-b 4096",
            mount_options: "noatime",
            work,
        }
        .render()
    }

    #[test]
    fn file_system_runs_make_mount_and_unmount_every_disk() {
        let s = script(Fs::Ext4, GuestWork::Fio);
        assert!(s.contains("QD=8"));
        assert!(s.contains("D1=$(dev_of hw-disk1)"));
        assert!(s.contains("echo bfq > /sys/block/$b/queue/scheduler"));
        assert!(s.contains("echo '0' > $t"));
        assert!(s.contains("step mkfs1 mkfs.ext4 -q -F -b 4096 $D1"));
        assert!(s.contains("step mount0 mount -t ext4 -o noinit_itable,noatime $D0 /mnt/hw0"));
        assert!(s.contains("step umount1 umount /mnt/hw1"));
        let listing = s.find("/results/iosched.$b").unwrap();
        assert!(listing > s.find("step umount1").unwrap() && listing < s.find("finish ok").unwrap());
        assert!(s.contains("fio --output-format=json --output=/results/fio.json /work/job.fio"));
        assert!(s.trim_end().ends_with("finish ok"));
    }

    #[test]
    fn raw_runs_make_no_file_system() {
        let d = DdSpec { readers: 4, ..DdSpec::default() };
        let s = script(Fs::Raw, GuestWork::Dd(&d, 64 << 20, 1 << 20));
        assert!(!s.contains("mkfs") && !s.contains("umount"));
        assert!(s.contains("skip=$(( $1 * 64 ))"));
        assert!(s.contains("while [ $i -lt 4 ]; do dd_read $i &"));
    }

    #[test]
    fn marker_sectors_are_where_the_guest_reads() {
        // the guest: n = size / 512 sectors; dd bs=4096 skip=(n / 8 - k): sector (n / 8 - k) * 8
        let guest = |size: u64, k: u64| (size / 512 / 8 - k) * 8;
        // a capacity that is no multiple of 4 KiB (18.4 GB drives are not)
        let odd = 18_400_000_000 + 1536;
        assert_eq!(marker_sectors(odd, None, 1, 1), vec![guest(odd, 1)]);
        assert_eq!(marker_sectors(odd, None, 1, 2), vec![guest(odd, 2)]);
        // two guests on 1 MiB-aligned halves: the second's marker lies past the first half
        let p = 4 << 30;
        let m = marker_sectors(8 << 30, Some(p), 2, 1);
        assert_eq!(m, vec![guest(p, 1), p / 512 + guest(p, 1)]);
    }

    #[test]
    fn a_point_sets_only_its_own_schedulers_tunables_and_the_queues() {
        let t =
            vec![("low_latency".to_string(), Value::Int(0)), ("read_ahead_kb".to_string(), Value::Int(512))];
        let render = |g| {
            InitScript {
                disks: 1,
                queue_depth: 1,
                guest_scheduler: g,
                tunables: &t,
                fs: Fs::Ext4,
                mkfs_options: "",
                mount_options: "",
                work: GuestWork::Nothing,
            }
            .render()
        };
        let bfq = render(GuestScheduler::Bfq);
        assert!(bfq.contains("iosched/low_latency") && bfq.contains("iosched/read_ahead_kb"), "{bfq}");
        let dl = render(GuestScheduler::MqDeadline);
        assert!(!dl.contains("low_latency") && dl.contains("iosched/read_ahead_kb"), "{dl}");
    }

    #[test]
    fn quoting_survives_single_quotes() {
        assert_eq!(quote("it's"), r"'it'\''s'");
        let steps = vec!["echo 'a b' > $HEADWAY_DIR/x".to_string()];
        let s = script(Fs::Xfs, GuestWork::Steps(&steps));
        assert!(s.contains(r#"step workload0 sh -c 'echo '\''a b'\'' > $HEADWAY_DIR/x'"#), "{s}");
    }

    #[test]
    fn postmark_config_has_every_setting() {
        let c = postmark_config(&PostmarkSpec::default(), "/mnt/hw0");
        assert!(c.starts_with("set location /mnt/hw0\nset number 500\n"));
        assert!(c.contains("set size 500 10000\n") && c.contains("set buffering true\n"));
        assert!(c.ends_with("run /results/postmark.report\nquit\n"));
    }
}
