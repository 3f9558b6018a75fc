#!/usr/bin/env bash
# bench/steal.sh — does a run's figure move with the machine's CPU steal, second by second?
#
# Starts `volley serve --threads 1` on 127.0.0.1 pinned to SERVER_CPU, runs one closed-model
# test of DURATION seconds (-c CONNECTIONS, /delay?ms=BASE_MS&dist=DIST, one generator thread
# pinned to CLIENT_CPU) and reads /proc/stat's cpu0 and cpu1 lines once a second meanwhile.
# Then prints, over the run's whole seconds, the correlation of each second's throughput, p50
# and p99 with the steal of each CPU in that second (the steal column: time the hypervisor ran
# someone else while the CPU wanted to run), and the means over 30 s blocks.
#
# Knobs (environment variables):
#   DURATION=120   DIST=exp (fixed, exp, bimodal)   CONNECTIONS=8   BASE_MS=2
#   VOLLEY=path (default target/$PROFILE/volley)   PROFILE=release
#   SERVER_CPU=1   CLIENT_CPU=0   KEEP=dir (keep run.json and the /proc/stat readings)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
BENCH_TAG=steal-bench
# shellcheck source=bench/common.sh
. "$here/common.sh"

DURATION=${DURATION:-120}
DIST=${DIST:-exp}
CONNECTIONS=${CONNECTIONS:-8}
BASE_MS=${BASE_MS:-2}
PROFILE=${PROFILE:-release}
VOLLEY=${VOLLEY:-$repo/target/$PROFILE/volley}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
KEEP=${KEEP:-}

case ${1:-} in
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) die "no arguments expected (got '$1'); configure with environment variables, see --help" ;;
esac
posint "$DURATION" DURATION
posint "$CONNECTIONS" CONNECTIONS
(( DURATION >= 30 )) || die "DURATION must be at least 30 (got $DURATION): correlations need seconds"
[[ $DIST =~ ^(fixed|exp|bimodal|uniform)$ ]] || die "DIST must be fixed, exp, bimodal or uniform (got '$DIST')"
[[ $BASE_MS =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "BASE_MS must be milliseconds like 2 (got '$BASE_MS')"
grep -q '^cpu1 ' /proc/stat || die "needs /proc/stat with cpu0 and cpu1 (Linux, 2 CPUs or more)"
[[ -x $VOLLEY ]] || die "no volley executable at $VOLLEY (cargo build --profile $PROFILE)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/volley-steal-bench.XXXXXX")
server_pid= sampler_pid=
cleanup() {
  local rc=$?
  set +e
  stop_pids $sampler_pid $server_pid
  [[ -n $KEEP ]] && mkdir -p "$KEEP" && cp "$tmp"/run.json "$tmp"/stat.txt "$KEEP/" 2>/dev/null
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "volley steal bench  $(date -u '+%Y-%m-%d %H:%M:%S UTC')  $(uname -sr)  $(nproc) CPUs"
serve_start "$tmp" "$SERVER_CPU"
( while :; do echo "$(date +%s.%N) $(grep -E '^cpu[01] ' /proc/stat | tr '\n' ' ')"; sleep 1; done ) \
  >"$tmp/stat.txt" &
sampler_pid=$!
echo "run: ${DURATION}s, -c $CONNECTIONS, /delay?ms=$BASE_MS&dist=$DIST, generator on CPU $CLIENT_CPU, target on CPU $SERVER_CPU"
taskset -c "$CLIENT_CPU" "$VOLLEY" "http://127.0.0.1:$port/delay?ms=$BASE_MS&dist=$DIST" \
  -c "$CONNECTIONS" -d "${DURATION}s" --threads 1 -q --json "$tmp/run.json" </dev/null

python3 - "$tmp/run.json" "$tmp/stat.txt" <<'PY'
import datetime, json, statistics as st, sys

record = json.load(open(sys.argv[1]))
t0 = datetime.datetime.fromisoformat(record["started_at"].replace("Z", "+00:00")).timestamp()
readings = []  # (time, cpu0 columns, cpu1 columns)
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) >= 23:
        readings.append((float(f[0]), [int(x) for x in f[2:12]], [int(x) for x in f[13:23]]))

def at(t):
    """Each CPU's counters at time t, interpolated between the readings around it."""
    for (ta, a0, a1), (tb, b0, b1) in zip(readings, readings[1:]):
        if ta <= t <= tb:
            w = (t - ta) / (tb - ta)
            return [[x + w * (y - x) for x, y in zip(a, b)] for a, b in ((a0, b0), (a1, b1))]
    return None

rows = []  # requests, p50, p99, steal of cpu0 and cpu1 in the second (ticks of 10 ms)
for s in record["series"]:
    a, b = at(t0 + s["t_s"]), at(t0 + s["t_s"] + 1)
    if s["span_s"] >= 0.999 and a and b:
        rows.append((s["requests"], s["p50_ms"], s["p99_ms"], b[0][7] - a[0][7], b[1][7] - a[1][7]))
print(f"{len(rows)} whole seconds; steal per second, mean: cpu0 {st.mean(r[3] for r in rows):.2f}, "
      f"cpu1 {st.mean(r[4] for r in rows):.2f} ticks of 10 ms (of 100)")

def corr(i, j):
    xs, ys = [r[i] for r in rows], [r[j] for r in rows]
    return st.correlation(xs, ys) if st.pstdev(xs) and st.pstdev(ys) else float("nan")

for i, name in enumerate(("requests/s", "p50", "p99")):
    print(f"correlation of {name:10} with steal: cpu0 {corr(i, 3):+.2f}, cpu1 {corr(i, 4):+.2f}")
print(f"{'from s':>6} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'steal cpu0':>10} {'steal cpu1':>10}")
for k in range(0, len(rows), 30):
    b = rows[k:k + 30]
    print(f"{k:>6} {st.mean(r[0] for r in b):>7.0f} {st.mean(r[1] for r in b):>7.3f} "
          f"{st.mean(r[2] for r in b):>7.3f} {st.mean(r[3] for r in b):>10.2f} {st.mean(r[4] for r in b):>10.2f}")
PY
