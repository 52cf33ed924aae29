//! Kernel modules for the guest: find a module in an unpacked kernel package and the
//! modules it needs, in load order.
//!
//! A Debian kernel `.deb` ships `lib/modules/VERSION/kernel/**/*.ko` but no `modules.dep`
//! (its postinst runs depmod). Each `.ko` is an ELF object whose `.modinfo` section is a
//! list of NUL-terminated `key=value` strings; `depends=a,b` names the modules that must be
//! loaded first, `softdep=pre: x` modules to load first if present (libcrc32c's crc32c).
//! Module names treat `-` and `_` alike (`kyber-iosched.ko` is module `kyber_iosched`).
//! The guest loads the closure with busybox `insmod` in the order [`closure`] returns.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `name` with `-` as `_`.
pub fn canonical(name: &str) -> String {
    name.replace('-', "_")
}

/// Every `.ko` under `root` by canonical module name.
pub fn index(root: &Path) -> std::io::Result<BTreeMap<String, PathBuf>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir)? {
            let e = e?;
            let p = e.path();
            if e.file_type()?.is_dir() {
                stack.push(p);
            } else if let Some(stem) =
                p.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".ko"))
            {
                out.insert(canonical(stem), p);
            }
        }
    }
    Ok(out)
}

/// The `.modinfo` section's strings of an ELF64 little-endian object.
pub fn modinfo(elf: &[u8]) -> Result<Vec<String>, String> {
    let u16_at = |o: usize| elf.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u64_at = |o: usize| elf.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap()));
    if elf.get(..4) != Some(b"\x7fELF") || elf.get(4) != Some(&2) || elf.get(5) != Some(&1) {
        return Err("not a 64-bit little-endian ELF object".into());
    }
    let bad = || "truncated ELF header".to_string();
    let shoff = u64_at(0x28).ok_or_else(bad)? as usize;
    let shentsize = u16_at(0x3a).ok_or_else(bad)? as usize;
    let shnum = u16_at(0x3c).ok_or_else(bad)? as usize;
    let shstrndx = u16_at(0x3e).ok_or_else(bad)? as usize;
    let section = |i: usize| -> Option<(u32, usize, usize)> {
        let h = shoff + i * shentsize;
        let name = u32::from_le_bytes(elf.get(h..h + 4)?.try_into().ok()?);
        Some((name, u64_at(h + 0x18)? as usize, u64_at(h + 0x20)? as usize))
    };
    let (_, str_off, str_size) = section(shstrndx).ok_or("bad section string table")?;
    let names = elf.get(str_off..str_off + str_size).ok_or("bad section string table")?;
    for i in 0..shnum {
        let (name, off, size) = section(i).ok_or("truncated section header")?;
        let n = names.get(name as usize..).unwrap_or(&[]);
        let n = &n[..n.iter().position(|&c| c == 0).unwrap_or(n.len())];
        if n == b".modinfo" {
            let data = elf.get(off..off + size).ok_or(".modinfo past the end")?;
            return Ok(data
                .split(|&c| c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect());
        }
    }
    Err("no .modinfo section".into())
}

/// Modules `info` says must (depends) or should (softdep pre) be loaded first.
pub fn prerequisites(info: &[String]) -> (Vec<String>, Vec<String>) {
    let mut hard = Vec::new();
    let mut soft = Vec::new();
    for kv in info {
        if let Some(v) = kv.strip_prefix("depends=") {
            hard.extend(v.split(',').filter(|s| !s.is_empty()).map(canonical));
        } else if let Some(v) = kv.strip_prefix("softdep=") {
            // `pre: a b post: c`
            let mut pre = false;
            for w in v.split_whitespace() {
                match w {
                    "pre:" => pre = true,
                    "post:" => pre = false,
                    // as written: it may be an alias (`crypto-crc32c`), where `-` is not `_`
                    m if pre => soft.push(m.to_string()),
                    _ => {}
                }
            }
        }
    }
    (hard, soft)
}

/// The modules to load for `wanted`, prerequisites first, each once. A wanted or
/// required module missing from `index` is an error; a wanted module built into the
/// kernel (`builtin` lists `kernel/.../NAME.ko` lines of `modules.builtin`) is skipped. A
/// soft prerequisite names a module or an alias (ext4's `crypto-crc32c`, which
/// `crc32c_generic` or `crc32c-intel` provides: `alias` resolves it); one that is neither,
/// or built in, is skipped.
pub fn closure(
    index: &BTreeMap<String, PathBuf>,
    builtin: &BTreeSet<String>,
    alias: &dyn Fn(&str) -> Option<String>,
    wanted: &[&str],
) -> Result<Vec<(String, PathBuf)>, String> {
    struct Walk<'a> {
        index: &'a BTreeMap<String, PathBuf>,
        builtin: &'a BTreeSet<String>,
        alias: &'a dyn Fn(&str) -> Option<String>,
        seen: BTreeSet<String>,
        out: Vec<(String, PathBuf)>,
    }
    impl Walk<'_> {
        fn visit(&mut self, m: &str, required_by: &str) -> Result<(), String> {
            if !self.seen.insert(m.to_string()) || self.builtin.contains(m) {
                return Ok(());
            }
            let path = self
                .index
                .get(m)
                .ok_or_else(|| format!("kernel module `{m}` (needed by {required_by}) not found"))?;
            let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let info = modinfo(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
            let (hard, soft) = prerequisites(&info);
            for s in soft {
                let name = canonical(&s);
                let provider = if self.index.contains_key(&name) { Some(name) } else { (self.alias)(&s) };
                if let Some(p) = provider {
                    self.visit(&p, m)?;
                }
            }
            for h in hard {
                self.visit(&h, m)?;
            }
            self.out.push((m.to_string(), path.clone()));
            Ok(())
        }
    }
    let mut walk = Walk { index, builtin, alias, seen: BTreeSet::new(), out: Vec::new() };
    for w in wanted {
        walk.visit(&canonical(w), "the lab")?;
    }
    Ok(walk.out)
}

