//! Guest images: a Debian kernel, an initramfs built on the fly, and a tools disk.
//!
//! * **Kernel**: the image package a Debian kernel metapackage (`linux-image-cloud-amd64`)
//!   depends on is fetched with `apt-get download` and unpacked with `dpkg-deb -x` into the
//!   cache directory ([`cache_dir`]); nothing is installed on the host. Later runs reuse it.
//!   Compressed modules (6.12's `.ko.xz`) are decompressed there once, with `xz -d`: the
//!   lab reads their `.modinfo` and the guest's busybox `insmod` loads plain `.ko` files.
//! * **headway's own modules** (the `stream` elevator, [`stream_module`]): built for the
//!   guest's kernel by `kernel/build.sh` (what `make kmod` runs) and put into the
//!   initramfs beside the kernel's.
//! * **Initramfs**: a newc archive ([`crate::cpio`]) holding busybox-static (the guest's
//!   shell, mount, insmod, tar, poweroff) and the kernel modules the run needs with their
//!   prerequisites ([`crate::kmod`]); the run's `/init` script is a second archive appended
//!   to it, which the kernel unpacks over the first.
//! * **Tools disk**: the dynamically linked programs the workload needs (fio, postmark,
//!   mkfs.*, dd) and every shared library they load (found with the host's `ldd`), in an
//!   ext4 image made by `mkfs.ext4 -d` (no root or loop device needed), attached read-only.
//!   Keeping them off the initramfs keeps them out of the guest's memory: the guest's page
//!   cache is sized by `memory_mb` alone. Images are cached by their contents' names, sizes
//!   and modification times.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cpio::Archive;
use crate::kmod;
use crate::spec::KernelFlavour;
use crate::LabError;

/// Where kernels and tools images are kept: `$HEADWAY_LAB_CACHE`, else
/// `$XDG_CACHE_HOME/headway/lab`, else `~/.cache/headway/lab`.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("HEADWAY_LAB_CACHE") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("headway/lab");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/tmp"));
    home.join(".cache/headway/lab")
}

