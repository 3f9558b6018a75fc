#!/usr/bin/env bash
# bench/coverage_many.sh — bench/coverage.sh on a machine with many CPUs, one configuration
# per pair of CPUs, all at once (issue 30, item 2).
#
# On a 2-CPU machine coverage.sh takes its configurations one after the other (about 17
# minutes for four). Where there are CPUs to spare, this starts one coverage.sh per
# configuration of CONFIGS, each with its own `volley serve --threads 1` and its own generator
# thread, pinned to their own two CPUs (FIRST_CPU and up: the first configuration's target
# on FIRST_CPU, its generator on the next, and so on), and with CHUNK_S > 0 one more pair
# takes a single run of CHUNK_S seconds of CHUNK_CONFIG for bench/coverage_chunks.py (the
# coverage of 6-second chunks inside one process). The configurations then share the
# machine's caches and memory but no CPU; say so when you report the figures.
#
# The records land in KEEP (required), one folder per configuration as coverage.sh keeps
# them, with each coverage.sh's output in KEEP/<configuration>.log and the long run in
# KEEP/chunks/run.json; judge them again anywhere with RECORDS=KEEP bench/coverage.sh.
#
# Knobs (environment variables), besides coverage.sh's RUNS, DURATION, CONNECTIONS, RATE,
# BASE_MS, ORDER and REPEAT, which pass through:
#   CONFIGS="closed:fixed closed:exp closed:bimodal open:exp"   KEEP=dir (required)
#   VOLLEY=path (required: an executable volley)   FIRST_CPU=1
#   CHUNK_S=0 (0: no long run; else its seconds, >= 60)   CHUNK_CONFIG=closed:fixed
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_TAG=coverage-many
# shellcheck source=bench/common.sh
. "$here/common.sh"

CONFIGS=${CONFIGS:-closed:fixed closed:exp closed:bimodal open:exp}
KEEP=${KEEP:-}
VOLLEY=${VOLLEY:-}
FIRST_CPU=${FIRST_CPU:-1}
CHUNK_S=${CHUNK_S:-0}
CHUNK_CONFIG=${CHUNK_CONFIG:-closed:fixed}

case ${1:-} in
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) die "no arguments expected (got '$1'); configure with environment variables, see --help" ;;
esac
[[ -n $KEEP ]] || die "KEEP=DIR is required: the folder the records and logs go to"
[[ -x $VOLLEY ]] || die "VOLLEY=path must name an executable volley (got '$VOLLEY')"
[[ $FIRST_CPU =~ ^[0-9]+$ ]] || die "FIRST_CPU must be a CPU number (got '$FIRST_CPU')"
[[ $CHUNK_S =~ ^[0-9]+$ ]] && (( CHUNK_S == 0 || CHUNK_S >= 60 )) \
  || die "CHUNK_S must be 0 or at least 60 seconds (got '$CHUNK_S')"
[[ $CHUNK_CONFIG =~ ^closed:(fixed|exp|bimodal|uniform)$ ]] \
  || die "CHUNK_CONFIG must be closed:DIST (got '$CHUNK_CONFIG')"
read -ra configs <<<"$CONFIGS"
pairs=$(( ${#configs[@]} + (CHUNK_S > 0 ? 1 : 0) ))
last=$(( FIRST_CPU + 2 * pairs - 1 ))
(( last < $(nproc) )) || die "$pairs pairs of CPUs from CPU $FIRST_CPU need CPU $last; this machine has $(nproc)"
mkdir -p "$KEEP"

echo "volley coverage on many CPUs  $(date -u '+%Y-%m-%d %H:%M:%S UTC')  $(uname -sr)  $(nproc) CPUs"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
pids=()
cpu=$FIRST_CPU
for c in "${configs[@]}"; do
  SERVER_CPU=$cpu CLIENT_CPU=$((cpu + 1)) CONFIGS=$c BUILD=never VOLLEY=$VOLLEY KEEP=$KEEP \
    bash "$here/coverage.sh" >"$KEEP/${c/:/-}.log" 2>&1 &
  pids+=($!)
  echo "$c: target on CPU $cpu, generator on CPU $((cpu + 1))"
  cpu=$((cpu + 2))
  sleep 1  # each picks its own free port
done
chunk_pid=
if (( CHUNK_S > 0 )); then
  mkdir -p "$KEEP/chunks"
  (
    tmp=$(mktemp -d)
    serve_start "$tmp" "$cpu"
    trap 'stop_pids $server_pid; rm -rf "$tmp"' EXIT
    taskset -c "$((cpu + 1))" "$VOLLEY" "http://127.0.0.1:$port/delay?ms=${BASE_MS:-2}&dist=${CHUNK_CONFIG#*:}" \
      -c "${CONNECTIONS:-8}" -d "${CHUNK_S}s" --threads 1 -q --json "$KEEP/chunks/run.json" --out "$tmp/results"
  ) >"$KEEP/chunks.log" 2>&1 &
  chunk_pid=$!
  echo "chunks: one ${CHUNK_S}s run of $CHUNK_CONFIG, target on CPU $cpu, generator on CPU $((cpu + 1))"
fi
rc=0
for p in "${pids[@]}" $chunk_pid; do wait "$p" || rc=1; done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "${configs[@]}"; do
  echo "== $c"; grep -E '^(closed|open|poisson)-' "$KEEP/${c/:/-}.log" || tail -5 "$KEEP/${c/:/-}.log"
done
if [[ -n $chunk_pid ]]; then
  echo "== chunks of one ${CHUNK_S}s run"
  python3 "$here/coverage_chunks.py" "$KEEP/chunks/run.json" || tail -5 "$KEEP/chunks.log"
fi
exit "$rc"
