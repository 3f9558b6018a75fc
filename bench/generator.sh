#!/usr/bin/env bash
# bench/generator.sh — compare volley's cost per request with wrk and oha.
#
# Starts a private nginx (bench/nginx.conf) on 127.0.0.1, pinned to one CPU,
# and drives it with each load generator in turn, pinned to another CPU:
# 64 connections, 10 s per run, interleaved A B C A B C ... for ROUNDS rounds.
# Each run is wrapped in /usr/bin/time -v for user+sys CPU seconds and peak
# RSS; the request count comes from the tool's own output. Prints a table per
# round, then per-tool medians and the CPU-per-request ratio against wrk.
#
# MODE=rss-drift instead runs volley alone for 10 s and for 60 s and compares
# the two peak RSS values (acceptance: within 10 %).
#
# See bench/README.md for the knobs. Quick reference:
#   MODE=compare|rss-drift   DURATION=10   ROUNDS=3   CONNECTIONS=64
#   TOOLS="volley wrk oha"   VOLLEY=path   VOLLEY_ARGS="..."   BUILD=auto|always|never
#   TOOLS="volley volley-alt" VOLLEY_ALT_ARGS="..." (the same volley with these extra
#     arguments, alternating with the plain run; prints the CPU-per-request ratio)
#   OHA_THREADS=1 (oha --worker-threads; empty = oha's default)
#   PORT=(free port)   SERVER_CPU=1   CLIENT_CPU=0   COOLDOWN=1
#   DRIFT_SHORT=10   DRIFT_LONG=60   DRIFT_TOLERANCE=0.10
#   RESULTS=file.tsv (keep raw rows)   KEEP_TMP=1 (keep the scratch dir)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

MODE=${MODE:-compare}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-64}
TOOLS=${TOOLS:-volley wrk oha}
VOLLEY=${VOLLEY:-$repo/target/release/volley}
VOLLEY_ARGS=${VOLLEY_ARGS:-}
VOLLEY_ALT_ARGS=${VOLLEY_ALT_ARGS:-}
BUILD=${BUILD:-auto}
WRK=${WRK:-wrk}
OHA=${OHA:-oha}
OHA_THREADS=${OHA_THREADS:-1}
NGINX=${NGINX:-nginx}
PORT=${PORT:-}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
COOLDOWN=${COOLDOWN:-1}
DRIFT_SHORT=${DRIFT_SHORT:-10}
DRIFT_LONG=${DRIFT_LONG:-60}
DRIFT_TOLERANCE=${DRIFT_TOLERANCE:-0.10}
RESULTS=${RESULTS:-}
KEEP_TMP=${KEEP_TMP:-0}

default_volley="$repo/target/release/volley"

note() { printf '[bench] %s\n' "$*" >&2; }
die() { printf '[bench] error: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- arguments --

case ${1:-} in
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) die "no arguments expected (got '$1'); configure with environment variables, see --help" ;;
esac

# "10", "10s" -> 10
secs_of() {
  local v=$1 name=$2
  [[ $v =~ ^([0-9]+)s?$ ]] || die "$name must be whole seconds like 10 or 10s (got '$v')"
  (( BASH_REMATCH[1] > 0 )) || die "$name must be > 0"
  printf '%s' "$((10#${BASH_REMATCH[1]}))"
}
posint() {
  [[ $1 =~ ^[0-9]+$ ]] && (( 10#$1 > 0 )) || die "$2 must be a positive integer (got '$1')"
}

case $MODE in compare|rss-drift) ;; *) die "MODE must be 'compare' or 'rss-drift' (got '$MODE')" ;; esac
DURATION=$(secs_of "$DURATION" DURATION)
DRIFT_SHORT=$(secs_of "$DRIFT_SHORT" DRIFT_SHORT)
DRIFT_LONG=$(secs_of "$DRIFT_LONG" DRIFT_LONG)
posint "$ROUNDS" ROUNDS
posint "$CONNECTIONS" CONNECTIONS
[[ $COOLDOWN =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "COOLDOWN must be a number of seconds (got '$COOLDOWN')"
[[ $DRIFT_TOLERANCE =~ ^0?\.[0-9]+$|^[0-9]+(\.[0-9]+)?$ ]] || die "DRIFT_TOLERANCE must be a fraction like 0.10"
case $BUILD in auto|always|never) ;; *) die "BUILD must be auto, always or never (got '$BUILD')" ;; esac
[[ -z $OHA_THREADS ]] || posint "$OHA_THREADS" OHA_THREADS
[[ -z $PORT || $PORT =~ ^[0-9]+$ ]] || die "PORT must be a number (got '$PORT')"
read -r -a volley_extra <<< "$VOLLEY_ARGS"
read -r -a volley_alt_extra <<< "$VOLLEY_ALT_ARGS"

