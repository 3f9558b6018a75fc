#!/usr/bin/env bash
# Remakes the README's pictures from real runs against the built-in target (`volley serve` on an
# ephemeral 127.0.0.1 port, started and stopped here):
#
#   docs/live.png     the live terminal view of run A, captured under tmux (132×42) 9 s into it,
#                     rendered to HTML by aha and to PNG by headless Chromium;
#   docs/report.png   report.html of the same run A, as headless Chromium renders it;
#   docs/compare.png  the comparison report (`volley compare --format html`) of two quick-mode
#                     runs, B (/delay?ms=2) against C (/delay?ms=3), 500 req/s for 10 s each.
#
# Run A is examples/002-ladder.toml (a smoke scenario, then a VU ladder of 4 phases; 15 s).
# Needs tmux, aha, chromium and pngquant (installed with apt-get when missing, as root).
#
#   docs/make-screenshots.sh                  # uses target/release/volley (built if missing)
#   VOLLEY=target/ci/volley docs/make-screenshots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
volley=${VOLLEY:-target/release/volley}
if [[ ! -x $volley ]]; then
    cargo build --release
fi
volley=$(realpath "$volley")

missing=()
for tool in tmux aha chromium pngquant; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ((${#missing[@]})); then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi

work=$(mktemp -d)
serve_pid=
cleanup() {
    tmux -S "$work/tmux.sock" kill-server 2>/dev/null || true
    [[ -n $serve_pid ]] && kill "$serve_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# The built-in target, on a port of its choosing.
"$volley" serve --port 0 >"$work/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do
    grep -q 'listening on' "$work/serve.log" && break
    sleep 0.1
done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.log" | head -1)
[[ -n $url ]] || { cat "$work/serve.log"; exit 1; }
echo "target: $url"

# Headless Chromium: `shot PAGE PNG WIDTH HEIGHT`, then made smaller with pngquant.
shot() {
    chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$work/chromium" --screenshot="$2" --window-size="$3,$4" \
        "file://$1" >/dev/null 2>&1
    pngquant --force --quality 60-90 --output "$2" "$2"
    echo "$2: $(($(stat -c %s "$2") / 1024)) KiB"
}

# Run A in tmux, its live view captured 9 s in (phase 2 of the ladder).
tmux -S "$work/tmux.sock" -f /dev/null new-session -d -s shot -x 132 -y 42 \
    "cd $root && env -u CI TERM=xterm-256color $volley run examples/002-ladder.toml \
     --set target.base_url=$url --threads 1 --out $work/a; echo \$? > $work/a.exit; sleep 600"
for _ in $(seq 300); do
    tmux -S "$work/tmux.sock" capture-pane -p -t shot | grep -q '9\.[0-9]s / 15\.0s' && break
    sleep 0.1
done
tmux -S "$work/tmux.sock" capture-pane -e -p -t shot >"$work/live.ansi"
for _ in $(seq 600); do
    [[ -f $work/a.exit ]] && break
    sleep 0.1
done
[[ -f $work/a.exit ]] || { echo "run A did not finish"; exit 1; }
echo "run A exited with $(cat "$work/a.exit")"
run_a=$(dirname "$(ls "$work"/a/*/run.json)")

aha --black --title "volley: live view" <"$work/live.ansi" |
    sed 's|<pre>|<pre style="font-family: \x27DejaVu Sans Mono\x27, monospace; font-size: 13px; line-height: 1.0; margin: 8px">|' \
        >"$work/live.html"
shot "$work/live.html" "$root/docs/live.png" 1060 570
shot "$run_a/report.html" "$root/docs/report.png" 1280 1700

# Runs B and C, and their comparison.
for run in b:2 c:3; do
    name=${run%%:*} delay=${run##*:}
    "$volley" "$url/delay?ms=$delay" --rate 500 -d 10s --threads 1 -q --no-tui \
        --out "$work/$name" --json "$work/$name.json"
done
"$volley" compare "$work/b.json" "$work/c.json" --labels "delay 2 ms,delay 3 ms" --format html \
    -o "$work/compare.html"
shot "$work/compare.html" "$root/docs/compare.png" 1280 1500