/// The first module (in name order) among `candidates` whose `.modinfo` has `alias=NAME`
/// (crypto algorithms are requested as `crypto-NAME`, and provide that alias).
pub fn provider<'a>(
    name: &str,
    candidates: impl Iterator<Item = (&'a String, &'a PathBuf)>,
) -> Option<String> {
    let want = format!("alias={name}");
    for (m, path) in candidates {
        let Ok(bytes) = std::fs::read(path) else { continue };
        if modinfo(&bytes).is_ok_and(|info| info.contains(&want)) {
            return Some(m.clone());
        }
    }
    None
}

/// Canonical names of the modules built into the kernel, from `modules.builtin`.
pub fn builtin_names(text: &str) -> BTreeSet<String> {
    text.lines().filter_map(|l| l.rsplit('/').next()?.strip_suffix(".ko")).map(canonical).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 object with a `.modinfo` section holding `info`.
    fn elf(info: &[&str]) -> Vec<u8> {
        let mut modinfo = Vec::new();
        for s in info {
            modinfo.extend_from_slice(s.as_bytes());
            modinfo.push(0);
        }
        let shstr = b"\0.modinfo\0.shstrtab\0".to_vec();
        let mut f = vec![0u8; 64];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = 2;
        f[5] = 1;
        let modinfo_off = f.len();
        f.extend_from_slice(&modinfo);
        let shstr_off = f.len();
        f.extend_from_slice(&shstr);
        let shoff = f.len();
        let sh = |name: u32, off: usize, size: usize| {
            let mut h = vec![0u8; 64];
            h[..4].copy_from_slice(&name.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&(off as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(size as u64).to_le_bytes());
            h
        };
        f.extend(sh(0, 0, 0));
        f.extend(sh(1, modinfo_off, modinfo.len()));
        f.extend(sh(10, shstr_off, shstr.len()));
        f[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        f[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        f[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        f[0x3e..0x40].copy_from_slice(&2u16.to_le_bytes());
        f
    }

    #[test]
    fn modinfo_strings_are_read() {
        let info = modinfo(&elf(&["license=GPL", "depends=virtio,virtio_ring", "name=virtio_blk"])).unwrap();
        assert_eq!(info, vec!["license=GPL", "depends=virtio,virtio_ring", "name=virtio_blk"]);
        assert!(modinfo(b"not an elf").is_err());
    }

    #[test]
    fn softdeps_and_depends() {
        let info: Vec<String> =
            ["depends=a-b,c", "softdep=pre: crc32c post: x"].iter().map(|s| s.to_string()).collect();
        assert_eq!(prerequisites(&info), (vec!["a_b".into(), "c".into()], vec!["crc32c".into()]));
        let info = vec!["softdep=pre: crypto-crc32c".to_string()];
        assert_eq!(prerequisites(&info).1, vec!["crypto-crc32c".to_string()], "an alias stays as written");
    }

    #[test]
    fn closure_orders_prerequisites_first_and_skips_builtins() {
        let dir = tempfile::tempdir().unwrap();
        let put = |name: &str, info: &[&str]| {
            std::fs::write(dir.path().join(format!("{name}.ko")), elf(info)).unwrap()
        };
        put("virtio_ring", &["depends="]);
        put("virtio", &["depends=virtio_ring"]);
        put("virtio_blk", &["depends=virtio,virtio_ring"]);
        put("kyber-iosched", &["depends="]);
        put("xfs", &["depends=libcrc32c"]);
        put("libcrc32c", &["depends=", "softdep=pre: crc32c_intel"]);
        put("crc32c-intel", &["depends="]);
        put("ext4", &["depends=", "softdep=pre: crypto-crc32c"]);
        put("crc32c_generic", &["depends=", "alias=crypto-crc32c", "alias=crc32c"]);
        let idx = index(dir.path()).unwrap();
        let alias = |n: &str| provider(n, idx.iter());
        let got = closure(&idx, &BTreeSet::new(), &alias, &["virtio_blk", "kyber-iosched", "xfs"]).unwrap();
        let names: Vec<_> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["virtio_ring", "virtio", "virtio_blk", "kyber_iosched", "crc32c_intel", "libcrc32c", "xfs"]
        );
        let built: BTreeSet<String> = builtin_names("kernel/drivers/virtio/virtio.ko\n");
        let got = closure(&idx, &built, &alias, &["virtio_blk"]).unwrap();
        assert_eq!(got.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["virtio_ring", "virtio_blk"]);
        // a soft prerequisite named by an alias
        let got = closure(&idx, &BTreeSet::new(), &alias, &["ext4"]).unwrap();
        assert_eq!(got.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["crc32c_generic", "ext4"]);
        let e = closure(&idx, &BTreeSet::new(), &alias, &["reiserfs"]).unwrap_err();
        assert!(e.contains("`reiserfs`"), "{e}");
    }
}