/// Run `cmd`, returning its stdout, or an error with its stderr.
pub(crate) fn run(cmd: &mut Command) -> Result<String, LabError> {
    let what = format!("{cmd:?}");
    let out = cmd.output().map_err(|e| LabError::Tool { what: what.clone(), msg: e.to_string() })?;
    if !out.status.success() {
        return Err(LabError::Tool {
            what,
            msg: format!("{}: {}", out.status, String::from_utf8_lossy(&out.stderr).trim()),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// An unpacked Debian kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// `6.1.0-56-cloud-amd64`
    pub release: String,
    /// The Debian package it came from, `linux-image-6.1.0-56-cloud-amd64_6.1.192-2`.
    pub package: String,
    pub vmlinuz: PathBuf,
    /// `lib/modules/RELEASE`
    pub modules: PathBuf,
}

impl Kernel {
    /// The kernel of `flavour`, fetched and unpacked into `cache` unless already there.
    pub fn fetch(flavour: KernelFlavour, cache: &Path) -> Result<Kernel, LabError> {
        let meta = flavour.metapackage();
        let deps = run(Command::new("apt-cache").args(["depends", meta]))?;
        let pkg = deps
            .lines()
            .filter_map(|l| l.trim().strip_prefix("Depends:"))
            .map(str::trim)
            .find(|p| p.starts_with("linux-image-"))
            .ok_or_else(|| LabError::Kernel {
                msg: format!(
                    "apt-cache knows no kernel image behind `{meta}` (run `apt-get update`, or `make lab-deps`)"
                ),
            })?
            .to_string();
        let dir = cache.join("kernels").join(&pkg);
        let done = dir.join(".unpacked");
        if !done.exists() {
            std::fs::create_dir_all(&dir).map_err(|e| LabError::io(&dir, e))?;
            let dl = cache.join("debs");
            std::fs::create_dir_all(&dl).map_err(|e| LabError::io(&dl, e))?;
            run(Command::new("apt-get").args(["download", "-q", &pkg]).current_dir(&dl))?;
            let deb = std::fs::read_dir(&dl)
                .map_err(|e| LabError::io(&dl, e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(&format!("{pkg}_")) && n.ends_with(".deb"))
                })
                .ok_or_else(|| LabError::Kernel { msg: format!("apt-get download {pkg} left no .deb") })?;
            run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&dir))?;
            std::fs::write(&done, deb.file_name().unwrap().to_string_lossy().as_bytes())
                .map_err(|e| LabError::io(&done, e))?;
        }
        decompress_modules(&dir)?;
        let package = std::fs::read_to_string(&done)
            .map(|s| s.trim_end_matches(".deb").replace("_amd64", ""))
            .unwrap_or_else(|_| pkg.clone());
        let boot = dir.join("boot");
        let vmlinuz = std::fs::read_dir(&boot)
            .map_err(|e| LabError::io(&boot, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("vmlinuz-")))
            .ok_or_else(|| LabError::Kernel { msg: format!("no vmlinuz-* in {}", boot.display()) })?;
        let release =
            vmlinuz.file_name().unwrap().to_string_lossy().trim_start_matches("vmlinuz-").to_string();
        let modules = dir.join("lib/modules").join(&release);
        if !modules.is_dir() {
            return Err(LabError::Kernel { msg: format!("no {}", modules.display()) });
        }
        Ok(Kernel { release, package, vmlinuz, modules })
    }

    /// The Debian package version it came from (`6.1.192-3`).
    pub fn version(&self) -> &str {
        self.package.rsplit_once('_').map_or("", |(_, v)| v)
    }

    /// The kernel's modules, read once: every `.ko` by name, and the built-in ones.
    pub fn modules(&self) -> Result<Modules, LabError> {
        let index = kmod::index(&self.modules.join("kernel")).map_err(|e| LabError::io(&self.modules, e))?;
        let builtin = std::fs::read_to_string(self.modules.join("modules.builtin"))
            .map(|t| kmod::builtin_names(&t))
            .unwrap_or_default();
        Ok(Modules { index, builtin })
    }
}

/// Decompress every `.ko.xz` under `dir` in place (once: `.modules-decompressed` marks it).
fn decompress_modules(dir: &Path) -> Result<(), LabError> {
    let mark = dir.join(".modules-decompressed");
    if mark.exists() {
        return Ok(());
    }
    let mut xz = Vec::new();
    let mut stack = vec![dir.join("lib/modules")];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries {
            let e = e.map_err(|e| LabError::io(&d, e))?;
            let p = e.path();
            if e.file_type().map_err(|e| LabError::io(&p, e))?.is_dir() {
                stack.push(p);
            } else if p.to_str().is_some_and(|n| n.ends_with(".ko.xz")) {
                xz.push(p);
            }
        }
    }
    for chunk in xz.chunks(256) {
        // -f: a .ko left by an interrupted run is overwritten
        run(Command::new("xz").args(["-d", "-f", "-q", "--"]).args(chunk))?;
    }
    std::fs::write(&mark, format!("{}\n", xz.len())).map_err(|e| LabError::io(&mark, e))
}

/// Where headway's kernel modules are looked for when no build script is at hand:
/// `$HEADWAY_KMOD_DIR`, else `target/kmod` (each kernel's in `RELEASE/`).
pub fn kmod_dir() -> PathBuf {
    std::env::var_os("HEADWAY_KMOD_DIR").map_or_else(|| PathBuf::from("target/kmod"), PathBuf::from)
}

/// The source tree's `kernel/build.sh`, when this is a checkout of headway.
fn kmod_build_script() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernel/build.sh");
    p.is_file().then_some(p)
}

