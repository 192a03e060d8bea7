#!/usr/bin/env bash
# Valid inputs whose cost must follow what is used, not the numbers in them: huge device ids
# and --hosts plan a 1 KiB tensor in milliseconds, tiny --chunk and a 1 PiB tensor stay
# within MC_PLAN_MAX_CHUNKS. Each call must succeed within its time and 200 MB (also under
# ASan+UBSan); the bad-input side is tests/bad-input/limits.corpus.
# usage: bash plan_limits.sh <meshcast-binary> <source-dir>
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

# cheap <max seconds> <args...>: exit 0 within the time and 200 MB; stdout in $tmp/out.
cheap() {
    local max=$1
    shift
    if ! /usr/bin/python3 - "$max" "$bin" "$@" >"$tmp/out" <<'PY'; then
import resource, subprocess, sys, time
limit, cmd = float(sys.argv[1]), sys.argv[2:]
t = time.monotonic()
r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
dt = time.monotonic() - t
mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
sys.stdout.write(r.stdout)
why = []
if r.returncode != 0:
    why.append("exit %d: %s" % (r.returncode, r.stderr.strip()))
if dt > limit:
    why.append("%.2f s > %g s" % (dt, limit))
if mb > 200:
    why.append("%.0f MB > 200 MB" % mb)
if why:
    sys.stderr.write("FAIL: meshcast %s -> %s\n" % (" ".join(cmd[1:]), "; ".join(why)))
    sys.exit(1)
PY
        failed=1
    fi
}

kib=(plan --shape 256 --dtype f32 --src-mesh 1 --src-spec S0 --dst-mesh 1 --dst-spec S0)
cheap 2 "${kib[@]}" --src-devices 100000000 --strategy all
cheap 2 "${kib[@]}" --src-devices 4294967295 --strategy all
cheap 2 "${kib[@]}" --src-devices 4611686018427387903 --dst-devices 0 --strategy all
cheap 2 "${kib[@]}" --hosts 1G --strategy all
cheap 2 "${kib[@]}" --src-devices 9223372036854775803 --dst-devices 0 --strategy all
cheap 2 plan --shape 64,64 --src-mesh 2x2 --src-spec S0S1 --dst-mesh 2x2 --dst-spec S1S0 \
    --src-devices 100000000,100000001,100000004,100000005 --dst-devices 7,300000000-300000002 \
    --topology dgx-a100 --strategy all
cheap 2 "${kib[@]}" --src-devices 100000000 --dot "$tmp/plan.dot"
grep -q 'dev 100000000' "$tmp/plan.dot" || { echo "FAIL: DOT lacks dev 100000000" >&2; failed=1; }
cheap 2 "${kib[@]}" --src-devices 100000000 --flows
grep -q ' 100000000->100000001$' "$tmp/out" || { echo "FAIL: --flows lacks 100000000->100000001" >&2; failed=1; }
cheap 5 run --shape 256 --src-mesh 2 --src-spec S0 --dst-mesh 2 --dst-spec R \
    --src-devices 100000000,4294967295 --iters 1 --warmup 0

# Chunks: tiny --chunk on 2 GiB, and a 1 PiB tensor, stay within 2^15 chunks per plan beyond
# one per message.
gib2=(plan --shape 2048,1024,256 --src-mesh 2x4 --src-spec S0RR --dst-mesh 2x4 --dst-spec RS0R)
for args in "--chunk 1" "--chunk 64" "--chunk 7 --dtype i8"; do
    # shellcheck disable=SC2086
    cheap 10 "${gib2[@]}" $args --strategy meshcast --json
    chunks=$(grep -o '"chunks": [0-9]*' "$tmp/out" | head -1 | grep -o '[0-9]*$')
    messages=$(grep -o '"messages": [0-9]*' "$tmp/out" | head -1 | grep -o '[0-9]*$')
    [ "${chunks:-0}" -gt 0 ] && [ "$chunks" -le $((32768 + ${messages:-0})) ] ||
        { echo "FAIL: $args: $chunks chunks (want 1..2^15 + $messages)" >&2; failed=1; }
done
cheap 10 plan --shape 1048576,1048576,256 --src-mesh 2x4 --src-spec S0RR --dst-mesh 2x4 \
    --dst-spec RS0R --strategy all
printf 'tiny %s --chunk 7\n' "${gib2[*]:1}" >"$tmp/tiny.cases"
cheap 10 bench --suite "$tmp/tiny.cases"
[ "$(grep -c '^tiny ' "$tmp/out")" -eq 6 ] || { echo "FAIL: bench --chunk 7: $(cat "$tmp/out")" >&2; failed=1; }

# The largest mesh text accepts, 65536 devices one to one, plans in seconds.
cheap 20 plan --shape 65536 --src-mesh 256x256 --src-spec S01 --dst-mesh 256x256 --dst-spec S10 \
    --strategy meshcast
exit $failed
