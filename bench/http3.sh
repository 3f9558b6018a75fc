#!/usr/bin/env bash
# bench/http3.sh — what HTTP/3 costs against HTTP/1.1 and HTTP/2 (issue 31): the generator's CPU
# µs per request and req/s, at equal concurrency, against the same target.
#
# Starts the built-in target with HTTP/3 beside TLS (`volley serve --threads 1 --http3`: TLS on
# the TCP port, QUIC on the UDP port of the same number) pinned to SERVER_CPU, and runs volley
# (one generator thread pinned to CLIENT_CPU) against `/` over https:// in each protocol in turn,
# ROUNDS times, the order reversed every other round (A B C, C B A, …): closed model,
# CONNECTIONS connections × STREAMS streams (STREAMS > 1 only for HTTP/2 and HTTP/3; HTTP/1.1
# then runs CONNECTIONS × STREAMS connections, the same requests in flight), DURATION seconds.
# Per run: req/s, the generator's CPU (user + system of the whole process, start-up and TLS
# handshakes included) per request, and the target's CPU per request. oha joins as a peer when
# OHA names an oha built with HTTP/3 (`cargo install --locked oha --features http3`; its
# `--http-version 3`, `-c CONNECTIONS -p STREAMS`: the same requests in flight); skipped with a
# note otherwise.
#
# Knobs: CONNECTIONS=16  STREAMS=1  DURATION=5  ROUNDS=2  PROFILE=release
#        VOLLEY=path (default target/$PROFILE/volley)  OHA=path  SERVER_CPU=1  CLIENT_CPU=0
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
BENCH_TAG=http3-bench
# shellcheck source=bench/common.sh
source "$here/common.sh"

CONNECTIONS=${CONNECTIONS:-16}
STREAMS=${STREAMS:-1}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-2}
PROFILE=${PROFILE:-release}
VOLLEY=${VOLLEY:-$repo/target/$PROFILE/volley}
OHA=${OHA:-$(command -v oha || true)}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}

case ${1:-} in
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) die "no arguments expected (got '$1'); configure with environment variables, see --help" ;;
esac
for v in CONNECTIONS STREAMS DURATION ROUNDS; do posint "${!v}" "$v"; done
[[ -x $VOLLEY ]] || die "no volley executable at $VOLLEY (cargo build --profile $PROFILE)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install -y time)"
command -v taskset >/dev/null || die "taskset not found (apt-get install -y util-linux)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/volley-http3-bench.XXXXXX")
server_pid=
cleanup() { local rc=$?; set +e; stop_pids $server_pid; rm -rf "$tmp"; exit "$rc"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

serve_start "$tmp" "$SERVER_CPU" "" --http3 --ca-file "$tmp/ca.pem"
grep -q 'HTTP/3' "$tmp/serve.log" || die "the target serves no HTTP/3: $(cat "$tmp/serve.log")"
url="https://127.0.0.1:$port/"

have_oha=
if [[ -n $OHA ]] && "$OHA" --help 2>&1 | grep -q -- '--http-version'; then
  if timeout 20 "$OHA" --no-tui -n 10 --http-version 3 --insecure "$url" >"$tmp/oha-probe" 2>&1; then
    have_oha=1
  else
    note "oha ($OHA) did not run HTTP/3 ($(tail -1 "$tmp/oha-probe")); skipped"
  fi
else
  note "no oha with --http-version (OHA=path; cargo install --locked oha); skipped"
fi

echo "volley http3 bench  $(date -u '+%Y-%m-%d %H:%M:%S UTC')  $(uname -sr)  $(nproc) CPUs"
echo "volley: $("$VOLLEY" --version 2>&1 | head -n 1)  ($VOLLEY)"
echo "closed model, ${CONNECTIONS} connections x ${STREAMS} streams (HTTP/1.1: $((CONNECTIONS * STREAMS)) connections), ${DURATION}s, one generator thread on CPU $CLIENT_CPU, target on CPU $SERVER_CPU"
printf '%-6s %-8s %5s %10s %9s %14s %14s\n' round tool proto requests "req/s" "client µs/req" "target µs/req"

hz=$(getconf CLK_TCK)
# run ROUND TOOL PROTOCOL: one measured run, one line.
run() {
  local round=$1 tool=$2 proto=$3 conns=$CONNECTIONS streams=$STREAMS
  [[ $proto == http1 ]] && conns=$((CONNECTIONS * STREAMS)) && streams=1
  local before after requests cpu
  before=$(tree_busy "$server_pid")
  if [[ $tool == volley ]]; then
    /usr/bin/time -v -o "$tmp/time" taskset -c "$CLIENT_CPU" "$VOLLEY" "$url" --protocol "$proto" \
      --cacert "$tmp/ca.pem" -c "$conns" --streams "$streams" -d "${DURATION}s" --threads 1 -q \
      --json "$tmp/run.json" --out "$tmp/results" >"$tmp/run.log" 2>&1 </dev/null \
      || die "volley $proto failed: $(tail -5 "$tmp/run.log")"
    requests=$(volley_requests "$tmp/run.json")
  else
    /usr/bin/time -v -o "$tmp/time" taskset -c "$CLIENT_CPU" "$OHA" --no-tui --http-version 3 --insecure \
      -c "$conns" -p "$streams" -z "${DURATION}s" --output-format json "$url" >"$tmp/oha.json" 2>"$tmp/run.log" </dev/null \
      || die "oha failed: $(tail -5 "$tmp/run.log")"
    requests=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(d["statusCodeDistribution"].values()))' "$tmp/oha.json")
  fi
  after=$(tree_busy "$server_pid")
  cpu=$(python3 -c 'import sys; print(float(sys.argv[1]) + float(sys.argv[2]))' \
    "$(tv_field "$tmp/time" "User time")" "$(tv_field "$tmp/time" "System time")")
  python3 - "$round" "$tool" "$proto" "$requests" "$DURATION" "$cpu" "$((after - before))" "$hz" <<'PY'
import sys
rnd, tool, proto, req, dur, cpu, target, hz = sys.argv[1:]
req = int(req)
print(f"{rnd:<6} {tool:<8} {proto:>5} {req:>10} {req / float(dur):>9.0f} "
      f"{float(cpu) * 1e6 / req:>14.2f} {int(target) / int(hz) * 1e6 / req:>14.2f}")
PY
}

tools=("volley http1" "volley http2" "volley http3")
[[ -n $have_oha ]] && tools+=("oha http3")
for (( r = 1; r <= ROUNDS; r++ )); do
  order=("${tools[@]}")
  if (( r % 2 == 0 )); then
    order=(); for (( i = ${#tools[@]} - 1; i >= 0; i-- )); do order+=("${tools[i]}"); done
  fi
  for t in "${order[@]}"; do run "$r" $t; done
done
