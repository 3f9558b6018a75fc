# bench/common.sh — helpers shared by the bench scripts (sourced, not run).
#
# Provides: note/die, argument checks (secs_of, posint), CPU lists (cpu_list_expand,
# cpu_list_take), a private nginx rendered from bench/nginx.conf (nginx_render, nginx_start,
# nginx_stop), /usr/bin/time -v fields (tv_field), busy jiffies of CPUs and of a process tree
# (cpus_busy, tree_busy), and the request count of a volley record (volley_requests).
#
# The caller sets BENCH_TAG (the prefix of messages) and, for nginx, owns the variables
# nginx_pid and the scratch directory it passes in.

BENCH_TAG=${BENCH_TAG:-bench}

note() { printf '[%s] %s\n' "$BENCH_TAG" "$*" >&2; }
die() { printf '[%s] error: %s\n' "$BENCH_TAG" "$*" >&2; exit 1; }

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

# "0-3,6" -> "0 1 2 3 6"
cpu_list_expand() {
  local part out=() a b i
  IFS=, read -r -a parts <<< "$1"
  for part in "${parts[@]}"; do
    if [[ $part =~ ^([0-9]+)-([0-9]+)$ ]]; then
      a=${BASH_REMATCH[1]} b=${BASH_REMATCH[2]}
      for (( i = a; i <= b; i++ )); do out+=("$i"); done
    elif [[ $part =~ ^[0-9]+$ ]]; then
      out+=("$part")
    else
      die "bad CPU list '$1' (expected e.g. 0-3,6)"
    fi
  done
  echo "${out[*]}"
}

