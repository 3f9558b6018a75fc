#!/usr/bin/env bash
# ws-crates: CPU per echoed WebSocket message, tokio-tungstenite vs fastwebsockets clients,
# against one tokio-tungstenite echo server (held constant). See README.md.
#
#   bench/ws-crates/run.sh            # build, then 3 rounds A B per shape
#   ROUNDS=5 PORT=18790 bench/ws-crates/run.sh
#
# Server pinned to CPU 1, clients to CPU 0 (taskset). Clients alternate A B A B.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/ws-crates-target}"
PORT="${PORT:-18790}"
ROUNDS="${ROUNDS:-3}"
RAW="${RAW:-/tmp/ws-crates-raw.txt}"
BIN="$CARGO_TARGET_DIR/release/ws-crates"
URL="ws://127.0.0.1:$PORT/"

(cd "$HERE" && cargo build --release -j 1 --quiet)

SERVER_PID=""
cleanup() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
}
trap cleanup EXIT

taskset -c 1 "$BIN" serve "$PORT" 2>/dev/null &
SERVER_PID=$!
for _ in $(seq 50); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
    sleep 0.1
done
kill -0 "$SERVER_PID"

: > "$RAW"
echo "# $(date -u +%FT%TZ) $(uname -r) loadavg: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$RAW"

# shape name, conns, messages, size
SHAPES=("small-echo 50 2000 64" "16KiB-echo 10 1000 16384")

for shape in "${SHAPES[@]}"; do
    read -r name conns msgs size <<<"$shape"
    # one warm-up per client (not recorded)
    for c in tungstenite fast; do
        taskset -c 0 "$BIN" client "$c" "$URL" "$conns" 100 "$size" >/dev/null
    done
    for r in $(seq "$ROUNDS"); do
        for c in tungstenite fast; do
            line=$(taskset -c 0 "$BIN" client "$c" "$URL" "$conns" "$msgs" "$size")
            echo "shape=$name round=$r $line" | tee -a "$RAW" >&2
        done
    done
done

echo "# loadavg after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$RAW"
echo
awk '
function kv(s,   a, i, p) { delete F; n = split(s, a, " "); for (i = 1; i <= n; i++) { p = index(a[i], "="); if (p) F[substr(a[i], 1, p - 1)] = substr(a[i], p + 1) } }
/^shape=/ {
    kv($0); k = F["shape"] SUBSEP F["round"]
    if (!(F["shape"] in seen)) { seen[F["shape"]] = 1; order[++ns] = F["shape"] }
    if (F["round"] > maxr) maxr = F["round"]
    c = F["client"]; cpu[k, c] = F["cpu_us_per_msg"]; rate[k, c] = F["msgs_per_s"]
    usr[k, c] = F["user_us_per_msg"]; sys[k, c] = F["sys_us_per_msg"]
}
END {
    printf "CPU us per message (round trip) = client user+sys over the echo phase / messages echoed;"
    printf " (user/sys) split in brackets.\n\n"
    printf "| shape | round | tungstenite CPU us/msg | fast CPU us/msg | CPU ratio fast/tung | tungstenite msgs/s | fast msgs/s | msgs/s ratio fast/tung |\n"
    printf "|---|---|---|---|---|---|---|---|\n"
    for (s = 1; s <= ns; s++) for (r = 1; r <= maxr; r++) {
        k = order[s] SUBSEP r
        if (!((k, "fast") in cpu) || !((k, "tungstenite") in cpu)) continue
        printf "| %s | %d | %.2f (%.2f/%.2f) | %.2f (%.2f/%.2f) | %.3f | %.0f | %.0f | %.3f |\n", order[s], r,
            cpu[k, "tungstenite"], usr[k, "tungstenite"], sys[k, "tungstenite"],
            cpu[k, "fast"], usr[k, "fast"], sys[k, "fast"],
            cpu[k, "fast"] / cpu[k, "tungstenite"],
            rate[k, "tungstenite"], rate[k, "fast"], rate[k, "fast"] / rate[k, "tungstenite"]
    }
}' "$RAW"
echo
echo "raw lines: $RAW"
