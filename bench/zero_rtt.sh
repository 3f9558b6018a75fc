#!/usr/bin/env bash
# bench/zero_rtt.sh — what HTTP/3 0-RTT (`--zero-rtt`) changes for a new connection per request
# (issue 31): request latency, handshakes timed, early data sent and accepted, and the
# generator's CPU per request, with and without it, against the same target.
#
# Starts `volley serve --threads 1 --http3` pinned to SERVER_CPU and runs volley (one generator
# thread pinned to CLIENT_CPU) against `/` over HTTP/3 with `--no-keepalive`, CONNECTIONS at
# once, DURATION seconds, without and with --zero-rtt, ROUNDS times, the order reversed every
# other round. On loopback a round trip is ~0.05 ms, so what 0-RTT saves there is a round trip
# of that size; the handshake's CPU (done either way) stays.
#
# Knobs: CONNECTIONS=1  DURATION=5  ROUNDS=4  PROFILE=release  VOLLEY=path
#        SERVER_CPU=1  CLIENT_CPU=0
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
BENCH_TAG=zero-rtt-bench
# shellcheck source=bench/common.sh
source "$here/common.sh"

CONNECTIONS=${CONNECTIONS:-1}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-4}
PROFILE=${PROFILE:-release}
VOLLEY=${VOLLEY:-$repo/target/$PROFILE/volley}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}

case ${1:-} in
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) die "no arguments expected (got '$1'); configure with environment variables, see --help" ;;
esac
for v in CONNECTIONS DURATION ROUNDS; do posint "${!v}" "$v"; done
[[ -x $VOLLEY ]] || die "no volley executable at $VOLLEY (cargo build --profile $PROFILE)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install -y time)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/volley-zero-rtt-bench.XXXXXX")
server_pid=
cleanup() { local rc=$?; set +e; stop_pids $server_pid; rm -rf "$tmp"; exit "$rc"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

serve_start "$tmp" "$SERVER_CPU" "" --http3 --ca-file "$tmp/ca.pem"
url="https://127.0.0.1:$port/"
echo "volley zero-rtt bench  $(date -u '+%Y-%m-%d %H:%M:%S UTC')  $(uname -sr)  $(nproc) CPUs"
echo "HTTP/3, --no-keepalive, ${CONNECTIONS} at once, ${DURATION}s, generator on CPU $CLIENT_CPU, target on CPU $SERVER_CPU"
printf '%-6s %-6s %9s %8s %8s %8s %11s %9s %9s %14s\n' round mode "req/s" "p50 ms" "p90 ms" "p99 ms" handshakes "0-RTT" accepted "client µs/req"

run() {
  local round=$1 mode=$2 flag=()
  [[ $mode == 0-rtt ]] && flag=(--zero-rtt)
  /usr/bin/time -v -o "$tmp/time" taskset -c "$CLIENT_CPU" "$VOLLEY" "$url" --protocol http3 \
    --cacert "$tmp/ca.pem" --sni localhost -c "$CONNECTIONS" --no-keepalive "${flag[@]}" \
    -d "${DURATION}s" --threads 1 -q --json "$tmp/run.json" --out "$tmp/results" \
    >"$tmp/run.log" 2>&1 </dev/null || die "volley $mode failed: $(tail -5 "$tmp/run.log")"
  python3 - "$round" "$mode" "$tmp/run.json" \
    "$(tv_field "$tmp/time" "User time")" "$(tv_field "$tmp/time" "System time")" <<'PY'
import json, sys
rnd, mode, path, user, system = sys.argv[1:]
s = json.load(open(path))["summary"]
l, q, t = s["latency_ms"], s["quic"], s["timing"]
print(f"{rnd:<6} {mode:<6} {s['rps']:>9.0f} {l['p50']:>8.3f} {l['p90']:>8.3f} {l['p99']:>8.3f} "
      f"{t.get('tls_handshakes', 0):>11} {q['zero_rtt_sent']:>9} {q['zero_rtt_accepted']:>9} "
      f"{(float(user) + float(system)) * 1e6 / s['requests']:>14.1f}")
PY
}

for (( r = 1; r <= ROUNDS; r++ )); do
  if (( r % 2 )); then run "$r" 1-rtt; run "$r" 0-rtt; else run "$r" 0-rtt; run "$r" 1-rtt; fi
done