# The first N CPUs of a list, comma-separated for taskset: cpu_list_take 2 "4 5 6" -> "4,5"
cpu_list_take() {
  local n=$1; shift
  local -a cpus
  read -r -a cpus <<< "$*"
  (( n <= ${#cpus[@]} )) || die "asked for $n CPUs of a set of ${#cpus[@]} ($*)"
  local IFS=,
  echo "${cpus[*]:0:n}"
}

port_answers() { # port answers TCP at all?
  timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}
http_ok() { # nginx answers "200" on /
  local head
  head=$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 && printf 'GET / HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3 && head -c 12 <&3" 2>/dev/null) || return 1
  [[ $head == "HTTP/1.1 200" ]]
}
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# nginx_render SRC DIR PORT [WORKERS NOFILE CONNECTIONS BACKLOG]: renders bench/nginx.conf into
# DIR/nginx.conf with the port and, when given, the worker count, the workers' file limit, the
# connections per worker and the listen backlog. Dies when a setting is not where expected.
nginx_render() {
  local src=$1 dir=$2 port=$3 workers=${4:-1} nofile=${5:-4096} conns=${6:-1024} backlog=${7:-1024}
  mkdir -p "$dir/tmp"
  sed -e "s/__PORT__/$port/g" \
      -e "s/^worker_processes [0-9]*;/worker_processes $workers;/" \
      -e "s/^worker_rlimit_nofile [0-9]*;/worker_rlimit_nofile $nofile;/" \
      -e "s/worker_connections [0-9]*;/worker_connections $conns;/" \
      -e "s/backlog=[0-9]*/backlog=$backlog/" \
      "$src" > "$dir/nginx.conf"
  local want
  for want in "listen 127.0.0.1:$port backlog=$backlog" "worker_processes $workers;" \
              "worker_rlimit_nofile $nofile;" "worker_connections $conns;"; do
    grep -qF "$want" "$dir/nginx.conf" || die "could not render '$want' into $dir/nginx.conf from $src"
  done
}

# nginx_start NGINX DIR CPUS PORT: starts the rendered config pinned to CPUS (taskset list),
# sets nginx_pid, waits until it answers 200 on / (up to ~10 s).
nginx_start() {
  local bin=$1 dir=$2 cpus=$3 port=$4
  "$bin" -t -q -p "$dir" -e "$dir/tmp/error.log" -c "$dir/nginx.conf" || die "nginx rejected the config (see above)"
  taskset -c "$cpus" "$bin" -p "$dir" -e "$dir/tmp/error.log" -c "$dir/nginx.conf" \
    >"$dir/stdout.log" 2>&1 </dev/null &
  nginx_pid=$!
  local _
  for _ in $(seq 100); do
    if ! kill -0 "$nginx_pid" 2>/dev/null; then
      cat "$dir/stdout.log" "$dir/tmp/error.log" >&2 2>/dev/null || true
      nginx_pid=
      die "nginx exited during startup (log above)"
    fi
    if http_ok "$port"; then return 0; fi
    sleep 0.1
  done
  cat "$dir/tmp/error.log" >&2 2>/dev/null || true
  die "nginx did not answer on 127.0.0.1:$port within 10 s"
}

# Stops the nginx started by nginx_start, by PID (TERM, then KILL after 5 s).
nginx_stop() {
  [[ -n ${nginx_pid:-} ]] || return 0
  if kill -0 "$nginx_pid" 2>/dev/null; then
    kill -TERM "$nginx_pid" 2>/dev/null
    local _
    for _ in $(seq 50); do kill -0 "$nginx_pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$nginx_pid" 2>/dev/null && kill -KILL "$nginx_pid" 2>/dev/null
    wait "$nginx_pid" 2>/dev/null
  fi
  nginx_pid=
}

tv_field() { # file "Label" -> value after ": " (from /usr/bin/time -v)
  awk -v k="$2" 'index($0, k) { sub(/.*: /, ""); print; exit }' "$1"
}

# Busy jiffies (user+nice+system) of the CPUs listed (space-separated numbers).
cpus_busy() {
  awk -v list="$*" 'BEGIN { n = split(list, c, " "); for (i = 1; i <= n; i++) want["cpu" c[i]] = 1 }
    ($1 in want) { t += $2 + $3 + $4 } END { print t + 0 }' /proc/stat
}

# utime + stime jiffies of a process and its direct children (nginx: master + workers).
tree_busy() {
  local p t=0 f
  for p in "$1" $(pgrep -P "$1" 2>/dev/null || true); do
    f=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null) || continue
    set -- $f
    t=$(( t + ${12} + ${13} ))
  done
  echo "$t"
}

# The responses of a volley record (summary.requests); errors go to stderr as a note.
volley_requests() {
  python3 - "$1" <<'PY'
import json, sys
try:
    rec = json.load(open(sys.argv[1], encoding="utf-8"))
    summ = rec["summary"]
    print(int(summ["requests"]))
except (OSError, ValueError, KeyError, TypeError) as e:
    sys.exit(f"no summary.requests in {sys.argv[1]}: {e}")
if summ.get("errors"):
    print(f"volley errors: {summ['errors']}", file=sys.stderr)
PY
}

# serve_start DIR CPU [PORT [ARG…]]: starts `volley serve --threads 1 ARG…` ($VOLLEY) on
# 127.0.0.1, pinned to CPU, logging to DIR/serve.log; sets server_pid and port (a free one unless
# given, or given as ""). Dies when the port is taken (a bench loads only its own target) or the
# target does not start.
serve_start() {
  local dir=$1 cpu=$2
  port=${3:-$(free_port)}
  shift $(( $# < 3 ? $# : 3 ))
  port_answers "$port" && die "something already listens on 127.0.0.1:$port; pick another PORT"
  taskset -c "$cpu" "$VOLLEY" serve --port "$port" --threads 1 "$@" >"$dir/serve.log" 2>&1 </dev/null &
  server_pid=$!
  for _ in $(seq 100); do
    grep -q 'listening on' "$dir/serve.log" 2>/dev/null && return 0
    kill -0 "$server_pid" 2>/dev/null || die "the target exited: $(cat "$dir/serve.log")"
    sleep 0.1
  done
  die "the target did not start listening: $(cat "$dir/serve.log")"
}

# stop_pids PID…: TERM and reap each that still runs (for the EXIT trap).
stop_pids() {
  local pid
  for pid in "$@"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
    fi
  done
}
