#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The built man pages render with man -l: no groff error, and the sections a reader looks for.
# Usage: man_pages.sh BUILDDIR
set -u
status=0
for page in "$1"/man/*.[13]; do
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
exit $status
