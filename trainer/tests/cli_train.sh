#!/usr/bin/env bash
# meshcast-train as a command: bad input (exit 2, one line "meshcast-train: ...", nothing
# on stdout), a tiny run's --json lines, --resume continuing a run exactly, and a pipeline
# on a threads world: the single-process losses, --resume, and a valid --trace.
# usage: cli_train.sh MESHCAST_TRAIN
set -euo pipefail
train=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
/usr/bin/python3 -c 'import random; random.seed(1); w = ["the ", "fox ", "jumps ", "over ", "a ", "dog. "]; print("".join(random.choice(w) for _ in range(2000)))' >"$tmp/corpus.txt"
printf 'tiny' >"$tmp/small.txt"
tiny=(--data "$tmp/corpus.txt" --layers 2 --dmodel 16 --heads 2 --seq 16 --batch 4 --eval 8)

bad() { # substring, args...
    local want=$1
    shift
    set +e
    "$train" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    set -e
    [ $rc -eq 2 ] || fail "$* exited $rc, not 2"
    [ ! -s "$tmp/out" ] || fail "$* wrote to stdout"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$* wrote $(wc -l <"$tmp/err") lines to stderr"
    grep -q "^meshcast-train: .*$want" "$tmp/err" || fail "$*: '$(cat "$tmp/err")' lacks '$want'"
}
bad "--model must be gpt or utransformer" --model bert
bad "--layers must be an integer" --layers 0
bad "--layers must be an integer" --layers 3x
bad "--heads must be positive and divide --dmodel" --dmodel 10 --heads 3
bad "at least 2 for the U-transformer" --model utransformer --layers 1
bad "--lr must be a number" --lr -1
bad "--lr must be a number" --lr abc
bad "not a multiple of --microbatches" --batch 6 --microbatches 4
bad "--resume needs --checkpoint-dir" --resume
bad "unknown" --frobnicate
bad "needs a value" --steps
bad "unexpected argument" extra
bad "cannot open --data" --data "$tmp/missing.txt"
bad "has 4 bytes" --data "$tmp/small.txt"
bad "is not a directory" "${tiny[@]}" --checkpoint-dir "$tmp/nodir"
bad "GB of activations" --dmodel 8192 --seq 8192 --batch 64
bad "cannot open checkpoint" "${tiny[@]}" --checkpoint-dir "$tmp" --resume
printf 'garbage' >"$tmp/checkpoint.bin"
bad "not a meshcast-train checkpoint" "${tiny[@]}" --checkpoint-dir "$tmp" --resume
rm "$tmp/checkpoint.bin"
bad "--stages must be an integer" --stages 0
bad "--schedule must be gpipe" --stages 2 --schedule pipedream
bad "is not one the trainer runs" --stages 2 --schedule chimera
bad "--strategy must be send_recv" --stages 2 --strategy carrier-pigeon
bad "--transport must be threads or ucx" --transport mpi
bad "needs at least 2 stages" --stages 1 --transport ucx
bad "more than the model's 4 layers" "${tiny[@]}" --stages 4 --schedule zb-v --microbatches 4
bad "--trace needs a pipeline" --trace "$tmp/t.json"
bad "--dp must be an integer" --dp 0
bad "--dp-buckets must be an integer" --dp-buckets 0
bad "--dp-buckets must be an integer" --dp-buckets x
bad "does not split over --dp 3 replicas" --batch 8 --microbatches 4 --dp 3
bad "--tp 3 does not divide --heads 4" --tp 3
bad "--tp 2 does not divide --heads 1" --heads 1 --tp 2
bad "--tp gives 2 degrees for --stages 1" --tp 2,1
bad "--tp gives 2 degrees for --stages 3" --stages 3 --tp 2,1
bad "--tp must be one degree or a comma-separated list" --stages 2 --tp 2,,1
bad "--tp must be an integer" --stages 2 --tp 2,x
bad "is 4096 ranks, more than 1024" --stages 64 --dp 64 --microbatches 64 --batch 64
bad "use at most 63" --stages 2 --batch 64 --microbatches 64
bad "use at most 31" --stages 2 --batch 64 --microbatches 32 --schedule zb-v
printf 'F 1\nB x\n' >"$tmp/costs.bad"
printf 'F 1\nB 2\nfrobs 3\n' >"$tmp/costs.unknown"
printf 'F 1\n' >"$tmp/costs.noB"
printf 'F 0.001\nB 0.002\ncomm 0.0005\n' >"$tmp/costs.txt"
bad "--sim-costs needs --simulate" --stages 2 --sim-costs "$tmp/costs.txt"
bad "--topology needs --simulate" --stages 2 --topology p3.8xlarge
bad "--sim-speed needs --simulate" --stages 2 --sim-speed 2
bad "--sim-sums needs --simulate" --stages 2 --sim-sums meshcast
bad "--sim-sums must be send_recv" --stages 2 --simulate --sim-costs "$tmp/costs.txt" --sim-sums x
bad "--simulate needs --sim-costs FILE or --sim-compare" --stages 2 --simulate
bad "--sim-speed must be a number" --stages 2 --simulate --sim-costs "$tmp/costs.txt" --sim-speed 0
bad "--sim-speed must be a number" --stages 2 --simulate --sim-costs "$tmp/costs.txt" --sim-speed x
bad "--simulate trains nothing" --stages 2 --simulate --sim-costs "$tmp/costs.txt" --resume \
    --checkpoint-dir "$tmp"
