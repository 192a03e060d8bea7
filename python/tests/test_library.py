"""Loading libmeshcast: which one, from where, and what it was built with."""
import os
import subprocess
import sys

import meshcast

PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_library_path_is_the_loaded_file():
    path = meshcast.library_path()
    assert os.path.isabs(path) and os.path.exists(path)
    assert os.path.basename(path).startswith("libmeshcast.so")
    with open("/proc/self/maps") as f:
        assert path in f.read()
    want = os.environ.get("MESHCAST_LIBRARY")
    if want:
        assert path == os.path.realpath(want)


def _load_in_child(env, cwd=PKG_DIR):
    out = subprocess.run([sys.executable, "-c", "import meshcast; print(meshcast.library_path())"],
                         env=env, cwd=cwd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_search_order_env_then_next_to_package_then_build_tree(tmp_path):
    lib = os.path.realpath(meshcast.library_path())
    env = {k: v for k, v in os.environ.items() if k != "MESHCAST_LIBRARY"}
    # A directory in MESHCAST_LIBRARY.
    d = tmp_path / "libdir"
    d.mkdir()
    os.symlink(lib, d / "libmeshcast.so")
    got = _load_in_child(dict(env, MESHCAST_LIBRARY=str(d)))
    assert got == os.path.realpath(d / "libmeshcast.so")
    # The build tree named by MESHCAST_BUILD_DIR.
    assert _load_in_child(dict(env, MESHCAST_BUILD_DIR=str(d))) == lib
    # A copy next to the package wins over the build tree.
    pkg = tmp_path / "meshcast"
    subprocess.run(["cp", "-r", os.path.join(PKG_DIR, "meshcast"), str(pkg)], check=True)
    os.symlink(lib, pkg / "libmeshcast.so")
    got = _load_in_child(dict(env, MESHCAST_BUILD_DIR="/nonexistent",
                              PYTHONPATH=str(tmp_path)), cwd=str(tmp_path))
    assert got == lib


def test_missing_library_says_where_it_looked():
    env = dict(os.environ, MESHCAST_LIBRARY="/nonexistent/libmeshcast.so")
    out = subprocess.run([sys.executable, "-c", "import meshcast; meshcast.library_path()"],
                         env=env, cwd=PKG_DIR, capture_output=True, text=True)
    assert out.returncode != 0
    assert "cannot load libmeshcast" in out.stderr and "/nonexistent/libmeshcast.so" in out.stderr


def test_build_info_names_the_optional_dependencies():
    info = meshcast.build_info()
    assert isinstance(info, dict)
    assert set(info) <= {"UCX", "MPI", "hwloc", "CUDA", "NCCL"}


def test_pip_install_offline(tmp_path):
    """pip install ./python works without network (no build isolation), into a target."""
    from conftest import need
    need(subprocess.run([sys.executable, "-m", "pip", "--version"],
                        capture_output=True).returncode == 0, "pip not available")
    target = tmp_path / "target"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation",
                    "--no-deps", "--no-index", "--target", str(target), PKG_DIR],
                   check=True, cwd=str(tmp_path), capture_output=True)
    assert (target / "meshcast" / "py.typed").exists()
    env = dict(os.environ, PYTHONPATH=str(target), MESHCAST_LIBRARY=meshcast.library_path())
    out = subprocess.run([sys.executable, "-c", "import meshcast; print(meshcast.__file__, "
                          "meshcast.library_path())"], env=env, cwd=str(tmp_path),
                         capture_output=True, text=True, check=True)
    assert out.stdout.startswith(str(target))
