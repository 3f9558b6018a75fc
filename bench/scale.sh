#!/usr/bin/env bash
# bench/scale.sh — volley at scale, side by side with wrk, oha and vegeta (issue 14).
#
# A private nginx (bench/nginx.conf, one worker per server CPU) on 127.0.0.1 is the target.
# The generator and nginx are pinned to disjoint CPU sets sized from `nproc`: the generator
# gets the first quarter of the CPUs (at least 1), nginx the next half (at least 1). Three
# sweeps, each point run by every tool in turn, the tools alternating in rounds:
#
#   threads  closed model, THREADS_CONNECTIONS connections, generator threads 1, 2, 4, 8 (up
#            to its CPUs), each pinned to that many CPUs: volley, wrk, oha
#   conns    closed model, all generator CPUs, CONNECTIONS connections: volley, wrk, oha
#   open     open model at RATES req/s: volley --rate (on its default 1 ms send grid),
#            volley-exact (--send-grid 0: each request at its own instant), vegeta -rate; and,
#            for the open/closed cost at the same throughput, volley and wrk closed against
#            /paced/RATE, which nginx itself holds to RATE (limit_req with a delay, no
#            rejections)
#
# Every run is wrapped in /usr/bin/time -v: CPU = user + sys of the generator process, peak
# RSS. The response count comes from the tool (volley: summary.requests of --json, wrk: "N
# requests in", oha: its JSON, vegeta: `vegeta report -type json`). It prints one table: req/s
# (responses / DURATION), achieved % of the asked rate, CPU µs per request, peak RSS, RSS per
# extra connection (against the sweep's smallest connection count), and ratios to wrk (closed)
# and vegeta (open); then the threads efficiency and volley's open/closed CPU ratio.
#
#   QUICK=1 bench/scale.sh          # a few minutes on 2 cores: 5 s runs, 1 round, fewer points
#   bench/scale.sh                  # the full sweep (2 rounds x 10 s; ~15 min on 2 cores)
#
# Knobs (environment): QUICK=0|1  DURATION=10  ROUNDS=2  SWEEPS="threads conns open"
#   TOOLS="volley volley-exact wrk oha vegeta"  CONNECTIONS="64 256 1000 10000"  THREADS="1 2 4 8"
#   THREADS_CONNECTIONS=256  RATES="2000 20000 100000"  OPEN_CAP=1000  PACED_CONNECTIONS=64
#   GEN_CPUS=(first quarter)  SERVER_CPUS=(next half)  VOLLEY=target/release/volley
#   VOLLEY_ARGS=""  BUILD=auto|always|never  WRK=wrk  OHA=oha  VEGETA=vegeta  NGINX=nginx
#   PORT=(free)  COOLDOWN=1  RESULTS=file.tsv  KEEP_TMP=0
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
BENCH_TAG=scale
# shellcheck source=bench/common.sh
. "$here/common.sh"

case ${1:-} in
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) die "no arguments expected (got '$1'); configure with environment variables, see --help" ;;
esac

QUICK=${QUICK:-0}
if [[ $QUICK == 1 ]]; then
  DURATION=${DURATION:-5}; ROUNDS=${ROUNDS:-1}
  CONNECTIONS=${CONNECTIONS:-64 1000 5000}; RATES=${RATES:-2000 20000}
else
  DURATION=${DURATION:-10}; ROUNDS=${ROUNDS:-2}
  CONNECTIONS=${CONNECTIONS:-64 256 1000 10000}; RATES=${RATES:-2000 20000 100000}
fi
SWEEPS=${SWEEPS:-threads conns open}
TOOLS=${TOOLS:-volley volley-exact wrk oha vegeta}
THREADS=${THREADS:-1 2 4 8}
THREADS_CONNECTIONS=${THREADS_CONNECTIONS:-256}
OPEN_CAP=${OPEN_CAP:-1000}
PACED_CONNECTIONS=${PACED_CONNECTIONS:-64}
VOLLEY=${VOLLEY:-$repo/target/release/volley}
VOLLEY_ARGS=${VOLLEY_ARGS:-}
BUILD=${BUILD:-auto}
WRK=${WRK:-wrk}; OHA=${OHA:-oha}; VEGETA=${VEGETA:-vegeta}; NGINX=${NGINX:-nginx}
PORT=${PORT:-}
COOLDOWN=${COOLDOWN:-1}
RESULTS=${RESULTS:-}
KEEP_TMP=${KEEP_TMP:-0}