bad "cannot be read" --stages 2 --simulate --sim-costs "$tmp/missing"
bad "line 2: expected" --stages 2 --simulate --sim-costs "$tmp/costs.bad"
bad "unknown entry 'frobs'" --stages 2 --simulate --sim-costs "$tmp/costs.unknown"
bad "gives no F or no B" --stages 2 --simulate --sim-costs "$tmp/costs.noB"
bad "not a meshcast-train trace" --stages 2 --simulate --sim-compare "$tmp/costs.txt"
bad "--topology nowhere" --stages 2 --simulate --sim-costs "$tmp/costs.txt" --topology nowhere

"$train" --help | grep -q -- "--microbatches" || fail "--help lacks --microbatches"

# a tiny run: a config line, one line per step, the held-out loss; text mode likewise
"$train" "${tiny[@]}" --steps 3 --json >"$tmp/run.jsonl"
/usr/bin/python3 - "$tmp/run.jsonl" <<'PY' || fail "--json output"
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
assert recs[0]["model"] == "gpt" and recs[0]["params"] > 0, recs[0]
steps = [r for r in recs if "step" in r]
assert [r["step"] for r in steps] == [1, 2, 3], steps
assert all(r["loss"] > 0 and r["tokens_per_s"] > 0 for r in steps), steps
assert "val_loss" in recs[-1], recs[-1]
PY
"$train" "${tiny[@]}" --steps 2 --model utransformer --microbatches 2 >"$tmp/run.txt"
grep -q '^step 2/2  loss ' "$tmp/run.txt" || fail "text progress line: $(cat "$tmp/run.txt")"

# --resume: 2 steps, checkpoint, then on to 4 == 4 straight (the losses, to the digit)
mkdir "$tmp/ck"
"$train" "${tiny[@]}" --steps 4 --json | grep '"step"' | sed 's/,"tokens_per_s".*//' >"$tmp/straight"
"$train" "${tiny[@]}" --steps 2 --json --checkpoint-dir "$tmp/ck" | grep '"step"' |
    sed 's/,"tokens_per_s".*//' >"$tmp/resumed"
"$train" "${tiny[@]}" --steps 4 --json --checkpoint-dir "$tmp/ck" --resume | grep '"step"' |
    sed 's/,"tokens_per_s".*//' >>"$tmp/resumed"