if [[ $MODE == rss-drift ]]; then
  TOOLS=volley
fi
read -r -a requested <<< "$TOOLS"
(( ${#requested[@]} > 0 )) || die "TOOLS is empty"
for t in "${requested[@]}"; do
  case $t in volley|volley-alt|wrk|oha) ;; *) die "unknown tool '$t' in TOOLS (known: volley volley-alt wrk oha)" ;; esac
  [[ $t != volley-alt || -n $VOLLEY_ALT_ARGS ]] || die "TOOLS has volley-alt but VOLLEY_ALT_ARGS is empty"
done

# ------------------------------------------------------------ prerequisites --

[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install -y time)"
command -v taskset >/dev/null || die "taskset not found (apt-get install -y util-linux)"
command -v timeout >/dev/null || die "timeout not found (coreutils)"
command -v python3 >/dev/null || die "python3 not found (apt-get install -y python3); it parses JSON and computes medians"
command -v "$NGINX" >/dev/null || die "nginx not found (apt-get install -y nginx)"
for cpu in "$SERVER_CPU" "$CLIENT_CPU"; do
  taskset -c "$cpu" true 2>/dev/null || die "cannot pin to CPU $cpu (this machine has $(nproc) usable CPU(s)); set SERVER_CPU / CLIENT_CPU"
done
[[ $SERVER_CPU != "$CLIENT_CPU" ]] || note "warning: server and generator share CPU $CLIENT_CPU; numbers will be distorted"

oha_args=()
tools=()
for t in "${requested[@]}"; do
  case $t in
    wrk)
      if command -v "$WRK" >/dev/null; then tools+=(wrk)
      else note "skipping wrk: '$WRK' not installed (apt-get install -y wrk)"; fi ;;
    oha)
      if ! command -v "$OHA" >/dev/null; then
        note "skipping oha: '$OHA' not installed (cargo install --locked oha)"; continue
      fi
      oha_help=$("$OHA" --help 2>&1 || true)
      if grep -q -- '--output-format' <<< "$oha_help"; then oha_args=(--output-format json)
      elif grep -qE -- '(^|[[:space:]])-j[,[:space:]]' <<< "$oha_help"; then oha_args=(-j)
      else die "cannot tell how '$OHA' prints JSON (neither --output-format nor -j in its --help)"; fi
      grep -q -- '--no-tui' <<< "$oha_help" || die "'$OHA' has no --no-tui option; too old?"
      # One runtime thread, like wrk -t1 and volley --threads 1 (oha's default is one per core).
      if [[ -n $OHA_THREADS ]] && grep -q -- '--worker-threads' <<< "$oha_help"; then
        oha_args+=(--worker-threads "$OHA_THREADS")
      fi
      tools+=(oha) ;;
    volley|volley-alt)
      if [[ $BUILD == always || ( $BUILD == auto && ! -x $VOLLEY && $VOLLEY == "$default_volley" ) ]]; then
        if command -v cargo >/dev/null; then
          note "building volley: cargo build --release (in $repo)"
          (cd "$repo" && cargo build --release) >&2 || die "cargo build --release failed"
        else
          note "cargo not found; cannot build volley"
        fi
      fi
      if [[ ! -x $VOLLEY ]]; then
        if [[ $MODE == rss-drift ]]; then die "volley binary not found at $VOLLEY (rss-drift needs it)"; fi
        note "skipping volley: no executable at $VOLLEY"; continue
      fi
      if ! "$VOLLEY" --help 2>&1 | grep -q -- '--json'; then
        die "$VOLLEY does not list --json in its --help (an unfinished build?); rebuild it, or run with TOOLS=\"wrk oha\""
      fi
      tools+=("$t") ;;
  esac
