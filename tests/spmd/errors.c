/* SPDX-License-Identifier: BSD-3-Clause */
/* Misuse on demand, for tests/spmd/errors.sh: each mode commits one error that the library must
 * report with the routine, the PE and the bad value. */
#include "check.h"

#include <shmemx.h>
#include <string.h>

/* A routine called before shmem_init, named by mode "before_init:<name>": the library must say
 * that it was called before shmem_init, whatever the routine. */
static void call_before_init(const char *name)
{
    static long word, words[4];
    static uint64_t signal_word;
    long value = 1;
    int pe = 0;
    shmem_team_t team;
    shmem_ctx_t ctx;
    if (!strcmp(name, "shmem_long_p"))
        shmem_long_p(&word, 1, 0);
    else if (!strcmp(name, "shmem_long_g"))
        shmem_long_g(&word, 0);
    else if (!strcmp(name, "shmem_long_put_nbi"))
        shmem_long_put_nbi(&word, &value, 1, 0);
    else if (!strcmp(name, "shmem_long_atomic_fetch_add"))
        shmem_long_atomic_fetch_add(&word, 1, 0);
    else if (!strcmp(name, "shmem_long_put_signal"))
        shmem_long_put_signal(&word, &value, 1, &signal_word, 1, SHMEM_SIGNAL_SET, 0);
    else if (!strcmp(name, "shmem_signal_fetch"))
        shmem_signal_fetch(&signal_word);
    else if (!strcmp(name, "shmem_long_wait_until"))
        shmem_long_wait_until(&word, SHMEM_CMP_EQ, 0);
    else if (!strcmp(name, "shmem_long_test"))
        shmem_long_test(&word, SHMEM_CMP_EQ, 0);
    else if (!strcmp(name, "shmem_quiet"))
        shmem_quiet();
    else if (!strcmp(name, "shmem_fence"))
        shmem_fence();
    else if (!strcmp(name, "shmem_pe_quiet"))
        shmem_pe_quiet(&pe, 1);
    else if (!strcmp(name, "shmem_ptr"))
        shmem_ptr(&word, 0);
    else if (!strcmp(name, "shmem_addr_accessible"))
        shmem_addr_accessible(&word, 0);
    else if (!strcmp(name, "shmem_pe_accessible"))
        shmem_pe_accessible(0);
    else if (!strcmp(name, "shmem_team_my_pe"))
        shmem_team_my_pe(SHMEM_TEAM_WORLD);
    else if (!strcmp(name, "shmem_team_split_strided"))
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &team);
    else if (!strcmp(name, "shmem_team_sync"))
        shmem_team_sync(SHMEM_TEAM_WORLD);
    else if (!strcmp(name, "shmem_team_create_ctx"))
        shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, &ctx);
    else if (!strcmp(name, "shmem_long_sum_reduce"))
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, words, words + 2, 1);
    else if (!strcmp(name, "shmem_malloc"))
        shmem_malloc(8);
    else if (!strcmp(name, "shmem_space_create")) {
        shmem_space_config_t config = {SHMEM_DEVICE_CPU, 4096, SHMEM_SPACE_FLAG_DEFAULT};
        shmem_space_t space;
        shmem_space_create(&config, &space, &team);
    } else if (!strcmp(name, "shmem_space_malloc"))
        shmem_space_malloc(SHMEM_SPACE_DEFAULT, 8);
    else if (!strcmp(name, "shmem_space_get_caps")) {
        shmem_space_cap_t caps;
        shmem_space_get_caps(SHMEM_SPACE_DEFAULT, &caps);
    } else if (!strcmp(name, "shmem_team_get_space")) {
        shmem_space_t space;
        shmem_team_get_space(SHMEM_TEAM_WORLD, &space);
    } else if (!strcmp(name, "shmem_get_space")) {
        shmem_space_t space;
        shmem_get_space(&word, &space);
    } else if (!strcmp(name, "shmem_space_destroy"))
        shmem_space_destroy(SHMEM_SPACE_DEFAULT);
    else if (!strcmp(name, "shmem_space_calloc"))
        shmem_space_calloc(SHMEM_SPACE_DEFAULT, 1, 8);
    else if (!strcmp(name, "shmem_space_free"))
        shmem_space_free(SHMEM_SPACE_DEFAULT, &word);
    else if (!strcmp(name, "shmem_space_get_device_type")) {
        shmem_device_type_t type;
        shmem_space_get_device_type(SHMEM_SPACE_DEFAULT, &type);
    } else if (!strcmp(name, "shmem_space_get_team"))
        shmem_space_get_team(SHMEM_SPACE_DEFAULT, &team);
    else if (!strcmp(name, "shmemx_test_device_malloc"))
        shmemx_test_device_malloc(8);
    else if (!strcmp(name, "shmemx_test_device_free"))
        shmemx_test_device_free(&word);
    fprintf(stderr, "%s returned before shmem_init\n", name);
}

