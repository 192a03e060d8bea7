#!/usr/bin/env bash
# Host-local pre-combining of reductions, in the cost model: meshcast's estimate against the
# lower bound for an 8 MiB f32 [Partial()] on every device, all-reduced ([Replicate()]) and
# reduce-scattered ([Shard(0)]) over the same devices, on 2 hosts x 4 devices (cpu-testbed,
# p3.8xlarge) and 4 hosts x 8 devices (cpu-testbed, dgx-a100 at 8 per host). Planning only:
# no cluster needed. Run it with two builds to compare (before and after a change):
#   bash benchmarks/reduce_precombine.sh build/meshcast [label]
# Output: one line per case, "label topology hosts x dph dst nic_bytes estimate_s bound_s
# est/bound".
set -eu
bin=$1
label=${2:-$(basename "$(dirname "$bin")")}
printf '%-10s %-12s %-7s %-14s %12s %12s %12s %8s\n' label topology hosts dst nic_bytes \
    estimate_s bound_s est/bnd
for cfg in "cpu-testbed 2 4" "p3.8xlarge 2 4" "cpu-testbed 4 8" "dgx-a100 4 8"; do
    read -r topo hosts dph <<<"$cfg"
    n=$((hosts * dph))
    topo_arg=$topo
    if [ "$dph" != "$(sed -n 's/^devices_per_host //p' "$(dirname "$0")/../topology/clusters/$topo.topo")" ]; then
        # the same links with dph devices per host
        topo_arg=$(mktemp)
        sed "s/^devices_per_host .*/devices_per_host $dph/" \
            "$(dirname "$0")/../topology/clusters/$topo.topo" >"$topo_arg"
    fi
    for dst in "[Replicate()]" "[Shard(0)]"; do
        line=$("$bin" plan --topology "$topo_arg" --hosts "$hosts" --shape 2048,1024 \
            --src-mesh "$n" --src-spec "[Partial()]" --dst-mesh "$n" --dst-devices "0-$((n - 1))" \
            --dst-spec "$dst" --strategy meshcast | grep '^meshcast ')
        read -r _ _ _ nic _ _ est bound ratio _ <<<"$line"
        printf '%-10s %-12s %-7s %-14s %12s %12s %12s %8s\n' "$label" "$topo" "${hosts}x$dph" \
            "$dst" "$nic" "$est" "$bound" "$ratio"
    done
    [ "$topo_arg" != "$topo" ] && rm -f "$topo_arg"
done