diff "$tmp/straight" "$tmp/resumed" || fail "--resume differs from a straight run"
bad "is for another model" "${tiny[@]}" --dmodel 32 --checkpoint-dir "$tmp/ck" --resume
# a pipeline (threads world): the single-process losses and held-out loss, to the digit;
# resumable like it; its trace is a Chrome trace with compute, reshards and waits per rank
pipe=("${tiny[@]}" --model utransformer --layers 4 --microbatches 2 --json)
losses() { grep -E '"step"|val_loss' | sed 's/,"tokens_per_s".*//'; }
"$train" "${pipe[@]}" --steps 4 | losses >"$tmp/single"
"$train" "${pipe[@]}" --steps 4 --stages 3 --schedule 1f1b --strategy send_recv \
    --trace "$tmp/trace.json" >"$tmp/pipe.out" || fail "pipeline run"
losses <"$tmp/pipe.out" | diff "$tmp/single" - || fail "pipeline differs from one process"
mkdir "$tmp/pk"
"$train" "${pipe[@]}" --steps 2 --stages 2 --schedule zb-v --checkpoint-dir "$tmp/pk" |
    grep '"step"' | sed 's/,"tokens_per_s".*//' >"$tmp/presumed"
"$train" "${pipe[@]}" --steps 4 --stages 2 --schedule zb-v --checkpoint-dir "$tmp/pk" \
    --resume | losses >>"$tmp/presumed"
diff "$tmp/single" "$tmp/presumed" || fail "pipeline --resume differs from a straight run"
/usr/bin/python3 - "$tmp/pipe.out" "$tmp/trace.json" <<'PY' || fail "pipeline output or trace"
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
assert recs[0]["stages"] == 3 and recs[0]["schedule"] == "1f1b", recs[0]
steps = [r for r in recs if "step" in r]
assert all(0 <= r["comm_hidden"] <= 1 and r["reshard_ms"] > 0 for r in steps), steps
ev = json.load(open(sys.argv[2]))["traceEvents"]
cats = {(e.get("pid"), e.get("cat")) for e in ev}
for rank in range(3):
    assert (rank, "compute") in cats and (rank, "reshard") in cats, (rank, cats)
assert any(e.get("cat") == "wait" for e in ev), "no waits"
names = {e["name"] for e in ev if e.get("cat") == "compute"}
assert {"0F0", "2B1", "1F1"} <= names, names
begins = sum(e["ph"] == "b" for e in ev)
assert begins == sum(e["ph"] == "e" for e in ev) and begins > 0
PY
# the step simulator on that run: its own trace's costs, the measured steps beside it, a
# simulated trace with the same names; and a costs file by hand (F 1 ms, B 2 ms, every
# reshard 0.5 ms: a GPT of 4 blocks as 3 stages, 2 microbatches of 1f1b)
"$train" "${pipe[@]}" --stages 3 --schedule 1f1b --strategy send_recv --simulate \
    --sim-compare "$tmp/trace.json" --trace "$tmp/sim.json" >"$tmp/sim.out" || fail "--simulate"
"$train" "${tiny[@]}" --layers 4 --microbatches 2 --json --stages 3 --simulate \
    --sim-costs "$tmp/costs.txt" \
    --sim-speed 2 >>"$tmp/sim.out" || fail "--simulate with a costs file"