ncpu=$(nproc)
if [[ -z ${GEN_CPUS:-} || -z ${SERVER_CPUS:-} ]]; then
  g=$(( ncpu / 4 )); (( g >= 1 )) || g=1
  s=$(( ncpu / 2 )); (( s >= 1 )) || s=1
  (( g + s <= ncpu )) || s=$(( ncpu - g ))
  (( s >= 1 )) || die "need at least 2 CPUs to keep the generator and nginx apart (have $ncpu)"
  GEN_CPUS=${GEN_CPUS:-0-$(( g - 1 ))}
  SERVER_CPUS=${SERVER_CPUS:-$g-$(( g + s - 1 ))}
fi
read -r -a gen_cpus <<< "$(cpu_list_expand "$GEN_CPUS")"
read -r -a server_cpus <<< "$(cpu_list_expand "$SERVER_CPUS")"
for c in "${gen_cpus[@]}"; do
  [[ " ${server_cpus[*]} " != *" $c "* ]] || die "GEN_CPUS ($GEN_CPUS) and SERVER_CPUS ($SERVER_CPUS) overlap"
  taskset -c "$c" true 2>/dev/null || die "cannot pin to CPU $c ($ncpu usable CPUs)"
done
server_set=$(cpu_list_take "${#server_cpus[@]}" "${server_cpus[*]}")
gen_max=${#gen_cpus[@]}

DURATION=$(secs_of "$DURATION" DURATION)
posint "$ROUNDS" ROUNDS; posint "$OPEN_CAP" OPEN_CAP; posint "$PACED_CONNECTIONS" PACED_CONNECTIONS
posint "$THREADS_CONNECTIONS" THREADS_CONNECTIONS
for c in $CONNECTIONS; do posint "$c" CONNECTIONS; done
for r in $RATES; do posint "$r" RATES; done
threads=()
for t in $THREADS; do posint "$t" THREADS; (( t <= gen_max )) && threads+=("$t"); done
(( ${#threads[@]} > 0 )) || threads=(1)
case $BUILD in auto|always|never) ;; *) die "BUILD must be auto, always or never" ;; esac
read -r -a volley_extra <<< "$VOLLEY_ARGS"

for need in /usr/bin/time taskset timeout python3 "$NGINX"; do
  command -v "$need" >/dev/null || die "$need not found (see bench/README.md, 'Install the peers')"
done

# --------------------------------------------------------------------- tools --

tools=()
oha_args=()
for t in $TOOLS; do
  case $t in
    volley)
      if [[ $BUILD == always || ( $BUILD == auto && ! -x $VOLLEY ) ]]; then
        note "building volley: cargo build --release"
        (cd "$repo" && cargo build --release) >&2 || die "cargo build --release failed"
      fi
      [[ -x $VOLLEY ]] || { note "skipping volley: no executable at $VOLLEY"; continue; }
      tools+=(volley) ;;
    volley-exact)
      [[ -x $VOLLEY ]] || { note "skipping volley-exact: no executable at $VOLLEY"; continue; }
      tools+=(volley-exact) ;;
    wrk)
      command -v "$WRK" >/dev/null || { note "skipping wrk (apt-get install -y wrk)"; continue; }
      tools+=(wrk) ;;
    oha)
      command -v "$OHA" >/dev/null || { note "skipping oha (cargo install --locked oha)"; continue; }
      oha_help=$("$OHA" --help 2>&1 || true)
      if grep -q -- '--output-format' <<< "$oha_help"; then oha_args=(--output-format json)
      else oha_args=(-j); fi
      tools+=(oha) ;;
    vegeta)
      command -v "$VEGETA" >/dev/null || { note "skipping vegeta (go install github.com/tsenart/vegeta/v12@v12.12.0)"; continue; }
      tools+=(vegeta) ;;
    *) die "unknown tool '$t' (known: volley volley-exact wrk oha vegeta)" ;;
  esac
