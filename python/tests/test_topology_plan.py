"""Topologies (built-in, file, text, discovered) and plans with statistics and output."""
import json

import pytest

import meshcast as mc


def test_builtin_topology():
    assert "p3.8xlarge" in mc.builtin_names() and "dgx-h100" in mc.builtin_names()
    with mc.Topology("dgx-h100", hosts=2) as t:
        assert t.name == "dgx-h100" and t.hosts == 2
        assert t.devices == 2 * t.devices_per_host
        assert t.host_of(t.devices_per_host) == 1 and t.host_of(10**6) == -1
        nic = t.link("nic")
        assert nic.bandwidth > 0 and nic.latency > 0
        assert t.nic_in > 0 and t.nic_out > 0 and t.nics_per_host >= 1
        assert t.host_bandwidth >= 0
        assert t.owner(t.devices - 1, 2) == 1
        t.hosts = 3
        assert t.hosts == 3 and t.copy().hosts == 3
    with pytest.raises(mc.InvalidArgumentError, match="link class"):
        mc.Topology("p3.8xlarge").link("pcie")


def test_topology_file_and_text_round_trip(tmp_path):
    text = mc.Topology("cpu-testbed", hosts=3).to_text()
    path = tmp_path / "mine.topo"
    path.write_text(text)
    t = mc.Topology(str(path))
    assert t.hosts == 3 and t.to_text() == text
    assert mc.Topology.parse(text, "mine").to_text() == text
    # a shaped NIC's burst reads back and survives the text
    shaped = text.replace("latency=50us\n", "latency=50us burst=128KiB\n", 1)
    assert shaped != text and t.nic_burst == 0
    s = mc.Topology.parse(shaped, "shaped")
    assert s.nic_burst == 131072 and s.to_text() == shaped


def test_topology_errors():
    with pytest.raises(mc.NotFoundError, match="unknown topology 'nosuch'"):
        mc.Topology("nosuch")
    with pytest.raises(mc.NotFoundError, match="cannot open"):
        mc.Topology("/nonexistent/x.topo")
    with pytest.raises(mc.InvalidArgumentError, match="origin.topo"):
        mc.Topology.parse("hosts zero\n", "origin.topo")


def test_discovered_topology():
    from conftest import need
    need("hwloc" in mc.build_info(), "meshcast built without hwloc")
    t = mc.Topology.discover()
    assert t.hosts == 1 and t.devices_per_host >= 1
    with mc.Communicator() as c:
        tc = mc.Topology.discover(c, devices_per_rank=2)
        assert tc.hosts == 1 and tc.devices_per_host == 2
    with pytest.raises(mc.InvalidArgumentError, match="need a comm"):
        mc.Topology.discover(devices_per_rank=2)


def _layouts():
    src = mc.Layout((1024, 1024), "i32", mc.Mesh((2, 4)), "S0R")
    dst = mc.Layout((1024, 1024), "i32", mc.Mesh((2, 4), devices=range(8, 16)), "RS1")
    return src, dst


def test_plan_stats_and_outputs():
    src, dst = _layouts()
    topo = mc.Topology("p3.8xlarge", hosts=4)
    with mc.Plan(src, dst, topo) as p:
        s = p.stats
        assert s.valid and s.pieces > 0 and s.nic_bytes > 0
        assert s.estimate_s >= s.lower_bound_s * (1 - 1e-9) and s.lower_bound_s > 0
        assert s.lower_bound_s == pytest.approx(mc.lower_bound(src, dst, topo))
        p.validate()
        j = json.loads(p.to_json())
        assert j["strategy"] == "meshcast" and j["pieces"] == s.pieces
        assert p.to_dot().startswith("digraph")
        assert "meshcast" in p.to_text()
    for name in mc.strategies():
        assert mc.Plan(src, dst, topo, strategy=name, chunk_bytes=1 << 16, seed=3).stats.valid


def test_plan_errors():
    src, dst = _layouts()
    with pytest.raises(mc.InvalidArgumentError, match="strategy"):
        mc.Plan(src, dst, mc.Topology("p3.8xlarge", hosts=4), strategy="teleport")
    with pytest.raises(mc.InvalidArgumentError):  # device 15 is not in a 2-host cluster
        mc.Plan(src, dst, mc.Topology("p3.8xlarge", hosts=2))
    other = mc.Layout((1024, 512), "i32", mc.Mesh((2, 4)), "S0R")
    with pytest.raises(mc.InvalidArgumentError):
        mc.Plan(src, other, mc.Topology("p3.8xlarge", hosts=4))
