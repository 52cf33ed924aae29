#!/usr/bin/env bash
# headway serve (--backend file --scheduler noop) against `nbdkit file` on the same file,
# measured by fio's nbd ioengine over a unix socket (issue 5). Servers alternate within
# each repetition so drift on a shared machine hits both alike; the table reports medians.
#
#   crates/nbd/bench/vs-nbdkit.sh [HEADWAY_BINARY]
#
# Environment: FILE (default /tmp/headway-bench/disk.img, created 1 GiB of random data
# if missing), REPS (3), RUNTIME (5 s), ONLY (one workload's name, e.g. randread-4k-qd1), EXTRA_QD (headway --queue-depth for an extra
# column, default 16; empty to skip), BEFORE (another headway binary, e.g. the previous
# build, served alike in an extra column so a change is measured side by side). Needs fio
# with the nbd engine, nbdkit, jq.
# Each row also gives each server's CPU time per request (user + system of the server
# process over the run, from /proc/PID/stat, µs), and fio's own CPU time per request against
# each server and the share of one CPU fio used: on a 2-core machine fio (one thread) reaches a whole
# CPU at about 200k 4 KiB requests a second, and then the client, not the server, sets the
# figure (BENCHMARKS.md).
# The export goes through the page cache on both sides: the file is read once before the
# first measurement so neither server pays the first disk read, and nothing is dropped.
set -euo pipefail

HEADWAY=${1:-${CARGO_TARGET_DIR:-target}/ci/headway}
DIR=$(mktemp -d /tmp/hw-vs-nbdkit.XXXXXX)
FILE=${FILE:-/tmp/headway-bench/disk.img}
REPS=${REPS:-3}
RUNTIME=${RUNTIME:-5}
EXTRA_QD=${EXTRA_QD-16}
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$DIR"; }
trap cleanup EXIT

if [[ ! -f $FILE ]]; then
  mkdir -p "$(dirname "$FILE")"
  head -c 1G /dev/urandom > "$FILE"
fi
cat "$FILE" > /dev/null

wait_sock() { for _ in $(seq 500); do [[ -S $1 ]] && return; sleep 0.01; done; echo "no socket $1" >&2; exit 1; }

"$HEADWAY" serve --backend file --scheduler noop --unix "$DIR/hw.sock" --export "$FILE" 2>"$DIR/hw.log" &
pids+=($!)
hw_pid=$!
nbdkit --foreground --unix "$DIR/kit.sock" file "$FILE" 2>"$DIR/kit.log" &
pids+=($!)
servers=(nbdkit headway)
socks=("$DIR/kit.sock" "$DIR/hw.sock")
srvpids=($! "$hw_pid")
if [[ -n $EXTRA_QD ]]; then
  "$HEADWAY" serve --backend file --scheduler noop --queue-depth "$EXTRA_QD" --unix "$DIR/hwq.sock" \
    --export "$FILE" 2>"$DIR/hwq.log" &
  pids+=($!)
  srvpids+=($!)
  servers+=("headway-qd$EXTRA_QD")
  socks+=("$DIR/hwq.sock")
fi
if [[ -n ${BEFORE:-} ]]; then
  "$BEFORE" serve --backend file --scheduler noop --unix "$DIR/hwb.sock" --export "$FILE" 2>"$DIR/hwb.log" &
  pids+=($!)
  srvpids+=($!)
  servers+=("before")
  socks+=("$DIR/hwb.sock")
fi
for s in "${socks[@]}"; do wait_sock "$s"; done

# name | fio workload options | what is reported
workloads=(
  "randread-4k-qd1|--rw=randread --bs=4k --iodepth=1|iops"
  "randread-4k-qd16|--rw=randread --bs=4k --iodepth=16|iops"
  "seqread-1m-qd4|--rw=read --bs=1m --iodepth=4|MiB/s"
  "randrw-4k-qd16|--rw=randrw --rwmixread=50 --bs=4k --iodepth=16|iops"
)

fio_one() { # socket, options -> the reported figure; fio's CPU seconds (user + system) to $DIR/cpu
  local sock=$1 opts=$2 unit=$3
  local TIMEFORMAT='%U %S'
  # shellcheck disable=SC2086
  { time fio --name=bench --ioengine=nbd --uri="nbd+unix:///?socket=$sock" $opts \
      --time_based --runtime="$RUNTIME" --output-format=json --output="$DIR/out.json" > /dev/null; } 2> "$DIR/time"
  awk '{print $1 + $2}' "$DIR/time" > "$DIR/cpu"
  if [[ $unit == iops ]]; then
    jq '.jobs[0] | (.read.iops + .write.iops) | floor' "$DIR/out.json"
  else
    jq '.jobs[0] | (.read.bw_bytes + .write.bw_bytes) / 1048576 | floor' "$DIR/out.json"
  fi
}

# user + system clock ticks of process $1
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "headway: $("$HEADWAY" --version 2>/dev/null || echo "$HEADWAY")"
echo "nbdkit: $(nbdkit --version)  fio: $(fio --version)"
echo "file: $FILE on $(df --output=source,fstype "$FILE" | tail -1)"
echo
header="| workload | unit |"
for s in "${servers[@]}"; do header+=" $s (median; runs) |"; done
header+=" headway/nbdkit |"
for s in "${servers[@]}"; do header+=" server µs/req: $s |"; done
for s in "${servers[@]}"; do header+=" fio µs/req, CPU share: $s |"; done
echo "$header"
echo "|---|---|$(printf '%.0s---|' "${servers[@]}")---|$(printf '%.0s---|' "${servers[@]}")$(printf '%.0s---|' "${servers[@]}")"
for w in "${workloads[@]}"; do
  IFS='|' read -r name opts unit <<<"$w"
  [[ -n ${ONLY:-} && $name != "$ONLY" ]] && continue
  declare -A runs=() cpus=() scpus=()
  for _ in $(seq "$REPS"); do
    for i in "${!servers[@]}"; do
      t0=$(ticks "${srvpids[$i]}")
      runs[$i]+="$(fio_one "${socks[$i]}" "$opts" "$unit") "
      t1=$(ticks "${srvpids[$i]}")
      scpus[$i]+="$(jq --argjson t "$((t1 - t0))" --argjson hz "$HZ" \
        '.jobs[0] | (.read.total_ios + .write.total_ios) as $n | $t / $hz * 1e6 / $n | . * 10 | round / 10' \
        "$DIR/out.json") "
      # fio's CPU per request (µs) and its share of one CPU over the run
      cpus[$i]+="$(jq --argjson cpu "$(cat "$DIR/cpu")" --argjson rt "$RUNTIME" \
        '.jobs[0] | (.read.total_ios + .write.total_ios) as $n | "\($cpu * 1e6 / $n | . * 100 | round / 100)/\($cpu / $rt | . * 100 | round / 100)"' \
        -r "$DIR/out.json") "
    done
  done
  row="| $name | $unit |"
  meds=()
  for i in "${!servers[@]}"; do
    m=$(tr ' ' '\n' <<<"${runs[$i]}" | grep . | median)
    meds+=("$m")
    row+=" $m; ${runs[$i]% } |"
  done
  row+=" $(awk -v h="${meds[1]}" -v k="${meds[0]}" 'BEGIN {printf "%.2f", h / k}') |"
  for i in "${!servers[@]}"; do row+=" ${scpus[$i]% } |"; done
  for i in "${!servers[@]}"; do row+=" ${cpus[$i]% } |"; done
  echo "$row"
  unset runs cpus scpus
done
