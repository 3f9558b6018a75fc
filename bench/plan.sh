#!/usr/bin/env bash
# bench/plan.sh — what templates and extraction cost volley per request.
#
# Starts the built-in target (`volley serve --threads 1`) on 127.0.0.1, pinned
# to one CPU, and drives it with volley (--threads 1) pinned to another CPU,
# in three cases, interleaved A B C A B C ... for ROUNDS rounds:
#   A  plan, one scenario, constant-vus VUS for DURATION, sequential flow:
#        POST /echo  json = { id = "{{ counter() }}", vu = "{{ vu }}" },
#                    extract id = { json = "/id" }
#        GET  /?id={{ id }}
#      (two templated steps, one extraction)
#   B  the same two steps with nothing templated and no extraction:
#        POST /echo  json = { id = 123456, vu = 32 }   (same size as A's body)
#        GET  /?id=123456
#   C  quick mode for reference: volley URL/ -c VUS -d DURATION (GET /)
# Each run is wrapped in /usr/bin/time -v (user+sys CPU seconds, peak RSS);
# requests = summary.requests of the run record (--json). Prints a table per
# round, the medians, and the ratio A/B of CPU us per request; exit code 1
# when that ratio is above ACCEPT_RATIO (issue 3 acceptance: <= 1.3).
#
# See bench/README.md. Knobs (environment variables):
#   DURATION=10   ROUNDS=3   VUS=64   CASES="A B C"   ACCEPT_RATIO=1.3
#   VOLLEY=path   BUILD=auto|always|never   PORT=(free port)
#   SERVER_CPU=1  CLIENT_CPU=0   COOLDOWN=1   RESULTS=file.tsv   KEEP_TMP=1
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
VUS=${VUS:-64}
CASES=${CASES:-A B C}
ACCEPT_RATIO=${ACCEPT_RATIO:-1.3}
VOLLEY=${VOLLEY:-$repo/target/release/volley}
BUILD=${BUILD:-auto}
PORT=${PORT:-}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
COOLDOWN=${COOLDOWN:-1}
RESULTS=${RESULTS:-}
KEEP_TMP=${KEEP_TMP:-0}

default_volley="$repo/target/release/volley"

note() { printf '[plan-bench] %s\n' "$*" >&2; }
die() { printf '[plan-bench] error: %s\n' "$*" >&2; exit 1; }

case ${1:-} in
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) die "no arguments expected (got '$1'); configure with environment variables, see --help" ;;
esac

# ---------------------------------------------------------------- arguments --