done
(( ${#tools[@]} > 0 )) || die "none of the requested tools ($TOOLS) is available"

# ------------------------------------------------------------ scratch + nginx --

tmp=$(mktemp -d "${TMPDIR:-/tmp}/volley-bench.XXXXXX")
nginx_pid=
tool_pid=
cleanup() {
  local rc=$?
  set +e
  if [[ -n $tool_pid ]] && kill -0 "$tool_pid" 2>/dev/null; then
    kill -TERM "$tool_pid" 2>/dev/null   # timeout passes it on to the tool
    wait "$tool_pid" 2>/dev/null
  fi
  if [[ -n $nginx_pid ]] && kill -0 "$nginx_pid" 2>/dev/null; then
    kill -TERM "$nginx_pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$nginx_pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$nginx_pid" 2>/dev/null && kill -KILL "$nginx_pid" 2>/dev/null
    wait "$nginx_pid" 2>/dev/null
  fi
  if [[ $KEEP_TMP == 1 ]]; then note "scratch dir kept: $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_answers() { # port answers TCP at all?
  timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}
http_ok() { # our nginx answers "200" on /
  local head
  head=$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 && printf 'GET / HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3 && head -c 12 <&3" 2>/dev/null) || return 1
  [[ $head == "HTTP/1.1 200" ]]
}

if [[ -z $PORT ]]; then
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
if port_answers "$PORT"; then
  die "something already listens on 127.0.0.1:$PORT; pick another PORT (this script only loads its own nginx)"
fi

mkdir -p "$tmp/nginx/tmp"
sed "s/__PORT__/$PORT/g" "$here/nginx.conf" > "$tmp/nginx/nginx.conf"
grep -q "listen 127.0.0.1:$PORT" "$tmp/nginx/nginx.conf" || die "could not render the listen port into $here/nginx.conf"
"$NGINX" -t -q -p "$tmp/nginx" -e "$tmp/nginx/tmp/error.log" -c "$tmp/nginx/nginx.conf" \
  || die "nginx rejected the config (see above)"
taskset -c "$SERVER_CPU" "$NGINX" -p "$tmp/nginx" -e "$tmp/nginx/tmp/error.log" -c "$tmp/nginx/nginx.conf" \
  >"$tmp/nginx/stdout.log" 2>&1 </dev/null &
nginx_pid=$!

ready=0
for _ in $(seq 100); do     # up to ~10 s
  if ! kill -0 "$nginx_pid" 2>/dev/null; then
    cat "$tmp/nginx/stdout.log" "$tmp/nginx/tmp/error.log" >&2 2>/dev/null || true
    nginx_pid=
    die "nginx exited during startup (log above)"
  fi
  if http_ok "$PORT"; then ready=1; break; fi
  sleep 0.1
done
(( ready )) || { cat "$tmp/nginx/tmp/error.log" >&2 2>/dev/null || true; die "nginx did not answer on 127.0.0.1:$PORT within 10 s"; }
URL="http://127.0.0.1:$PORT/"

# ------------------------------------------------------------- measurement --

# JSON helpers (python3): request count from oha's / volley's JSON.
json_requests() { # tool file
  python3 - "$1" "$2" <<'PY'
import json, sys
tool, path = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8", errors="replace").read()
def records(text):
    try:
        yield json.loads(text); return
    except ValueError:
        pass
    for line in text.splitlines():            # JSON lines: use what parses
        line = line.strip()
        if line.startswith("{"):
            try: yield json.loads(line)
            except ValueError: pass
recs = list(records(text))
if not recs:
    sys.exit(f"no JSON object in {path}")
if tool == "oha":
    r = recs[-1]
    codes = r.get("statusCodeDistribution")
    if codes is None:
        sys.exit("oha JSON has no statusCodeDistribution")
    print(sum(int(v) for v in codes.values()))
    errs = {k: v for k, v in (r.get("errorDistribution") or {}).items() if "deadline" not in k}
    non2xx = {k: v for k, v in codes.items() if not k.startswith("2")}
    if errs: print(f"oha errors: {errs}", file=sys.stderr)
    if non2xx: print(f"oha non-2xx: {non2xx}", file=sys.stderr)
else:
    withsum = [r for r in recs if isinstance(r, dict) and isinstance(r.get("summary"), dict)
               and "requests" in r["summary"]]
    if not withsum:
        sys.exit("volley JSON has no summary.requests")
    summ = withsum[-1]["summary"]
    print(int(summ["requests"]))
    if summ.get("errors"):
        print(f"volley errors: {summ['errors']} {summ.get('errors_by_kind') or ''}", file=sys.stderr)
PY
}

tv_field() { # file "Label" -> value after ": "
  awk -v k="$2" 'index($0, k) { sub(/.*: /, ""); print; exit }' "$1"
}

# Busy jiffies (user+nice+system) of the two pinned CPUs, and of our nginx;
# their difference with the tool's own CPU time is what other processes on
# the machine took from those CPUs during a run (the "bg_s" column).
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
cpus_busy() {
  awk -v a="cpu$SERVER_CPU" -v b="cpu$CLIENT_CPU" '$1 == a || $1 == b { t += $2 + $3 + $4 } END { print t + 0 }' /proc/stat
}
nginx_busy() { # master + workers, utime + stime
  local p t=0 f
  for p in "$nginx_pid" $(pgrep -P "$nginx_pid" 2>/dev/null || true); do
    f=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null) || continue
    set -- $f
    t=$(( t + ${12} + ${13} ))
  done
  echo "$t"
}

rows="$tmp/results.tsv"
printf 'round\ttool\trequests\tseconds\treq_per_s\tuser_s\tsys_s\tcpu_us_per_req\trss_kib\tnginx_s\tbg_s\n' > "$rows"

# run_one TOOL SECONDS TAG ROUND -> appends a row to $rows; exits on failure
run_one() {
  local tool=$1 secs=$2 tag=$3 round=$4
  local out="$tmp/$tag.out" err="$tmp/$tag.err" tv="$tmp/$tag.time" json="$tmp/$tag.json"
  local -a cmd
  case $tool in
    volley) cmd=("$VOLLEY" "$URL" -c "$CONNECTIONS" -d "${secs}s" --threads 1 -q --json "$json" "${volley_extra[@]}") ;;
    volley-alt) cmd=("$VOLLEY" "$URL" -c "$CONNECTIONS" -d "${secs}s" --threads 1 -q --json "$json" "${volley_extra[@]}" "${volley_alt_extra[@]}") ;;
    wrk)    cmd=("$WRK" -t1 -c"$CONNECTIONS" -d"${secs}s" "$URL") ;;
    oha)    cmd=("$OHA" -c "$CONNECTIONS" -z "${secs}s" --no-tui "${oha_args[@]}" "$URL"); json=$out ;;
  esac
  note "run $tag: taskset -c $CLIENT_CPU ${cmd[*]}"
  local rc=0 busy0 ngx0 busy1 ngx1
  busy0=$(cpus_busy); ngx0=$(nginx_busy)
  # In the background + wait, so that INT/TERM reach the traps at once.
  timeout -k 5 "$((secs * 2 + 30))" \
    /usr/bin/time -v -o "$tv" taskset -c "$CLIENT_CPU" "${cmd[@]}" >"$out" 2>"$err" </dev/null &
  tool_pid=$!
  wait "$tool_pid" || rc=$?
  tool_pid=
  busy1=$(cpus_busy); ngx1=$(nginx_busy)
  if (( rc != 0 )); then
    { echo "--- stdout (tail) ---"; tail -n 20 "$out"; echo "--- stderr (tail) ---"; tail -n 20 "$err"; } >&2 || true
    (( rc == 124 )) && die "$tool run $tag timed out after $((secs * 2 + 30)) s"
    die "$tool run $tag failed with exit code $rc"
  fi
  kill -0 "$nginx_pid" 2>/dev/null || { nginx_pid=; die "nginx died during the $tool run $tag"; }

  local requests
  case $tool in
    wrk)
      requests=$(awk '/ requests in / { print $1; exit }' "$out")
      grep -E 'Socket errors|Non-2xx' "$out" | sed 's/^ */[bench] wrk: /' >&2 || true ;;
    oha)
      requests=$(json_requests oha "$json") || die "could not read the request count from oha's JSON ($out)" ;;
    volley|volley-alt)
      [[ -s $json ]] || { tail -n 20 "$err" >&2 || true; die "volley wrote no JSON to $json"; }
      requests=$(json_requests volley "$json") || die "could not read summary.requests from volley's JSON" ;;
  esac
  [[ $requests =~ ^[0-9]+$ ]] || { cat "$out" >&2; die "could not find the request count in $tool's output"; }
  (( requests > 0 )) || die "$tool completed 0 requests in run $tag"

  local user sys rss
  user=$(tv_field "$tv" "User time (seconds)")
  sys=$(tv_field "$tv" "System time (seconds)")
  rss=$(tv_field "$tv" "Maximum resident set size (kbytes)")
  [[ -n $user && -n $sys && -n $rss ]] || { cat "$tv" >&2; die "could not parse /usr/bin/time -v output"; }

  awk -v r="$round" -v t="$tool" -v n="$requests" -v s="$secs" -v u="$user" -v y="$sys" -v k="$rss" \
      -v hz="$hz" -v b="$((busy1 - busy0))" -v g="$((ngx1 - ngx0))" '
    BEGIN {
      bg = (b - g) / hz - u - y; if (bg < 0) bg = 0
      printf "%s\t%s\t%d\t%d\t%.1f\t%.2f\t%.2f\t%.3f\t%d\t%.2f\t%.2f\n", r, t, n, s, n / s, u, y, (u + y) / n * 1e6, k, g / hz, bg
    }' >> "$rows"
}