/* The spaces reference's rules for bad arguments short of ending the job, on 2 PEs with a test
 * device on PE 0 only (SHMEM_TEST_DEVICE_PES=0), under SHMEM_DEBUG: each is reported by the PE
 * that made it, returns what the reference says, and harms nothing. */
static void space_misuse(int me)
{
    static shmem_space_t shared_handle;
    static long static_word;
    long private_word;
    shmem_space_config_t config = {SHMEM_DEVICE_GPU, 1 << 16, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t device = (shmem_space_t)&config, found;
    shmem_team_t team = SHMEM_TEAM_WORLD;
    shmem_space_cap_t caps;
    shmem_device_type_t type;
    CHECK(shmem_space_create(&config, &device, &team) == 0, "a device space on PE 0");
    CHECK((me == 0) == (device != SHMEM_SPACE_INVALID), "only PE 0 is a member");
    /* PE 1 learns PE 0's handle, as a program passing handles around would */
    if (me == 0)
        shmem_putmem(&shared_handle, &device, sizeof(device), 1);
    shmem_barrier_all();
    if (me == 1) {
        CHECK(shmem_space_get_team(shared_handle, &team) == 0 && team == SHMEM_TEAM_INVALID,
              "a non-member's team of a live space is SHMEM_TEAM_INVALID");
        CHECK(shmem_space_malloc(shared_handle, 64) == NULL, "a non-member allocated");
        CHECK(shmem_space_calloc(shared_handle, 4, 8) == NULL, "a non-member allocated zeroed");
        shmem_space_free(shared_handle, &static_word); /* nothing done, nothing waited for */
        CHECK(shmem_space_get_caps(shared_handle, &caps) != 0, "a non-member's caps");
        CHECK(shmem_space_get_device_type(shared_handle, &type) != 0, "a non-member's type");
        CHECK(shmem_space_destroy(shared_handle) != 0, "a non-member destroyed the space");
        CHECK(shmemx_test_device_malloc(64) == NULL, "a test buffer without a test device");
    } else {
        long *block = shmem_space_malloc(device, sizeof(long));
        CHECK(block != NULL, "PE 0's device block");
        CHECK(shmem_space_malloc(device, 0) == NULL, "size 0 gives NULL");
        CHECK(shmem_space_calloc(device, 0, 8) == NULL, "count 0 gives NULL");
        CHECK(shmem_space_calloc(device, SIZE_MAX / 4, 8) == NULL, "count * size overflows");
        CHECK(shmem_space_malloc(device, 1 << 30) == NULL, "more than the space holds");
        CHECK(shmem_space_calloc(device, 1 << 27, 8) == NULL, "more than the space holds, zeroed");
        char *buffer = shmemx_test_device_malloc(64);
        CHECK(buffer != NULL && shmemx_test_device_malloc(0) == NULL, "test buffers of 64 and 0");
        shmemx_test_device_free(NULL);
        shmemx_test_device_free(buffer + 8); /* inside a buffer: reported, nothing freed */
        shmemx_test_device_free(buffer);
        shmem_space_free(device, &static_word); /* not a block of the space: reported */
        /* the heap's start is the block's, but no buffer of shmemx_test_device_malloc */
        shmemx_test_device_free(block);
        long value = 42, back = 0;
        shmem_long_put(block, &value, 1, 0);
        shmem_quiet();
        shmem_long_get(&back, block, 1, 0);
        CHECK_EQ(back, 42);
        shmem_space_free(device, block);
        CHECK(shmem_space_get_caps(device, NULL) != 0, "caps into NULL");
        CHECK(shmem_space_get_device_type(device, NULL) != 0, "type into NULL");
        CHECK(shmem_space_get_team(device, NULL) != 0, "team into NULL");
        CHECK(shmem_space_get_device_type(device, &type) == 0 && type == SHMEM_DEVICE_GPU,
              "the device type of the space");
        CHECK(shmem_space_destroy(device) != 0, "destroyed while its team lives");
        shmem_team_destroy(team);
        CHECK(shmem_space_get_team(device, &team) == 0 && team == SHMEM_TEAM_INVALID,
              "the space's team, once destroyed, is SHMEM_TEAM_INVALID");
        CHECK(shmem_space_destroy(device) == 0, "the device space destroyed");
    }
    CHECK(shmem_space_destroy(SHMEM_SPACE_DEFAULT) != 0, "the default space destroyed");
    CHECK(shmem_get_space(&private_word, &found) != 0, "a private address has a space");
    CHECK(shmem_get_space(&shared_handle, NULL) != 0, "space into NULL");
    CHECK(shmem_team_get_space(SHMEM_TEAM_WORLD, NULL) != 0, "team's space into NULL");
    CHECK(shmem_team_get_space(SHMEM_TEAM_SHARED, &found) == 0 && found == SHMEM_SPACE_DEFAULT,
          "SHMEM_TEAM_SHARED's space is the default space");
    shmem_barrier_all();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    if (!strncmp(mode, "before_init:", 12)) {
        call_before_init(mode + 12);
        return 1;
    }
    /* PE 1 alone asks for a heap no node has: PEs disagree about start-up */
    const char *rank = getenv("PMIX_RANK");
    if (!strcmp(mode, "init_pe1_heap") && rank && atoi(rank) == 1)
        setenv("SHMEM_SYMMETRIC_SIZE", "64T", 1);
    if (!strcmp(mode, "space_too_big_pe1") && rank)
        setenv("SHMEM_TEST_DEVICE_SIZE", atoi(rank) == 1 ? "1M" : "64M", 1);
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    static long target;
    if (!strcmp(mode, "bad_pe") && me == 0)
        shmem_long_p(&target, 1, n); /* one past the last PE */
    if (!strcmp(mode, "not_symmetric") && me == 0) {
        long on_stack[4] = {0}, src[4] = {1, 2, 3, 4};
        shmem_long_put(on_stack, src, 4, n - 1);
    }
    if (!strcmp(mode, "overrun") && me == 0) {
        /* run with a 1 MiB heap: 8 MiB from the start of a block run past its end, which only
         * a size check can see */
        long *block = shmem_malloc(8 * sizeof(long));
        long *big = calloc(1 << 20, sizeof(long));
        shmem_long_put(block, big, 1 << 20, 0);
    }
    if (!strcmp(mode, "overrun_peer")) {
        /* run with a 1 MiB heap and no checks: the block ends 4 KiB before the end of the heap
         * and the put runs 60 KiB past it, into the last PE's guard instead of its next
         * mapping. Every PE allocates (the call is collective); PE 0 alone writes. */
        size_t heap = (size_t)1 << 20;
        char *block = shmem_malloc(heap - 4096);
        char *big = calloc(64, 1024);
        CHECK(block != NULL, "a block of the whole heap");
        if (me == 0 && block) {
            shmem_putmem(block + heap - 2 * 4096, big, 64 * 1024, n - 1);
            printf("PE 0 wrote past the end of PE %d's heap unharmed\n", n - 1);
        }
        shmem_barrier_all();
    }
    if (!strcmp(mode, "fill_heap")) {
        /* run with 6 MiB heaps and an 8 MiB /dev/shm: the second PE to fill its heap finds no
         * room for it */
        size_t bytes = (size_t)5 << 20;
        char *block = shmem_malloc(bytes);
        if (block)
            memset(block, 1, bytes);
        shmem_barrier_all();
    }
    if (!strcmp(mode, "amo_misaligned") && me == 0) {
        static long words[2];
        shmem_int_atomic_add((int *)((char *)words + 2), 1, n - 1);
    }
    if (!strcmp(mode, "amo_bad_pe") && me == 1)
        shmem_long_atomic_fetch_add(&target, 1, -1);
    if (!strcmp(mode, "bad_cmp") && me == 0) {
        static int flag;
        shmem_int_wait_until(&flag, 42, 0);
    }
    if (!strcmp(mode, "free_nonheap")) {
        long *private_mem = malloc(sizeof(long));
        shmem_free(private_mem); /* reported, and nothing else happens */
        free(private_mem);
        long *heap = shmem_malloc(sizeof(long));
        shmem_long_p(heap, me, (me + 1) % n);
        shmem_barrier_all();
        CHECK(*heap == (me + n - 1) % n, "heap unusable after a bad free");
        shmem_free(heap);
    }
    if (!strncmp(mode, "space_", 6)) {
        /* a CPU space whose team is PE 0 alone is not possible (every PE reaches the CPU), so
         * the space is world-wide and a split team makes the mismatch */
        shmem_space_config_t config = {SHMEM_DEVICE_CPU, 1 << 16, SHMEM_SPACE_FLAG_DEFAULT};
        shmem_space_t space;
        shmem_team_t team;
        shmem_space_create(&config, &space, &team);
        long *in_space = shmem_space_malloc(space, 8 * sizeof(long));
        long *in_default = shmem_malloc(8 * sizeof(long));
        if (!strcmp(mode, "space_mixed"))
            shmem_long_sum_reduce(SHMEM_TEAM_WORLD, in_default, in_space, 8);
    }
    if (!strcmp(mode, "space_bad_config")) {
        shmem_space_config_t config = {(shmem_device_type_t)7, 4096, SHMEM_SPACE_FLAG_DEFAULT};
        shmem_space_t space;
        shmem_team_t team;
        CHECK(shmem_space_create(&config, &space, &team) != 0, "device type 7 accepted");
    }
    if (!strcmp(mode, "space_null_config")) {
        shmem_space_t space = (shmem_space_t)&mode;
        shmem_team_t team = SHMEM_TEAM_WORLD;
        CHECK(shmem_space_create(NULL, &space, &team) != 0, "a NULL configuration accepted");
        CHECK(space == SHMEM_SPACE_INVALID && team == SHMEM_TEAM_INVALID, "invalid handles");
    }
    if (!strcmp(mode, "space_null_out")) {
        /* PE 0 has nowhere to put the space, PE 1 nowhere to put the team: both fail, and the
         * handle each could store is invalid */
        shmem_space_config_t config = {SHMEM_DEVICE_CPU, 1 << 16, SHMEM_SPACE_FLAG_DEFAULT};
        shmem_space_t space = (shmem_space_t)&mode;
        shmem_team_t team = SHMEM_TEAM_WORLD;
        int rc = shmem_space_create(&config, me == 0 ? NULL : &space, me == 0 ? &team : NULL);
        CHECK(rc != 0, "a null out-pointer accepted");
        CHECK(me == 0 ? team == SHMEM_TEAM_INVALID : space == SHMEM_SPACE_INVALID,
              "the other out-pointer holds a valid handle");
    }
    if (!strcmp(mode, "space_destroy_twice")) {
        shmem_space_config_t config = {SHMEM_DEVICE_CPU, 1 << 16, SHMEM_SPACE_FLAG_DEFAULT};
        shmem_space_t space, again;
        shmem_team_t team;
        CHECK(shmem_space_create(&config, &space, &team) == 0, "a CPU space");
        shmem_team_destroy(team);
        CHECK(shmem_space_destroy(space) == 0, "first destroy");
        /* a later space may reuse the first one's memory and id: the stale handle must not
         * reach it */
        CHECK(shmem_space_create(&config, &again, &team) == 0, "a second CPU space");
        long *block = shmem_space_malloc(again, sizeof(long));
        CHECK(shmem_space_destroy(space) != 0, "second destroy of a destroyed space");
        CHECK(shmem_space_malloc(space, 64) == NULL, "allocation in a destroyed space");
        shmem_space_cap_t caps;
        CHECK(shmem_space_get_caps(space, &caps) != 0, "caps of a destroyed space");
        CHECK(shmem_space_calloc(space, 4, 8) == NULL, "zeroed allocation in a destroyed space");
        shmem_space_free(space, block); /* a destroyed handle: nothing freed, not even again's */
        shmem_device_type_t type;
        CHECK(shmem_space_get_device_type(space, &type) != 0, "type of a destroyed space");
        CHECK(shmem_space_get_team(space, &team) != 0, "team of a destroyed space");
        CHECK(shmem_space_get_team(again, &team) == 0, "the second space's team");
        shmem_long_p(block, me, (me + 1) % n);
        shmem_barrier_all();
        CHECK_EQ(*block, (me + n - 1) % n);
        shmem_space_free(again, block);
        CHECK(shmem_space_malloc(again, 64) != NULL, "a block left allocated");
        shmem_team_destroy(team);
        CHECK(shmem_space_destroy(again) == 0, "the second space destroyed, a block in it");
    }
    if (!strcmp(mode, "session_bad_hints")) {
        /* reported on PE 1, and its context works on */
        if (me == 1)
            shmem_ctx_session_start(SHMEM_CTX_DEFAULT, SHMEM_CTX_SESSION_BATCH | 0x40, NULL,
                                    SHMEM_CTX_SESSION_TOTAL_OPS | 0x10);
        long *heap = shmem_malloc(sizeof(long));
        shmem_ctx_long_p(SHMEM_CTX_DEFAULT, heap, me, (me + 1) % n);
        shmem_ctx_session_stop(SHMEM_CTX_DEFAULT);
        shmem_barrier_all();
        CHECK(*heap == (me + n - 1) % n, "a put in a session with bad hints");
        shmem_free(heap);
    }
    if (!strcmp(mode, "space_create_messages")) {
        shmem_space_config_t empty = {SHMEM_DEVICE_CPU, 0, SHMEM_SPACE_FLAG_DEFAULT},
                             flagged = {SHMEM_DEVICE_CPU, 4096, 0x40};
        shmem_space_t space;
        shmem_team_t team;
        CHECK(shmem_space_create(&empty, &space, &team) != 0, "a space of 0 bytes");
        CHECK(shmem_space_create(&flagged, &space, &team) != 0, "a space with unknown flags");
        CHECK(space == SHMEM_SPACE_INVALID && team == SHMEM_TEAM_INVALID, "invalid handles");
    }
    if (!strcmp(mode, "space_too_big_pe1")) {
        /* the device of PE 1 is smaller than the space (SHMEM_TEST_DEVICE_SIZE, set below) */
        shmem_space_config_t config = {SHMEM_DEVICE_GPU, 4 << 20, SHMEM_SPACE_FLAG_DEFAULT};
        shmem_space_t space = (shmem_space_t)&config;
        shmem_team_t team = SHMEM_TEAM_WORLD;
        CHECK(shmem_space_create(&config, &space, &team) != 0, "a space too big for PE 1");
        CHECK(space == SHMEM_SPACE_INVALID && team == SHMEM_TEAM_INVALID, "invalid handles");
    }
    if (!strcmp(mode, "space_misuse"))
        space_misuse(me);
    if (!strcmp(mode, "space_outside")) {
        /* a device space on PE 0 only: PE 1 writing into it names the space */
        shmem_space_config_t config = {SHMEM_DEVICE_GPU, 1 << 16, SHMEM_SPACE_FLAG_DEFAULT};
        shmem_space_t space;
        shmem_team_t team;
        shmem_space_create(&config, &space, &team);
        if (me == 0) {
            long *dev = shmem_space_malloc(space, sizeof(long));
            shmem_long_p(dev, 1, 1);
        }
    }
    return check_finish();
}