secs_of() {
  local v=$1 name=$2
  [[ $v =~ ^([0-9]+)s?$ ]] || die "$name must be whole seconds like 10 or 10s (got '$v')"
  (( 10#${BASH_REMATCH[1]} > 0 )) || die "$name must be > 0"
  printf '%s' "$((10#${BASH_REMATCH[1]}))"
}
posint() {
  [[ $1 =~ ^[0-9]+$ ]] && (( 10#$1 > 0 )) || die "$2 must be a positive integer (got '$1')"
}
DURATION=$(secs_of "$DURATION" DURATION)
posint "$ROUNDS" ROUNDS
posint "$VUS" VUS
[[ $COOLDOWN =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "COOLDOWN must be a number of seconds (got '$COOLDOWN')"
[[ $ACCEPT_RATIO =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "ACCEPT_RATIO must be a number like 1.3 (got '$ACCEPT_RATIO')"
case $BUILD in auto|always|never) ;; *) die "BUILD must be auto, always or never (got '$BUILD')" ;; esac
[[ -z $PORT || $PORT =~ ^[0-9]+$ ]] || die "PORT must be a number (got '$PORT')"
read -r -a cases <<< "$CASES"
(( ${#cases[@]} > 0 )) || die "CASES is empty"
for c in "${cases[@]}"; do
  case $c in A|B|C) ;; *) die "unknown case '$c' in CASES (known: A B C)" ;; esac
done

# ------------------------------------------------------------ prerequisites --

[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install -y time)"
command -v taskset >/dev/null || die "taskset not found (apt-get install -y util-linux)"
command -v timeout >/dev/null || die "timeout not found (coreutils)"
command -v python3 >/dev/null || die "python3 not found; it parses the run records and computes medians"
for cpu in "$SERVER_CPU" "$CLIENT_CPU"; do
  taskset -c "$cpu" true 2>/dev/null || die "cannot pin to CPU $cpu (this machine has $(nproc) usable CPU(s)); set SERVER_CPU / CLIENT_CPU"
done
[[ $SERVER_CPU != "$CLIENT_CPU" ]] || note "warning: server and generator share CPU $CLIENT_CPU; numbers will be distorted"

if [[ $BUILD == always || ( $BUILD == auto && ! -x $VOLLEY && $VOLLEY == "$default_volley" ) ]]; then
  command -v cargo >/dev/null || die "cargo not found; cannot build volley"
  note "building volley: cargo build --release (in $repo)"
  (cd "$repo" && cargo build --release) >&2 || die "cargo build --release failed"
fi
[[ -x $VOLLEY ]] || die "volley binary not found at $VOLLEY"
"$VOLLEY" --help 2>&1 | grep -q -- '--json' || die "$VOLLEY does not list --json in its --help (an unfinished build?)"

# ------------------------------------------------------- scratch + the target --

tmp=$(mktemp -d "${TMPDIR:-/tmp}/volley-plan-bench.XXXXXX")
server_pid=
tool_pid=
cleanup() {
  local rc=$?
  set +e
  if [[ -n $tool_pid ]] && kill -0 "$tool_pid" 2>/dev/null; then
    kill -TERM "$tool_pid" 2>/dev/null   # timeout passes it on to volley
    wait "$tool_pid" 2>/dev/null
  fi
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$server_pid" 2>/dev/null && kill -KILL "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  if [[ $KEEP_TMP == 1 ]]; then note "scratch dir kept: $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_answers() {
  timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}
port_bindable() {
  python3 -c 'import socket, sys; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null
}
http_ok() {
  local head
  head=$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 && printf 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' >&3 && head -c 12 <&3" 2>/dev/null) || return 1
  [[ $head == "HTTP/1.1 200" ]]
}

if [[ -z $PORT ]]; then
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
if port_answers "$PORT"; then
  die "something already listens on 127.0.0.1:$PORT; pick another PORT (this script only loads its own target)"
fi
port_bindable "$PORT" || die "127.0.0.1:$PORT cannot be bound (in use?); pick another PORT"

taskset -c "$SERVER_CPU" "$VOLLEY" serve --bind 127.0.0.1 --port "$PORT" --threads 1 \
  >"$tmp/server.log" 2>&1 </dev/null &
server_pid=$!
ready=0
for _ in $(seq 100); do     # up to ~10 s
  if ! kill -0 "$server_pid" 2>/dev/null; then
    cat "$tmp/server.log" >&2 || true
    server_pid=
    die "volley serve exited during startup (log above)"
  fi
  if http_ok "$PORT"; then ready=1; break; fi
  sleep 0.1
done
(( ready )) || { cat "$tmp/server.log" >&2 || true; die "volley serve did not answer on 127.0.0.1:$PORT within 10 s"; }
BASE="http://127.0.0.1:$PORT"

# ------------------------------------------------------------------- plans --

# A: two templated steps, one extraction.
cat > "$tmp/plan-a.toml" <<EOF
name = "plan-bench-templated"

[target]
base_url = "$BASE"

[[scenario]]
name = "templated"
[scenario.load]
profile = "constant-vus"
vus = $VUS
duration = "${DURATION}s"

[[scenario.step]]
name = "post_echo"
method = "POST"
path = "/echo"
json = { id = "{{ counter() }}", vu = "{{ vu }}" }
[scenario.step.extract]
id = { json = "/id" }

[[scenario.step]]
name = "get_root"
path = "/?id={{ id }}"
EOF

# B: the same two requests, static. A renders {"id":N,"vu":V} (counter() and
# vu come out as JSON numbers); N has 6 digits for most of a 10 s run and V
# 2, so B's body {"id":123456,"vu":32} is the same size.
cat > "$tmp/plan-b.toml" <<EOF
name = "plan-bench-static"

[target]
base_url = "$BASE"

[[scenario]]
name = "static"
[scenario.load]
profile = "constant-vus"
vus = $VUS
duration = "${DURATION}s"

[[scenario.step]]
name = "post_echo"
method = "POST"
path = "/echo"
json = { id = 123456, vu = 32 }

[[scenario.step]]
name = "get_root"
path = "/?id=123456"
EOF

for p in a b; do
  "$VOLLEY" check "$tmp/plan-$p.toml" >"$tmp/check-$p.txt" 2>&1 \
    || { cat "$tmp/check-$p.txt" >&2; die "volley check rejected plan $p (above)"; }
done

# ------------------------------------------------------------- measurement --

tv_field() { awk -v k="$2" 'index($0, k) { sub(/.*: /, ""); print; exit }' "$1"; }

hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
cpus_busy() {
  awk -v a="cpu$SERVER_CPU" -v b="cpu$CLIENT_CPU" '$1 == a || $1 == b { t += $2 + $3 + $4 } END { print t + 0 }' /proc/stat
}
server_busy() { # utime + stime of the target (all its threads)
  local f
  f=$(sed 's/.*) //' "/proc/$server_pid/stat" 2>/dev/null) || { echo 0; return; }
  set -- $f
  echo $(( ${12} + ${13} ))
}

rows="$tmp/results.tsv"
printf 'round\tcase\trequests\terrors\tseconds\treq_per_s\tuser_s\tsys_s\tcpu_us_per_req\trss_kib\tserver_s\tbg_s\n' > "$rows"

# run_one CASE ROUND -> appends a row to $rows; exits on failure
run_one() {
  local c=$1 round=$2 tag="r$2-$1"
  local out="$tmp/$tag.out" err="$tmp/$tag.err" tv="$tmp/$tag.time" json="$tmp/$tag.json"
  local -a cmd
  case $c in
    A) cmd=("$VOLLEY" run "$tmp/plan-a.toml" --set "target.base_url=$BASE" --threads 1 -q --json "$json" --out "$tmp/out") ;;
    B) cmd=("$VOLLEY" run "$tmp/plan-b.toml" --set "target.base_url=$BASE" --threads 1 -q --json "$json" --out "$tmp/out") ;;
    C) cmd=("$VOLLEY" "$BASE/" -c "$VUS" -d "${DURATION}s" --threads 1 -q --json "$json" --out "$tmp/out") ;;
  esac
  note "run $tag: taskset -c $CLIENT_CPU ${cmd[*]}"
  local rc=0 busy0 srv0 busy1 srv1
  busy0=$(cpus_busy); srv0=$(server_busy)
  timeout -k 5 "$((DURATION * 2 + 30))" \
    /usr/bin/time -v -o "$tv" taskset -c "$CLIENT_CPU" "${cmd[@]}" >"$out" 2>"$err" </dev/null &
  tool_pid=$!
  wait "$tool_pid" || rc=$?
  tool_pid=
  busy1=$(cpus_busy); srv1=$(server_busy)
  if (( rc != 0 )); then
    { echo "--- stdout (tail) ---"; tail -n 20 "$out"; echo "--- stderr (tail) ---"; tail -n 20 "$err"; } >&2 || true
    (( rc == 124 )) && die "run $tag timed out after $((DURATION * 2 + 30)) s"
    die "run $tag failed with exit code $rc"
  fi
  kill -0 "$server_pid" 2>/dev/null || { server_pid=; die "volley serve died during run $tag"; }
  [[ -s $json ]] || { tail -n 20 "$err" >&2 || true; die "run $tag wrote no run record to $json"; }

  local counts requests errors
  counts=$(python3 - "$json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
bad = {k: v for k, v in (s.get("status") or {}).items() if not k.startswith("2")}
if bad: print(f"non-2xx statuses: {bad}", file=sys.stderr)
if s.get("errors"): print(f"errors: {s['errors']} {s.get('errors_by_kind') or ''}", file=sys.stderr)
print(int(s["requests"]), int(s.get("errors") or 0) + sum(bad.values()))
PY
  ) || die "could not read summary.requests from $json"
  read -r requests errors <<< "$counts"
  (( requests > 0 )) || die "run $tag completed 0 requests"
  # An error in A usually means the extraction failed (step 2 then cannot be built).
  (( errors == 0 )) || die "run $tag had $errors failed or non-2xx requests (of $requests); the comparison needs clean runs"

  local user sys rss
  user=$(tv_field "$tv" "User time (seconds)")
  sys=$(tv_field "$tv" "System time (seconds)")
  rss=$(tv_field "$tv" "Maximum resident set size (kbytes)")
  [[ -n $user && -n $sys && -n $rss ]] || { cat "$tv" >&2; die "could not parse /usr/bin/time -v output"; }

  awk -v r="$round" -v c="$c" -v n="$requests" -v e="$errors" -v s="$DURATION" -v u="$user" -v y="$sys" -v k="$rss" \
      -v hz="$hz" -v b="$((busy1 - busy0))" -v g="$((srv1 - srv0))" '
    BEGIN {
      bg = (b - g) / hz - u - y; if (bg < 0) bg = 0
      printf "%s\t%s\t%d\t%d\t%d\t%.1f\t%.2f\t%.2f\t%.3f\t%d\t%.2f\t%.2f\n", r, c, n, e, s, n / s, u, y, (u + y) / n * 1e6, k, g / hz, bg
    }' >> "$rows"
}

print_rows() {
  awk -F'\t' -v want="$1" '
    NR == 1 { next }
    $1 == want {
      if (!hdr++) printf "  %-4s %12s %12s %8s %8s %12s %10s %9s %6s\n", "case", "requests", "req/s", "user_s", "sys_s", "cpu_us/req", "rss_MiB", "server_s", "bg_s"
      printf "  %-4s %12d %12.0f %8.2f %8.2f %12.3f %10.1f %9.2f %6.2f\n", $2, $3, $6, $7, $8, $9, $10 / 1024, $11, $12
    }' "$rows"
}

echo "volley plan bench  $(date -u '+%Y-%m-%d %H:%M:%S UTC')  $(uname -sr)  $(nproc) CPUs"
echo "volley: $("$VOLLEY" --version 2>&1 | head -n 1)  ($VOLLEY)"
echo "target: volley serve --threads 1  (CPU $SERVER_CPU, $BASE)"
echo "cases: ${cases[*]}  x $ROUNDS rounds, $VUS VUs/connections, ${DURATION}s each, generator --threads 1 on CPU $CLIENT_CPU"
echo "  A = plan: POST /echo json={id=\"{{ counter() }}\", vu=\"{{ vu }}\"} + extract id; GET /?id={{ id }}"
echo "  B = plan: POST /echo json={id=123456, vu=32}; GET /?id=123456 (static)"
echo "  C = quick mode: GET /"
echo "(cpu_us/req = (user+sys) / summary.requests; rss = peak RSS from /usr/bin/time -v;"
echo " server_s = target CPU s; bg_s = CPU s other processes took on CPUs $SERVER_CPU,$CLIENT_CPU during the run: keep it near 0)"
for (( r = 1; r <= ROUNDS; r++ )); do
  for c in "${cases[@]}"; do
    run_one "$c" "$r"
    sleep "$COOLDOWN"
  done
  echo
  echo "round $r/$ROUNDS:"
  print_rows "$r"
done
[[ -z $RESULTS ]] || { cp "$rows" "$RESULTS"; note "raw rows written to $RESULTS"; }

echo
echo "median over $ROUNDS round(s):"
python3 - "$rows" "$ACCEPT_RATIO" "${cases[@]}" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
limit, cases = float(sys.argv[2]), sys.argv[3:]
med = {}
for c in cases:
    rs = [r for r in rows if r["case"] == c]
    med[c] = (statistics.median(float(r["req_per_s"]) for r in rs),
              statistics.median(float(r["cpu_us_per_req"]) for r in rs),
              statistics.median(int(r["rss_kib"]) for r in rs) / 1024,
              statistics.median(float(r["bg_s"]) for r in rs))
print(f"  {'case':<4} {'req/s':>12} {'cpu_us/req':>12} {'rss_MiB':>10} {'cpu vs B':>9} {'bg_s':>6}")
for c in cases:
    rps, cpu, rss, bg = med[c]
    vs = f"{cpu / med['B'][1]:.2f}x" if "B" in med else "-"
    print(f"  {c:<4} {rps:>12.0f} {cpu:>12.3f} {rss:>10.1f} {vs:>9} {bg:>6.2f}")
noisy = [r for r in rows if float(r["bg_s"]) > 0.05 * 2 * float(r["seconds"])]
if noisy:
    worst = max(float(r["bg_s"]) / (2 * float(r["seconds"])) for r in noisy)
    print(f"warning: in {len(noisy)} of {len(rows)} runs other processes took > 5 % of the two pinned CPUs "
          f"(worst {worst * 100:.0f} %); the machine was not quiet, treat these figures with care")
if "A" in med and "B" in med:
    ratio = med["A"][1] / med["B"][1]
    ok = ratio <= limit
    print(f"A/B CPU us per request (medians): {ratio:.3f}")
    print(f"templates+extraction: {'PASS' if ok else 'FAIL'} (acceptance: A/B <= {limit:g})")
    sys.exit(0 if ok else 1)
print("A/B CPU us per request: n/a (needs cases A and B)")
PY
