# fault_lib.sh: what the fault tests (tests/integration/fault_*.test) share:
# the test-bed check, PASS/FAIL bookkeeping, figure: lines, and starting
# and stopping the rdmatest stream server (rpc_fault_stream, the ASan/UBSan
# build) and client.  Sourced, never run; $prog must be set first.

root=$(cd "$(dirname "$0")/../.." && pwd -P)
bin=$root/${B:-build}/bin
asan=$root/${B:-build}/asan/bin
stream=$asan/rpc_fault_stream
demo_bin=$bin/nfs-client-demo
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
export LC_ALL=C

# fault_require_bed [nfsd]: exit 77 outside the test bed, 1 if a binary is missing
fault_require_bed() {
    if [ -z "${RDMA_DEV:-}" ] || [ -z "${TEST_ADDR:-}" ]; then
        echo "$prog: skipped: run inside the test bed (tests/vm/vmrun)"
        exit 77
    fi
    if [ "${1:-}" = nfsd ] && [ -z "${NFS_EXPORT:-}" ]; then
        echo "$prog: FAIL: NFS_EXPORT is not set: the test bed must run with --nfsd"
        exit 1
    fi
    local f
    for f in "$stream" "$demo_bin"; do
        if [ ! -x "$f" ]; then
            echo "$prog: FAIL: $f is missing: run 'make demo-bin asan-integration-bins' first"
            exit 1
        fi
    done
    provider=${RDMA_DEV%0}
    tmp=$(mktemp -d "/tmp/$prog.XXXXXX") || exit 1
    trap fault_cleanup EXIT
    t_start=$SECONDS
}

passed=0 failed=0
srv_pid= cli_pid=
pass() { echo "$prog: PASS: $*"; passed=$((passed + 1)); }
fail() { echo "$prog: FAIL: $*"; failed=$((failed + 1)); }
# check DESC CMD...: PASS if CMD succeeds
check() {
    local d=$1
    shift
    if "$@"; then pass "$d"; else fail "$d"; fi
}
figure() { echo "figure: $prog: $provider: $*"; }
now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Extra cleanup a test needs (restore the link, nfsd, qdisc): define fault_restore.
fault_restore() { :; }
fault_cleanup() {
    [ -z "$cli_pid" ] || kill -9 "$cli_pid" 2>/dev/null
    [ -z "$srv_pid" ] || kill -9 "$srv_pid" 2>/dev/null
    fault_restore
    rm -rf "$tmp"
}

# server_start ADDR PORT: the stream server in the background; sets
# srv_pid, srv_port (0 and a FAIL if it did not start in 30 s) and srv_err
# (its standard error).
server_start() {
    local out=$tmp/server.$RANDOM i
    : >"$out"
    srv_err=$out.err
    "$stream" --server "$1" "$2" >"$out" 2>"$out.err" &
    srv_pid=$!
    srv_port=0
    for i in $(seq 300); do
        if [ -s "$out" ]; then
            srv_port=$(head -n 1 "$out")
            return 0
        fi
        kill -0 "$srv_pid" 2>/dev/null || break
        sleep 0.1
    done
    fail "the stream server on $1 port $2 did not start: $(cat "$out.err")"
    return 1
}

# server_kill: SIGKILL the stream server and reap it.
server_kill() {
    [ -n "$srv_pid" ] || return 0
    kill -9 "$srv_pid" 2>/dev/null
    wait "$srv_pid" 2>/dev/null
    srv_pid=
}

# client_start LOG ARGS...: the stream client in the background, output to LOG
client_start() {
    local log=$1
    shift
    "$stream" --client "$@" >"$log" 2>&1 &
    cli_pid=$!
}

# client_wait_first LOG: wait (30 s at most) until the client is under way
# (its start line is out and a second has passed for calls to be in flight)
client_wait_started() {
    local i
    for i in $(seq 300); do
        grep -q 'threads,' "$1" 2>/dev/null && { sleep 1; return 0; }
        kill -0 "$cli_pid" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# client_finish LOG LIMIT: wait for the client (LIMIT seconds at most, then
# SIGKILL: a hang), print its output indented; its status in $cli_rc
client_finish() {
    local log=$1 lim=$2 i
    cli_rc=
    for i in $(seq $((lim * 10))); do
        kill -0 "$cli_pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$cli_pid" 2>/dev/null; then
        kill -9 "$cli_pid" 2>/dev/null
        echo "    (the client still ran after $lim s: killed)"
    fi
    wait "$cli_pid"
    cli_rc=$?
    cli_pid=
    sed 's/^/    | /' "$log"
    grep '^figure: ' "$log" | sed "s/^figure: /figure: $prog: $provider: /"
}

# rdma_link_up DEV: DEV exists and its port is ACTIVE
rdma_link_up() { [ -d "/sys/class/infiniband/$1" ] && rdma link show "$1/1" 2>/dev/null | grep -q 'state ACTIVE'; }
# rdma_link_add DEV NETDEV: a $provider device DEV on NETDEV (unless it is
# up already), waiting 20 s at most for its port to become ACTIVE
rdma_link_add() {
    local i
    rdma_link_up "$1" && return 0
    rdma link add "$1" type "$provider" netdev "$2" || return 1
    for i in $(seq 200); do
        rdma_link_up "$1" && return 0
        sleep 0.1
    done
    return 1
}

fault_end() {
    echo "$prog: $provider: $passed passed, $failed failed ($((SECONDS - t_start))s)"
    [ "$failed" = 0 ] && [ "$passed" -gt 0 ]
}