done
(( ${#tools[@]} > 0 )) || die "none of the tools ($TOOLS) is available"
has() { [[ " ${tools[*]} " == *" $1 "* ]]; }

# ---------------------------------------------------------------- the points --
# A point is "model threads connections rate": model closed (URL /), open (--rate), paced
# (closed against /paced/RATE). Duplicates across sweeps are run once.

points=()
add_point() { [[ " ${points[*]/%/|} " == *" $1| "* ]] || points+=("$1"); }
for sweep in $SWEEPS; do
  case $sweep in
    threads) for t in "${threads[@]}"; do add_point "closed $t $THREADS_CONNECTIONS 0"; done ;;
    conns) for c in $CONNECTIONS; do add_point "closed ${threads[-1]} $c 0"; done ;;
    open) for r in $RATES; do
            add_point "open ${threads[-1]} $OPEN_CAP $r"
            add_point "paced ${threads[-1]} $PACED_CONNECTIONS $r"
          done ;;
    *) die "unknown sweep '$sweep' (known: threads conns open)" ;;
  esac
done
tools_for() { # model -> the tools that run it
  case $1 in
    closed) for t in volley wrk oha; do has "$t" && echo "$t"; done ;;
    open) for t in volley volley-exact vegeta; do has "$t" && echo "$t"; done ;;
    paced) for t in volley wrk; do has "$t" && echo "$t"; done ;;
  esac
}

# -------------------------------------------------------------------- limits --

max_conns=$PACED_CONNECTIONS
for p in "${points[@]}"; do read -r _ _ c _ <<< "$p"; (( c > max_conns )) && max_conns=$c; done
want_files=$(( max_conns + 1024 ))
hard=$(ulimit -Hn)
if [[ $hard != unlimited ]] && (( hard < want_files )); then
  die "open-file limit $hard < $want_files needed for $max_conns connections (raise it, or lower CONNECTIONS)"
fi
ulimit -n "$want_files"
somaxconn=$(cat /proc/sys/net/core/somaxconn 2>/dev/null || echo 4096)
backlog=$(( max_conns < somaxconn ? max_conns : somaxconn )); (( backlog >= 1024 )) || backlog=1024

# ------------------------------------------------------------- scratch + nginx --

