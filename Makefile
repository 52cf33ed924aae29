# headway — build, demo, test, bench.
# `make test` installs what it needs on a fresh Debian machine with a Rust toolchain.

CARGO ?= cargo
HEADWAY := target/release/headway

.PHONY: all build demo lab-demo reproduce test deps bench clean pytest python disksim-goals scratch-device-test flush-error-test golden golden-update kmod kmod-check kmod-deps

all: build

# System packages the test suite needs: the NBD clients the server's interop tests drive
# (nbdinfo/nbdcopy from libnbd-bin, nbdsh's bindings from python3-libnbd, qemu-io from
# qemu-utils), nbdkit and fio; blkparse (blktrace: the binary-trace reader is checked
# against it); OpenSSL's headers and pkg-config (`headway serve --tls` links
# the system's libssl) and its command line (the TLS tests make their certificates); DejaVu Sans for the text of `headway reproduce`'s plots; and
# the lab's (`headway lab`, real Linux guests): QEMU's x86 system emulator, busybox-static
# (the guest's shell), postmark, xfsprogs, reiserfsprogs and binutils' as and ld (copied into
# guests; as-fig10 links in the guest), and apt's
# package lists (the guest kernel is fetched with `apt-get download` and unpacked, not
# installed). qemu-system-x86 and qemu-utils are installed at the same version: installing
# one removes a newer other. Installed only when missing; sudo only when not root.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
LAB_PACKAGES := busybox-static fio postmark xfsprogs reiserfsprogs e2fsprogs binutils sqlite3
deps: kmod-deps
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install a Rust toolchain (rustup)"; exit 1; }
	@{ command -v nbdinfo && command -v nbdcopy && command -v qemu-io && command -v nbdkit && command -v fio \
		&& /usr/bin/python3 -c 'import nbd' && [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] \
		&& command -v qemu-system-x86_64 && command -v postmark && command -v mkfs.xfs && command -v mkfs.reiserfs \
		&& command -v as && command -v ld && command -v sqlite3 && command -v openssl && pkg-config --exists openssl && command -v blkparse \
		&& command -v gnuplot && /usr/bin/python3 -c 'import six' \
		&& dpkg -s busybox-static && apt-cache show linux-image-cloud-amd64; } >/dev/null 2>&1 || \
		{ $(SUDO) apt-get update && V=$$(apt-cache policy qemu-system-x86 | awk '/Candidate/{print $$2}') && \
		  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends --allow-downgrades \
		    nbdkit libnbd-bin python3-libnbd fonts-dejavu-core libssl-dev pkg-config openssl blktrace gnuplot-nox python3-six qemu-system-x86=$$V qemu-utils=$$V $(LAB_PACKAGES); }
	@# kernel-peers' NFS workload copies the NFS server's and client's programs into a guest:
	@# installed with service starts refused (a policy-rc.d of our own while none exists), so
	@# nothing serves NFS on this machine (on a systemd host the units stay enabled:
	@# `systemctl disable nfs-server` if unwanted)
	@{ command -v rpc.nfsd && command -v rpc.mountd && command -v exportfs && command -v mount.nfs; } >/dev/null 2>&1 || \
		{ echo "deps: installing nfs-kernel-server and nfs-common (the lab's NFS workload), services not started"; \
		  p=/usr/sbin/policy-rc.d; made=; if [ ! -e $$p ]; then printf '#!/bin/sh\nexit 101\n' | $(SUDO) tee $$p >/dev/null && $(SUDO) chmod +x $$p && made=1; fi; \
		  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nfs-kernel-server nfs-common; rc=$$?; \
		  [ -z "$$made" ] || $(SUDO) rm -f $$p; exit $$rc; }

# The kernel face: stream-iosched.ko, the `stream` blk-mq elevator (kernel/), built out of
# tree for the lab's Debian kernels (cloud: linux-image-cloud-amd64, 6.1; cloud-6.12: the
# backport) into target/kmod/RELEASE/, or for one kernel: `make kmod KVER=$$(uname -r)`.
# kernel/build.sh fetches what it needs into ~/.cache/headway/kmod ($$HEADWAY_KMOD_CACHE):
# linux-headers (unless installed) and block/*.h of linux-source of the same version.
# `make kmod-check` adds sparse and checkpatch.pl --strict; any warning fails it.
KMOD_KERNELS ?= cloud cloud-6.12
kmod: kmod-deps
	kernel/build.sh $(or $(KVER),$(KMOD_KERNELS))

kmod-check: kmod-deps
	kernel/build.sh --check $(or $(KVER),$(KMOD_KERNELS))

# What building it needs on a fresh Debian 12: the kernels' compiler (gcc-12), xz (the
# source tarball), pahole (6.12's modules carry BTF), sparse, perl (checkpatch.pl), and
# apt's package lists (the kernel packages are fetched with `apt-get download`).
kmod-deps:
	@{ command -v gcc-12 && command -v make && command -v xz && command -v pahole && command -v sparse \
		&& command -v perl && command -v dpkg-deb && apt-cache show linux-source-6.1 linux-image-6.12-cloud-amd64; } >/dev/null 2>&1 || \
		{ $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y \
		    --no-install-recommends gcc-12 make xz-utils pahole sparse perl; }

build: deps
	$(CARGO) build --release -p headway-cli

