#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A first run on Debian 12, from the root of a checkout: installs the packages the build needs,
# builds in _build, installs under PREFIX (/opt/strata as root, else ~/strata), then compiles
# examples/spaces_tour.c with the installed oshcc and runs it on 4 PEs. Where this machine has no
# GPU, a test device stands in for one on PEs 0 and 2 (SHMEM_TEST_DEVICE_PES=0,2).
# Usage: bash scripts/quickstart.sh   (PREFIX=DIR to install elsewhere)
set -eu
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then
    prefix=${PREFIX:-/opt/strata}
    sudo=()
else
    prefix=${PREFIX:-$HOME/strata}
    sudo=(sudo)
fi
packages="build-essential autoconf automake libtool pkg-config libucx-dev libpmix-dev
          libhwloc-dev libfabric-dev"
# shellcheck disable=SC2086 # a list of package names
missing=$(for p in $packages; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
    echo "== installing $(echo $missing)"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # shellcheck disable=SC2086 # a list of package names
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
echo "== building in _build, installing in $prefix"
./autogen.sh >_autogen.log 2>&1 || { echo "autogen.sh failed: see _autogen.log"; exit 1; }
rm -f _autogen.log
mkdir -p _build
(cd _build && ../configure --prefix="$prefix" >configure.log &&
    make -j"$(nproc)" >make.log && make install >install.log) ||
    { echo "the build failed: see _build/configure.log, make.log and install.log"; exit 1; }
echo "== examples/spaces_tour on 4 PEs"
"$prefix/bin/oshcc" -o _build/spaces_tour examples/spaces_tour.c
if "$prefix/bin/oshinfo" | grep -qE '^  (cuda|hip): [0-9]+ device'; then
    "$prefix/bin/oshrun" -np 4 _build/spaces_tour
else
    echo "(no GPU here: a test device stands in for one on PEs 0 and 2)"
    SHMEM_TEST_DEVICE_PES=0,2 "$prefix/bin/oshrun" -np 4 _build/spaces_tour
fi
echo "== done: add $prefix/bin to PATH; bash scripts/test.sh runs the test suite"
