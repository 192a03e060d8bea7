"""What the loaded library was built with."""
from __future__ import annotations

import ctypes
from typing import Dict

from ._capi import BuildDep, C


def build_info() -> Dict[str, str]:
    """Optional dependencies of the loaded library: name -> version ("" when built in with an
    unknown version); the ones it was built without are absent."""
    out = {}
    for i in range(C.mc_build_dep_count()):
        d = BuildDep()
        if C.mc_build_dep(i, ctypes.byref(d)) == 0 and d.built:
            out[d.name.decode()] = d.version.decode()
    return out
