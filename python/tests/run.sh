#!/usr/bin/env bash
# Runs the Python package's pytest suite against one build: the library and the command
# given (so an ASan build tests its own library). Exits 77 (skipped) when Debian's python3
# lacks pytest, numpy or torch, unless MESHCAST_REQUIRE_DEPS=1 (CI), where that is a failure.
# usage: bash run.sh <libmeshcast.so> <meshcast-binary>
set -u
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
for mod in pytest numpy torch; do
    if ! "$py" -c "import $mod" 2>/dev/null; then
        if [ "${MESHCAST_REQUIRE_DEPS:-0}" = 1 ]; then
            echo "FAIL: $py cannot import $mod (scripts/install-deps installs python3-$mod)" >&2
            exit 1
        fi
        echo "SKIP: $py cannot import $mod (scripts/install-deps installs python3-$mod)"
        exit 77
    fi
done
export MESHCAST_LIBRARY=$1 MESHCAST_BIN=$2
# A sanitizer build's library needs its runtimes loaded first: the interpreter is not
# instrumented. Leak checking stays off: the interpreter keeps its objects until exit.
runtimes=$(ldd "$1" | awk '/lib(asan|ubsan)\.so/ {print $3}' | paste -sd: -)
if [ -n "$runtimes" ]; then
    export LD_PRELOAD=$runtimes
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fi
cd "$here/.." && exec "$py" -m pytest -q -p no:cacheprovider tests
