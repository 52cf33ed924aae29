#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build stream-iosched.ko (the `stream` elevator) for Debian kernels, out of tree.
#
#   kernel/build.sh [OPTIONS] [KERNEL[=VERSION]...]
#
# KERNEL is a kernel release (`6.1.0-57-cloud-amd64`, `$(uname -r)`) or one of the lab's
# flavours, which name their metapackage's current kernel: `cloud`
# (linux-image-cloud-amd64), `cloud-6.12` (linux-image-6.12-cloud-amd64), `generic`
# (linux-image-amd64). Default: `cloud cloud-6.12`. VERSION is the Debian package version
# of that kernel (`6.1.192-3`); without it: the running kernel's (/proc/version), else the
# installed package's, else the archive's candidate.
#
# For each kernel:
#  * Kbuild: /lib/modules/RELEASE/build when that kernel's headers are installed, else
#    linux-headers-RELEASE, its -common package and linux-kbuild-X.Y are fetched with
#    `apt-get download` and unpacked with `dpkg-deb -x` into the cache (nothing installed);
#  * the private block-layer headers the glue includes (elevator.h, blk-mq.h, ...): only
#    block/*.h (and checkpatch.pl with its data files) taken from linux-source-X.Y of
#    exactly VERSION (the private structs' layout is not checked at load time);
#  * the sources (kernel/Kbuild, *.c, *.h) are copied to target/kmod/RELEASE/build/ and
#    built there with `make -C KBUILD M=... BLOCK_HDRS=...`; the module is
#    target/kmod/RELEASE/stream-iosched.ko (uncompressed, unsigned).
#
# The cache is $HEADWAY_KMOD_CACHE, else $XDG_CACHE_HOME/headway/kmod, else
# ~/.cache/headway/kmod: headers/RELEASE_VERSION/ (the unpacked packages) and
# source/VERSION/ (block/*.h, scripts/checkpatch.pl). A repeat build takes seconds.
#
# Options:
#   --check       also run sparse (C=2) over the sources and checkpatch.pl --strict over
#                 kernel/*.c kernel/*.h; any compiler, sparse or checkpatch warning fails
#   --checkpatch  only checkpatch (with the newest kernel's script among the KERNELs)
#   --src DIR     the sources (default: this script's directory)
#   --out DIR     where RELEASE/ directories go (default: target/kmod of the repository)
#   --in-place    build in the current directory with the kernel's installed headers
#                 (dkms: `build.sh --in-place --kdir DIR RELEASE`), module left there
#   --kdir DIR    the Kbuild directory to use (default: as above)
#   --fetch       fetch the headers even when /lib/modules/RELEASE/build exists
#   --print       print only the built modules' paths on stdout (logs on stderr)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$here
out=
check=0
checkpatch_only=0
in_place=0
kdir_opt=
fetch=0
print=0
kernels=()
while [ $# -gt 0 ]; do
	case $1 in
	--check) check=1 ;;
	--checkpatch) checkpatch_only=1 ;;
	--src) src=$(cd "$2" && pwd); shift ;;
	--out) mkdir -p "$2"; out=$(cd "$2" && pwd); shift ;;
	--in-place) in_place=1 ;;
	--kdir) kdir_opt=$2; shift ;;
	--fetch) fetch=1 ;;
	--print) print=1 ;;
	-h|--help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "build.sh: unknown option $1" >&2; exit 2 ;;
	*) kernels+=("$1") ;;
	esac
	shift
done
[ ${#kernels[@]} -gt 0 ] || kernels=(cloud cloud-6.12)
[ -n "$out" ] || out=$(cd "$here/.." && pwd)/target/kmod

if [ -n "${HEADWAY_KMOD_CACHE:-}" ]; then
	cache=$HEADWAY_KMOD_CACHE
elif [ -n "${XDG_CACHE_HOME:-}" ]; then
	cache=$XDG_CACHE_HOME/headway/kmod
else
	cache=${HOME:-/tmp}/.cache/headway/kmod
fi
mkdir -p "$cache"
# one build at a time per cache (lab guests booting side by side may all ask for it)
if command -v flock >/dev/null; then
	exec 9>"$cache/.lock"
	flock 9
fi

say() { echo "kmod: $*" >&2; }
die() { echo "kmod: error: $*" >&2; exit 1; }

# `cloud` -> 6.1.0-57-cloud-amd64 (the kernel its metapackage depends on now)
release_of() {
	local meta
	case $1 in
	cloud) meta=linux-image-cloud-amd64 ;;
	cloud-6.12) meta=linux-image-6.12-cloud-amd64 ;;
	generic) meta=linux-image-amd64 ;;
	*) echo "$1"; return ;;
	esac
	local img
	img=$(apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: linux-image-//p' | head -n1)
	[ -n "$img" ] || die "apt-cache knows no kernel behind $meta (run apt-get update, or make deps)"
	echo "$img"
}

