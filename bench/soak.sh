#!/usr/bin/env bash
# bench/soak.sh — does volley's memory stay flat over a long run?
#
# Starts the built-in target (`volley serve --threads 1`) on 127.0.0.1, pinned
# to SERVER_CPU, and runs volley against it in the open model for DURATION
# seconds (`--rate RATE -c MAX_IN_FLIGHT --threads 1`), pinned to CLIENT_CPU.
# Every INTERVAL seconds it samples the resident set size (VmRSS in
# /proc/PID/status) of volley and of the target. At the end it prints every
# sample, then volley's first, last and maximum RSS during the run, its peak
# (VmHWM), the least-squares slope of RSS over time (KiB per minute, samples
# from SETTLE seconds to the end of the run), and the run's own figures from
# its record (requests, achieved rate, errors, dropped, p99, most requests in
# flight). Exit code 1 when the median RSS of the run's last minute exceeds
# that of the first minute after SETTLE by more than ACCEPT_GROWTH (a
# fraction; default 0.10).
#
# MAX_IN_FLIGHT (default 64, ~30 x what 2000 req/s needs against a 1 ms
# target) bounds the connections: each costs a read buffer and a task, so an
# unbounded pool would make RSS follow the target's stalls (or the machine's:
# other processes on the pinned CPUs) rather than the run's length. A stall
# then shows as dropped requests, which the summary line reports.
#
# Knobs (environment variables):
#   DURATION=600   RATE=2000   MAX_IN_FLIGHT=64   INTERVAL=10   SETTLE=30
#   ACCEPT_GROWTH=0.10   TARGET_PATH=/   VOLLEY=path (default target/release/volley)
#   BUILD=auto|always|never   PROFILE=release (cargo profile to build; e.g. ci)
#   PORT=(free port)   SERVER_CPU=1   CLIENT_CPU=0   KEEP_TMP=1
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

DURATION=${DURATION:-600}
RATE=${RATE:-2000}
MAX_IN_FLIGHT=${MAX_IN_FLIGHT:-64}
INTERVAL=${INTERVAL:-10}
SETTLE=${SETTLE:-30}
ACCEPT_GROWTH=${ACCEPT_GROWTH:-0.10}
TARGET_PATH=${TARGET_PATH:-/}
PROFILE=${PROFILE:-release}
VOLLEY=${VOLLEY:-$repo/target/$PROFILE/volley}
BUILD=${BUILD:-auto}
PORT=${PORT:-}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
KEEP_TMP=${KEEP_TMP:-0}

note() { printf '[soak] %s\n' "$*" >&2; }
die() { printf '[soak] error: %s\n' "$*" >&2; exit 1; }

case ${1:-} in
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) die "no arguments expected (got '$1'); configure with environment variables, see --help" ;;
esac

