#!/usr/bin/env bash
# bench/findmax.sh — how long `volley find-max` takes to answer, and how close the answer is,
# against built-in targets of known capacity (volley serve --capacity W --service-time S: the
# maximum is W/S req/s by its settings, and W over the mean time a request really held a
# worker by its own /metrics: the true capacity, below W/S by the target's own work per
# request). Uses the default search settings (budget 3m, steps of 5 s + 1 s warm-up) unless
# STEP/WARMUP/BUDGET are set; EXTRA adds flags (e.g. EXTRA="--precision p50=2%" with STEP=10s:
# steps sized by their precision). Target pinned to CPU 1, generator to CPU 0.
#
#   bench/findmax.sh                       # capacities 2×10ms, 4×10ms, 8×10ms
#   CAPACITIES="16:10ms 4:2ms" bench/findmax.sh
#   KEEP=/tmp/fm bench/findmax.sh          # keeps each search's record (W-S.json) and the
#                                          # target's /metrics (W-S.metrics) there
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
VOLLEY=${VOLLEY:-$here/../target/release/volley}
CAPACITIES=${CAPACITIES:-"2:10ms 4:10ms 8:10ms"}
SLO=${SLO:-"p99<50ms,errors<1%"}
BUDGET=${BUDGET:-3m}
STEP=${STEP:-5s}
WARMUP=${WARMUP:-1s}
read -r -a EXTRA <<< "${EXTRA:-}"
PORT=${PORT:-18383}
[ -x "$VOLLEY" ] || (cd "$here/.." && cargo build --release)
tmp=$(mktemp -d)
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
  echo "port $PORT is in use; set PORT" >&2; exit 1
fi
# The machine's CPU ticks so far: all of them, and those the hypervisor took (steal).
ticks() { awk '/^cpu /{t=0; for (i=2; i<=NF; i++) t+=$i; print t, $9}' /proc/stat; }
printf '%-12s %10s %10s %10s %8s %8s %9s %6s %8s %6s\n' capacity "W/S" "true/s" "found/s" "vs W/S" "vs true" answer_s steps step_s steal
for c in $CAPACITIES; do
  workers=${c%%:*}; service=${c#*:}
  taskset -c 1 "$VOLLEY" serve --port "$PORT" --threads 1 --capacity "$workers" --service-time "$service" >"$tmp/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.05; done
  start=$(date +%s.%N); read -r total0 steal0 < <(ticks)
  taskset -c 0 "$VOLLEY" find-max "http://127.0.0.1:$PORT/" --slo "$SLO" --budget "$BUDGET" \
    --step "$STEP" --warmup "$WARMUP" --threads 1 -q --json "$tmp/run.json" --out "$tmp/results" \
    ${EXTRA[@]+"${EXTRA[@]}"} || true
  end=$(date +%s.%N); read -r total1 steal1 < <(ticks)
  # The target's own count of how long requests held a worker over the whole search.
  timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT; printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3; cat <&3" >"$tmp/metrics.txt" || true
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
  if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP"
    cp "$tmp/run.json" "$KEEP/$workers-$service.json" 2>/dev/null || true
    cp "$tmp/metrics.txt" "$KEEP/$workers-$service.metrics"
  fi
  steal=$(awk -v t="$((total1 - total0))" -v s="$((steal1 - steal0))" 'BEGIN {printf "%.1f%%", t ? 100 * s / t : 0}')
  python3 - "$tmp/run.json" "$workers" "$service" "$start" "$end" "$tmp/metrics.txt" "$steal" <<'PY'
import json, sys, re
rec = json.load(open(sys.argv[1]))["find_max"]
workers = int(sys.argv[2]); service = sys.argv[3]
m = re.fullmatch(r"([0-9.]+)(ms|s|us)", service)
secs = float(m.group(1)) * {"ms": 1e-3, "s": 1.0, "us": 1e-6}[m.group(2)]
expected = workers / secs
page = dict(l.split(" ", 1) for l in open(sys.argv[6]) if l.startswith("volley_target_capacity"))
held = float(page["volley_target_capacity_held_seconds_total"])
holds = float(page["volley_target_capacity_holds_total"])
true = workers / (held / holds)
found = rec["max_sustainable_rps"] or 0.0
m = [s["measured_s"] for s in rec["steps"] if not s["validation"] and s.get("measured_s")]
print(f"{workers}x{service:<9} {expected:10.1f} {true:10.1f} {found:10.1f} "
      f"{100*(found-expected)/expected:+7.1f}% {100*(found-true)/true:+7.1f}% "
      f"{float(sys.argv[5])-float(sys.argv[4]):9.1f} {len(rec['steps']):6d} "
      # The search steps' mean measured window (the validation's excluded), s.
      f"{sum(m) / max(len(m), 1):8.2f} "
      # The share of both CPUs' time the hypervisor took during the search.
      f"{sys.argv[7]:>6}")
PY
done
