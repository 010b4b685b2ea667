#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The man pages, made by pandoc from the reference documents, so that both say the same. A page is
# one "## NAME" section of a document: its first paragraph is the page's one-line summary, its
# "###" subsections are the page's sections, and it ends at the next "## " heading.
# Usage: manpages.sh PANDOC VERSION OUTDIR DOCUMENT SECTION NAME...
set -eu
pandoc=$1 version=$2 out=$3 document=$4 section=$5
shift 5
mkdir -p "$out"
for name in "$@"; do
    page=$out/$name.$section
    awk -v name="$name" -v section="$section" -v version="$version" '
        function header() {
            printf "---\ntitle: %s\nsection: %s\nheader: Strata Manual\nfooter: Strata %s\n---\n\n",
                toupper(name), section, version
        }
        $0 == "## " name { inside = 1; summary = ""; header(); next }
        inside && /^## / { exit }
        !inside { next }
        summary == "" && /^[^#]/ && NF { summary = $0; next }
        summary != "" && !named && NF && /^[^#]/ { summary = summary " " $0; next }
        !named && (/^#/ || !NF) && summary != "" {
            printf "# NAME\n\n%s - %s\n\n", name, summary
            named = 1
        }
        /^### / { sub(/^### /, ""); print "# " toupper($0); next }
        /^#### / { sub(/^#### /, "## "); print; next }
        named { print }
        END { if (!inside || !named) exit 1 }
    ' "$document" >"$page.md" || {
        echo "manpages.sh: no section \"## $name\" with a summary in $document" >&2
        rm -f "$page.md"
        exit 1
    }
    "$pandoc" --standalone --from markdown --to man -o "$page" "$page.md"
    rm -f "$page.md"
done
