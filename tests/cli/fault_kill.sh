#!/usr/bin/env bash
# Fault: kill one rank mid-transfer and the others return an error within timeout + 5 s.
# 4 ranks through the environment rendezvous, MESHCAST_TIMEOUT=5, a 16 MiB 2x4 -> 2x4 case
# with 3000 iterations (a minute or more undisturbed). About 2 s after the start, once every
# rank has begun transferring, one rank gets SIGKILL: rank 2 (a plain rank) in the first
# variant, rank 0 (the rendezvous root, which also prints) in the second; a third variant
# freezes rank 2 with SIGSTOP instead (killed at the end). Every survivor must
# exit non-zero within timeout + 5 s of the kill, with exactly one stderr line
# ("meshcast: ...") that names a rank or says what failed, and no process may remain.
# Prints the time from the kill to each survivor's exit. Leak checking stays on under ASan.
# Skips when meshcast was built without UCX.
# usage: bash fault_kill.sh <meshcast-binary> <source-dir>
set -u
bin=$1
tmp=$(mktemp -d)
pids=()
# shellcheck source=lib/ranks.bash
source "$(dirname "$0")/lib/ranks.bash"
trap 'kill_leftovers; rm -rf "$tmp"' EXIT
failed=0
fail() {
    echo "FAIL: $*" >&2
    failed=1
}

need_ucx

timeout_s=5
big=(run --shape 1024,1024,512 --dtype i32 --src-mesh 2x4 --src-spec S0RR --dst-mesh 2x4
    --dst-spec RS0R --max-bytes 16M --transport ucx --strategy meshcast --iters 3000 --warmup 0)

variant() { # <victim rank> <signal: KILL | STOP>
    local victim=$1 sig=$2 tag=$2$1 attempt
    for attempt in 1 2 3; do
        start_env_ranks 4 "$tag" MESHCAST_TIMEOUT=$timeout_s -- "${big[@]}"
        # Wait until rank 0 has admitted everyone and iterations run (setup takes 0.1 s, 0.7 s
        # under ASan; an iteration 10-40 ms): 2 s after the start; and
        # no rank may have exited by then (a port collision would show up here).
        sleep 2
        local r early=0
        for r in 0 1 2 3; do
            kill -0 "${pids[$r]}" 2>/dev/null || early=1
        done
        [ $early -eq 0 ] && break
        if grep -q 'cannot listen on port' "$tmp/$tag.0.err"; then
            echo "note: rank 0 could not listen on its port (attempt $attempt); retrying"
            kill_leftovers
            wait "${pids[@]}" 2>/dev/null
            continue
        fi
        for r in 0 1 2 3; do
            fail "SIG$sig rank $victim: a rank exited before the kill; rank $r: $(cat "$tmp/$tag.$r.err")"
        done
        kill_leftovers
        wait "${pids[@]}" 2>/dev/null
        return
    done
    local t_kill
    t_kill=$(now_ms)
    kill -"$sig" "${pids[$victim]}"
    local survivors=()
    for r in 0 1 2 3; do
        [ "$r" -ne "$victim" ] && survivors+=("${pids[$r]}")
    done
    # Waits a little longer than the limit so a late exit is measured, not just cut off.
    wait_ranks $((t_kill + (timeout_s + 10) * 1000)) "${survivors[@]}"
    if [ "$sig" = STOP ]; then
        kill -9 "${pids[$victim]}"
    fi
    wait_ranks $(($(now_ms) + 5000)) "${pids[$victim]}"
    local limit_ms=$(((timeout_s + 5) * 1000)) worst=0
    for r in 0 1 2 3; do
        [ "$r" -eq "$victim" ] && continue
        local p=${pids[$r]} err=$tmp/$tag.$r.err
        local dt=$((exit_ms[$p] - t_kill))
        [ $dt -gt $worst ] && worst=$dt
        echo "  SIG$sig rank $victim -> rank $r exited ${rc_of[$p]} after ${dt} ms: $(cat "$err")"
        if [ "${rc_of[$p]}" = timeout ]; then
            fail "SIG$sig rank $victim: rank $r still running $((timeout_s + 10)) s after the kill"
            continue
        fi
        [ "${rc_of[$p]}" -ne 0 ] || fail "SIG$sig rank $victim: rank $r exited 0"
        [ $dt -le $limit_ms ] || fail "SIG$sig rank $victim: rank $r took $dt ms > $limit_ms ms"
        [ "$(wc -l <"$err")" -eq 1 ] || fail "SIG$sig rank $victim: rank $r: not one stderr line"
        grep -qE '^meshcast: .*(rank [0-9]+|timed out|closed|lost)' "$err" ||
            fail "SIG$sig rank $victim: rank $r: stderr names no rank nor what failed"
    done
    echo "SIG$sig rank $victim: slowest survivor exited $worst ms after the kill (limit $limit_ms ms)"
    for r in 0 1 2 3; do
        if kill -0 "${pids[$r]}" 2>/dev/null; then
            fail "SIG$sig rank $victim: rank $r (pid ${pids[$r]}) remains"
        fi
    done
    # Nothing started by this variant may remain (children of the ranks included).
    local left
    left=$(procs_on_port "$env_port")
    [ -z "$left" ] || fail "SIG$sig rank $victim: processes remain: $left"
}

variant 2 KILL
variant 0 KILL
# A frozen rank (SIGSTOP; its connections stay open, so only MESHCAST_TIMEOUT can notice):
# the survivors time out. They exit about timeout + 2 s after the stop here: the UCX
# transport gives the endpoint of a silent peer up to 2 s to close gracefully.
variant 2 STOP
exit $failed