# The headline experiment: Stream Scheduling paper (000) Section 3.3, par-read without
# process information, on the modelled WD5000AAKS.
demo: build
	@echo "== Stream Scheduling paper, Section 3.3 (Figure 3): par-read with process information hidden"
	@echo "   4 synchronous sequential readers, 4 KiB reads, 1 GiB each, 50 GiB apart; modelled WD5000AAKS"
	@echo
	@echo "-- through the page cache (Linux-style readahead), as the paper ran it (paper: SS about 3.2x):"
	$(HEADWAY) simulate experiments/par-read-buffered.fio --disk wd5000aaks --context none \
		--scheduler noop,deadline,stream --json out/par-read-buffered.json
	@echo
	@echo "-- direct 4 KiB requests (no page cache): every deadline request is a long seek:"
	$(HEADWAY) simulate experiments/par-read.fio --disk wd5000aaks --context none \
		--scheduler noop,deadline,stream --json out/par-read.json
	@echo
	@echo "'vs 1st' is throughput relative to noop; JSON results are in out/."
	@echo "Stream scheduling finds the four streams without knowing which process sent what."
	@echo
	@echo "-- the same figure as a report (JSON, SVG/PNG plot, Markdown with the paper's numbers and a verdict):"
	$(HEADWAY) reproduce ss-fig3 --out out/ss-fig3
	@echo "   The verdict is two-sided: the paper's 3.2x with a band of 2.7-3.7x. Where headway differs,"
	@echo "   out/ss-fig3/ss-fig3.md says why, from its own runs (\"Why headway differs\")."
	@echo
	@echo "== Section 3.5 (Figure 6): the same readers striped over five disks (RAID0, 64 KiB unit)"
	@echo "-- stream-local decides on each disk alone; stream coordinates the array (paper: +114% over noop):"
	$(HEADWAY) simulate experiments/par-read-raid0.fio --array raid0:5:64k --context process \
		--scheduler noop,stream-local,stream --json out/par-read-raid0.json

# The lab: par-read (four buffered sequential readers, 256 MiB files) in a real Linux guest
# on ext4, its disk the emulated WD5000AAKS behind `headway serve`; guest schedulers bfq
# and none, host schedulers noop and stream (four guests, about 5 minutes under TCG).
lab-demo: build
	@echo "== The lab: par-read through a real Linux 6.1 guest's page cache and ext4, on headway serve"
	@echo "   guest bfq / none (Linux's own schedulers, inside the guest) x host noop / stream (headway serve)"
	$(HEADWAY) lab run experiments/lab/par-read.toml --out out/lab/par-read --json out/lab/par-read.json

# The DiskSim must-shows alone (they need no tool, only data/; `make test` runs them too):
# demerit at most DiskSim's, like for like, and request-by-request agreement with DiskSim's
# own answers.
disksim-goals: deps
	$(CARGO) test -p headway-validate --profile ci --lib -- disksim_goals oracle_goals

# Every figure of the seed papers headway can reproduce, with an index page.
reproduce: build
	$(HEADWAY) reproduce all --out out/reproduce

test: deps
	$(MAKE) kmod-check
	$(CARGO) test --workspace --profile ci
	$(MAKE) scratch-device-test
	$(MAKE) flush-error-test
	$(MAKE) golden
	$(MAKE) pytest

# Byte-identical results: every job file in experiments/ under every scheduler, `reproduce
# all`, the sweeps in experiments/sweeps/, `validate` and `replay` on DiskSim's data, hashed
# against tests/golden/manifest.sha256 (about 90 s). `make golden-update` rewrites the
# manifest when results change on purpose (say why in the commit).
CI_HEADWAY = $${CARGO_TARGET_DIR:-target}/ci/headway
golden: deps
	$(CARGO) build --profile ci -p headway-cli
	tests/golden/golden.sh check $(CI_HEADWAY)

golden-update: deps
	$(CARGO) build --profile ci -p headway-cli
	tests/golden/golden.sh update $(CI_HEADWAY)

# The direct backend on a real block device (the test is #[ignore]d without one): a loop
# device over a 64 MiB file, where this machine can make one (root and the loop driver);
# where it cannot, it fails saying why (a test whose tool is missing fails).
scratch-device-test:
	@img=$$(mktemp /tmp/headway-scratch.XXXXXX) && truncate -s 64M $$img && \
	if dev=$$(losetup -f --show $$img 2>/dev/null); then \
	  HEADWAY_TEST_SCRATCH_DEVICE=$$dev $(CARGO) test -p headway-nbd --profile ci --lib \
	    direct_block_device_round_trip -- --ignored; rc=$$?; losetup -d $$dev; rm -f $$img; exit $$rc; \
	else rm -f $$img; \
	  echo "direct_block_device_round_trip needs a loop device (losetup -f failed: not root, or no loop driver)"; exit 1; \
	fi

# A failed flush is never forgotten: each backend exported from a loop device whose
# backing file sits on a full 8 MiB tmpfs (the tests mount it and set the device up, so
# they need root and the loop driver, and fail without them).
flush-error-test:
	$(CARGO) test -p headway-nbd --profile ci --test flush_errors -- --ignored --test-threads 1

# The Python package (python/headway, native module from crates/py): a virtualenv with
# maturin, pytest, pandas and matplotlib (made once; again when pyproject.toml changes),
# the package built into it by maturin (incremental, like cargo), then its pytest suite.
VENV ?= .venv
VENV_PY := $(VENV)/bin/python
$(VENV)/.deps: pyproject.toml Makefile
	@[ -x $(VENV_PY) ] || python3 -m venv $(VENV)
	$(VENV_PY) -m pip install -q --disable-pip-version-check 'maturin>=1.5,<2' pytest pandas pyarrow matplotlib 'dask[distributed]'
	@touch $@

python: $(VENV)/.deps
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop -q

pytest: python
	$(VENV_PY) -m pytest -q python/tests

bench: build
	$(HEADWAY) bench

clean:
	$(CARGO) clean
