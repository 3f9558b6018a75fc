#!/usr/bin/env bash
# bench/live_view.sh — what the live terminal view costs: CPU per request of the same closed-model
# run with the live view (stderr a terminal: a tmux pane) and with --no-tui (the one-line
# progress, same pane), alternating view / no-tui for ROUNDS rounds, against a private nginx
# (bench/nginx.conf, one worker) pinned to SERVER_CPU, volley pinned to CLIENT_CPU.
#
#   VOLLEY=target/release/volley ROUNDS=5 DURATION=10 bench/live_view.sh
#
# CPU = user + sys of the volley process (every thread, the view's included; /usr/bin/time),
# requests = summary.requests of its run.json. Prints one line per run, then the median
# µs/request of each and view / no-tui. Acceptance (issue 15): within 2 %. Needs tmux and nginx.
# Only meaningful on a quiet machine: look at the load printed before and after.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
BENCH_TAG=live_view
# shellcheck source=bench/common.sh
source "$here/common.sh"

VOLLEY=${VOLLEY:-$repo/target/release/volley}
ROUNDS=${ROUNDS:-5}
DURATION=$(secs_of "${DURATION:-10}" DURATION)
CONNECTIONS=${CONNECTIONS:-64}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
NGINX=${NGINX:-nginx}
posint "$ROUNDS" ROUNDS
posint "$CONNECTIONS" CONNECTIONS
[[ -x $VOLLEY ]] || die "no volley binary at $VOLLEY (cargo build --release, or set VOLLEY)"
command -v tmux >/dev/null || die "tmux is not installed (apt-get install -y tmux)"
command -v "$NGINX" >/dev/null || die "nginx is not installed (apt-get install -y nginx)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is not installed (apt-get install -y time)"

tmp=$(mktemp -d)
nginx_pid=
socket=$tmp/tmux.sock
cleanup() {
  tmux -S "$socket" kill-server 2>/dev/null || true
  nginx_stop
  rm -rf "$tmp"
}
trap cleanup EXIT

port=$(free_port)
nginx_render "$here/nginx.conf" "$tmp/nginx" "$port"
nginx_start "$NGINX" "$tmp/nginx" "$SERVER_CPU" "$port"
tmux -S "$socket" -f /dev/null new-session -d -s bench -x 132 -y 42

# run SIDE ROUND: one volley run in the pane; waits for it through a tmux channel.
run() {
  local side=$1 r=$2 flag=
  [[ $side == no-tui ]] && flag=--no-tui
  local json=$tmp/$side-$r.json cpu=$tmp/$side-$r.cpu
  # CI is removed from volley's environment: the view never starts under CI.
  tmux -S "$socket" send-keys -t bench \
    "env -u CI taskset -c $CLIENT_CPU /usr/bin/time -o $cpu -f '%U %S' $VOLLEY http://127.0.0.1:$port/ -c $CONNECTIONS -d ${DURATION}s --threads 1 --json $json $flag; tmux -S $socket wait-for -S done-$side-$r" Enter
  # The view is really on the screen in the view runs (its footer), and not in the no-tui runs;
  # the pane is read every 100 ms for the first 2 s at most (the view is up well before).
  local seen=no _
  for _ in $(seq 20); do
    sleep 0.1
    if tmux -S "$socket" capture-pane -p -t bench | grep -q 'q or Ctrl-C'; then seen=yes; break; fi
  done
  [[ $side == view && $seen == no ]] && die "round $r: the live view never appeared in the pane"
  [[ $side == no-tui && $seen == yes ]] && die "round $r: --no-tui showed the live view"
  timeout $((DURATION + 60)) tmux -S "$socket" wait-for "done-$side-$r" \
    || die "the $side run of round $r did not finish within $((DURATION + 60)) s"
  local requests
  requests=$(volley_requests "$json") || die "the $side run of round $r wrote no record"
  read -r user sys < "$cpu"
  python3 -c "import sys; u,s,n=map(float,sys.argv[1:]); print(f'{(u+s)*1e6/n:.3f}')" \
    "$user" "$sys" "$requests" >> "$tmp/$side.cpu"
  printf '%-7s round %d: %d requests, cpu %s + %s s, %s µs/request\n' \
    "$side" "$r" "$requests" "$user" "$sys" "$(tail -n1 "$tmp/$side.cpu")"
}

printf 'load before: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= ROUNDS; r++)); do
  if (( r % 2 )); then run view "$r"; run no-tui "$r"; else run no-tui "$r"; run view "$r"; fi
done
printf 'load after:  %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp/view.cpu" "$tmp/no-tui.cpu" <<'EOF'
import statistics, sys
v = [float(x) for x in open(sys.argv[1]).read().split()]
p = [float(x) for x in open(sys.argv[2]).read().split()]
mv, mp = statistics.median(v), statistics.median(p)
print(f"median cpu_us/req  view {mv:.3f}  no-tui {mp:.3f}  view/no-tui {mv / mp:.4f} ({(mv / mp - 1) * 100:+.1f} %)")
EOF
