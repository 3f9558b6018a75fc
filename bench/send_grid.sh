#!/usr/bin/env bash
# bench/send_grid.sh — what the open model's send grid costs and saves: CPU per request, latency,
# service latency and send lag of the same open-model run with each of VARIANTS, alternating
# (order reversed every other round), against a private nginx (bench/nginx.conf, one worker)
# pinned to SERVER_CPU, volley pinned to CLIENT_CPU with one worker thread.
#
#   bench/send_grid.sh                                    # 1ms and 0, at 2000 and 20000 req/s
#   VARIANTS="base=/tmp/old/volley: 1ms=: 0=--send-grid,0" ROUNDS=3 bench/send_grid.sh
#
# A variant is NAME=[BINARY]:[ARGS], ARGS comma-separated (empty BINARY: VOLLEY); a bare
# "1ms" or "0" means VOLLEY with --send-grid 1ms / 0. CPU = user + sys of the volley process
# (/usr/bin/time), requests = summary.requests; latency, service latency and send lag come from
# the run's record (ms). Prints one line per run, then the medians per rate and variant.
#
# Knobs: VOLLEY=target/release/volley  VARIANTS="1ms 0"  RATES="2000 20000"  ROUNDS=3
#   DURATION=5  SERVER_CPU=1  CLIENT_CPU=0  NGINX=nginx
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
BENCH_TAG=send_grid
# shellcheck source=bench/common.sh
source "$here/common.sh"

VOLLEY=${VOLLEY:-$repo/target/release/volley}
VARIANTS=${VARIANTS:-1ms 0}
RATES=${RATES:-2000 20000}
ROUNDS=${ROUNDS:-3}
DURATION=$(secs_of "${DURATION:-5}" DURATION)
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
NGINX=${NGINX:-nginx}
posint "$ROUNDS" ROUNDS
for r in $RATES; do posint "$r" RATES; done
[[ -x $VOLLEY ]] || die "no volley binary at $VOLLEY (cargo build --release, or set VOLLEY)"
command -v "$NGINX" >/dev/null || die "nginx is not installed (apt-get install -y nginx)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is not installed (apt-get install -y time)"

# name -> "binary args…"
declare -A bin_of args_of
names=()
for v in $VARIANTS; do
  case $v in
    *=*:*) name=${v%%=*}; rest=${v#*=}; b=${rest%%:*}; a=${rest#*:} ;;
    *=*) die "variant '$v': expected NAME=[BINARY]:[ARGS]" ;;
    *) name=$v; b=; a="--send-grid,$v" ;;
  esac
  [[ -n $b ]] || b=$VOLLEY
  [[ -x $b ]] || die "variant '$name': no executable at $b"
  bin_of[$name]=$b
  args_of[$name]=${a//,/ }
  names+=("$name")
done

tmp=$(mktemp -d)
nginx_pid=
cleanup() { nginx_stop; rm -rf "$tmp"; }
trap cleanup EXIT
port=$(free_port)
nginx_render "$here/nginx.conf" "$tmp/nginx" "$port"
nginx_start "$NGINX" "$tmp/nginx" "$SERVER_CPU" "$port"

# run NAME RATE ROUND: one volley run; appends "rate name cpu p50 p99 service_p50 lag_p50 lag_p99".
run() {
  local name=$1 rate=$2 r=$3 json=$tmp/run.json cpu=$tmp/run.cpu
  local -a extra
  read -r -a extra <<< "${args_of[$name]}"
  taskset -c "$CLIENT_CPU" /usr/bin/time -o "$cpu" -f '%U %S' "${bin_of[$name]}" \
    "http://127.0.0.1:$port/" --rate "$rate" -d "${DURATION}s" --threads 1 -q \
    --json "$json" --out "$tmp/res" "${extra[@]}" </dev/null \
    || die "$name at $rate req/s (round $r) failed"
  rm -rf "$tmp/res"
  read -r user sys < "$cpu"
  python3 - "$json" "$user" "$sys" "$rate" "$name" "$r" <<'PY' | tee -a "$tmp/rows"
import json, sys
rec = json.load(open(sys.argv[1]))
s, g = rec["summary"], rec["generator"]
n = s["requests"]
cpu = (float(sys.argv[2]) + float(sys.argv[3])) * 1e6 / n
lat, svc, lag = s["latency_ms"], s["service_latency_ms"] or {}, g["lag_ms"] or {}
print(sys.argv[4], sys.argv[5], f"{cpu:.2f}", lat["p50"], lat["p99"], svc.get("p50"),
      lag.get("p50"), lag.get("p99"), f"# round {sys.argv[6]}, {n} requests")
PY
}

printf 'load before: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= ROUNDS; r++)); do
  order=("${names[@]}")
  (( r % 2 == 0 )) && mapfile -t order < <(printf '%s\n' "${names[@]}" | tac)
  for rate in $RATES; do
    for name in "${order[@]}"; do run "$name" "$rate" "$r"; done
  done
done
printf 'load after:  %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp/rows" <<'PY'
import statistics, sys
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    rate, name, *vals = line.split("#")[0].split()
    rows[(int(rate), name)].append([float(v) if v != "None" else float("nan") for v in vals])
print("\n| rate | variant | CPU µs/req | latency p50 | latency p99 | service p50 | send lag p50 | send lag p99 |")
print("|---:|---|---:|---:|---:|---:|---:|---:|")
for (rate, name), vs in rows.items():
    med = [statistics.median(v[i] for v in vs) for i in range(6)]
    print(f"| {rate} | {name} | {med[0]:.2f} | " + " | ".join(f"{m:.3f}" for m in med[1:]) + " |")
PY
