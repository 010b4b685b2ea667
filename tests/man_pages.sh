#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The built man pages render with man -l: no groff error, and the sections a reader looks for; a
# routine's page that sources its family's (.so) names a page that is there; a routine page's
# SYNOPSIS includes shmemx.h exactly where it declares a shmemx_ routine.
# Usage: man_pages.sh BUILDDIR
set -u
status=0
links=0
# The sourcing pages, read in one pass: "PAGE:.so man3/TARGET".
while IFS=: read -r page line; do
    links=$((links + 1))
    target=${line#.so man*/}
    [ -f "$1/man/$target" ] || { echo "${page##*/}: sources a missing $target"; status=1; }
done < <(grep -H '^\.so ' "$1"/man/*.[13])
pages=0
while read -r page; do
    pages=$((pages + 1))
    if ! rendered=$(MANWIDTH=80 man --warnings -l "$page" 2>"$page.log") ||
        grep -qi "error" "$page.log"; then
        echo "${page##*/}: man -l failed"
        cat "$page.log"
        status=1
    fi
    for section in NAME SYNOPSIS DESCRIPTION; do
        grep -q "^$section\$" <<<"$rendered" || { echo "${page##*/}: no $section"; status=1; }
    done
    if [ "${page##*.}" = 3 ]; then
        synopsis=$(sed -n '/^SYNOPSIS$/,/^DESCRIPTION$/p' <<<"$rendered")
        extension=$(grep -c 'shmemx_[a-z0-9_]* *(' <<<"$synopsis")
        included=$(grep -c '#include <shmemx.h>' <<<"$synopsis")
        [ "$((extension > 0))" = "$included" ] ||
            { echo "${page##*/}: $extension shmemx routines, $included includes of shmemx.h"; status=1; }
    fi
    rm -f "$page.log"
done < <(grep -L '^\.so ' "$1"/man/*.[13])
[ "$status" = 0 ] && echo "$pages pages render, and each of the $links routines' pages sources one"
exit $status
