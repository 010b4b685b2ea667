#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Error reports: the routine, the PE and the bad value are named, and the job fails cleanly.
# Usage: errors.sh OSHRUN ERRORS_BIN
set -u
oshrun=$1
bin=$2
passed=0
failed=0
out=$(mktemp)
stdout=$(mktemp)
trap 'rm -f "$out" "$stdout"' EXIT

# expect NAME STATUS(nonzero|0) MODE ENV..., then grep patterns read from stdin, one per line,
# that the job's stderr must match. A pattern written "N*pattern" must match exactly N lines. The
# job runs under the command in the array prefix, if any.
prefix=()
expect() {
    local name=$1 want=$2 mode=$3
    shift 3
    env "$@" timeout 30 "${prefix[@]}" "$oshrun" -np 2 "$bin" "$mode" >"$stdout" 2>"$out"
    local rc=$? ok=0 why=""
    if [ "$want" = nonzero ]; then
        [ "$rc" != 0 ] || { ok=1; why="exit 0"; }
    else
        [ "$rc" = 0 ] || { ok=1; why="exit $rc"; }
    fi
    [ "$rc" = 124 ] && { ok=1; why="$why; timed out"; }
    while read -r pattern; do
        [ -z "$pattern" ] && continue
        if [[ "$pattern" =~ ^([0-9]+)\*(.*)$ ]]; then
            local count
            count=$(grep -c -- "${BASH_REMATCH[2]}" "$out")
            [ "$count" = "${BASH_REMATCH[1]}" ] ||
                { ok=1; why="$why; $count lines (not ${BASH_REMATCH[1]}) match '${BASH_REMATCH[2]}'"; }
        else
            grep -q -- "$pattern" "$out" || { ok=1; why="$why; no '$pattern' on stderr"; }
        fi
    done
    if [ "$ok" = 0 ]; then
        passed=$((passed + 1))
        echo "PASS: $name"
    else
        failed=$((failed + 1))
        echo "FAIL: $name ($why)"
        sed 's/^/    | /' "$out" | tail -n 10
        sed 's/^/    stdout| /' "$stdout" | tail -n 5
    fi
}

expect "PE out of range" nonzero bad_pe SHMEM_DEBUG=1 <<'P'
shmem_long_p
PE 0
target PE 2 is out of range
P
expect "address not symmetric" nonzero not_symmetric <<'P'
shmem_long_put
PE 0
not symmetric
P
expect "transfer past the region under SHMEM_DEBUG" nonzero overrun SHMEM_DEBUG=1 SHMEM_SYMMETRIC_SIZE=1M <<'P'
shmem_long_put
PE 0
8388608 bytes
run past the end
P
expect "transfer past a peer's heap faults at once (guard), without SHMEM_DEBUG" nonzero overrun_peer SHMEM_SYMMETRIC_SIZE=1M <<'P'
PE 0 killed by SIGSEGV
P
expect "misaligned atomic under SHMEM_DEBUG" nonzero amo_misaligned SHMEM_DEBUG=1 <<'P'
shmem_int_atomic_add
PE 0
not aligned to 4 bytes
P
expect "atomic to a PE out of range" nonzero amo_bad_pe <<'P'
shmem_long_atomic_fetch_add
PE 1
target PE -1 is out of range
P
expect "wait with an unknown comparison" nonzero bad_cmp <<'P'
shmem_int_wait_until
comparison 42
P
expect "free of a non-heap pointer is reported, heap intact" 0 free_nonheap SHMEM_DEBUG=1 <<'P'
shmem_free
PE 1
not returned by shmem_malloc
P
expect "session hints without their config, and undefined ones under SHMEM_DEBUG, are reported" 0 \
    session_bad_hints SHMEM_DEBUG=1 <<'P'