/// The `stream` elevator (`stream-iosched.ko`) for `kernel`: from `$HEADWAY_KMOD_DIR/RELEASE/`
/// when that is set, else built by the source tree's `kernel/build.sh` for exactly this
/// kernel package (incremental: seconds when nothing changed; the first build fetches the
/// kernel's headers and block/*.h), else `target/kmod/RELEASE/`. Its `vermagic` must name
/// the kernel's release.
pub fn stream_module(kernel: &Kernel) -> Result<PathBuf, LabError> {
    let prebuilt = |dir: PathBuf| dir.join(&kernel.release).join("stream-iosched.ko");
    let ko = match (std::env::var_os("HEADWAY_KMOD_DIR"), kmod_build_script()) {
        (None, Some(script)) => {
            let target = format!("{}={}", kernel.release, kernel.version());
            let out = run(Command::new("bash").arg(&script).args(["--print", &target]))?;
            out.lines().last().map(PathBuf::from).ok_or_else(|| LabError::Kernel {
                msg: format!("{} {target} printed no module", script.display()),
            })?
        }
        _ => prebuilt(kmod_dir()),
    };
    let bytes = std::fs::read(&ko).map_err(|e| LabError::Missing {
        what: format!(
            "{} ({e}): build it with `make kmod KVER={}` (kernel/build.sh)",
            ko.display(),
            kernel.release
        ),
    })?;
    let info =
        kmod::modinfo(&bytes).map_err(|e| LabError::Kernel { msg: format!("{}: {e}", ko.display()) })?;
    let vermagic = info.iter().find_map(|kv| kv.strip_prefix("vermagic=")).unwrap_or("");
    if vermagic.split_whitespace().next() != Some(kernel.release.as_str()) {
        return Err(LabError::Kernel {
            msg: format!("{} was built for `{vermagic}`, not {}", ko.display(), kernel.release),
        });
    }
    Ok(ko)
}

/// A kernel's modules ([`Kernel::modules`]).
pub struct Modules {
    index: BTreeMap<String, PathBuf>,
    builtin: BTreeSet<String>,
}

impl Modules {
    /// Is `module` there, built in or as a `.ko`?
    pub fn has(&self, module: &str) -> bool {
        let m = kmod::canonical(module);
        self.index.contains_key(&m) || self.builtin.contains(&m)
    }

    /// The modules `wanted` and their prerequisites, in load order.
    pub fn closure(&self, wanted: &[&str]) -> Result<Vec<(String, PathBuf)>, LabError> {
        // aliases are looked up in the crypto modules first (where soft prerequisites such as
        // ext4's `crypto-crc32c` point), then in every module
        let crypto = |p: &PathBuf| p.components().any(|c| c.as_os_str() == "crypto");
        let alias = |name: &str| {
            kmod::provider(name, self.index.iter().filter(|(_, p)| crypto(p)))
                .or_else(|| kmod::provider(name, self.index.iter().filter(|(_, p)| !crypto(p))))
        };
        kmod::closure(&self.index, &self.builtin, &alias, wanted).map_err(|msg| LabError::Kernel { msg })
    }
}

/// busybox-static's binary on the host.
pub const BUSYBOX: &str = "/bin/busybox";

/// The base initramfs: busybox and `modules` (load order in `/modules.order`, one
/// `NAME FILE` per line).
pub fn base_initramfs(modules: &[(String, PathBuf)]) -> Result<Vec<u8>, LabError> {
    let busybox = std::fs::read(BUSYBOX).map_err(|e| LabError::Missing {
        what: format!("{BUSYBOX} ({e}): install Debian's busybox-static (`make lab-deps`)"),
    })?;
    if busybox.get(..4) != Some(b"\x7fELF") || is_dynamic(Path::new(BUSYBOX)) {
        return Err(LabError::Missing {
            what: format!("{BUSYBOX} is not a static busybox: install Debian's busybox-static"),
        });
    }
    let io = |e| LabError::io(Path::new("initramfs"), e);
    let mut a = Archive::new(Vec::new());
    for d in
        ["bin", "dev", "proc", "sys", "tmp", "mnt", "tools", "results", "lib", "lib64", "lib/modules", "run"]
    {
        a.dir(d).map_err(io)?;
    }
    a.file("bin/busybox", 0o755, &busybox).map_err(io)?;
    a.symlink("bin/sh", "busybox").map_err(io)?;
    let mut order = String::new();
    for (name, path) in modules {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let data = std::fs::read(path).map_err(|e| LabError::io(path, e))?;
        a.file(&format!("lib/modules/{file}"), 0o644, &data).map_err(io)?;
        order.push_str(&format!("{name} /lib/modules/{file}\n"));
    }
    a.file("modules.order", 0o644, order.as_bytes()).map_err(io)?;
    a.finish().map_err(io)
}

