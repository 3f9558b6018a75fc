#!/usr/bin/env bash
# bench/grpc.sh — client CPU per unary gRPC call (and per HTTP request of each protocol):
# volley's protocol layer vs ghz, against the built-in target on 127.0.0.1.
#
# The target (plain h2c + TLS listeners, one worker thread each) runs pinned to SERVER_CPU;
# each client runs pinned to CLIENT_CPU with 64 calls in flight over 4 connections:
#   - examples/proto_cpu: volley::proto driven directly (the seam the engine will use), all modes
#     (h1, h1-tls, h2c, h2-tls, grpc, grpc-tls, hyper-h2c) or MODES; CPU of its one thread.
#   - ghz (go install github.com/bojand/ghz/cmd/ghz@latest), GOMAXPROCS=1 (--cpus 1),
#     the same Echo call over h2c; CPU from /usr/bin/time, calls from its JSON report.
#   - volley's CLI, the same call over h2c and over TLS (--insecure), 4 connections × 16 streams:
#       volley grpc://ADDR --proto proto/volley_target.proto \
#         --call volley.target.v1.Echo/Echo --data '{"message":"hello"}' \
#         -c 4 --streams 16 -d 5s --threads 1 -q --json FILE
#     CPU per call from the record (generator.cpu_us_per_request: the whole process).
# Rounds alternate the clients so drift hits them alike; medians at the end.
#
#   DURATION=5  ROUNDS=3  MODES="grpc grpc-tls h2c hyper-h2c h1 h1-tls h2-tls"
#   SERVER_CPU=1  CLIENT_CPU=0  GHZ=ghz  BUILD=auto|never  KEEP_TMP=1
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
MODES=${MODES:-grpc grpc-tls h2c hyper-h2c h1 h1-tls h2-tls}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
GHZ=${GHZ:-$(command -v ghz || echo "$HOME/go/bin/ghz")}
BUILD=${BUILD:-auto}
KEEP_TMP=${KEEP_TMP:-0}

note() { printf '[grpc-bench] %s\n' "$*" >&2; }
die() { printf '[grpc-bench] error: %s\n' "$*" >&2; exit 1; }

case ${1:-} in
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) die "no arguments expected; configure with environment variables, see --help" ;;
esac

for tool in taskset timeout python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || die "$tool is needed"
done

harness=$repo/target/release/examples/proto_cpu
if [[ $BUILD != never ]]; then
  note "building volley and examples/proto_cpu (release)"
  (cd "$repo" && cargo build --release --bin volley --example proto_cpu >&2)
fi
[[ -x $harness ]] || die "no $harness (build it or drop BUILD=never)"
volley=$repo/target/release/volley
[[ -x $volley ]] || die "no $volley (build it or drop BUILD=never)"

tmp=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [[ $KEEP_TMP == 1 ]]; then note "scratch kept in $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# The target lives until its stdin closes, at most an hour.
mkfifo "$tmp/stdin"
timeout 3600 taskset -c "$SERVER_CPU" "$harness" serve "$tmp" < "$tmp/stdin" &
server_pid=$!
exec 3>"$tmp/stdin"
for _ in $(seq 100); do [[ -s $tmp/addrs ]] && break; sleep 0.05; done
[[ -s $tmp/addrs ]] || die "the target did not start"
read -r plain_addr tls_addr < "$tmp/addrs"
note "target: h2c/h1 $plain_addr, TLS $tls_addr (CPU $SERVER_CPU); clients on CPU $CLIENT_CPU"

have_ghz=0
if [[ -x $GHZ ]]; then have_ghz=1; else note "ghz not found at $GHZ: skipped"; fi

rows=$tmp/rows.tsv
: > "$rows"
for round in $(seq "$ROUNDS"); do
  # volley::proto, every mode once, in one process.
  taskset -c "$CLIENT_CPU" "$harness" measure "$tmp" "$DURATION" 1 "$MODES" > "$tmp/harness.txt"
  awk -v r="$round" '/^round/ { printf "%s\tvolley-proto %s\t%s\t%s\n", r, $3, $4, $6 }' \
    "$tmp/harness.txt" >> "$rows"
  # volley's CLI: the same Echo call, h2c then TLS.
  for mode in grpc grpc-tls; do
    if [[ $mode == grpc ]]; then url=grpc://$plain_addr; tls=(); else url=grpcs://$tls_addr; tls=(--insecure); fi
    taskset -c "$CLIENT_CPU" "$volley" "$url" "${tls[@]}" \
      --proto "$repo/proto/volley_target.proto" --call volley.target.v1.Echo/Echo \
      --data '{"message":"hello"}' -c 4 --streams 16 -d "${DURATION}s" --threads 1 -q \
      --json "$tmp/volley.json" --out "$tmp/results" 2>"$tmp/volley.err" \
      || { cat "$tmp/volley.err" >&2; die "volley $mode failed"; }
    python3 - "$tmp/volley.json" "$round" "$mode" >> "$rows" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["summary"]
if s["errors"]:
    sys.exit(f"volley: {s['errors']} of {s['requests']} calls failed: {s['errors_by_kind']}")
print(f"{sys.argv[2]}\tvolley-cli {sys.argv[3]}\t{r['generator']['cpu_us_per_request']:.2f}\t{s['rps']:.0f}")
EOF
  done
  if [[ $have_ghz == 1 ]]; then
    /usr/bin/time -f '%U %S' -o "$tmp/ghz.time" \
      taskset -c "$CLIENT_CPU" "$GHZ" --insecure --cpus 1 \
        --proto "$repo/proto/volley_target.proto" --call volley.target.v1.Echo/Echo \
        -d '{"message":"hello"}' -c 64 --connections 4 -z "${DURATION}s" \
        -O json -o "$tmp/ghz.json" "$plain_addr" >/dev/null 2>"$tmp/ghz.err" \
      || { cat "$tmp/ghz.err" >&2; die "ghz failed"; }
    python3 - "$tmp/ghz.json" "$tmp/ghz.time" "$DURATION" "$round" >> "$rows" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
user, system = map(float, open(sys.argv[2]).read().split()[-2:])
ok = report.get("statusCodeDistribution", {}).get("OK", 0)
errors = report.get("errorDistribution") or {}
# When -z runs out ghz cancels the calls in flight ("transport is closing", "client connection
# is closing"): at most -c of them.
cut = sum(n for e, n in errors.items() if "is closing" in e)
if report["count"] - ok - cut > 0 or cut > 64:
    sys.exit(f"ghz: {report['count'] - ok} of {report['count']} calls failed: {errors}")
print(f"{sys.argv[4]}\tghz grpc\t{(user + system) * 1e6 / ok:.2f}\t{ok / float(sys.argv[3]):.0f}")
EOF
  fi
  note "round $round/$ROUNDS done"
done

python3 - "$rows" <<'EOF'
import collections, statistics, sys
by = collections.defaultdict(list)
for line in open(sys.argv[1]):
    _, tool, cpu, rate = line.rstrip("\n").split("\t")
    by[tool].append((float(cpu), float(rate)))
print(f"{'client':<24} {'cpu_us/call':>12} {'calls/s':>10}   (medians, {len(next(iter(by.values())))} rounds)")
for tool, runs in by.items():
    cpu = statistics.median(c for c, _ in runs)
    rate = statistics.median(r for _, r in runs)
    print(f"{tool:<24} {cpu:>12.2f} {rate:>10.0f}")
EOF
