#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The documents hold together: every relative link of README.md, CONTRIBUTING.md and docs/ names
# a file of the tree (and a heading of it, for links with #anchor), every complete C program in
# them (a ```c block with a main) compiles against the tree's headers, every knob oshinfo knows
# has a row in knobs.md and every variable a row there names is read by the code, and every
# target Makefile.am declares phony has a row in install.md.
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

# The rows of knobs.md's tables, and the knobs oshinfo knows.
rows=$(grep -o '^| `[A-Z][A-Z0-9_]*`' "$src/docs/knobs.md" | tr -d '|` ')
known=$("$build/oshrun/oshinfo" --knobs-markdown | grep -o '^| `SHMEM_[A-Z0-9_]*`' | tr -d '|` ')
[ -n "$known" ] || { echo "oshinfo --knobs-markdown listed no knob"; status=1; }
for knob in $known; do
    grep -qx "$knob" <<<"$rows" ||
        { echo "knobs.md: no row for $knob, which oshinfo knows"; status=1; }
done
for variable in $rows; do
    grep -qx "$variable" <<<"$known" && continue
    grep -rqF "\"$variable\"" "$src/src" "$src/oshrun" "$src/transports" "$src/spaces" \
        "$src/common" "$src/tests/cuda" "$src/tests/hip" ||
        { echo "knobs.md: a row for $variable, which nothing reads"; status=1; }
done
# Every phony target of Makefile.am, as a row of install.md's tables.
targets=$(sed -n 's/^\.PHONY: *//p' "$src/Makefile.am")
for target in $targets; do
    grep -q "^| \`$target\` |" "$src/docs/install.md" ||
        { echo "install.md: no row for make $target"; status=1; }
done

[ "$status" = 0 ] &&
    echo "every link holds, the $programs example programs compile," \
        "$(wc -w <<<"$rows") variables in knobs.md, $(wc -w <<<"$targets") targets in install.md"
exit $status
