"""docs/python.md's example runs as written (in a scratch directory, as a new process)."""
import os
import re
import subprocess
import sys

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "python.md")
PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_example_runs(tmp_path):
    text = open(DOC).read()
    example = re.search(r"## Example\n.*?```python\n(.*?)```", text, re.S).group(1)
    path = tmp_path / "example.py"
    path.write_text(example)
    env = dict(os.environ, PYTHONPATH=PKG)
    out = subprocess.run([sys.executable, str(path)], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.rstrip().endswith("ok")
    assert "P('dp', None) -> [Shard(1), Shard(1)]" in out.stdout
    assert (tmp_path / "plan.dot").read_text().startswith("digraph")
    assert (tmp_path / "zb-h1.svg").read_text().startswith("<svg")
