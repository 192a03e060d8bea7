#!/usr/bin/env bash
# meshcast bench --generate: seeded random cases at cluster scale. The same seed gives the
# same cases and estimates (plan_ms aside), another seed other cases; every case runs with
# every strategy, no strategy beats the bound, and the summary names every profile drawn.
# usage: bash bench_generate.sh <meshcast-binary> <source-dir>
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() {
    echo "FAIL: $*" >&2
    failed=1
}

for run in a b; do
    "$bin" bench --generate 12 --seed 7 --json "$tmp/$run.json" >"$tmp/$run.txt" 2>"$tmp/err" ||
        fail "bench --generate 12: $(cat "$tmp/err")"
done
"$bin" bench --generate 12 --seed 8 --strategy meshcast >"$tmp/c.txt" 2>"$tmp/err" ||
    fail "bench --generate 12 --seed 8: $(cat "$tmp/err")"
# --write-cases: the same cases as a suite file, which --suite runs with the same estimates
"$bin" bench --generate 12 --seed 7 --write-cases "$tmp/seed7.cases" >"$tmp/w.out" 2>"$tmp/err" ||
    fail "bench --write-cases: $(cat "$tmp/err")"
[ -s "$tmp/w.out" ] && fail "bench --write-cases printed to stdout"
[ "$(grep -c '^g' "$tmp/seed7.cases")" = 12 ] || fail "--write-cases: not 12 case lines"
"$bin" bench --suite "$tmp/seed7.cases" --json "$tmp/s.json" >/dev/null 2>"$tmp/err" ||
    fail "bench --suite of the written cases: $(cat "$tmp/err")"
line=$(grep '^g0003' "$tmp/seed7.cases" | cut -d' ' -f2-)
# shellcheck disable=SC2086
"$bin" plan $line --strategy meshcast >/dev/null 2>"$tmp/err" ||
    fail "plan with a written case's options: $(cat "$tmp/err")"
"$bin" bench --write-cases "$tmp/x.cases" --suite alpa-n-to-m >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q -- '--write-cases needs --generate' "$tmp/err" ||
    fail "--write-cases without --generate: want exit 2 and a reason, got: $(cat "$tmp/err")"
# --max-hosts: 40 is the default (the same cases), 2 draws two-host cases only, and
# anything but 2-1024 with --generate is refused
"$bin" bench --generate 12 --seed 7 --max-hosts 40 --write-cases "$tmp/h40.cases" 2>"$tmp/err" ||
    fail "--max-hosts 40: $(cat "$tmp/err")"
cmp -s <(grep '^g' "$tmp/seed7.cases") <(grep '^g' "$tmp/h40.cases") ||
    fail "--max-hosts 40 drew other cases than the default"
"$bin" bench --generate 20 --seed 7 --max-hosts 2 --write-cases "$tmp/h2.cases" 2>"$tmp/err" ||
    fail "--max-hosts 2: $(cat "$tmp/err")"
[ "$(grep -c -- '^g.* --hosts 2 ' "$tmp/h2.cases")" = 20 ] || fail "--max-hosts 2: not 20 two-host cases"
head -1 "$tmp/h2.cases" | grep -q -- '--max-hosts 2$' || fail "--max-hosts 2: header $(head -1 "$tmp/h2.cases")"
for bad in "--generate 3 --max-hosts 1" "--generate 3 --max-hosts 1025" "--generate 3 --max-hosts x" \
    "--suite alpa-n-to-m --max-hosts 4"; do
    # shellcheck disable=SC2086
    "$bin" bench $bad >"$tmp/out" 2>"$tmp/err"
    [ $? = 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
        grep -q -- '--max-hosts' "$tmp/err" || fail "bench $bad: want exit 2 and one line, got: $(cat "$tmp/err")"
done
# --topology: every case on it, with its devices per host (the names say so), and the first
# case (drawn before any redraw) has the default's hosts, tensor and specs
"$bin" bench --generate 12 --seed 7 --topology dgx-h100-rails --write-cases "$tmp/rails.cases" 2>"$tmp/err" ||
    fail "--generate --topology dgx-h100-rails: $(cat "$tmp/err")"
[ "$(grep -c -- '^g[0-9]*-dgx-h100-rails --topology dgx-h100-rails ' "$tmp/rails.cases")" = 12 ] ||
    fail "--topology dgx-h100-rails: not 12 cases on it: $(head -3 "$tmp/rails.cases")"
head -1 "$tmp/rails.cases" | grep -q -- '--topology dgx-h100-rails$' || fail "--topology: header $(head -1 "$tmp/rails.cases")"
first() { grep '^g0000' "$1" | grep -o -- '--hosts [0-9]* --dtype bf16 --shape [0-9,]*'; }
[ -n "$(first "$tmp/seed7.cases")" ] && [ "$(first "$tmp/seed7.cases")" = "$(first "$tmp/rails.cases")" ] ||
    fail "--topology: the first case drew other hosts or tensor than the default's"
"$bin" bench --generate 8 --seed 7 --topology p3.8xlarge --write-cases "$tmp/p3.cases" 2>"$tmp/err" ||
    fail "--generate --topology p3.8xlarge: $(cat "$tmp/err")"
[ "$(grep -c -- '--src-mesh [0-9]*x4 .* --dst-mesh [0-9]*x4 ' "$tmp/p3.cases")" = 8 ] ||
    fail "--topology p3.8xlarge: meshes not of 4-device hosts: $(head -3 "$tmp/p3.cases")"
"$bin" bench --generate 4 --seed 7 --topology dgx-a100-rails >"$tmp/r.txt" 2>"$tmp/err" &&
    grep -q '^# dgx-a100-rails meshcast' "$tmp/r.txt" || fail "bench --generate --topology dgx-a100-rails: $(cat "$tmp/err")"
for bad in "nosuch-profile" "a b"; do
    "$bin" bench --generate 3 --topology "$bad" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc != 0 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] ||
        fail "bench --generate 3 --topology '$bad': want an error line, got rc $rc: $(cat "$tmp/err")"
done
/usr/bin/python3 - "$tmp" <<'PY' || fail "generated runs: see above"
import json, sys
tmp = sys.argv[1]
def rows(name):
    r = json.load(open(f"{tmp}/{name}.json"))["results"]
    return [(x["case"], x["strategy"], x["estimate_s"], x["lower_bound_s"]) for x in r]
a, b = rows("a"), rows("b")
assert a == b, "seed 7 twice: different cases or estimates"
assert len(a) == 12 * 6, f"{len(a)} rows, want 72"
for case, strategy, est, bound in a:
    assert bound > 0 and est >= bound * (1 - 1e-9), f"{case} {strategy}: est {est} < bound {bound}"
text = open(f"{tmp}/a.txt").read()
profiles = {c.split("-", 1)[1] for c, *_ in a}
for p in profiles:
    assert f"# {p:<11} meshcast" in text, f"no summary line for {p}"
assert "# all         meshcast" in text and "meshcast beaten by another strategy" in text
def cases(t):
    return sorted({tuple(l.split()[:2]) for l in t.splitlines() if l.startswith("g")})
assert len(cases(text)) == 12 and cases(open(f"{tmp}/c.txt").read()) != cases(text), "seed 8 = 7"
assert rows("s") == a, "the written cases ran other cases or estimates than --generate"
PY
exit $failed
