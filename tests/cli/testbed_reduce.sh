#!/usr/bin/env bash
# benchmarks/testbed/bench-reduce end to end on a small size: 4 emulated hosts, calibration,
# every case with both strategies and Open MPI launched inside the hosts' namespaces
# (mpi-agent); checks the table's three rows, that nothing was wrong, and that the testbed
# and mpirun's temporary files are gone afterwards; then --ranks-per-host 2 on 2 hosts (the
# pre-combining cases' four rows, nothing wrong) and that a bad --ranks-per-host exits 2.
# Skips (and says why) without root, the testbed's tools, network namespaces, UCX, mpirun
# or the mpi_reduce benchmark.
# usage: bash testbed_reduce.sh <meshcast-binary> <source-dir>
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
# shellcheck source=lib/ranks.bash
source "$(dirname "$0")/lib/ranks.bash"
tb=$src/benchmarks/testbed/testbed
name=mcr$((RANDOM % 1000))
mpi_reduce=$(dirname "$bin")/benchmarks/mpi_reduce
trap '"$tb" --name "$name" down >/dev/null 2>&1; rm -rf "$tmp"' EXIT

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, tc)"
for c in ip tc nsenter unshare awk mpirun; do
    command -v $c >/dev/null || skip "$c not found (apt-get install iproute2 util-linux openmpi-bin)"
done
[ -x "$mpi_reduce" ] || skip "no $mpi_reduce (built when MPI is found)"
ip netns add "${name}-probe" 2>/dev/null || skip "cannot create network namespaces here"
ip netns del "${name}-probe"
need_ucx

# Open MPI leaks at init/finalize (stacks in unloaded MCA components, so no suppression can
# name them): leak checking is off for the MPI ranks only, meshcast's stay checked.
# shellcheck disable=SC2016 # expanded by the wrapper, not here
printf '#!/bin/sh\nASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 exec "%s" "$@"\n' \
    "$mpi_reduce" >"$tmp/mpi_reduce"
chmod +x "$tmp/mpi_reduce"
MESHCAST_BIN=$bin MPI_REDUCE_BIN=$tmp/mpi_reduce MESHCAST_TIMEOUT=60 \
    "$src/benchmarks/testbed/bench-reduce" --name "$name" --out "$tmp/out" --bytes 1048576 \
    --rounds 1 --iters 1 >"$tmp/log" 2>&1
rc=$?
failed=0
fail() {
    echo "FAIL: $*" >&2
    failed=1
}
[ $rc -eq 0 ] || fail "bench-reduce exited $rc"
table=$tmp/out/table.txt
for c in allreduce reducescatter crossmesh; do
    grep -Eq "^$c +1048576 +[0-9.]+ +[0-9.]+ \([0-9.]+\) +[0-9.]+ \([0-9.]+\)" "$table" 2>/dev/null ||
        fail "no $c row in the table"
done
grep -q "wrong results: 0$" "$table" 2>/dev/null || fail "some result was wrong"
# --ranks-per-host: every device of 2 hosts, 2 ranks per host (the pre-combining cases)
MESHCAST_BIN=$bin MPI_REDUCE_BIN=$tmp/mpi_reduce MESHCAST_TIMEOUT=60 \
    "$src/benchmarks/testbed/bench-reduce" --name "$name" --out "$tmp/pc" --bytes 1048576 \
    --rounds 1 --iters 1 --hosts 2 --ranks-per-host 2 >>"$tmp/log" 2>&1 ||
    fail "bench-reduce --ranks-per-host 2 exited $?"
for c in replicate shard; do
    for s in send_recv meshcast; do
        grep -Eq "^precombine-$c +1048576 +[0-9.]+ +$s +[0-9.]+ \([0-9.]+\) +[0-9.]+ \([0-9.]+\)" \
            "$tmp/pc/table.txt" 2>/dev/null || fail "no precombine-$c $s row in the table"
    done
done
grep -q "wrong results: 0$" "$tmp/pc/table.txt" 2>/dev/null || fail "some pre-combining result was wrong"
MESHCAST_BIN=$bin MPI_REDUCE_BIN=$tmp/mpi_reduce "$src/benchmarks/testbed/bench-reduce" --ranks-per-host 3 \
    2>"$tmp/bad"
[ $? -eq 2 ] && [ "$(wc -l <"$tmp/bad")" -eq 1 ] || fail "--ranks-per-host 3: not exit 2 with one line"
ip netns list | grep -q "^${name}-" && fail "namespaces of '$name' left behind"
compgen -G "/tmp/testbed-$name-*" >/dev/null && fail "mpirun's temporary files left behind"
if [ $failed -ne 0 ]; then
    cat "$tmp/log" "$table" "$tmp/pc/table.txt" >&2
    exit 1
fi
cat "$table"
