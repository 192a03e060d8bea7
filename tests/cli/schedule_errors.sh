#!/usr/bin/env bash
# meshcast schedule: bad input exits 2 with exactly one line on stderr ("meshcast: ...")
# naming the problem, and nothing on stdout.
# usage: bash schedule_errors.sh <meshcast-binary> <source-dir>
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

prefix=(schedule)
# shellcheck source=lib/expect.bash
source "$(dirname "$0")/lib/expect.bash"

expect_bad "unknown schedule kind 'zb-h3'" --kind zb-h3 --stages 4 --microbatches 8
expect_bad "needs at least 2 stages (got 1)" --kind 1f1b --stages 1 --microbatches 8
expect_bad "D=5 is odd" --kind chimera --stages 5 --microbatches 10
expect_bad "even number of microbatches >= stages (m=2, p=4)" --kind chimera --stages 4 --microbatches 2
expect_bad "microbatches (6) must be a multiple of stages (4)" --kind interleaved --stages 4 --microbatches 6
expect_bad "needs microbatches >= stages (m=3 < p=4)" --kind zb-v --stages 4 --microbatches 3
expect_bad "needs microbatches >= 2 x stages (m=7, p=4)" --kind dualpipev --stages 4 --microbatches 7
expect_bad "uses 1 chunk(s) per rank, not 2" --kind 1f1b --stages 4 --microbatches 8 --chunks 2
expect_bad "directions (chunks) must be 2..4 (got 5)" --kind amdp --stages 4 --microbatches 8 --chunks 5
expect_bad "joins must be 1..4 (got 0)" --kind branch --stages 4 --microbatches 8 --joins 0
expect_bad "needs at least 1 microbatch (got 0)" --kind gpipe --stages 4 --microbatches 0
expect_bad "--stages 'x': expected an integer" --kind 1f1b --stages x --microbatches 8
expect_bad "--costs 'F=1,Q=2': unknown key 'Q'" --kind 1f1b --stages 4 --microbatches 8 --costs F=1,Q=2
expect_bad "cannot exceed it" --kind zb-h1 --stages 4 --microbatches 8 --costs F=1,B=1,W=2
expect_bad "--comm '-1': expected a non-negative number" --kind 1f1b --stages 4 --microbatches 8 --comm -1
expect_bad "--kind is required" --stages 4 --microbatches 8
expect_bad "--microbatches is required" --kind 1f1b --stages 4
expect_bad "--svg needs a value" --kind 1f1b --stages 4 --microbatches 8 --svg
expect_bad "unknown option '--bogus'" --kind 1f1b --stages 4 --microbatches 8 --bogus
plan_case=(--shape 64,64 --src-mesh 1x4 --src-spec S0R --dst-mesh 1x4 --dst-spec RS0)
expect_bad "not both" --kind 1f1b --stages 4 --microbatches 8 --comm 1 "${plan_case[@]}"
expect_bad "must be positive" --kind 1f1b --stages 4 --microbatches 8 --unit 0 "${plan_case[@]}"
expect_bad "one plan's estimate" --kind 1f1b --stages 4 --microbatches 8 --strategy all \
    "${plan_case[@]}"
expect_bad "src spec" --kind 1f1b --stages 4 --microbatches 8 --shape 64,64 --src-mesh 1x4 \
    --src-spec S5R --dst-mesh 1x4 --dst-spec RS0

exit $failed
