/* SPDX-License-Identifier: BSD-3-Clause */
/* The floor of one-sided operations over a libfabric provider between two processes (one on each
 * node, started by a PMIx launcher): what the provider itself gives, with nothing of a SHMEM
 * library around it. Process 0 issues, process 1 polls its completion queue (the provider's
 * progress, as a waiting PE's) until process 0 says it is done. Each operation is one call and a
 * wait for its completion, delivery-complete where the provider offers it, as a quiet needs:
 * an 8-byte put, an 8-byte get, an 8-byte fetch-add, a 1 MiB put, and 1 MiB puts 16 in flight;
 * then the rate of 8-byte puts 16 in flight.
 * Prints "name value" lines named as rma_latency's and amo_latency's figures (heap: the
 * registered buffer), in nanoseconds or MB/s. SHMEM_OFI_PROVIDER names the provider. */
#include <pmix.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BIG ((size_t)1 << 20)
#define WINDOW 16

struct peer_info {
    char name[256];
    size_t name_len;
    uint64_t addr, key;
};

static struct fid_cq *cq;
static int banked; /* completions read while posting, not yet counted */
static struct fid_ep *ep;
static fi_addr_t peer;
static struct peer_info remote;

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "ofi_floor: %s: %s\n", what, fi_strerror(rc < 0 ? -rc : rc));
        exit(1);
    }
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Reads completions until count have come. */
/* Reads what completions came (progressing the provider); returns how many. */
static int reap(void)
{
    struct fi_cq_entry entries[WINDOW];
    ssize_t n = fi_cq_read(cq, entries, WINDOW);
    if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry err = {0};
        fi_cq_readerr(cq, &err, 0);
        check(-err.err, "an operation's completion");
    }
    return n > 0 ? (int)n : 0;
}

static void complete(int count)
{
    int taken = banked < count ? banked : count;
    banked -= taken;
    count -= taken;
    while (count > 0) {
        int n = reap();
        count -= n;
    }
    if (count < 0)
        banked -= count;
}

