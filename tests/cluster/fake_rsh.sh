#!/usr/bin/env bash
# The remote shell mpirun calls to start its daemon on a host (launch_pes.sh): every host is this
# machine, so the daemon runs here, with a session directory of its host's own.
host=$1
shift
export OMPI_MCA_orte_tmpdir_base="$FAKE_RSH_DIR/$host"
mkdir -p "$OMPI_MCA_orte_tmpdir_base"
exec bash -c "$*"
