//! Issue 40: a disk removed while requests wait in the kernel `stream` elevator. A Linux 6.1
//! or 6.12 guest (TCG) selects `stream` on a throttled virtio disk, four direct sequential readers
//! keep it busy, and the host removes the disk through QEMU's monitor (`device_del`) while
//! requests are queued in the elevator. The disk must go, the readers must end (with I/O
//! errors), the module must unload, and the kernel log must hold no warning.
//!
//! Needs qemu-system-x86, busybox-static and Debian's kernel package lists (`make deps`);
//! without them it fails, saying what is missing.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use headway_lab::image::{self, Kernel};
use headway_lab::qemu::{Accel, Guest, GuestConfig, Outcome};
use headway_lab::spec::KernelFlavour;

const SCRIPT: &str = r#"#!/bin/sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read name file; do insmod $file || echo "HEADWAY: insmod $name failed"; done < /modules.order
fail() { echo "HEADWAY-FAILED $1"; dmesg | tail -30; poweroff -f; }
insmod /work/stream-iosched.ko || fail insmod
n=0; D=
while [ $n -lt 100 ] && [ -z "$D" ]; do
  for d in /sys/block/vd*; do [ "$(cat $d/serial 2>/dev/null)" = hw-victim ] && D=/dev/${d##*/}; done
  sleep 0.1; n=$((n+1))
done
[ -n "$D" ] || fail no-disk
b=${D#/dev/}; q=/sys/block/$b/queue
echo stream > $q/scheduler; grep -q '\[stream\]' $q/scheduler || fail select
for i in 0 1 2 3; do dd if=$D of=/dev/null bs=4k count=200000 skip=$((i * 60000)) iflag=direct 2>/dev/null & done
n=0; while [ "$(cat $q/iosched/queued)" -lt 2 ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n+1)); done
echo "HEADWAY-UNPLUG queued=$(cat $q/iosched/queued) waits=$(cat $q/iosched/waits) dispatched=$(cat $q/iosched/dispatched)"
n=0; while [ -e /sys/block/$b ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done
[ -e /sys/block/$b ] && fail disk-still-there
echo "HEADWAY-GONE after $n"
wait
grep -q stream_iosched /proc/modules || fail module-gone-early
rmmod stream_iosched || fail rmmod
grep -q stream_iosched /proc/modules && fail still-loaded
if dmesg | grep -E 'WARNING|BUG|lockup|Call Trace|RCU stall|refcount'; then fail kernel-log; fi
echo HEADWAY-DONE ok
poweroff -f
"#;

fn monitor(sock: &Path, cmd: &str) -> String {
    let mut s = UnixStream::connect(sock).unwrap_or_else(|e| panic!("monitor {}: {e}", sock.display()));
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(format!("{cmd}\n").as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let mut buf = [0u8; 4096];
    let n = s.read(&mut buf).unwrap_or(0);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[test]
fn a_disk_removed_while_requests_wait_in_stream_linux_6_1() {
    unplug(KernelFlavour::Cloud);
}

#[test]
fn a_disk_removed_while_requests_wait_in_stream_linux_6_12() {
    unplug(KernelFlavour::Cloud612);
}

fn unplug(flavour: KernelFlavour) {
    let dir = std::env::temp_dir().join(format!("headway-unplug-{}-{flavour:?}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cache = image::cache_dir();
    let kernel = Kernel::fetch(flavour, &cache).expect("the guest kernel (make deps)");
    let ko = image::stream_module(&kernel).expect("stream-iosched.ko for the guest's kernel");
    let modules = kernel.modules().unwrap().closure(&["virtio_pci", "virtio_blk"]).unwrap();
    let mut initrd = image::base_initramfs(&modules).unwrap();
    let files = vec![("stream-iosched.ko".to_string(), std::fs::read(&ko).unwrap())];
    initrd.extend(image::run_initramfs(SCRIPT, &files).unwrap());
    let (initrd_p, victim, empty, results, console, mon) = (
        dir.join("initrd"),
        dir.join("victim.img"),
        dir.join("empty.img"),
        dir.join("results.img"),
        dir.join("console.log"),
        dir.join("monitor.sock"),
    );
    std::fs::write(&initrd_p, initrd).unwrap();
    std::fs::File::create(&victim).unwrap().set_len(2 << 30).unwrap();
    std::fs::File::create(&empty).unwrap().set_len(1 << 20).unwrap();
    std::fs::File::create(&results).unwrap().set_len(1 << 20).unwrap();
    let extra = vec![
        "-drive".to_string(),
        format!(
            "id=hw-victim,file={},format=raw,if=none,cache=none,aio=threads,throttling.iops-total=150",
            victim.display()
        ),
        "-device".into(),
        "virtio-blk-pci,drive=hw-victim,serial=hw-victim,id=victim".into(),
        "-monitor".into(),
        format!("unix:{},server=on,wait=off", mon.display()),
    ];
    let mut guest = Guest::start(&GuestConfig {
        kernel: &kernel.vmlinuz,
        initramfs: &initrd_p,
        tools: &empty,
        results: &results,
        sockets: &[],
        part: None,
        memory_mb: 256,
        cpus: 1,
        accel: Accel::Tcg,
        console: &console,
        extra: &extra,
    })
    .expect("QEMU starts");
    // Wait for the readers to have requests queued in the elevator, then pull the disk.
    let until = Instant::now() + Duration::from_secs(120);
    let line = loop {
        let log = std::fs::read_to_string(&console).unwrap_or_default();
        if let Some(l) = log.lines().find(|l| l.contains("HEADWAY-UNPLUG")) {
            break l.to_string();
        }
        assert!(!log.contains("HEADWAY-FAILED"), "the guest failed before the unplug:\n{log}");
        assert!(Instant::now() < until && guest.running(), "the guest never got to the unplug:\n{log}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let queued: u64 = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("queued="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    let reply = monitor(&mon, "device_del victim");
    assert!(!reply.contains("Error"), "device_del: {reply}");
    let outcome = guest.wait(Duration::from_secs(180), &std::sync::atomic::AtomicBool::new(false)).unwrap();
    let log = std::fs::read_to_string(&console).unwrap_or_default();
    assert!(matches!(outcome, Outcome::Done { .. }), "{outcome:?}:\n{log}");
    assert!(log.contains("HEADWAY-DONE ok") && log.contains("HEADWAY-GONE"), "{log}");
    assert!(queued >= 2, "requests were waiting in the elevator at the unplug: {line}");
    eprintln!("{line}; {}", log.lines().find(|l| l.contains("HEADWAY-GONE")).unwrap_or(""));
    let _ = std::fs::remove_dir_all(&dir);
}