/usr/bin/python3 - "$tmp/sim.out" "$tmp/trace.json" "$tmp/sim.json" <<'PY' || fail "--simulate output"
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
assert recs[0]["simulate"] and recs[1]["simulated"] and recs[1]["ms"] > 0, recs[:2]
steps = [r for r in recs if "measured_ms" in r]
assert recs[2]["costs"]["F"]["per_gflop_s"] >= 0, recs[2]
assert len(steps) == 3 and all(r["simulated_ms"] == recs[1]["ms"] for r in steps), steps
assert "median_step_error" in recs[len(steps) + 3], recs
real = {e["name"] for e in json.load(open(sys.argv[2]))["traceEvents"] if e.get("cat") == "compute"}
sim = {e["name"] for e in json.load(open(sys.argv[3]))["traceEvents"] if e.get("cat") == "compute"}
assert real == sim, (real ^ sim)
# by hand, halved by --sim-speed 2: F 0.5, B 1, c 0.5 ms, 1f1b on 3 ranks, 2 microbatches:
# rank 0 F0 [0,.5] F1 [.5,1]; rank 1 F0 [1,1.5] F1 [1.5,2]; rank 2 F0 [2,2.5] B0 [2.5,3.5]
# F1 [3.5,4] B1 [4,5]; rank 1 B0 [4,5] B1 [5.5,6.5]; rank 0 B0 [5.5,6.5] B1 [7,8]
assert abs(recs[-2]["ms"] - 8.0) < 1e-9, recs[-2]
PY

# data and tensor parallelism (threads world): 2 pipeline ranks, 2 replicas, tp 2 on the
# first and 1 on the second (6 ranks): the single-process losses within 1e-5 relative (the
# sums run in another order), also resumed from its checkpoint
par=("${pipe[@]}" --microbatches 4 --batch 8 --stages 2 --dp 2 --tp 2,1 --schedule eager-1f1b)
"$train" "${pipe[@]}" --microbatches 4 --batch 8 --steps 4 >"$tmp/single4"
"$train" "${par[@]}" --steps 4 >"$tmp/par.out" || fail "dp x tp run"
mkdir "$tmp/dk"
"$train" "${par[@]}" --steps 2 --checkpoint-dir "$tmp/dk" >"$tmp/par2.out" || fail "dp x tp, 2 steps"
"$train" "${par[@]}" --steps 4 --checkpoint-dir "$tmp/dk" --resume >"$tmp/par4.out" ||
    fail "dp x tp, resumed"
/usr/bin/python3 - "$tmp/single4" "$tmp/par.out" "$tmp/par2.out" "$tmp/par4.out" <<'PY' ||
import json, sys
def losses(path):
    recs = [json.loads(line) for line in open(path)]
    return [r.get("loss", r.get("val_loss")) for r in recs if "step" in r or "val_loss" in r], recs
want, _ = losses(sys.argv[1])
got, recs = losses(sys.argv[2])
assert recs[0]["dp"] == 2 and recs[0]["tp"] == [2, 1] and recs[0]["ranks"] == 6, recs[0]
first, _ = losses(sys.argv[3])
rest, _ = losses(sys.argv[4])
resumed = first[:2] + rest
for run in (got, resumed):
    assert len(run) == len(want) == 5, (run, want)
    assert all(abs(a - b) <= 1e-5 * abs(b) for a, b in zip(run, want)), (run, want)
PY
    fail "dp x tp losses differ from one process"
# its trace: every bucket's sum as a span "dp sum stage S layers A-B", the waits for them;
# --dp-buckets 1 gives the same losses with one "dp sum" per rank and step
"$train" "${par[@]}" --steps 2 --trace "$tmp/dp.json" >"$tmp/dp2.out" || fail "dp x tp, traced"
"$train" "${par[@]}" --steps 2 --dp-buckets 1 >"$tmp/dp1.out" || fail "dp x tp, one sum"
diff <(losses <"$tmp/dp2.out") <(losses <"$tmp/dp1.out") || fail "--dp-buckets 1 differs"
/usr/bin/python3 - "$tmp/dp.json" <<'PY' || fail "dp bucket trace"
import json, sys
names = {e["name"] for e in json.load(open(sys.argv[1]))["traceEvents"] if "name" in e}
sums = [n for n in names if n.startswith("dp sum stage ")]
assert len(sums) >= 4 and "wait dp sums" in names, sorted(names)
assert any(" layers " in n and n[0].isdigit() for n in names), sorted(names)
PY
echo "cli_train: ok"
