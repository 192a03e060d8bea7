#!/bin/bash
# 4 MiB chains over k hops vs estimate, CPU busy share sampled
cd "$(dirname "$0")/../../.."
tb=(benchmarks/testbed/testbed --name diag)
topo=benchmarks/results/testbed-small-2/cpu-testbed-calibrated.topo
tb_up() { "${tb[@]}" up --topology cpu-testbed --hosts 5 --rate 400Mbit/s --burst 4542 >/dev/null; }
tb_up || exit 1
cpu() { awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat; }
for strat in broadcast_first meshcast; do
for k in 1 2 3 4; do
  dst=""; for ((h=1;h<=k;h++)); do dst+="${dst:+,}$((h*4))"; done
  read b0 i0 < <(cpu)
  j=$("${tb[@]}" launch --ranks 5 -- build/meshcast run --shape 1048576 --dtype i32 --iters 11 --warmup 2 --json \
     --src-mesh 1x1 --src-spec R --dst-mesh ${k}x1 --dst-spec R --src-devices 0 --dst-devices $dst \
     --topology $topo --hosts 5 --transport ucx --strategy $strat)
  read b1 i1 < <(cpu)
  /usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1]); t=d["time_s"]["median"]; e=d.get("estimate_s") or d.get("plan",{}).get("estimate_s"); print(sys.argv[2], "k=",sys.argv[3], "median",round(t,4),"est",e, "ratio", round(t/e,3) if e else None, "busy", sys.argv[4])' "$j" $strat $k "$(awk -v b=$((b1-b0)) -v i=$((i1-i0)) 'BEGIN{printf "%.2f", b/(b+i)}')"
done; done
"${tb[@]}" down >/dev/null