print_rows() { # filter (awk condition on $1 = round)
  awk -F'\t' -v want="$1" '
    NR == 1 { next }
    $1 == want {
      if (!hdr++) printf "  %-10s %12s %12s %8s %8s %12s %10s %8s %6s\n", "tool", "requests", "req/s", "user_s", "sys_s", "cpu_us/req", "rss_MiB", "nginx_s", "bg_s"
      printf "  %-10s %12d %12.0f %8.2f %8.2f %12.3f %10.1f %8.2f %6.2f\n", $2, $3, $5, $6, $7, $8, $9 / 1024, $10, $11
    }' "$rows"
}

versions() {
  local t
  echo "nginx:  $("$NGINX" -v 2>&1 | sed 's/^nginx version: //')  (CPU $SERVER_CPU, 127.0.0.1:$PORT)"
  for t in "${tools[@]}"; do
    case $t in
      wrk) echo "wrk:    $("$WRK" -v 2>&1 | head -n 1 | awk '{print $2}')" ;;
      oha) echo "oha:    $("$OHA" --version 2>&1 | head -n 1)  (args: ${oha_args[*]})" ;;
      volley) echo "volley: $("$VOLLEY" --version 2>&1 | head -n 1)  ($VOLLEY${VOLLEY_ARGS:+, extra args: $VOLLEY_ARGS})" ;;
      volley-alt) echo "volley-alt: the same volley with $VOLLEY_ALT_ARGS" ;;
    esac
  done
}