# The Debian package version of kernel $1.
version_of() {
	local rel=$1 v
	if [ "$rel" = "$(uname -r)" ]; then
		# "... #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-26)"
		v=$(sed -n 's/.* Debian \([^ ]*\) .*/\1/p' /proc/version)
		[ -n "$v" ] && { echo "$v"; return; }
	fi
	v=$(dpkg-query -W -f='${Version}' "linux-image-$rel" 2>/dev/null || true)
	[ -n "$v" ] || v=$(dpkg-query -W -f='${Version}' "linux-headers-$rel" 2>/dev/null || true)
	[ -n "$v" ] || v=$(apt-cache policy "linux-image-$rel" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" {print $2}')
	[ -n "$v" ] || die "$rel: not a Debian kernel apt knows (no linux-image-$rel); give RELEASE=VERSION"
	echo "$v"
}

# apt-get download $@ into directory $1 (a fresh one), quietly.
download() {
	local dir=$1
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	# as root apt warns that it downloads unsandboxed: that is expected here
	(cd "$dir" && apt-get download -q "$@" 2>&1 | grep -v -e 'unsandboxed as root' -e '^Get:' >&2) || true
	local p
	for p in "$@"; do
		ls "$dir/${p%%=*}"_*.deb >/dev/null 2>&1 ||
			die "apt-get download $p failed (run apt-get update; is $p still in the archive?)"
	done
}

# Packages linux-headers-$1 (version $2) depends on that Kbuild needs: its -common
# package and linux-kbuild-X.Y, as `name=version` (kbuild: the candidate).
headers_deps() {
	apt-cache show "linux-headers-$1=$2" 2>/dev/null | sed -n 's/^Depends: //p' | head -n1 |
		tr ',' '\n' | sed 's/|.*//; s/^ *//' | while read -r name rest; do
		case $name in
		linux-headers-*-common*) echo "$name=$2" ;;
		linux-kbuild-*) echo "$name" ;;
		esac
	done
}

# The Kbuild directory of kernel $1 version $2: installed, or fetched into the cache.
kbuild_dir() {
	local rel=$1 ver=$2
	if [ -n "$kdir_opt" ]; then
		echo "$kdir_opt"
		return
	fi
	if [ $fetch = 0 ] && [ -f "/lib/modules/$rel/build/Makefile" ]; then
		echo "/lib/modules/$rel/build"
		return
	fi
	local root=$cache/headers/${rel}_$ver
	local kdir=$root/usr/src/linux-headers-$rel
	if [ ! -f "$root/.unpacked" ]; then
		say "$rel: fetching linux-headers-$rel=$ver and what it needs"
		local deps
		deps=$(headers_deps "$rel" "$ver")
		[ -n "$deps" ] || die "apt knows no linux-headers-$rel=$ver (run apt-get update)"
		# shellcheck disable=SC2086
		download "$root.debs" "linux-headers-$rel=$ver" $deps
		rm -rf "$root"
		mkdir -p "$root"
		local deb
		for deb in "$root.debs"/*.deb; do
			dpkg-deb -x "$deb" "$root"
		done
		# the flavour's Makefile includes the -common one by its installed, absolute path
		sed -i "s|^include /usr/src/|include $root/usr/src/|" "$kdir/Makefile"
		(cd "$root.debs" && ls) >"$root/.unpacked"
		rm -rf "$root.debs"
	fi
	[ -f "$kdir/Makefile" ] || die "$kdir: no Makefile"
	echo "$kdir"
}

# block/*.h and scripts/checkpatch.pl of linux-source at version $1, in the cache; prints
# the directory holding block/ and scripts/.
source_dir() {
	local ver=$1
	local dir=$cache/source/$ver
	if [ ! -f "$dir/.unpacked" ]; then
		# 6.1.192-3 -> linux-source-6.1; 6.12.118-1~deb12u1 -> linux-source-6.12
		local mm pkg
		mm=$(echo "$ver" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
		[ -n "$mm" ] || die "cannot tell the source package of version $ver"
		pkg=linux-source-$mm
		say "fetching $pkg=$ver (about 150 MB) for block/*.h and checkpatch.pl"
		download "$dir.deb" "$pkg=$ver"
		rm -rf "$dir"
		mkdir -p "$dir.tmp"
		dpkg-deb --fsys-tarfile "$dir.deb"/"$pkg"_*.deb |
			tar -xO "./usr/src/$pkg.tar.xz" |
			tar -xJ -C "$dir.tmp" --wildcards --no-wildcards-match-slash \
				"$pkg/block/*.h" "$pkg/scripts/checkpatch.pl" "$pkg/scripts/spelling.txt" \
				"$pkg/scripts/const_structs.checkpatch"
		mv "$dir.tmp/$pkg" "$dir"
		rm -rf "$dir.tmp" "$dir.deb"
		[ -f "$dir/block/elevator.h" ] || die "$pkg=$ver has no block/elevator.h"
		echo "$pkg=$ver" >"$dir/.unpacked"
	fi
	echo "$dir"
}

# Copy the sources into build dir $1 (unchanged files keep their times: make stays
# incremental); sources copied before and gone since go from it too (.sources lists them).
sync_sources() {
	local b=$1 f n
	mkdir -p "$b"
	if [ -f "$b/.sources" ]; then
		while read -r n; do
			[ -f "$src/$n" ] || rm -f "$b/$n" "$b/${n%.*}.o"
		done <"$b/.sources"
	fi
	: >"$b/.sources"
	for f in "$src"/Kbuild "$src"/*.c "$src"/*.h; do
		[ -f "$f" ] || continue
		cmp -s "$f" "$b/${f##*/}" || cp -p "$f" "$b/"
		echo "${f##*/}" >>"$b/.sources"
	done
	[ -f "$b/Kbuild" ] || die "$src: no Kbuild"
}