tmp=$(mktemp -d "${TMPDIR:-/tmp}/volley-scale.XXXXXX")
nginx_pid=
tool_pid=
cleanup() {
  local rc=$?
  set +e
  if [[ -n $tool_pid ]] && kill -0 "$tool_pid" 2>/dev/null; then
    kill -TERM "$tool_pid" 2>/dev/null; wait "$tool_pid" 2>/dev/null
  fi
  nginx_stop
  if [[ $KEEP_TMP == 1 ]]; then note "scratch dir kept: $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[[ -n $PORT ]] || PORT=$(free_port)
port_answers "$PORT" && die "something already listens on 127.0.0.1:$PORT; pick another PORT"
workers=${#server_cpus[@]}
nginx_render "$here/nginx.conf" "$tmp/nginx" "$PORT" "$workers" "$(( want_files + 64 ))" "$want_files" "$backlog"
# /paced/R: the same "ok\n", held by nginx to R requests/s (delayed, never rejected), so that a
# closed-model generator runs at R: the closed side of the open/closed comparison.
python3 - "$tmp/nginx/nginx.conf" $RATES <<'PY'
import sys
path, rates = sys.argv[1], sys.argv[2:]
conf = open(path).read()
zones = "".join(f"    limit_req_zone $server_port zone=paced{r}:1m rate={r}r/s;\n" for r in rates)
locs = "".join(f"        location = /paced/{r} {{ limit_req zone=paced{r} burst=1000000; try_files /.none @ok; }}\n"
               for r in rates)
locs += '        location @ok { return 200 "ok\\n"; }\n'
for anchor, add in (("    server {", zones), ("        location / {", locs)):
    if anchor not in conf:
        sys.exit(f"no '{anchor}' in {path}")
    conf = conf.replace(anchor, add + anchor, 1)
open(path, "w").write(conf)
PY
nginx_start "$NGINX" "$tmp/nginx" "$server_set" "$PORT"
BASE="http://127.0.0.1:$PORT"

# --------------------------------------------------------------- one run --

rows="$tmp/rows.tsv"
printf 'round\tmodel\tthreads\tconns\trate\ttool\trequests\tseconds\tuser_s\tsys_s\trss_kib\tnginx_s\tbg_pct\n' > "$rows"
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)

# run_one ROUND MODEL THREADS CONNS RATE TOOL -> appends a row to $rows
run_one() {
  local round=$1 model=$2 th=$3 conns=$4 rate=$5 tool=$6
  local tag="r$round-$model-t$th-c$conns-r$rate-$tool"
  local out="$tmp/$tag.out" err="$tmp/$tag.err" tv="$tmp/$tag.time" json="$tmp/$tag.json"
  local url="$BASE/" cpus
  [[ $model == paced ]] && url="$BASE/paced/$rate"
  cpus=$(cpu_list_take "$th" "${gen_cpus[*]}")
  local -a cmd env=()
  case $tool in
    volley|volley-exact)
      cmd=("$VOLLEY" "$url" -c "$conns" -d "${DURATION}s" --threads "$th" -q --json "$json" --out "$tmp/res")
      [[ $model == open ]] && cmd+=(--rate "$rate")
      [[ $tool == volley-exact ]] && cmd+=(--send-grid 0)
      cmd+=("${volley_extra[@]}") ;;
    wrk) cmd=("$WRK" "-t$th" "-c$conns" "-d${DURATION}s" "$url") ;;
    oha) cmd=("$OHA" -c "$conns" -z "${DURATION}s" --no-tui "${oha_args[@]}" --worker-threads "$th" "$url") ;;
    vegeta)
      echo "GET $url" > "$tmp/targets"
      env=(env "GOMAXPROCS=$th")
      cmd=("$VEGETA" attack -targets "$tmp/targets" -rate "$rate/s" -duration "${DURATION}s" -output "$tmp/$tag.bin") ;;
  esac
  note "$tag: taskset -c $cpus ${cmd[*]}"
  local rc=0 busy0 ngx0 busy1 ngx1
  busy0=$(cpus_busy "${gen_cpus[@]:0:th}" "${server_cpus[@]}"); ngx0=$(tree_busy "$nginx_pid")
  local t0; t0=$(date +%s.%N)
  timeout -k 5 "$(( DURATION * 2 + 60 ))" /usr/bin/time -v -o "$tv" \
    "${env[@]}" taskset -c "$cpus" "${cmd[@]}" >"$out" 2>"$err" </dev/null &
  tool_pid=$!
  wait "$tool_pid" || rc=$?
  tool_pid=
  busy1=$(cpus_busy "${gen_cpus[@]:0:th}" "${server_cpus[@]}"); ngx1=$(tree_busy "$nginx_pid")
  local wall; wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  if (( rc != 0 )); then
    { echo "--- stdout ---"; tail -n 20 "$out"; echo "--- stderr ---"; tail -n 20 "$err"; } >&2 || true
    die "$tool run $tag failed with exit code $rc"
  fi
  kill -0 "$nginx_pid" 2>/dev/null || { nginx_pid=; die "nginx died during $tag"; }
  rm -rf "$tmp/res"

  local requests
  case $tool in
    volley|volley-exact) requests=$(volley_requests "$json") || die "no record from volley ($json)" ;;
    wrk)
      requests=$(awk '/ requests in / { print $1; exit }' "$out")
      grep -E 'Socket errors|Non-2xx' "$out" | sed "s/^ */[$BENCH_TAG] wrk: /" >&2 || true ;;
    oha) requests=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sum(int(v) for v in (r.get("statusCodeDistribution") or {}).values()))
errs = r.get("errorDistribution") or {}
if errs: print("oha errors:", errs, file=sys.stderr)' "$out") || die "no JSON from oha ($out)" ;;
    vegeta)
      "$VEGETA" report -type json "$tmp/$tag.bin" > "$tmp/$tag.report" || die "vegeta report failed"
      rm -f "$tmp/$tag.bin"
      requests=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
