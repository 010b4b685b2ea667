#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The documents hold together: every relative link of README.md, CONTRIBUTING.md and docs/ names
# a file of the tree (and a heading of it, for links with #anchor), and every complete C program
# in them (a ```c block with a main) compiles against the tree's headers.
# Usage: docs.sh SRCDIR BUILDDIR
set -u
src=$1
build=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-docs.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0

# anchors FILE: the anchors of its headings, as GitHub and pandoc make them.
anchors() {
    sed -n 's/^#\{1,6\} //p' "$1" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}

for doc in "$src"/README.md "$src"/CONTRIBUTING.md "$src"/docs/*.md; do
    dir=$(dirname "$doc")
    name=${doc#"$src"/}
    while read -r link; do
        case $link in http:* | https:* | mailto:*) continue ;; esac
        path=${link%%#*}
        anchor=
        [ "$path" != "$link" ] && anchor=${link#*#}
        target=$doc
        [ -n "$path" ] && target=$dir/$path
        if [ ! -e "$target" ]; then
            echo "$name: link to a missing file: $link"
            status=1
        elif [ -n "$anchor" ] && ! anchors "$target" | grep -qx -- "$anchor"; then
            echo "$name: link to a missing heading: $link"
            status=1
        fi
    done < <(grep -o '\](\([^) ]*\))' "$doc" | sed 's/^](//; s/)$//')
    # Each ```c block with a main is a program of its own.
    awk -v out="$work/$(basename "$doc" .md)" '
        /^```c$/ { inside = 1; text = ""; next }
        inside && /^```$/ { inside = 0; if (text ~ /int main\(/) { n++; print text > (out "_" n ".c") } next }
        inside { text = text $0 "\n" }
    ' "$doc"
done
programs=0
for program in "$work"/*.c; do
    [ -e "$program" ] || continue
    programs=$((programs + 1))
    if ! cc -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -I"$src/include" -I"$build/include" \
        "$program" 2>"$work/cc.log"; then
        echo "${program##*/}: the example does not compile"
        sed 's/^/    | /' "$work/cc.log"
        status=1
    fi
done
[ "$programs" -gt 0 ] || { echo "no example program found"; status=1; }
[ "$status" = 0 ] && echo "every link holds, and the $programs example programs compile"
exit $status
