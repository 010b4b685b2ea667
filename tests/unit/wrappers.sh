#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# oshcc and its C++ names (oshc++, oshCC): the C or C++ compiler by the name called, the
# include directory and the library, nothing a program did not ask for. With Strata installed,
# a C and a C++ program are built with them and run.
# Usage: wrappers.sh BUILDDIR SRCDIR
set -u
build=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/wrappers.XXXXXX")
trap 'rm -rf "$work"' EXIT
for name in oshcc oshc++ oshCC; do
    ln -s "$build/oshrun/oshcc" "$work/$name"
done
status=0
c_link=$("$work/oshcc" -showme:link)
libdir=${c_link%% *}
libdir=${libdir#-L}
cxx_line=$("$work/oshc++" -showme)
cc_line=$("$work/oshcc" -showme)
# Exactly the library (and, in a sanitizer build, the sanitizers' runtime it needs): no -lm, no
# -lpthread, no other library a program did not ask for.
sanitize=$(sed -n 's/^SAN_CFLAGS = //p' "$build/Makefile")
if [ "$c_link" != "-L$libdir -Wl,-rpath,$libdir -lstrata${sanitize:+ $sanitize}" ]; then
    echo "FAIL: oshcc links more than the library: $c_link"
    status=1
fi
if [ "${cxx_line%% *}" = "${cc_line%% *}" ] || [ "$("$work/oshCC" -showme)" != "$cxx_line" ]; then
    echo "FAIL: oshc++/oshCC do not call the C++ compiler: '$cxx_line' vs '$cc_line'"
    status=1
fi
if [ ! -e "$libdir/libstrata.so" ]; then
    echo "SKIP: building with the wrappers (Strata is not installed in $libdir)"
    exit "$status"
fi
"$work/oshcc" -o "$work/hello" "$src/examples/hello.c" &&
    "$work/oshc++" -std=c++11 -o "$work/cxx_api" "$src/tests/spmd/cxx_api.cpp" || exit 1
"$build/oshrun/oshrun" -np 2 "$work/hello" >"$work/out" 2>&1 &&
    "$build/oshrun/oshrun" -np 2 "$work/cxx_api" >>"$work/out" 2>&1 || {
    echo "FAIL: programs built with the wrappers"
    cat "$work/out"
    status=1
}
exit "$status"
