#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The man pages, made by pandoc from the reference documents, so that both say the same. A page is
# one "## NAME" section of a document, as docs/manpage.awk reads it.
# Usage: manpages.sh PANDOC VERSION OUTDIR DOCUMENT SECTION NAME...
set -eu
pandoc=$1 version=$2 out=$3 document=$4 section=$5
shift 5
mkdir -p "$out"
for name in "$@"; do
    page=$out/$name.$section
    awk -v name="$name" -v section="$section" -v version="$version" \
        -f "$(dirname "$0")/manpage.awk" "$document" >"$page.md" || {
        echo "manpages.sh: no section \"## $name\" with a summary in $document" >&2
        rm -f "$page.md"
        exit 1
    }
    "$pandoc" --standalone --from markdown --to man -o "$page" "$page.md"
    rm -f "$page.md"
done