/// The per-run archive: `/init` and extra files (the workload's), appended to the base.
pub fn run_initramfs(init: &str, files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, LabError> {
    let io = |e| LabError::io(Path::new("initramfs"), e);
    let mut a = Archive::new(Vec::new());
    a.file("init", 0o755, init.as_bytes()).map_err(io)?;
    a.dir("work").map_err(io)?;
    for (name, data) in files {
        a.file(&format!("work/{name}"), 0o644, data).map_err(io)?;
    }
    a.finish().map_err(io)
}

fn is_dynamic(bin: &Path) -> bool {
    Command::new("ldd").arg(bin).output().map(|o| o.status.success()).unwrap_or(false)
}

/// Where a host program is: `name` on `PATH`, or in /usr/sbin, /sbin.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The Debian package that provides each tool the lab may copy into a guest.
pub fn package_of(tool: &str) -> &'static str {
    match tool {
        "fio" => "fio",
        "postmark" => "postmark",
        "mkfs.ext2" | "mkfs.ext3" | "mkfs.ext4" => "e2fsprogs",
        "mkfs.xfs" => "xfsprogs",
        "mkfs.reiserfs" => "reiserfsprogs",
        "dd" => "coreutils",
        "as" | "ld" | "ld.bfd" | "objdump" => "binutils",
        _ => "the one that provides it",
    }
}

/// Shared libraries `bin` loads, and its ELF interpreter, as `ldd` lists them.
fn shared_libraries(bin: &Path) -> Result<Vec<PathBuf>, LabError> {
    let out = match Command::new("ldd").arg(bin).output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        // a static program: nothing to copy
        Ok(_) => return Ok(Vec::new()),
        Err(e) => return Err(LabError::Tool { what: "ldd".into(), msg: e.to_string() }),
    };
    let mut libs = Vec::new();
    for l in out.lines() {
        let l = l.trim();
        let path = match l.split_once("=>") {
            Some((_, rest)) => rest.split_whitespace().next(),
            None => l.split_whitespace().next().filter(|p| p.starts_with('/')),
        };
        if let Some(p) = path.filter(|p| p.starts_with('/')) {
            libs.push(PathBuf::from(p));
        }
    }
    Ok(libs)
}

/// A read-only ext4 image holding `tools` (host program names) under `bin/` and their
/// shared libraries under `lib/`, built in `cache` unless an identical one is there.
pub fn tools_disk(tools: &BTreeSet<String>, cache: &Path) -> Result<PathBuf, LabError> {
    let mut programs: BTreeMap<String, PathBuf> = BTreeMap::new();
    for t in tools {
        let bin = find_program(t).ok_or_else(|| LabError::Missing {
            what: format!("`{t}` on the host: install Debian's {} (`make lab-deps`)", package_of(t)),
        })?;
        programs.insert(t.clone(), bin);
    }
    tools_disk_of(&programs, cache)
}