# ------------------------------------------------------------------- modes --

echo "volley bench  $(date -u '+%Y-%m-%d %H:%M:%S UTC')  $(uname -sr)  $(nproc) CPUs"
versions
if [[ $MODE == rss-drift ]]; then
  echo "mode: rss-drift  volley alone, $CONNECTIONS connections, ${DRIFT_SHORT}s then ${DRIFT_LONG}s, generator on CPU $CLIENT_CPU"
  run_one volley "$DRIFT_SHORT" "drift-${DRIFT_SHORT}s" short
  sleep "$COOLDOWN"
  run_one volley "$DRIFT_LONG" "drift-${DRIFT_LONG}s" long
  echo
  echo "short (${DRIFT_SHORT}s):"; print_rows short
  echo "long (${DRIFT_LONG}s):";  print_rows long
  [[ -z $RESULTS ]] || cp "$rows" "$RESULTS"
  echo
  python3 - "$rows" "$DRIFT_TOLERANCE" "$DRIFT_SHORT" "$DRIFT_LONG" <<'PY'
import csv, sys
rows = {r["round"]: r for r in csv.DictReader(open(sys.argv[1]), delimiter="\t")}
tol, s, l = float(sys.argv[2]), sys.argv[3], sys.argv[4]
a, b = int(rows["short"]["rss_kib"]), int(rows["long"]["rss_kib"])
ratio = b / a
ok = abs(ratio - 1) <= tol
print(f"peak RSS {s}s: {a / 1024:.1f} MiB   {l}s: {b / 1024:.1f} MiB   ratio {l}s/{s}s: {ratio:.3f}")
print(f"rss-drift: {'PASS' if ok else 'FAIL'} (acceptance: within {tol * 100:g} %)")
sys.exit(0 if ok else 1)
PY
  exit $?
