# shellcheck shell=bash
# Helpers shared by the callgrind profiles (scripts/profile-create, scripts/profile-request).
# Sourced, not run. Callgrind counts instructions exactly, where seconds on a shared machine do
# not. The caller sets ROOT and OUT (a scratch directory it owns) and gets:
#
#   profile_start BIN ARGS...   runs BIN under callgrind with collection off (PROFILE_PID),
#                               returns once it prints that it listens
#   profile_parts NAME...       names the parts the load dumped (`callgrind_control -i on`,
#                               the requests, `-i off`, `-d`), in order: OUT/NAME.callgrind
#   profile_stop                ends the server (its last profile part is not used)
#   profile_report FILE N WHAT TOP TITLE
#                               "TITLE: instructions in FILE, per WHAT" (N of them), then the
#                               TOP functions that take them (inclusive), per WHAT
#   profile_self FILE N WHAT TOP
#                               the TOP functions by their own instructions (exclusive), per
#                               WHAT: where deep async stacks hide the cost (allocation, copies)

command -v valgrind >/dev/null || { echo "needs valgrind" >&2; exit 1; }

profile_start() {
    local bin="$1"
    shift
    : >"$OUT/server.out"
    RUST_LOG=warn valgrind --tool=callgrind --instr-atstart=no \
        --callgrind-out-file="$OUT/callgrind.out" \
        "$bin" "$@" >"$OUT/server.out" 2>"$OUT/server.err" &
    PROFILE_PID=$!
    trap 'kill "$PROFILE_PID" 2>/dev/null || true' EXIT
    for _ in $(seq 600); do grep -q listening "$OUT/server.out" 2>/dev/null && break; sleep 0.1; done
    grep -q listening "$OUT/server.out" || { cat "$OUT/server.err" >&2; exit 1; }
}

# Callgrind writes each dump (callgrind_control -d) as OUT/callgrind.out.<part>, parts
# numbered from 1: they are renamed OUT/NAME.callgrind, one NAME per part in order.
profile_parts() {
    local part=1 name
    for name in "$@"; do
        mv "$OUT/callgrind.out.$part" "$OUT/$name.callgrind"
        part=$((part + 1))
    done
}

profile_stop() {
    # TERM, not INT: a background job of a script ignores SIGINT unless it handles it itself
    # (sample-apiserver does; the floor servers do not). Callgrind writes its profile either way.
    kill -TERM "$PROFILE_PID" 2>/dev/null || true
    wait "$PROFILE_PID" 2>/dev/null || true
    trap - EXIT
    rm -f "$OUT"/callgrind.out
}

# The total instructions of a profile part.
profile_total() {
    callgrind_annotate "$1" >"$1.annotate.txt" 2>/dev/null
    awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}' "$1.annotate.txt" | head -n 1
}

profile_report() {
    local file="$1" n="$2" what="$3" top="$4" title="$5" total
    # Annotated once into files: reading a pipe only partly (awk's exit, head) would end
    # callgrind_annotate with SIGPIPE, which pipefail turns into a silent exit.
    total="$(profile_total "$file")"
    callgrind_annotate --inclusive=yes --threshold=100 "$file" >"$file.inclusive.txt" 2>/dev/null
    echo "$title: $total instructions, $((total / n)) per $what"
    if [ "$top" -gt 0 ]; then
        echo
        grep -E '^ *[0-9,]+ \(' "$file.inclusive.txt" | sed -n "1,${top}p" \
            | awk -v n="$n" -v w="$what" '{c=$1; gsub(",", "", c); sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, ""); printf "%10d per %s  %s\n", c / n, w, $0}'
        echo
    fi
}

profile_self() {
    local file="$1" n="$2" what="$3" top="$4"
    [ -f "$file.annotate.txt" ] || callgrind_annotate "$file" >"$file.annotate.txt" 2>/dev/null
    grep -E '^ *[0-9,]+ \(' "$file.annotate.txt" | sed -n "2,$((top + 1))p" \
        | awk -v n="$n" -v w="$what" '{c=$1; gsub(",", "", c); sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, ""); printf "%10d per %s  %s\n", c / n, w, $0}'
    echo
}
