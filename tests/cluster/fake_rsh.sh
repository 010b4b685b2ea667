#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The remote shell mpirun calls to start its daemon on a host (launch_pes.sh): every host is this
# machine, so the daemon runs here, with a session directory of its host's own. Like a login on
# another node, it starts from an empty environment: a PE sees only what mpirun forwards (-x),
# as it would on a real cluster. A sanitizer build's settings are the test harness's, not the
# job's: they stay, as a node's own settings would.
host=$1
shift
mkdir -p "$FAKE_RSH_DIR/$host"
keep=()
for var in ASAN_OPTIONS UBSAN_OPTIONS; do
    [ -n "${!var:-}" ] && keep+=("$var=${!var}")
done
exec env -i PATH="$PATH" HOME="${HOME:-/}" USER="${USER:-}" LOGNAME="${LOGNAME:-}" "${keep[@]}" \
    OMPI_MCA_orte_tmpdir_base="$FAKE_RSH_DIR/$host" bash -c "$*"
