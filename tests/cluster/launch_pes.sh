#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# launch_pes.sh ENGINE PLACEMENT NP PROG ARGS...: runs NP PEs over two nodes, with srun on a
# slurm_nodes.sh cluster (SLURM_CONF set), or with Open MPI's mpirun on two hosts faked on this
# machine, started by this script (mpirun) or by oshrun's own hand-off (oshrun; OSHRUN: its path;
# block placement only), placed in blocks (0,0,1,1 and 0,0,1: srun's default) or cyclically
# (0,1,0,1), and tells the tests which node each PE is on (STRATA_TEST_NODES, read by
# tests/spmd/check.h; through oshrun, which forwards only SHMEM_* and UCX_*, they do not learn it).
# NODES (srun only, 2 by default): over that many nodes, NP a multiple of it.
set -u
engine=$1 placement=$2 np=$3
shift 3
count=${NODES:-2}
nodes=()
for ((pe = 0; pe < np; pe++)); do
    if [ "$placement" = cyclic ]; then
        nodes+=($((pe % count)))
    else
        nodes+=($((pe / ((np + count - 1) / count))))
    fi
done
STRATA_TEST_NODES=$(IFS=,; echo "${nodes[*]}")
export STRATA_TEST_NODES

case $engine in
# More PEs than a node has CPUs (three on a node here): --overcommit.
srun) exec srun --mpi=pmix --overcommit -N "$count" -n "$np" --distribution="$placement" "$@" ;;
mpirun | oshrun)
    # Two addresses of this host as the two nodes; fake_rsh.sh starts their daemons here, each
    # with its own session directory under FAKE_RSH_DIR (two in one directory collide).
    FAKE_RSH_DIR=$(mktemp -d "${TMPDIR:-/tmp}/strata-fake-hosts.XXXXXX")
    export FAKE_RSH_DIR
    trap 'rm -rf "$FAKE_RSH_DIR"' EXIT
    trap 'exit 143' TERM
    slots=$(((np + 1) / 2))
    if [ "$engine" = oshrun ]; then
        OMPI_MCA_plm_rsh_agent="$(dirname "$0")/fake_rsh.sh" SHMEM_LAUNCHER=mpirun \
            "$OSHRUN" --host "127.0.0.2:$slots,127.0.0.3:$slots" -np "$np" "$@"
        exit
    fi
    [ "$placement" = cyclic ] && map_by=node || map_by=slot
    # The daemons start from an empty environment, as on other nodes: what the PEs need of this
    # one goes with -x, as oshrun's hand-off sends it.
    forward=()
    for var in $(compgen -e); do
        case $var in
        SHMEM_* | UCX_* | STRATA_* | LD_LIBRARY_PATH) forward+=(-x "$var") ;;
        esac
    done
    # Binding would put every PE of both hosts on the same cores.
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np "$np" \
        --host "127.0.0.2:$slots,127.0.0.3:$slots" --map-by "$map_by" --bind-to none \
        --mca plm_rsh_agent "$(dirname "$0")/fake_rsh.sh" "${forward[@]}" "$@"
    ;;
*) echo "usage: launch_pes.sh srun|mpirun|oshrun block|cyclic NP PROG ARGS..." >&2; exit 2 ;;
esac
