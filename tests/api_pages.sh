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

status=0
while read -r name; do
    pages=$(while IFS=$'\t' read -r page regex; do
        [[ $name =~ ^($regex)$ ]] && echo "$page"
    done <"$work/regexes" | sort -u)
    case $(wc -l <<<"$pages") in
    1) [ -n "$pages" ] || { echo "no page for $name"; status=1; } ;;
    *) echo "$name is on several pages: $(echo $pages)"; status=1 ;;
    esac
done <"$work/declared"
[ "$status" = 0 ] && echo "$(wc -l <"$work/declared") routines, each on one page"
exit $status
