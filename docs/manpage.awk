# SPDX-License-Identifier: BSD-3-Clause
# The "## NAME" section of a reference document as pandoc's input for man page NAME(SECTION): the
# section's first paragraph is the one-line summary, its "###" subsections the page's sections,
# and it ends at the next "## " heading. A "<!-- names: ... -->" comment is left out. Where
# lines and declarations name files (docs/apipages.sh), a SYNOPSIS follows the NAME: the
# declarations whose line numbers lines lists. Exits 1 when the section or its summary is missing.
# Variables: name, section, version; lines, declarations (optional).
function header() {
    printf "---\ntitle: %s\nsection: %s\nheader: Strata Manual\nfooter: Strata %s\n---\n\n",
        toupper(name), section, version
}
function synopsis(   n, i, line, wanted, declared, extension) {
    if (lines == "")
        return
    while ((getline n < lines) > 0)
        wanted[n] = 1
    for (i = 1; (getline line < declarations) > 0; i++)
        if (i in wanted) {
            declared = declared line ";\n"
            if (line ~ /(^|[^a-z0-9_])shmemx_[a-z0-9_]+ *\(/)
                extension = 1
        }
    # Routines of shmemx.h need that header; it is not part of shmem.h.
    printf "# SYNOPSIS\n\n```c\n#include <shmem.h>\n%s\n%s```\n\n",
        extension ? "#include <shmemx.h>\n" : "", declared
}
$0 == "## " name { inside = 1; summary = ""; header(); next }
inside && /^## / { exit }
!inside { next }
/^<!-- names: / { next }
summary == "" && /^[^#]/ && NF { summary = $0; next }
summary != "" && !named && NF && /^[^#]/ { summary = summary " " $0; next }
!named && (/^#/ || !NF) && summary != "" {
    printf "# NAME\n\n%s - %s\n\n", name, summary
    synopsis()
    named = 1
}
/^### / { sub(/^### /, ""); print "# " toupper($0); next }
/^#### / { sub(/^#### /, "## "); print; next }
named { print }
END { if (!inside || !named) exit 1 }
