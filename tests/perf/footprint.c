/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory of a PE once the library is up: a hello world that reads its own resident set after
 * shmem_init and a barrier, then again once it has put a word to every PE (so that whatever a
 * library makes per peer reached, it has made), and PE 0 prints the largest over all PEs. Plain
 * OpenSHMEM 1.4, so the same source builds with any implementation. Prints "name KiB" lines:
 *   rss_per_pe_KiB        resident set (VmRSS), the most of any PE
 *   rss_anon_per_pe_KiB   its private anonymous part (RssAnon): what the PE alone costs
 *   rss_shmem_per_pe_KiB  its shared-memory part (RssShmem): pages shared with node peers
 *   rss_anon_all_peers_per_pe_KiB  the private part once every PE has been reached */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

#define FIELDS 3
#define FIGURES (FIELDS + 1)

static const char *const field[FIELDS] = {"VmRSS:", "RssAnon:", "RssShmem:"};
static const char *const name[FIGURES] = {"rss_per_pe_KiB", "rss_anon_per_pe_KiB",
                                          "rss_shmem_per_pe_KiB", "rss_anon_all_peers_per_pe_KiB"};

static long mine[FIGURES], most[FIGURES], reached;
static long pwrk[FIGURES > SHMEM_REDUCE_MIN_WRKDATA_SIZE ? FIGURES : SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long psync[SHMEM_REDUCE_SYNC_SIZE];

static void read_status(long *kib)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof(line), f))
        for (int i = 0; i < FIELDS; i++)
            if (!strncmp(line, field[i], strlen(field[i])))
                sscanf(line + strlen(field[i]), "%ld", &kib[i]);
    if (f)
        fclose(f);
}

int main(void)
{
    shmem_init();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    read_status(mine);
    for (int pe = 0; pe < shmem_n_pes(); pe++)
        shmem_long_p(&reached, 1, pe);
    shmem_barrier_all();
    long now[FIELDS];
    read_status(now);
    mine[FIELDS] = now[1];
    /* The 1.4 reduction, so that an implementation without teams builds this too. */
    shmem_long_max_to_all(most, mine, FIGURES, 0, 0, shmem_n_pes(), pwrk, psync);
    if (shmem_my_pe() == 0)
        for (int i = 0; i < FIGURES; i++)
            printf("%s %ld\n", name[i], most[i]);
    shmem_finalize();
    return 0;
}
