#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A program built against the installed Strata the two ways build systems ask for it, pkg-config
# (strata.pc) and CMake (find_package(Strata), target Strata::strata), runs on two PEs.
# Usage: consumers.sh PREFIX SRCDIR (PREFIX: where `make install` put Strata)
set -u
prefix=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-consumers.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0

# hello_runs NAME PROGRAM: both PEs greet.
hello_runs() {
    local out
    out=$("$prefix/bin/oshrun" -np 2 "$2" 2>&1)
    if grep -q "Hello from PE 0 of 2" <<<"$out" && grep -q "Hello from PE 1 of 2" <<<"$out"; then
        echo "PASS: $1"
    else
        echo "FAIL: $1"
        printf '%s\n' "$out" | tail -n 10 | sed 's/^/    | /'
        status=1
    fi
}

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046 # pkg-config's flags are words
if cc -o "$work/hello_pc" "$src/examples/hello.c" $(pkg-config --cflags --libs strata); then
    hello_runs "built with pkg-config strata" "$work/hello_pc"
else
    echo "FAIL: built with pkg-config strata (compile)"
    status=1
fi

mkdir -p "$work/cmake"
cat >"$work/cmake/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.13)
project(hello C)
find_package(Strata 0.1 REQUIRED)
add_executable(hello "$src/examples/hello.c")
target_link_libraries(hello Strata::strata)
CMAKE
if cmake -S "$work/cmake" -B "$work/cmake/build" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log" 2>&1 &&
    cmake --build "$work/cmake/build" >>"$work/cmake.log" 2>&1; then
    hello_runs "built with CMake find_package(Strata)" "$work/cmake/build/hello"
else
    echo "FAIL: built with CMake find_package(Strata)"
    tail -n 20 "$work/cmake.log" | sed 's/^/    | /'
    status=1
fi
exit $status
