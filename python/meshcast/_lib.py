"""Finding and loading libmeshcast, and remembering which one was loaded."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path
from typing import List, Optional

_SONAMES = ("libmeshcast.so", "libmeshcast.so.0")
_loaded: Optional[ctypes.CDLL] = None
_path: Optional[str] = None


def _candidates() -> List[str]:
    """Where to look, in order: $MESHCAST_LIBRARY (a file or a directory), next to this
    package (a copy installed with it), the build tree of a source checkout ($MESHCAST_BUILD_DIR
    or <repo>/build), then the system loader."""
    here = Path(__file__).resolve().parent
    out: List[str] = []
    env = os.environ.get("MESHCAST_LIBRARY")
    if env:
        return [str(Path(env) / _SONAMES[0])] if Path(env).is_dir() else [env]
    dirs = [here]
    build = os.environ.get("MESHCAST_BUILD_DIR")
    dirs.append(Path(build) if build else here.parent.parent / "build")
    for d in dirs:
        out += [str(d / name) for name in _SONAMES if (d / name).exists()]
    found = ctypes.util.find_library("meshcast")
    out.append(found or _SONAMES[1])
    return out


def lib() -> ctypes.CDLL:
    """The loaded library (loads it on first use)."""
    global _loaded, _path
    if _loaded is None:
        errors = []
        for cand in _candidates():
            try:
                _loaded = ctypes.CDLL(cand)
            except OSError as e:
                errors.append(f"{cand}: {e}")
                continue
            _path = _resolve(cand)
            break
        else:
            raise ImportError("meshcast: cannot load libmeshcast (set MESHCAST_LIBRARY to its "
                              "path): " + "; ".join(errors))
    return _loaded


def _resolve(cand: str) -> str:
    """The file the loader actually mapped (a bare soname resolves through the loader)."""
    if os.sep in cand:
        return str(Path(cand).resolve())
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if os.path.basename(p).startswith("libmeshcast.so"):
                return p
    return cand


def library_path() -> str:
    """The path of the libmeshcast this package loaded."""
    lib()
    assert _path is not None
    return _path