# Warnings in a build log about our sources (compiler or sparse; the kernel's own headers
# are not ours to fix, and were quiet when this was written) and modpost's (an undefined
# or GPL-only symbol, a missing MODULE_DESCRIPTION).
our_warnings() {
	local log=$1 names
	names=$(cd "$src" && ls ./*.c ./*.h 2>/dev/null | sed 's|^\./||' | paste -sd'|')
	grep -E -e "^[^ ]*(${names:-none}):[0-9]+(:[0-9]+)?: (warning|error)" -e "WARNING: modpost:" "$log" || true
}

build_one() {
	local rel=$1 ver=$2
	local kdir blk
	kdir=$(kbuild_dir "$rel" "$ver")
	blk=$(source_dir "$ver")/block
	local dest b
	if [ $in_place = 1 ]; then
		dest=$PWD
		b=$PWD
	else
		dest=$out/$rel
		b=$dest/build
		sync_sources "$b"
	fi
	command -v "$(sed -n 's/^CC = .*(CROSS_COMPILE)//p' "$kdir/.kernelvariables" 2>/dev/null || echo gcc)" >/dev/null ||
		die "$rel needs $(sed -n 's/^CC = .*(CROSS_COMPILE)//p' "$kdir/.kernelvariables"): make deps"
	local args=(-C "$kdir" M="$b" BLOCK_HDRS="$blk" -j"$(nproc)")
	local log
	log=$(mktemp)
	if [ $check = 1 ]; then
		command -v sparse >/dev/null || die "sparse is not installed: make deps (Debian package sparse)"
		# C=2: check every source, built or not
		args+=(C=2 CHECK=sparse)
	fi
	say "$rel ($ver): make ${args[*]} modules"
	if ! make "${args[@]}" modules >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		die "$rel: the build failed"
	fi
	cat "$log" >&2
	local bad
	bad=$(our_warnings "$log")
	rm -f "$log"
	if [ $check = 1 ] && [ -n "$bad" ]; then
		echo "$bad" >&2
		die "$rel: warnings (compiler or sparse) in the sources"
	fi
	[ -f "$b/stream-iosched.ko" ] || die "$rel: no stream-iosched.ko in $b"
	if [ $in_place = 0 ]; then
		cp -p "$b/stream-iosched.ko" "$dest/stream-iosched.ko"
		printf 'release=%s\nversion=%s\nkbuild=%s\nblock_headers=%s\n' "$rel" "$ver" "$kdir" "$blk" \
			>"$dest/build-info"
	fi
	built+=("$dest/stream-iosched.ko")
	[ $print = 1 ] || say "$rel: $dest/stream-iosched.ko"
}

run_checkpatch() {
	local dir=$1
	local files=()
	local f
	for f in "$src"/*.c "$src"/*.h; do [ -f "$f" ] && files+=("$f"); done
	[ ${#files[@]} -gt 0 ] || die "$src: no sources to check"
	say "checkpatch.pl --strict --no-tree -f (from $(cat "$dir/.unpacked"))"
	perl "$dir/scripts/checkpatch.pl" --strict --no-tree --no-summary --show-types --terse -f "${files[@]}" >&2 ||
		die "checkpatch.pl --strict found something (above)"
}

built=()
newest=
newest_ver=
for k in "${kernels[@]}"; do
	rel=${k%%=*}
	rel=$(release_of "$rel")
	if [ "$k" != "${k#*=}" ]; then ver=${k#*=}; else ver=$(version_of "$rel"); fi
	if [ $checkpatch_only = 0 ]; then
		build_one "$rel" "$ver"
	else
		source_dir "$ver" >/dev/null
	fi
	if [ -z "$newest_ver" ] || dpkg --compare-versions "$ver" gt "$newest_ver"; then
		newest_ver=$ver
		newest=$(source_dir "$ver")
	fi
done
if [ $check = 1 ] || [ $checkpatch_only = 1 ]; then
	run_checkpatch "$newest"
fi
if [ $print = 1 ]; then
	printf '%s\n' "${built[@]}"
fi
