#!/usr/bin/env bash
# Byte-identical results: every output a refactoring must leave unchanged, hashed against
# the stored manifest (tests/golden/manifest.sha256).
#
#   tests/golden/golden.sh check  HEADWAY   # run everything, compare with the manifest
#   tests/golden/golden.sh update HEADWAY   # run everything, rewrite the manifest
#
# What it runs (about a minute on one core of the ci profile):
# * every fio job file in experiments/ under every scheduler of SCHEDULERS below
#   (`headway simulate --json`), and the small ones with `--per-request` too;
# * `headway reproduce all` (each figure's JSON and Markdown report);
# * every sweep file in experiments/sweeps/ (the CSV table);
# * `headway validate` of every drive in data/disksim-valid (JSON and
#   per-request CSV);
# * `headway replay` of DiskSim's three synthetic traces (data/disksim-oracle)
#   on an imported DiskSim drive (JSON and per-request CSV).
# A change of results on purpose (a model fix, a new scheduler in the list) updates the
# manifest in the same commit, and says why there.
set -euo pipefail
mode=${1:?usage: golden.sh check|update HEADWAY}
HEADWAY=$(realpath "${2:?usage: golden.sh check|update HEADWAY}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MANIFEST=$ROOT/tests/golden/manifest.sha256
REF=$ROOT/data
[[ -d $REF/disksim-valid && -d $REF/disksim-oracle ]] || { echo "golden: $REF (DiskSim's reference data) is missing" >&2; exit 1; }
OUT=$(mktemp -d /tmp/headway-golden.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

# Every scheduler name, in a fixed order (a new scheduler is added here on purpose).
SCHEDULERS=noop,deadline,mq-deadline,kyber,cscan,sptf,aged-sptf,stride,pclock
SCHEDULERS+=,stream,stream:noop,stream:deadline,stream:mq-deadline,stream:kyber,stream:cscan
SCHEDULERS+=,stream:sptf,stream:aged-sptf,stream:stride,stream:pclock
SCHEDULERS+=,stream-local,stream-local:noop,stream-local:deadline,stream-local:mq-deadline
SCHEDULERS+=,stream-local:cscan,stream-local:sptf,stream-local:aged-sptf,stream-local:stride
SCHEDULERS+=,stream-local:pclock,antic,antic:sptf,antic:aged-sptf,antic:cscan,antic:deadline
SCHEDULERS+=,antic:stride,antic-combo,antic-combo:stride,as,cfq,bfq,htbs
# Job files small enough to keep a row per request.
PER_REQUEST="as-fig4-alter as-fig7-adversary multi-threads pvfs xen-ftp"

cd "$ROOT"
mkdir -p "$OUT/simulate" "$OUT/reproduce" "$OUT/sweep" "$OUT/validate" "$OUT/replay"
for f in experiments/*.fio; do
  b=$(basename "$f" .fio)
  extra=()
  [[ " $PER_REQUEST " == *" $b "* ]] && extra=(--per-request "$OUT/simulate/$b.requests.csv")
  "$HEADWAY" simulate "$f" --scheduler "$SCHEDULERS" --json "$OUT/simulate/$b.json" "${extra[@]}" > /dev/null
done
"$HEADWAY" reproduce all --out "$OUT/reproduce/all" > /dev/null
cp "$OUT"/reproduce/all/*.json "$OUT"/reproduce/all/*.md "$OUT/reproduce/"
rm -rf "$OUT/reproduce/all"
for s in experiments/sweeps/*.toml; do
  "$HEADWAY" sweep "$s" --quiet --out "$OUT/sweep/$(basename "$s" .toml).csv" > /dev/null
done
"$HEADWAY" validate "$REF/disksim-valid" --json "$OUT/validate/validate.json" > /dev/null
for p in "$REF"/disksim-valid/*.parv; do
  d=$(basename "$p" .parv)
  "$HEADWAY" validate "$p" "$REF/disksim-valid/$d.trace" --per-request "$OUT/validate/$d.requests.csv" > /dev/null
done
for t in "$REF"/disksim-oracle/*.trace; do
  b=$(basename "$t" .trace)
  "$HEADWAY" replay "$t" --format disksim --disk "$REF/disksim-valid/cheetah9LP.parv" --quiet \
    --scheduler noop,deadline,stream,as --json "$OUT/replay/$b.json" --per-request "$OUT/replay/$b.requests.csv"
done

(cd "$OUT" && find . -type f | LC_ALL=C sort | sed 's|^\./||' | xargs sha256sum) > "$OUT.manifest"
case $mode in
  update)
    mv "$OUT.manifest" "$MANIFEST"
    echo "golden: wrote $MANIFEST ($(wc -l < "$MANIFEST") files)"
    ;;
  check)
    if diff -u "$MANIFEST" "$OUT.manifest" > "$OUT.diff"; then
      echo "golden: $(wc -l < "$MANIFEST") outputs byte-identical to the manifest"
      rm -f "$OUT.manifest" "$OUT.diff"
    else
      echo "golden: outputs differ from tests/golden/manifest.sha256 (- stored, + now):" >&2
      grep '^[-+][0-9a-f]' "$OUT.diff" >&2 || true
      rm -f "$OUT.manifest" "$OUT.diff"
      exit 1
    fi
    ;;
  *) echo "golden: mode must be check or update" >&2; exit 2 ;;
esac
