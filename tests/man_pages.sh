#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The built man pages render with man -l: no groff error, and the sections a reader looks for; a
# routine's page that sources its family's (.so) names a page that is there.
# Usage: man_pages.sh BUILDDIR
set -u
status=0
pages=0
for page in "$1"/man/*.[13]; do
    # A routine's page that sources its family's: the family's page must be there.
    if [ "$(head -c 4 "$page")" = ".so " ]; then
        target=$(sed -n 's/^\.so man[0-9]\///p' "$page")
        [ -f "$1/man/$target" ] || { echo "${page##*/}: sources a missing $target"; status=1; }
        continue
    fi
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
    rm -f "$page.log"
done
[ "$status" = 0 ] && echo "$pages pages render, and every routine's page sources one of them"
exit $status
