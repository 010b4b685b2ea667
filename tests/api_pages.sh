#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every routine that shmem.h and shmemx.h declare belongs to exactly one page of the reference:
# a "## NAME" section of docs/routines/*.md, whose comment "<!-- names: REGEX... -->" lists the
# declared names it covers (extended regular expressions, each matched whole), or a "## NAME"
# section of docs/spaces.md for that very name. Prints each name left without a page or claimed by
# two, and a last line "N routines, each on one page" when none is.
# Usage: api_pages.sh SRCDIR BUILDDIR
set -u
src=$1
build=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-api-pages.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The declared names: the headers preprocessed, every identifier followed by "(".
for header in shmem.h shmemx.h; do
    cc -E -P -I"$src/include" -I"$build/include" "$src/include/$header"
done | tr '\n' ' ' | grep -oE '\bshmemx?_[a-z0-9_]+ *\(' | tr -d ' (' | sort -u >"$work/declared"
[ -s "$work/declared" ] || { echo "no routine found in shmem.h"; exit 1; }

# page<TAB>regex, one line per regex.
for doc in "$src"/docs/routines/*.md; do
    [ -e "$doc" ] || continue
    awk '/^## / { page = $2 } /^<!-- names: / { for (i = 3; i < NF; i++) print page "\t" $i }' "$doc"
done >"$work/regexes"
sed -n 's/^## \(shmemx\{0,1\}_[a-z0-9_]*\)$/\1\t\1/p' "$src/docs/spaces.md" >>"$work/regexes"

# One pass: each name against every regex (a shell loop over them took most of a minute).
awk -F'\t' '
    FNR == NR { page[++n] = $1; regex[n] = "^(" $2 ")$"; next }
    {
        found = ""; count = 0
        for (i = 1; i <= n; i++)
            if ($0 ~ regex[i] && index(" " found " ", " " page[i] " ") == 0) {
                found = found (count++ ? " " : "") page[i]
            }
        if (count == 0) { print "no page for " $0; bad = 1 }
        else if (count > 1) { print $0 " is on several pages: " found; bad = 1 }
        names++
    }
    END {
        if (!bad) print names " routines, each on one page"
        exit bad
    }' "$work/regexes" "$work/declared"
