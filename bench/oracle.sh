#!/usr/bin/env bash
# bench/oracle.sh — volley's latency figures against the truth oracle (issue 10, section 5), with
# the exact figures that tests/oracle.rs checks with CI allowances.
#
# 1. /delay: volley's p50/p90/p99 (closed model, -c 10) against the built-in target's own handler
#    times of the same requests (GET /stats), plus the loopback overhead (mean of volley's latency
#    minus the mean handler time, over the same requests). Bound: max(2 % of the target's figure,
#    0.2 ms).
# 2. Stall: the open model's p95/p99/p99.9 (--rate 1000 -d 20s) against an endpoint that freezes
#    for 500 ms every 5 s, and the analytic law P(L > x) = (S - x)/P: 250, 450 and 495 ms.
#    Bound: 10 %.
#
# PIN=1 pins the target to CPU 1 and the generator to CPU 0 (as bench/findmax.sh); the default
# leaves both to the scheduler: on a 2-core machine shared with other work, a pinned process
# waits for its one core whenever a neighbour runs there (here: 2-3 ms more latency outside the
# handler at p90 and p99, residuals 10x the bound).
#
#   bench/oracle.sh                          # 3 rounds of each /delay, then one stall run
#   ROUNDS=5 DURATION=10s bench/oracle.sh
#   DELAYS="ms=2" STALL=0 bench/oracle.sh    # /delay only, one distribution
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
VOLLEY=${VOLLEY:-$here/../target/release/volley}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
DELAYS=${DELAYS:-"ms=10 ms=5&dist=exp"}
STALL=${STALL:-1}
PORT=${PORT:-18384}
PIN=${PIN:-0}
on_target=(); on_generator=()
if [ "$PIN" = 1 ]; then on_target=(taskset -c 1); on_generator=(taskset -c 0); fi
[ -x "$VOLLEY" ] || (cd "$here/.." && cargo build --release)
tmp=$(mktemp -d)
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
  echo "port $PORT is in use; set PORT" >&2; exit 1
fi

serve() {
  "${on_target[@]}" "$VOLLEY" serve --port "$PORT" --threads 2 "$@" >"$tmp/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return; sleep 0.05; done
  echo "the target did not start: $(cat "$tmp/serve.log")" >&2; exit 1
}
stop() { kill "$server"; wait "$server" 2>/dev/null || true; server=""; }
# The server must be the process started (taskset execs it), or stop() would leave it running.
# GET /stats?reset=1 into $1 (takes the figures out).
take_stats() { exec 3<>"/dev/tcp/127.0.0.1/$PORT"
  printf 'GET /stats?reset=1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n' >&3
  sed '1,/^\r$/d' <&3 >"$1"; exec 3<&-; }

echo "volley: $("$VOLLEY" --version 2>/dev/null || echo "$VOLLEY"); $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
serve
for delay in $DELAYS; do
  echo
  echo "/delay?$delay, -c 10 -d $DURATION --threads 1 (ms; residual = volley - target - overhead)"
  printf '%-6s %5s %9s %9s %9s %9s %9s %9s %7s\n' round q volley target overhead residual allowed requests ok
  for r in $(seq "$ROUNDS"); do
    take_stats "$tmp/discard.json"
    "${on_generator[@]}" "$VOLLEY" "http://127.0.0.1:$PORT/delay?$delay" -c 10 -d "$DURATION" --threads 1 \
      -q --json "$tmp/run.json" --out "$tmp/results"
    take_stats "$tmp/stats.json"
    python3 - "$tmp/run.json" "$tmp/stats.json" "$r" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]; t = json.load(open(sys.argv[2]))
lat = s["latency_ms"]; overhead = lat["mean"] - t["mean_us"] / 1000
for q in ["p50", "p90", "p99"]:
    v, o = lat[q], t[q + "_us"] / 1000
    res = v - o - overhead; allowed = max(0.02 * o, 0.2)
    n = f'{s["requests"]}/{t["count"]}'
    print(f"{sys.argv[3]:<6} {q:>5} {v:9.3f} {o:9.3f} {overhead:9.3f} {res:+9.3f} {allowed:9.3f} {n:>9} {'yes' if abs(res) <= allowed else 'NO':>7}")
PY
  done
done
stop

if [ "$STALL" = 1 ]; then
  echo
  echo "stall 500ms every 5s, --rate 1000 -d 20s (ms; law: P(L > x) = (S - x)/P)"
  serve --stall 500ms --stall-every 5s
  take_stats "$tmp/discard.json"
  "${on_generator[@]}" "$VOLLEY" "http://127.0.0.1:$PORT/" --rate 1000 -d 20s -q --json "$tmp/run.json" --out "$tmp/results"
  take_stats "$tmp/stats.json"
  stop
  python3 - "$tmp/run.json" "$tmp/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]; t = json.load(open(sys.argv[2]))
print(f'requests {s["requests"]} (target {t["count"]}), dropped {s["dropped"]}, errors {s["errors"]}')
print(f'{"q":>6} {"law":>7} {"volley":>8} {"dev":>7} {"service":>8} {"target":>8} {"dev":>7} ok')
for q, key, tail in [("p95", "p95_us", 0.05), ("p99", "p99_us", 0.01), ("p99_9", "p99_9_us", 0.001)]:
    law = 500 - tail * 5000
    v, sv, o = s["latency_ms"][q], s["service_latency_ms"][q], t[key] / 1000
    dv, do = 100 * (v - law) / law, 100 * (o - law) / law
    print(f"{q:>6} {law:7.1f} {v:8.1f} {dv:+6.1f}% {sv:8.1f} {o:8.1f} {do:+6.1f}% {'yes' if abs(dv) <= 10 else 'NO'}")
PY
fi
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