posint() {
  [[ $1 =~ ^[0-9]+$ ]] && (( 10#$1 > 0 )) || die "$2 must be a positive integer (got '$1')"
}
posint "$DURATION" DURATION
posint "$RATE" RATE
posint "$MAX_IN_FLIGHT" MAX_IN_FLIGHT
posint "$INTERVAL" INTERVAL
[[ $SETTLE =~ ^[0-9]+$ ]] || die "SETTLE must be whole seconds (got '$SETTLE')"
(( SETTLE + 120 <= DURATION )) || die "DURATION ($DURATION s) must leave two minutes after SETTLE ($SETTLE s)"
[[ $ACCEPT_GROWTH =~ ^[0-9]*\.?[0-9]+$ ]] || die "ACCEPT_GROWTH must be a fraction like 0.10"
[[ $TARGET_PATH == /* ]] || die "TARGET_PATH must start with / (got '$TARGET_PATH')"
case $BUILD in auto|always|never) ;; *) die "BUILD must be auto, always or never (got '$BUILD')" ;; esac
[[ -z $PORT || $PORT =~ ^[0-9]+$ ]] || die "PORT must be a number (got '$PORT')"

command -v taskset >/dev/null || die "taskset not found (apt-get install -y util-linux)"
command -v python3 >/dev/null || die "python3 not found (apt-get install -y python3); it computes the slope"
for cpu in "$SERVER_CPU" "$CLIENT_CPU"; do
  taskset -c "$cpu" true 2>/dev/null || die "cannot pin to CPU $cpu (this machine has $(nproc) usable CPU(s)); set SERVER_CPU / CLIENT_CPU"
done

if [[ $BUILD == always || ( $BUILD == auto && ! -x $VOLLEY && $VOLLEY == "$repo/target/$PROFILE/volley" ) ]]; then
  note "building volley: cargo build --profile $PROFILE (in $repo)"
  (cd "$repo" && cargo build --profile "$PROFILE") >&2 || die "cargo build failed"
fi
[[ -x $VOLLEY ]] || die "no volley executable at $VOLLEY"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/volley-soak.XXXXXX")
server_pid=
volley_pid=
cleanup() {
  local rc=$?
  set +e
  for pid in $volley_pid $server_pid; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
    fi
  done
  if [[ $KEEP_TMP == 1 ]]; then note "scratch dir kept: $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [[ -z $PORT ]]; then
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
if timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" 2>/dev/null; then
  die "something already listens on 127.0.0.1:$PORT; pick another PORT (this script only loads its own target)"
fi

taskset -c "$SERVER_CPU" "$VOLLEY" serve --port "$PORT" --threads 1 >"$tmp/serve.log" 2>&1 </dev/null &
server_pid=$!
for _ in $(seq 100); do
  grep -q 'listening on' "$tmp/serve.log" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || die "the target exited: $(cat "$tmp/serve.log")"
  sleep 0.1
done
grep -q 'listening on' "$tmp/serve.log" || die "the target did not start listening: $(cat "$tmp/serve.log")"

rss_kib() { # VmRSS of a live process, KiB (empty once it is gone)
  awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || true
}
hwm_kib() {
  awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null || true
}

url="http://127.0.0.1:$PORT$TARGET_PATH"
note "volley $url --rate $RATE -c $MAX_IN_FLIGHT -d ${DURATION}s --threads 1 (CPU $CLIENT_CPU), target on CPU $SERVER_CPU; a sample every ${INTERVAL}s"
taskset -c "$CLIENT_CPU" "$VOLLEY" "$url" --rate "$RATE" -c "$MAX_IN_FLIGHT" -d "${DURATION}s" --threads 1 -q \
  --json "$tmp/run.json" --out "$tmp/results" >"$tmp/volley.log" 2>&1 </dev/null &
volley_pid=$!
start_us=${EPOCHREALTIME/[.,]/}

samples="$tmp/samples.tsv"
printf 't_s\tvolley_rss_kib\ttarget_rss_kib\n' > "$samples"
hwm=
next=0
# Integer arithmetic only: the loop must cost the pinned CPUs next to nothing.
while kill -0 "$volley_pid" 2>/dev/null; do
  elapsed_ms=$(( (${EPOCHREALTIME/[.,]/} - start_us) / 1000 ))
  if (( elapsed_ms >= next * 1000 )); then
    rss=$(rss_kib "$volley_pid")
    h=$(hwm_kib "$volley_pid")
    [[ -n $h ]] && hwm=$h
    if [[ -n $rss ]]; then
      printf '%d.%03d\t%s\t%s\n' $((elapsed_ms / 1000)) $((elapsed_ms % 1000)) "$rss" \
        "$(rss_kib "$server_pid")" | tee -a "$samples" >&2
    fi
    next=$((next + INTERVAL))
  fi
  sleep 0.5
done
wait "$volley_pid" && rc=0 || rc=$?
volley_pid=
(( rc == 0 )) || note "volley exited with $rc: $(tail -5 "$tmp/volley.log")"
[[ -s $tmp/run.json ]] || die "no record written"

python3 - "$samples" "$tmp/run.json" "$SETTLE" "$ACCEPT_GROWTH" "${hwm:-0}" "$DURATION" <<'EOF'
import json, statistics, sys
samples, record, settle, accept, hwm, duration = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
rows = [l.split('\t') for l in open(samples).read().split('\n')[1:] if l.strip()]
# Samples after the run's end (reports being written, connections closed) are left out.
rows = [r for r in rows if float(r[0]) <= duration]
t = [float(r[0]) for r in rows]
rss = [int(r[1]) for r in rows]
target = [int(r[2]) for r in rows if r[2]]
mib = lambda k: k / 1024
def slope(xs, ys):
    n = len(xs)
    if n < 2: return float('nan')
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else float('nan')
settled = [(x, y) for x, y in zip(t, rss) if x >= settle]
first_min = statistics.median(y for x, y in settled if x < settle + 60)
last_min = statistics.median(y for x, y in settled if x > t[-1] - 60)
r = json.load(open(record))
s = r['summary']
peak_at = max(range(len(rss)), key=lambda i: rss[i])
print(f"samples: {len(rss)} over {t[-1]:.0f} s")
print(f"volley RSS: first {mib(rss[0]):.1f} MiB (at {t[0]:.0f} s), at {settle:.0f} s {mib(settled[0][1]):.1f} MiB, "
      f"last {mib(rss[-1]):.1f} MiB (at {t[-1]:.0f} s), max {mib(rss[peak_at]):.1f} MiB (at {t[peak_at]:.0f} s), "
      f"peak (VmHWM) {mib(hwm):.1f} MiB")
print(f"volley RSS median: first minute after {settle:.0f} s {mib(first_min):.2f} MiB, last minute {mib(last_min):.2f} MiB")
print(f"volley RSS slope: {slope(t, rss) * 60:+.1f} KiB/min over the run, "
      f"{slope([x for x, _ in settled], [y for _, y in settled]) * 60:+.1f} KiB/min from {settle:.0f} s on")
if target:
    print(f"target RSS: first {mib(target[0]):.1f} MiB, last {mib(target[-1]):.1f} MiB, max {mib(max(target)):.1f} MiB")
in_flight = [(p['in_flight'], p['t_s']) for p in r['series']]
most, most_at = max(in_flight) if in_flight else (0, 0)
print(f"run: {s['requests']} requests, {s['rps']:.1f} req/s (asked {r['config']['rate_per_sec']:.0f}), "
      f"{s['errors']} errors, {s.get('dropped') or 0} dropped, p99 {s['latency_ms']['p99']:.2f} ms, "
      f"most in flight {most} (at {most_at} s), {s['connections_opened']} connections opened, "
      f"generator peak RSS {r['generator']['peak_rss_bytes'] / 2**20:.1f} MiB")
growth = (last_min - first_min) / first_min
print(f"growth, median of the last minute over the first after {settle:.0f} s: {growth * 100:+.1f} % "
      f"(accept <= {accept * 100:.0f} %)")
sys.exit(0 if growth <= accept else 1)
EOF
