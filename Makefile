# headway — build, demo, test, bench.
# `make test` installs what it needs on a fresh Debian machine with a Rust toolchain.

CARGO ?= cargo
HEADWAY := target/release/headway

.PHONY: all build demo test deps bench clean

all: build

# System packages the test suite needs (none beyond a Rust toolchain yet; later issues add
# fio, nbdkit, libnbd-bin, qemu-utils here).
deps:
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install a Rust toolchain (rustup)"; exit 1; }

build: deps
	$(CARGO) build --release -p headway-cli

# The headline experiment: Stream Scheduling paper (000) Section 3.3, par-read without
# process information, on the modelled WD5000AAKS.
demo: build
	@echo "par-read: 4 synchronous sequential readers, 1 GiB each, 50 GiB apart, context hidden"
	$(HEADWAY) simulate experiments/par-read.fio --disk wd5000aaks --context none \
		--scheduler noop,deadline,stream --json out/par-read.json
	@echo "(JSON results in out/par-read.json; 'vs 1st' is throughput relative to noop)"

test: deps
	$(CARGO) test --workspace --profile ci

bench: build
	$(HEADWAY) bench

clean:
	$(CARGO) clean
