#!/usr/bin/env bash
# meshcast over UCX under mpirun (acceptance: at least 8 processes on one machine run the Alpa
# n-to-m suite at reduced size with #wrong = 0 for every strategy):
#   mpirun -np 8  bench --suite alpa-n-to-m --transport ucx --max-bytes 4M --json FILE:
#                 every case x every strategy present, wrong == 0, ranks == 8;
#   mpirun -np 2  run, JAX style: one rank per host, 4 devices each (1x4 -> 1x4 on 2 hosts);
#   mpirun -np 2  the same with MESHCAST_UCX_SHM=1: exit 0, wrong 0, and (where UCX logs its
#                 endpoint configurations at UCX_LOG_LEVEL=info) every endpoint on shared memory;
#   mpirun -np 16 run, PyTorch style: one rank per device of a 2x4 -> 2x4 case (16 ranks on
#                 however few cores).
# Skips without mpirun, or when meshcast was built without MPI or UCX.
# usage: bash run_ucx_mpirun.sh <meshcast-binary> <source-dir>
set -u
bin=$1
src_dir=$2
tmp=$(mktemp -d)
pids=()
# shellcheck source=lib/ranks.bash
source "$(dirname "$0")/lib/ranks.bash"
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() {
    echo "FAIL: $*" >&2
    failed=1
}

need_ucx
need_mpirun
# Open MPI leaks at init/finalize (some 120 KB per rank; the stacks lie in MCA components that
# MPI_Finalize unloads, so no suppression can name them): leak checking is off for processes
# started by mpirun. ASan and UBSan still check meshcast; the env-rendezvous tests keep LSan.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export MESHCAST_TIMEOUT=30
mpi() { # <np> <limit_s> <meshcast args...>
    local np=$1 limit=$2
    shift 2
    timeout "$limit" mpirun -np "$np" "${mpi_flags[@]}" "$bin" "$@"
}
strategies="send_recv local_allgather broadcast_first broadcast_lb_size broadcast_lb_order meshcast"

# -np 8: the whole Alpa n-to-m suite, every strategy.
t0=$(now_ms)
mpi 8 60 bench --suite alpa-n-to-m --transport ucx --max-bytes 4M --iters 1 --warmup 0 \
    --json "$tmp/n-to-m.json" >"$tmp/bench.out" 2>"$tmp/bench.err"
rc=$?
dt=$(($(now_ms) - t0))
cat "$tmp/bench.out"
[ $rc -eq 0 ] || fail "mpirun -np 8 bench: exit $rc: $(cat "$tmp/bench.err")"
names=$(grep -vE '^[[:space:]]*(#|$)' "$src_dir/benchmarks/suites/alpa-n-to-m.cases" | awk '{print $1}')
python3 - "$tmp/n-to-m.json" "$names" "$strategies" <<'PY' || fail "mpirun -np 8 bench --json"
import json, sys
res = json.load(open(sys.argv[1]))["results"]
names, strategies = sys.argv[2].split(), sys.argv[3].split()
got = [(r["case"], r["strategy"]) for r in res]
want = [(n, s) for n in names for s in strategies]
assert got == want, ("missing or extra rows", sorted(set(want) ^ set(got)))
bad = [(r["case"], r["strategy"], r["wrong"]) for r in res if r["wrong"] != 0]
assert not bad, ("wrong elements", bad)
assert all(r["transport"] == "ucx" and r["ranks"] == 8 for r in res), "transport/ranks"
print("mpirun -np 8 alpa-n-to-m: %d cases x %d strategies, %d results, wrong 0 everywhere"
      % (len(names), len(strategies), len(res)))
PY
grep -q '^# suite .*transport ucx, 8 rank(s)' "$tmp/bench.out" || fail "-np 8 bench header"
echo "mpirun -np 8 bench --suite alpa-n-to-m --transport ucx --max-bytes 4M: $dt ms"

# -np 2: one rank per host (devices 0-3 on host 0 = rank 0, 4-7 on host 1 = rank 1).
t0=$(now_ms)
mpi 2 20 run --shape 1024,1024,512 --dtype i32 --src-mesh 1x4 --src-spec S1RR --dst-mesh 1x4 \
    --dst-spec RS1R --max-bytes 4M --transport ucx --iters 2 --json >"$tmp/np2.json" \
    2>"$tmp/np2.err"
rc=$?
dt=$(($(now_ms) - t0))
[ $rc -eq 0 ] || fail "mpirun -np 2 run: exit $rc: $(cat "$tmp/np2.err")"
cat "$tmp/np2.json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ranks"] == 2 and d["transport"] == "ucx" and d["wrong"] == 0, d
assert d["nic_bytes"] > 0, d' "$tmp/np2.json" || fail "mpirun -np 2 run --json"
echo "mpirun -np 2 run (one rank per 4-device host): $dt ms"

# -np 2 with MESHCAST_UCX_SHM=1: both ranks are on this host, so their endpoints go without
# error handling and UCX picks shared memory ("ep_cfg[0]: tag(sysv/memory cma/memory)" in
# UCX 1.13's info log; one log file per process).
t0=$(now_ms)
mkdir -p "$tmp/shm-log"
MESHCAST_UCX_SHM=1 UCX_LOG_LEVEL=info UCX_LOG_FILE="$tmp/shm-log/ucx.%p.log" \
    mpi 2 20 run --shape 1024,1024,512 --dtype i32 --src-mesh 1x4 --src-spec S1RR \
    --dst-mesh 1x4 --dst-spec RS1R --max-bytes 4M --transport ucx --iters 2 --json \
    >"$tmp/np2shm.json" 2>"$tmp/np2shm.err"
rc=$?
dt=$(($(now_ms) - t0))
[ $rc -eq 0 ] || fail "MESHCAST_UCX_SHM=1 mpirun -np 2 run: exit $rc: $(cat "$tmp/np2shm.err")"
cat "$tmp/np2shm.json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ranks"] == 2 and d["transport"] == "ucx" and d["wrong"] == 0, d' "$tmp/np2shm.json" ||
    fail "MESHCAST_UCX_SHM=1 mpirun -np 2 run --json"
eps=$(cat "$tmp"/shm-log/ucx.*.log 2>/dev/null | grep -o 'ep_cfg\[[0-9]*\]: .*')
if [ -z "$eps" ]; then
    echo "note: UCX logged no endpoint configuration; transports not checked"
else
    echo "$eps" | sort | uniq -c
    if grep -vqE '(sysv|posix|cma|xpmem|knem)/' <<<"$eps"; then
        fail "MESHCAST_UCX_SHM=1: an endpoint without shared memory: $eps"
    fi
fi
echo "MESHCAST_UCX_SHM=1 mpirun -np 2 run: $dt ms"

# -np 16: one rank per device.
t0=$(now_ms)
mpi 16 30 run --shape 1024,1024,512 --dtype i32 --src-mesh 2x4 --src-spec RS0R --dst-mesh 2x4 \
    --dst-spec RRS0 --max-bytes 4M --transport ucx --iters 1 --json >"$tmp/np16.json" \
    2>"$tmp/np16.err"
rc=$?
dt=$(($(now_ms) - t0))
[ $rc -eq 0 ] || fail "mpirun -np 16 run: exit $rc: $(cat "$tmp/np16.err")"
cat "$tmp/np16.json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ranks"] == 16 and d["transport"] == "ucx" and d["wrong"] == 0, d' "$tmp/np16.json" ||
    fail "mpirun -np 16 run --json"
echo "mpirun -np 16 run (one rank per device): $dt ms"
exit $failed