/* Posts until the provider takes it (it says again while its queue is full). */
#define POST(call)                                                                                 \
    do {                                                                                           \
        ssize_t rc_;                                                                               \
        while ((rc_ = (call)) == -FI_EAGAIN)                                                       \
            banked += reap();                                                                      \
        check((int)rc_, #call);                                                                    \
    } while (0)

static void exchange(pmix_proc_t *me, const struct peer_info *mine)
{
    pmix_value_t value = {.type = PMIX_BYTE_OBJECT};
    value.data.bo.bytes = (char *)mine;
    value.data.bo.size = sizeof(*mine);
    if (PMIx_Put(PMIX_GLOBAL, "ofi_floor", &value) != PMIX_SUCCESS ||
        PMIx_Commit() != PMIX_SUCCESS || PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS) {
        fprintf(stderr, "ofi_floor: PMIx exchange failed\n");
        exit(1);
    }
    pmix_proc_t other = *me;
    other.rank = 1 - me->rank;
    pmix_value_t *got = NULL;
    if (PMIx_Get(&other, "ofi_floor", NULL, 0, &got) != PMIX_SUCCESS || !got ||
        got->data.bo.size != sizeof(remote)) {
        fprintf(stderr, "ofi_floor: no peer information\n");
        exit(1);
    }
    memcpy(&remote, got->data.bo.bytes, sizeof(remote));
    PMIX_VALUE_RELEASE(got);
}

static void measure(char *buf, uint64_t *fetched, int iters)
{
    double t0;
    uint64_t one = 1;
    for (int pass = 0; pass < 2; pass++) { /* the first warms up */
        t0 = now_ns();
        for (int i = 0; i < iters; i++) {
            POST(fi_write(ep, buf, 8, NULL, peer, remote.addr, remote.key, NULL));
            complete(1);
        }
    }
    printf("put8_quiet_heap_ns %.1f\n", (now_ns() - t0) / iters);
    t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        POST(fi_read(ep, buf, 8, NULL, peer, remote.addr, remote.key, NULL));
        complete(1);
    }
    printf("get8_heap_ns %.1f\n", (now_ns() - t0) / iters);
    t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        POST(fi_fetch_atomic(ep, &one, 1, NULL, fetched, NULL, peer, remote.addr + 8, remote.key,
                             FI_UINT64, FI_SUM, NULL));
        complete(1);
    }
    printf("fetch_add_heap_ns %.1f\n", (now_ns() - t0) / iters);
    int big_iters = iters / 20 > 50 ? iters / 20 : 50;
    t0 = now_ns();
    for (int i = 0; i < big_iters; i++) {
        POST(fi_write(ep, buf, BIG, NULL, peer, remote.addr, remote.key, NULL));
        complete(1);
    }
    printf("put_1048576_ns %.1f\n", (now_ns() - t0) / big_iters);
    t0 = now_ns();
    for (int i = 0; i < 500; i++) {
        POST(fi_write(ep, buf, BIG, NULL, peer, remote.addr, remote.key, NULL));
        if (i >= WINDOW - 1)
            complete(1);
    }
    complete(WINDOW - 1);
    printf("put_bw_1MiB_MBps %.0f\n", 500.0 * BIG / ((now_ns() - t0) / 1e9) / 1e6);
    t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        POST(fi_write(ep, buf, 8, NULL, peer, remote.addr, remote.key, NULL));
        if (i >= WINDOW - 1)
            complete(1);
    }
    complete(WINDOW - 1);
    printf("put8_rate_per_s %.0f\n", iters / ((now_ns() - t0) / 1e9));
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 20000;
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
        fprintf(stderr, "ofi_floor: needs a PMIx launcher (srun --mpi=pmix, oshrun)\n");
        return 1;
    }
    struct fi_info *hints = fi_allocinfo(), *info;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA | FI_ATOMIC;
    hints->domain_attr->mr_mode =
        FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    const char *provider = getenv("SHMEM_OFI_PROVIDER");
    if (provider && *provider)
        hints->fabric_attr->prov_name = strdup(provider);
    if (fi_getinfo(FI_VERSION(1, 15), NULL, NULL, 0, hints, &info)) {
        hints->tx_attr->op_flags = 0;
        check(fi_getinfo(FI_VERSION(1, 15), NULL, NULL, 0, hints, &info), "fi_getinfo");
    }
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_mr *mr;
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT};
    check(fi_fabric(info->fabric_attr, &fabric, NULL), "fi_fabric");
    check(fi_domain(fabric, info, &domain, NULL), "fi_domain");
    check(fi_av_open(domain, &av_attr, &av, NULL), "fi_av_open");
    check(fi_cq_open(domain, &cq_attr, &cq, NULL), "fi_cq_open");
    check(fi_endpoint(domain, info, &ep, NULL), "fi_endpoint");
    check(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind (av)");
    check(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind (cq)");
    check(fi_enable(ep), "fi_enable");
    char *buf = aligned_alloc(4096, BIG);
    uint64_t fetched = 0;
    memset(buf, 0, BIG);
    check(fi_mr_reg(domain, buf, BIG, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 1, 0, &mr, NULL),
          "fi_mr_reg");
    if (info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
        check(fi_mr_bind(mr, &ep->fid, 0), "fi_mr_bind");
        check(fi_mr_enable(mr), "fi_mr_enable");
    }
    struct peer_info mine = {.name_len = sizeof(mine.name), .key = fi_mr_key(mr)};
    mine.addr = info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)buf : 0;
    check(fi_getname(&ep->fid, mine.name, &mine.name_len), "fi_getname");
    exchange(&me, &mine);
    if (fi_av_insert(av, remote.name, 1, &peer, 0, NULL) != 1)
        check(-FI_EINVAL, "fi_av_insert");
    char done = 0;
    if (me.rank == 1) { /* serves until process 0's message comes */
        POST(fi_recv(ep, &done, 1, NULL, FI_ADDR_UNSPEC, NULL));
        complete(1);
    } else {
        measure(buf, &fetched, iters);
        POST(fi_send(ep, &done, 1, NULL, peer, NULL));
        complete(1);
    }
    PMIx_Fence(NULL, 0, NULL, 0);
    fi_close(&mr->fid);
    fi_close(&ep->fid);
    fi_close(&cq->fid);
    fi_close(&av->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    free(buf);
    PMIx_Finalize(NULL, 0);
    return 0;
}