/// [`tools_disk`] of programs given by path, each under `bin/` by its name.
pub fn tools_disk_of(programs: &BTreeMap<String, PathBuf>, cache: &Path) -> Result<PathBuf, LabError> {
    let files = programs.clone();
    let mut libs: BTreeMap<String, PathBuf> = BTreeMap::new();
    for bin in files.values() {
        for l in shared_libraries(bin)? {
            libs.insert(l.file_name().unwrap().to_string_lossy().into_owned(), l);
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (name, p) in files.iter().chain(libs.iter()) {
        name.hash(&mut h);
        let m = std::fs::metadata(p).map_err(|e| LabError::io(p, e))?;
        m.len().hash(&mut h);
        m.modified().ok().hash(&mut h);
    }
    let img = cache.join(format!("tools-{:016x}.img", h.finish()));
    if img.exists() {
        return Ok(img);
    }
    let stage = cache.join(format!("tools-{:016x}.stage", h.finish()));
    let _ = std::fs::remove_dir_all(&stage);
    for d in ["bin", "lib"] {
        std::fs::create_dir_all(stage.join(d)).map_err(|e| LabError::io(&stage, e))?;
    }
    let mut bytes = 0u64;
    for (name, p) in &files {
        let to = stage.join("bin").join(name);
        bytes += std::fs::copy(p, &to).map_err(|e| LabError::io(p, e))?;
    }
    for (name, p) in &libs {
        let to = stage.join("lib").join(name);
        bytes += std::fs::copy(p, &to).map_err(|e| LabError::io(p, e))?;
    }
    // room for the file system's own blocks and inodes
    let size_mb = bytes / (1 << 20) * 5 / 4 + 16;
    let tmp = img.with_extension("img.part");
    let _ = std::fs::remove_file(&tmp);
    run(Command::new("mkfs.ext4")
        .args(["-q", "-F", "-L", "hw-tools", "-d"])
        .arg(&stage)
        .arg(&tmp)
        .arg(format!("{size_mb}M")))?;
    std::fs::rename(&tmp, &img).map_err(|e| LabError::io(&img, e))?;
    let _ = std::fs::remove_dir_all(&stage);
    Ok(img)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_libraries_of_a_dynamic_program() {
        // `ls` is always there and always dynamic on Debian
        let ls = find_program("ls").unwrap();
        let libs = shared_libraries(&ls).unwrap();
        assert!(libs.iter().any(|l| l.to_string_lossy().contains("libc.so")), "{libs:?}");
        assert!(libs.iter().any(|l| l.to_string_lossy().contains("ld-linux")), "{libs:?}");
    }

    #[test]
    fn a_kernel_knows_its_package_version() {
        let k = Kernel {
            release: "6.12.118+deb12-cloud-amd64".into(),
            package: "linux-image-6.12.118+deb12-cloud-amd64_6.12.118-1~deb12u1".into(),
            vmlinuz: PathBuf::new(),
            modules: PathBuf::new(),
        };
        assert_eq!(k.version(), "6.12.118-1~deb12u1");
    }

    #[test]
    fn compressed_modules_are_decompressed_once() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("lib/modules/6.12.0-1-cloud-amd64/kernel/block");
        std::fs::create_dir_all(&m).unwrap();
        std::fs::write(m.join("bfq.ko"), b"\x7fELF bfq").unwrap();
        run(Command::new("xz").arg(m.join("bfq.ko"))).unwrap();
        assert!(m.join("bfq.ko.xz").exists() && !m.join("bfq.ko").exists());
        decompress_modules(dir.path()).unwrap();
        assert_eq!(std::fs::read(m.join("bfq.ko")).unwrap(), b"\x7fELF bfq");
        assert!(!m.join("bfq.ko.xz").exists());
        // marked: not walked again
        std::fs::write(m.join("kyber.ko.xz"), b"not xz").unwrap();
        decompress_modules(dir.path()).unwrap();
    }

    #[test]
    fn run_archive_holds_init_and_workload() {
        let a = run_initramfs("#!/bin/sh\n", &[("job.fio".into(), b"[a]\n".to_vec())]).unwrap();
        let s = String::from_utf8_lossy(&a);
        assert!(s.contains("init") && s.contains("work/job.fio") && s.contains("TRAILER!!!"));
    }
}