fi

echo "mode: compare  ${tools[*]}  x $ROUNDS rounds, $CONNECTIONS connections, ${DURATION}s each, generator on CPU $CLIENT_CPU"
echo "(req/s = requests / ${DURATION}s; cpu_us/req = (user+sys) / requests; rss = peak RSS from /usr/bin/time -v;"
echo " nginx_s = nginx CPU s; bg_s = CPU s other processes took on CPUs $SERVER_CPU,$CLIENT_CPU during the run: keep it near 0)"
for (( r = 1; r <= ROUNDS; r++ )); do
  for t in "${tools[@]}"; do
    run_one "$t" "$DURATION" "r$r-$t" "$r"
    sleep "$COOLDOWN"
  done
  echo
  echo "round $r/$ROUNDS:"
  print_rows "$r"
done
[[ -z $RESULTS ]] || { cp "$rows" "$RESULTS"; note "raw rows written to $RESULTS"; }

echo
echo "median over $ROUNDS round(s):"
python3 - "$rows" "${tools[@]}" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
tools = sys.argv[2:]
med = {}
print(f"  {'tool':<10} {'req/s':>12} {'cpu_us/req':>12} {'rss_MiB':>10} {'cpu vs wrk':>11} {'bg_s':>6}")
for t in tools:
    rs = [r for r in rows if r["tool"] == t]
    med[t] = (statistics.median(float(r["req_per_s"]) for r in rs),
              statistics.median(float(r["cpu_us_per_req"]) for r in rs),
              statistics.median(int(r["rss_kib"]) for r in rs) / 1024,
              statistics.median(float(r["bg_s"]) for r in rs))
for t in tools:
    rps, cpu, rss, bg = med[t]
    vs = f"{cpu / med['wrk'][1]:.2f}x" if "wrk" in med else "-"
    print(f"  {t:<10} {rps:>12.0f} {cpu:>12.3f} {rss:>10.1f} {vs:>11} {bg:>6.2f}")
if "volley" in med and "volley-alt" in med:
    ratio = med["volley-alt"][1] / med["volley"][1]
    print(f"volley-alt/volley CPU us per request (medians): {ratio:.3f} ({(ratio - 1) * 100:+.1f} %)")
if "volley" in med and "wrk" in med:
    print(f"volley/wrk CPU us per request (medians): {med['volley'][1] / med['wrk'][1]:.3f}")
else:
    print("volley/wrk CPU us per request: n/a (needs both volley and wrk)")
# Other processes on the pinned CPUs skew every figure: flag it.
noisy = [r for r in rows if float(r["bg_s"]) > 0.05 * 2 * float(r["seconds"])]
if noisy:
    worst = max(float(r["bg_s"]) / (2 * float(r["seconds"])) for r in noisy)
    print(f"warning: in {len(noisy)} of {len(rows)} runs other processes took > 5 % of the two pinned CPUs "
          f"(worst {worst * 100:.0f} %); the machine was not quiet, treat these figures with care")
PY
