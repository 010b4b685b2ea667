#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The man pages of the OpenSHMEM routines, made by pandoc from docs/routines/*.md. A page is one
# "## NAME" section, as docs/manpage.awk reads it; the comment after its summary
# ("<!-- names: REGEX... -->") claims the declared routines the page covers (each regex matched
# whole). Its SYNOPSIS is the declarations of those routines, read from the headers; each of them other than NAME gets a page that sources
# NAME's, so that `man shmem_int_put` opens shmem_put's page.
# Usage: apipages.sh PANDOC VERSION OUTDIR DECLARATIONS DOCUMENT...
#   DECLARATIONS: one C declaration per line, in the headers' order (made from shmem.h).
set -eu
pandoc=$1 version=$2 out=$3 declarations=$4
shift 4
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-apipages.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The declared name of each declaration, in the same order.
sed -E 's/^.*[^a-z0-9_](shmemx?_[a-z0-9_]+) *\(.*$/\1/' "$declarations" >"$work/names"

for document in "$@"; do
    # One NAME.body (the section's text) and NAME.regexes per section.
    awk -v dir="$work" '
        /^## / { page = $2; file = dir "/" page ".body"; print page >> (dir "/pages") }
        page == "" { next }
        /^<!-- names: / { for (i = 3; i < NF; i++) print $i > (dir "/" page ".regexes") }
        { print > file }
    ' "$document"
done
[ -s "$work/pages" ] || { echo "apipages.sh: no page in $*" >&2; exit 1; }

while read -r page; do
    [ -s "$work/$page.regexes" ] ||
        { echo "apipages.sh: $page has no <!-- names: ... --> comment" >&2; exit 1; }
    # Which declarations the page covers: a line number per declared name its regexes match.
    pattern=$(sed 's/^/^(/; s/$/)$/' "$work/$page.regexes" | paste -sd'|' -)
    grep -nxE "$pattern" "$work/names" | cut -d: -f1 >"$work/$page.lines" || true
    awk -v name="$page" -v section=3 -v version="$version" -v lines="$work/$page.lines" \
        -v declarations="$declarations" -f "$(dirname "$0")/manpage.awk" "$work/$page.body" \
        >"$work/$page.md"
    "$pandoc" --standalone --from markdown --to man -o "$out/$page.3" "$work/$page.md"
    # The pages of the other names the page covers.
    while read -r n; do
        name=$(sed -n "${n}p" "$work/names")
        [ "$name" = "$page" ] || echo ".so man3/$page.3" >"$out/$name.3"
    done <"$work/$page.lines"
done <"$work/pages"