PE 1 .*shmem_ctx_session_start: config_mask 0x11 names total_ops but config is NULL
PE 1 .*shmem_ctx_session_start: options 0x41: 0x40 are no session option
PE 1 .*shmem_ctx_session_start: config_mask 0x11: 0x10 name no config field
0*PE 0 .*shmem_ctx_session_start
P
expect "malformed SHMEM_SYMMETRIC_SIZE" nonzero ok SHMEM_SYMMETRIC_SIZE=12Q <<'P'
PE 0 .*shmem_init: invalid value '12Q' for SHMEM_SYMMETRIC_SIZE
PE 1 .*shmem_init: invalid value '12Q' for SHMEM_SYMMETRIC_SIZE
2*SHMEM_SYMMETRIC_SIZE.*k/K, m/M, g/G or t/T
P
expect "SHMEM_SYMMETRIC_SIZE=0 stops start-up on every PE" nonzero ok SHMEM_SYMMETRIC_SIZE=0 <<'P'
2*shmem_init: invalid value '0' for SHMEM_SYMMETRIC_SIZE: expected a number above 0
0*double free
P
expect "SHMEM_SYMMETRIC_SIZE=64T stops start-up, naming what the node has" nonzero ok SHMEM_SYMMETRIC_SIZE=64T <<'P'
PE 0 .*shmem_init: SHMEM_SYMMETRIC_SIZE asks for a symmetric heap of 70368744177664 bytes
PE 1 .*shmem_init: SHMEM_SYMMETRIC_SIZE asks for a symmetric heap of 70368744177664 bytes
more than this node has for it: /dev/shm, where host heaps live, has [0-9]* bytes free and memory is
0*double free
P
expect "one PE cannot build its heap: every PE stops, the failed one is named" nonzero init_pe1_heap <<'P'
PE 1 .*shmem_init: SHMEM_SYMMETRIC_SIZE asks for a symmetric heap of 70368744177664
PE 0 .*shmem_init: 1 PE(s) could not start (PE 1 first
oshrun: PE 1 aborted the job with status 1
P
expect "malformed SHMEM_DEVICE_MAP" nonzero ok SHMEM_DEVICE_MAP=garbage <<'P'
2*invalid value 'garbage' for SHMEM_DEVICE_MAP: expected device numbers joined by + or -
P
expect "malformed SHMEM_PROGRESS_THREAD" nonzero ok SHMEM_PROGRESS_THREAD=garbage <<'P'
2*invalid value 'garbage' for SHMEM_PROGRESS_THREAD: expected auto, or one of
P
expect "SHMEM_TEST_DEVICE_SIZE=0" nonzero ok SHMEM_TEST_DEVICE_SIZE=0 <<'P'
2*invalid value '0' for SHMEM_TEST_DEVICE_SIZE: expected a number above 0
P
for routine in shmem_long_p shmem_long_g shmem_long_put_nbi shmem_long_atomic_fetch_add \
    shmem_long_put_signal shmem_signal_fetch shmem_long_wait_until shmem_long_test shmem_quiet \
    shmem_fence shmem_pe_quiet shmem_ptr shmem_addr_accessible shmem_pe_accessible \
    shmem_team_my_pe shmem_team_split_strided shmem_team_sync shmem_team_create_ctx \
    shmem_long_sum_reduce shmem_malloc shmem_space_create shmem_space_malloc \
    shmem_space_get_caps shmem_team_get_space shmem_get_space shmem_space_destroy \
    shmem_space_calloc shmem_space_free shmem_space_get_device_type shmem_space_get_team \
    shmemx_test_device_malloc shmemx_test_device_free; do
    expect "$routine before shmem_init says so" nonzero "before_init:$routine" <<P
$routine: called before shmem_init
0*returned before shmem_init
P
done
expect "unknown SHMEM_LOG category" nonzero ok SHMEM_LOG=rma,bogus <<'P'
PE 0 .*invalid value 'rma,bogus' for SHMEM_LOG: expected init, mem, rma, team or all
P
expect "SHMEM_LOG=mem,rma logs events" 0 free_nonheap SHMEM_LOG=mem,rma <<'P'
Strata log: PE 0
shmem_malloc: 8 bytes
shmem_long_p: 8 bytes to
P
expect "mixed-space collective under SHMEM_DEBUG" nonzero space_mixed SHMEM_DEBUG=1 <<'P'
shmem_long_sum_reduce
mixed-space collective
P
expect "NULL space configuration under SHMEM_DEBUG: reported on every PE, no crash" 0 space_null_config SHMEM_DEBUG=1 <<'P'
PE 0 .*shmem_space_create: config is NULL
PE 1 .*shmem_space_create: config is NULL
P
expect "null out-pointer of shmem_space_create: named on its PE, creation fails on every PE" 0 space_null_out <<'P'
PE 0 .*shmem_space_create: space is a null pointer
PE 1 .*shmem_space_create: team is a null pointer
P
expect "null out-pointer under SHMEM_DEBUG: PE 0 names it as the reason, not the configuration" 0 space_null_out SHMEM_DEBUG=1 <<'P'
PE 0 .*shmem_space_create: no space for device type 0, 65536 bytes: a PE passed a null space or team pointer
0*invalid configuration
P
expect "NULL space configuration with SHMEM_LOG=mem: logged, no crash" 0 space_null_config SHMEM_LOG=mem <<'P'
shmem_space_create: device type -1, 0 bytes, 0 members, region [0-9-]*: failed
P
expect "misused space routines under SHMEM_DEBUG: each reported on its PE, nothing harmed" 0 space_misuse SHMEM_DEBUG=1 SHMEM_TEST_DEVICE_PES=0 <<'P'
PE 1 .*shmem_space_malloc: PE 1 is not a member of the space of handle
PE 1 .*shmem_space_get_caps: PE 1 is not a member of the space of handle
PE 1 .*shmem_space_calloc: PE 1 is not a member of the space of handle
PE 1 .*shmem_space_free: PE 1 is not a member of the space of handle
PE 1 .*shmem_space_get_device_type: PE 1 is not a member of the space of handle
PE 1 .*shmem_space_destroy: PE 1 is not a member of the space of handle
0*shmem_space_get_team: PE 1 is not a member
PE 0 .*shmem_space_malloc: out of symmetric memory: 1073741824 bytes requested
PE 0 .*shmem_space_calloc: out of symmetric memory: 1073741824 bytes requested
PE 0 .*shmem_space_destroy: a team of the space still exists
2*shmem_space_destroy: the default space cannot be destroyed
2*shmemx_test_device_free: .* is not a buffer of shmemx_test_device_malloc
PE 0 .*shmem_space_free: pointer .* was not returned by shmem_space_malloc on this space
PE 0 .*shmemx_test_device_free: .* is not a buffer of shmemx_test_device_malloc (PE 0): nothing freed
PE 0 .*shmem_space_get_caps: caps is a null pointer (PE 0)
PE 0 .*shmem_space_get_device_type: type is a null pointer (PE 0)
PE 0 .*shmem_space_get_team: team is a null pointer (PE 0)
2*shmem_get_space: .* is not symmetric memory
2*shmem_get_space: space is a null pointer
2*shmem_team_get_space: space is a null pointer
P
expect "misused space routines without SHMEM_DEBUG: the same returns, nothing printed" 0 space_misuse SHMEM_TEST_DEVICE_PES=0 <<'P'
0*not a member
0*out of symmetric memory
0*still exists
0*cannot be destroyed
0*is not a buffer
0*null pointer
0*not symmetric
P
expect "space destroyed twice under SHMEM_DEBUG: reported, the next space unharmed" 0 space_destroy_twice SHMEM_DEBUG=1 <<'P'
PE 0 .*shmem_space_destroy: space handle .* names no live space
PE 1 .*shmem_space_destroy: space handle .* names no live space
shmem_space_malloc: space handle .* names no live space
2*shmem_space_calloc: space handle .* names no live space
2*shmem_space_free: space handle .* names no live space
2*shmem_space_get_device_type: space handle .* names no live space
2*shmem_space_get_team: space handle .* names no live space
P
expect "space configurations of 0 bytes and unknown flags, named on every PE" 0 space_create_messages SHMEM_DEBUG=1 <<'P'
2*shmem_space_create: the space size is 0 bytes
2*shmem_space_create: unknown flags 0x40 in the space configuration
PE 0 .*shmem_space_create: no space for device type 0, 0 bytes: invalid configuration
P
expect "a space too big for one PE's device fails on every PE, named there" 0 space_too_big_pe1 SHMEM_TEST_DEVICE_PES=0,1 <<'P'
1*shmem_space_create: 4194304 bytes exceed the 1048576 bytes of the device
PE 1 .*shmem_space_create: 4194304 bytes exceed
P
expect "space destroyed twice: ignored safely" 0 space_destroy_twice <<'P'
0*names no live space
P
expect "RMA into a space the target is not a member of" nonzero space_outside SHMEM_TEST_DEVICE_PES=0 <<'P'
shmem_long_p
PE 0
target PE 1 is not a member of the space
P
expect "invalid space configuration named on every PE" 0 space_bad_config <<'P'
PE 0 .*shmem_space_create: unknown device type 7
PE 1 .*shmem_space_create: unknown device type 7
P

# A /dev/shm of 8 MiB of the job's own (a mount namespace: root only). A heap larger than it stops
# start-up, saying what there is; heaps that fit one by one but not together warn at start-up,
# and the PE that runs out gets a SIGBUS that says why.
if unshare -m true 2>/dev/null; then
    prefix=(unshare -m sh -c 'mount -t tmpfs -o size=8m tmpfs /dev/shm && exec "$0" "$@"')
    expect "a heap larger than /dev/shm stops start-up" nonzero ok SHMEM_SYMMETRIC_SIZE=10M <<'P'
2*SHMEM_SYMMETRIC_SIZE asks for a symmetric heap of 10485760 bytes
/dev/shm, where host heaps live, has 8388608 bytes
P
    expect "heaps that fill /dev/shm together: warned, then SIGBUS explained" nonzero fill_heap SHMEM_SYMMETRIC_SIZE=6M <<'P'
1*warning: the 2 PEs of this node may fill 12582912 bytes
SIGBUS at .* symmetric memory .*the node had no room left to commit the page
oshrun: PE [0-9] killed by SIG
P
    prefix=()
else
    echo "SKIP: /dev/shm too small for the heaps (needs root for a mount namespace)"
fi

# A libfabric provider known to crash is refused by name at start-up, where this host has it.
if "$(dirname "$oshrun")/oshinfo" | grep -q "provider udp;ofi_rxd, .*(not usable"; then
    expect "libfabric's udp;ofi_rxd refused by name at start-up" nonzero ok SHMEM_TRANSPORT=ofi \
        "SHMEM_OFI_PROVIDER=udp;ofi_rxd" SHMEM_NODE_DIRECT=0 <<'P'
2*transport: libfabric provider udp;ofi_rxd: not usable: crashes inside libfabric 1.17
2*shmem_init: cannot initialize the transport
P
else
    echo "SKIP: libfabric's udp;ofi_rxd (not on this host)"
fi

echo "errors: $passed passed, $failed failed"
[ "$failed" = 0 ]