codes = r.get("status_codes") or {}
print(int(codes.get("200", 0)))
if r.get("errors"): print("vegeta errors:", r["errors"][:3], file=sys.stderr)' "$tmp/$tag.report") ;;
  esac
  [[ $requests =~ ^[0-9]+$ ]] || { cat "$out" >&2; die "no response count from $tool in $tag"; }
  if (( requests == 0 )); then
    # e.g. wrk still connecting 10,000 sockets when a short run ends on a busy machine: the
    # point has no figure for this tool in this round (said here and in the table's footer).
    tail -n 5 "$out" >&2
    note "$tool counted no response in $tag: no row for it"
    echo "$tag" >> "$tmp/empty"
    return 0
  fi

  local user sys rss
  user=$(tv_field "$tv" "User time (seconds)"); sys=$(tv_field "$tv" "System time (seconds)")
  rss=$(tv_field "$tv" "Maximum resident set size (kbytes)")
  [[ -n $user && -n $sys && -n $rss ]] || { cat "$tv" >&2; die "could not parse /usr/bin/time -v"; }
  local ncpus=$(( th + ${#server_cpus[@]} ))
  awk -v hz="$hz" -v b="$(( busy1 - busy0 ))" -v g="$(( ngx1 - ngx0 ))" -v u="$user" -v y="$sys" \
      -v cap="$(awk -v n="$ncpus" -v w="$wall" 'BEGIN { print n * w }')" \
      -v row="$round	$model	$th	$conns	$rate	$tool	$requests	$DURATION	$user	$sys	$rss" '
    BEGIN { bg = (b - g) / hz - u - y; if (bg < 0) bg = 0; printf "%s\t%.2f\t%.1f\n", row, g / hz, bg / cap * 100 }' >> "$rows"
}

# ------------------------------------------------------------------- the runs --

echo "volley scale bench  $(date -u '+%Y-%m-%d %H:%M:%S UTC')  $(uname -sr)  $ncpu CPUs"
echo "generator CPUs: ${gen_cpus[*]}   nginx CPUs: ${server_cpus[*]} ($workers worker(s), $("$NGINX" -v 2>&1 | sed 's/^nginx version: //'))"
for t in "${tools[@]}"; do
  case $t in
    volley) echo "volley: $("$VOLLEY" --version 2>&1 | head -n1) ($VOLLEY)" ;;
    volley-exact) echo "volley-exact: the same volley with --send-grid 0" ;;
    wrk) echo "wrk:    $("$WRK" -v 2>&1 | head -n1 | cut -c1-60)" ;;
    oha) echo "oha:    $("$OHA" --version 2>&1 | head -n1)" ;;
    vegeta) # `go install` builds print no version; the module's is in the binary.
      v=$(go version -m "$(command -v "$VEGETA")" 2>/dev/null | awk '$1 == "mod" { print $3 }')
      echo "vegeta: ${v:-$("$VEGETA" -version 2>&1 | awk '/Version/ { print $2 }')}" ;;
  esac
done
echo "${#points[@]} points x ${#tools[@]} tools x $ROUNDS round(s), ${DURATION}s each; QUICK=$QUICK"

for (( r = 1; r <= ROUNDS; r++ )); do
  for p in "${points[@]}"; do
    read -r model th conns rate <<< "$p"
    mapfile -t ts < <(tools_for "$model")
    # Alternate the order within a point from round to round.
    (( r % 2 == 0 )) && mapfile -t ts < <(printf '%s\n' "${ts[@]}" | tac)
    for t in "${ts[@]}"; do
      run_one "$r" "$model" "$th" "$conns" "$rate" "$t"
      sleep "$COOLDOWN"
    done
  done
done
[[ -z $RESULTS ]] || { cp "$rows" "$RESULTS"; note "raw rows written to $RESULTS"; }

echo
python3 "$here/scale_table.py" "$rows"
if [[ -s $tmp/empty ]]; then
  echo; echo "runs that counted no response (left out of the table): $(tr '\n' ' ' < "$tmp/empty")"
fi
