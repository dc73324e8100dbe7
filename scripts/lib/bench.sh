# shellcheck shell=bash
# Helpers shared by the sample-apiserver wrk benchmarks (scripts/bench-sample-apiserver,
# scripts/bench-custom-resources). Sourced, not run. The caller sets, before sourcing:
#
#   ROOT   the repository root
#   WORK   a scratch directory (removed by the caller)
#   ADDR   host:port the server listens on
#
# and gets: log, bench_setup (wrk, python3 with cbor2, BIN), start_server/stop_server
# (SERVER_PID), cbor_body, write_lua (post.lua and get.lua in WORK, each printing one RESULT
# line), cpu_ticks.

BENCH_NAME="$(basename "$0")"

log() { printf '%s: %s\n' "$BENCH_NAME" "$*" >&2; }

# wrk (Debian package) if missing; python3 with cbor2 (the project's venv,
# scripts/install-test-deps) first on PATH; BIN, the release binary (built unless
# SAMPLE_APISERVER_BIN names one already built).
bench_setup() {
    if ! command -v wrk >/dev/null; then
        log "installing wrk"
        if [ "$(id -u)" = 0 ]; then apt-get install -y wrk >/dev/null; else sudo apt-get install -y wrk >/dev/null; fi
    fi
    PATH="$ROOT/target/test-deps/bin:$PATH"
    python3 -c 'import cbor2' 2>/dev/null || "$ROOT/scripts/install-test-deps"
    BIN="${SAMPLE_APISERVER_BIN:-}"
    if [ -z "$BIN" ]; then
        log "building the release binary"
        (cd "$ROOT" && cargo build --release -q -p sample-apiserver)
        BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/sample-apiserver"
    fi
}

# Starts "$BIN" on ADDR over a fresh data directory in WORK, with extra arguments "$@";
# returns once it prints that it listens.
start_server() {
    rm -rf "$WORK/data"
    # Emptied first: the previous server's "listening" must not count for this one.
    : >"$WORK/server.out"
    RUST_LOG=warn "$BIN" --listen "$ADDR" --data-dir "$WORK/data" "$@" >"$WORK/server.out" 2>"$WORK/server.err" &
    SERVER_PID=$!
    for _ in $(seq 100); do
        grep -q listening "$WORK/server.out" 2>/dev/null && return 0
        sleep 0.05
    done
    log "server did not start"; cat "$WORK/server.err" >&2; exit 1
}
stop_server() { kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; }

# The server's user + system CPU time so far, in clock ticks (/proc/PID/stat fields 14, 15).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }

# cbor_body IN.json OUT.cbor: the same object as Kubernetes' CBOR (self-described, text as
# byte strings, canonical key order).
cbor_body() {
    python3 - "$1" "$2" <<'EOF'
import json, sys, cbor2
obj = json.load(open(sys.argv[1]))
def b(v):
    if isinstance(v, str): return v.encode()
    if isinstance(v, dict): return {b(k): b(x) for k, x in v.items()}
    if isinstance(v, list): return [b(x) for x in v]
    return v
open(sys.argv[2], "wb").write(b"\xd9\xd9\xf7" + cbor2.dumps(b(obj), canonical=True))
EOF
}

# WORK/post.lua (POST of BENCH_FILE to BENCH_PATH as BENCH_CTYPE, answer in the same) and
# WORK/get.lua (GET with Accept: BENCH_ACCEPT); both end with
# "RESULT requests req/s p50_ms p99_ms non2xx".
write_lua() {
    local done_fn='done = function(summary, latency, requests)
  io.write(string.format("RESULT %d %.1f %.3f %.3f %d\n", summary.requests,
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, summary.errors.status))
end'
    cat >"$WORK/post.lua" <<EOF
local path, ctype, file = os.getenv("BENCH_PATH"), os.getenv("BENCH_CTYPE"), os.getenv("BENCH_FILE")
local f = io.open(file, "rb"); local body = f:read("*a"); f:close()
wrk.method = "POST"; wrk.body = body
wrk.headers["Content-Type"] = ctype
wrk.headers["Accept"] = ctype
request = function() return wrk.format(nil, path) end
$done_fn
EOF
    cat >"$WORK/get.lua" <<EOF
wrk.headers["Accept"] = os.getenv("BENCH_ACCEPT")
$done_fn
EOF
}
