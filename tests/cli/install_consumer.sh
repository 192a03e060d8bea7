#!/usr/bin/env bash
# Install test: builds meshcast from <source-dir> into a temporary directory (tests off),
# installs it to a temporary prefix, then builds tests/install/consumer.c against the
# installed package three ways and runs each:
#   CMake find_package(meshcast) -> meshcast::meshcast (shared) and meshcast::meshcast_static,
#   pkg-config --cflags --libs meshcast (shared) and pkg-config --static --libs (static).
# Also checks that <prefix>/bin/meshcast info runs.
# usage: bash install_consumer.sh <meshcast-binary> <source-dir>
set -euo pipefail
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
jobs=${MESHCAST_INSTALL_TEST_JOBS:-2}
prefix=$tmp/prefix
cc=${CC:-cc}

# Step logs go to files; on failure the tail is shown.
step() {
    local name=$1
    shift
    if ! "$@" >"$tmp/$name.log" 2>&1; then
        tail -n 40 "$tmp/$name.log" >&2
        fail "$name: $*"
    fi
}

echo "== build meshcast (Release, tests off) and install to a temporary prefix"
step configure cmake -S "$src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release \
    -DMESHCAST_BUILD_TESTS=OFF -DCMAKE_INSTALL_PREFIX="$prefix"
step build cmake --build "$tmp/build" -j "$jobs"
step install cmake --install "$tmp/build"

libdir=$(find "$prefix" -name meshcast.pc -path '*/pkgconfig/*' -printf '%h\n' | head -n 1)
libdir=${libdir%/pkgconfig}
[ -n "$libdir" ] || fail "no meshcast.pc under $prefix"
for f in include/meshcast/meshcast.h include/meshcast/version.h bin/meshcast; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
done
for f in libmeshcast.so libmeshcast.a cmake/meshcast/meshcastConfig.cmake \
    cmake/meshcast/meshcastConfigVersion.cmake cmake/meshcast/meshcastTargets.cmake; do
    [ -e "$libdir/$f" ] || fail "not installed: ${libdir#"$prefix"/}/$f"
done

echo "== installed meshcast info"
"$prefix/bin/meshcast" info >"$tmp/info.out" 2>&1 || {
    cat "$tmp/info.out" >&2
    fail "$prefix/bin/meshcast info exited non-zero"
}
grep -q . "$tmp/info.out" || fail "meshcast info printed nothing"

echo "== consumer via CMake find_package(meshcast)"
step consumer-configure cmake -S "$src/tests/install" -B "$tmp/consumer" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
step consumer-build cmake --build "$tmp/consumer" -j "$jobs"
for exe in consumer_shared consumer_static; do
    "$tmp/consumer/$exe" || fail "CMake $exe exited non-zero"
done
# The shared consumer really uses the installed shared library.
if command -v ldd >/dev/null; then
    ldd "$tmp/consumer/consumer_shared" | grep -q "$libdir/libmeshcast.so" ||
        fail "consumer_shared does not load $libdir/libmeshcast.so"
fi

echo "== consumer via pkg-config"
export PKG_CONFIG_PATH=$libdir/pkgconfig
pkg-config --exists meshcast || fail "pkg-config cannot find meshcast in $PKG_CONFIG_PATH"
read -r -a cflags <<<"$(pkg-config --cflags meshcast)"
read -r -a libs <<<"$(pkg-config --libs meshcast)"
read -r -a static_libs <<<"$(pkg-config --static --libs meshcast)"
step pc-shared "$cc" -std=c11 -Wall -Wextra -Werror "$src/tests/install/consumer.c" \
    -o "$tmp/pc_shared" "${cflags[@]}" "${libs[@]}" -Wl,-rpath,"$libdir"
"$tmp/pc_shared" || fail "pkg-config shared consumer exited non-zero"
# Static: the same flags with the archive chosen explicitly instead of the .so.
static_libs=("${static_libs[@]/#-lmeshcast/-l:libmeshcast.a}")
step pc-static "$cc" -std=c11 -Wall -Wextra -Werror "$src/tests/install/consumer.c" \
    -o "$tmp/pc_static" "${cflags[@]}" "${static_libs[@]}"
"$tmp/pc_static" || fail "pkg-config static consumer exited non-zero"

echo "install test passed"
