/* SPDX-License-Identifier: BSD-3-Clause */
/* The bulk lane (transport_internal.h): a TCP connection from this PE to each peer it sends large
 * one-way messages to, read by the peer only inside its handler of each message's header, which
 * came through the network in order with everything else. So the lane needs no order of its own and
 * no poller: the data of the headers a peer handles, in turn, is the stream of that peer's
 * connection.
 *
 * Who may write into a PE's memory: a connection's first bytes say which PE made it and carry
 * the secret the target published through the exchange (the job's own PEs read it there); a
 * connection without them is closed once they fail to match, and never read otherwise.
 *
 * Nothing waits on a peer without writing its own messages: a sender progresses the network (where
 * handlers run) while its data goes out, and a handler that waits for one peer's data keeps
 * writing every message of this PE under way. Two PEs that send to each other at once (an
 * fcollect's exchange) then each read the other's data while writing their own, instead of both
 * waiting on full sockets. */
#define _GNU_SOURCE /* accept4 */
#include "transport_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define BULK_KEY "transport.bulk"
#define BULK_SECRET_BYTES 16
#define BULK_MAX_ADDRS 8
#define BULK_MAGIC 0x4b4c554241525453ULL /* "STRABULK" */
/* Connections accepted whose first bytes have not come yet: beyond this many, the oldest is
 * closed (another user's connections that never speak cannot pile up). */
#define BULK_MAX_UNNAMED 64
#define BULK_CONNECT_MS 2000
/* A message's data that stops coming for this long means its sender is gone. */
#define BULK_STALL_MS 120000
/* What of a message goes on the lane before its header: the target reads only once the header
 * has come, and then reads the rest while the sender writes it, so a message written whole first
 * leaves the target waiting; the header after its first 256 KiB did best of the splits tried. */
#define BULK_AHEAD_BYTES ((size_t)256 * 1024)

/* What a PE publishes: no addresses where it has no lane. */
struct bulk_published {
    uint16_t port; /* network order */
    uint16_t n_addrs;
    uint8_t secret[BULK_SECRET_BYTES];
    uint32_t addrs[BULK_MAX_ADDRS]; /* IPv4, network order */
};

/* A connection's first bytes. */
struct bulk_hello {
    uint64_t magic;
    int32_t from;
    uint8_t secret[BULK_SECRET_BYTES];
};

/* This PE's connection to one peer, made for a peer it sends to. */
struct bulk_out {
    pthread_mutex_t send_lock;  /* one message at a time, from bulk_lane_begin to its end */
    pthread_mutex_t write_lock; /* around each write of data */
    int fd;                     /* -1 until the first message */
    int unreachable;            /* its messages go through the network */
    const char *data;           /* what is left of the message under way */
    size_t left;
    int error; /* errno of a failed write */
};

struct bulk_lane {
    int off; /* a peer's lane did not answer: this PE sends everything through the network */
    int listen_fd;
    uint8_t secret[BULK_SECRET_BYTES];
    pthread_mutex_t out_lock; /* makes each out */
    struct bulk_out **out;    /* per PE: NULL until this PE sends it a message */
    /* The receiving side, used by the default worker's handlers alone (which the network runs one
     * at a time): each peer's connection (-1: none yet), and those accepted that have not said
     * whose they are. */
    int *in;
    int unnamed[BULK_MAX_UNNAMED];
    int n_unnamed;
    struct pollfd *fds; /* what a receive waits on */
    size_t fds_room;
    /* The peers with a message under way (one per thread that sends at most), which waits of
     * every thread keep writing. */
    pthread_mutex_t writing_lock;
    int *writing;
    int n_writing;
};

/* The IPv4 addresses of the interfaces the network may use (devices names them; every one up
 * but loopback otherwise, or when none it names has one). Returns how many. */
static int bulk_local_addrs(const char *devices, uint32_t addrs[BULK_MAX_ADDRS])
{
    struct ifaddrs *list;
    if (getifaddrs(&list))
        return 0;
    int n = 0;
    for (int filtered = devices && *devices && strcmp(devices, "all"); n == 0 && filtered >= 0;
         filtered--) {
        for (struct ifaddrs *i = list; i && n < BULK_MAX_ADDRS; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
                (i->ifa_flags & IFF_LOOPBACK))
                continue;
            if (filtered && !transport_list_names(devices, i->ifa_name))
                continue;
            addrs[n++] = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr;
        }
    }
    freeifaddrs(list);
    return n;
}

/* The listening socket, on every interface: peers connect to the addresses published. */
static int bulk_listen(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t len = sizeof(addr);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(fd, 128) ||
        getsockname(fd, (struct sockaddr *)&addr, &len)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = addr.sin_port;
    return fd;
}

static struct bulk_lane *bulk_create(int n_pes, const char *devices,
                                     struct bulk_published *published)
{
    struct bulk_lane *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->out = calloc((size_t)n_pes, sizeof(*b->out));
    b->in = malloc((size_t)n_pes * sizeof(*b->in));
    b->writing = malloc((size_t)n_pes * sizeof(*b->writing));
    published->n_addrs = (uint16_t)bulk_local_addrs(devices, published->addrs);
    b->listen_fd = published->n_addrs ? bulk_listen(&published->port) : -1;
    if (!b->out || !b->in || !b->writing || b->listen_fd < 0 ||
        getrandom(b->secret, sizeof(b->secret), 0) != (ssize_t)sizeof(b->secret)) {
        if (b->listen_fd >= 0)
            close(b->listen_fd);
        free(b->out);
        free(b->in);
        free(b->writing);
        free(b);
        return NULL;
    }
    memcpy(published->secret, b->secret, sizeof(b->secret));
    for (int pe = 0; pe < n_pes; pe++)
        b->in[pe] = -1;
    pthread_mutex_init(&b->out_lock, NULL);
    pthread_mutex_init(&b->writing_lock, NULL);
    return b;
}

int bulk_lane_init(struct transport *t, const struct network_attr *attr)
{
    struct bulk_published published = {0};
    if (t->config.bulk_lane && attr->tcp) {
        t->bulk = bulk_create(t->config.n_pes, attr->tcp_devices, &published);
        if (!t->bulk)
            published.n_addrs = 0;
        LOG(LOG_INIT, "transport", "bulk lane: %s (%u addresses)", t->bulk ? "listening" : "none",
            published.n_addrs);
    }
    return t->config.exchange.publish(BULK_KEY, &published, sizeof(published));
}

void bulk_lane_fini(struct transport *t)
{
    struct bulk_lane *b = t->bulk;
    if (!b)
        return;
    for (int pe = 0; pe < t->config.n_pes; pe++) {
        struct bulk_out *out = b->out[pe];
        if (out && out->fd >= 0)
            close(out->fd);
        if (out) {
            pthread_mutex_destroy(&out->send_lock);
            pthread_mutex_destroy(&out->write_lock);
            free(out);
        }
        if (b->in[pe] >= 0)
            close(b->in[pe]);
    }
    for (int i = 0; i < b->n_unnamed; i++)
        close(b->unnamed[i]);
    close(b->listen_fd);
    pthread_mutex_destroy(&b->out_lock);
    pthread_mutex_destroy(&b->writing_lock);
    free(b->fds);
    free(b->out);
    free(b->in);
    free(b->writing);
    free(b);
    t->bulk = NULL;
}

/* Waits up to ms for fd to be ready for events; 1 if it is. */
static int bulk_poll_one(int fd, short events, int ms)
{
    struct pollfd p = {.fd = fd, .events = events};
    int n;
    while ((n = poll(&p, 1, ms)) < 0 && errno == EINTR)
        ;
    return n == 1 && !(p.revents & (POLLERR | POLLNVAL));
}

/* A connection to one of the peer's addresses, or -1; *timed_out: an address did not answer at
 * all (a firewall that drops connections, rather than a host that refuses them). */
static int bulk_connect_any(const struct bulk_published *peer, int pe, int *timed_out)
{
    for (int i = 0; i < peer->n_addrs && i < BULK_MAX_ADDRS; i++) {
        struct sockaddr_in addr = {
            .sin_family = AF_INET, .sin_port = peer->port, .sin_addr.s_addr = peer->addrs[i]};
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        int err = 0, answered = 0;
        socklen_t len = sizeof(err);
        if (!connect(fd, (struct sockaddr *)&addr, sizeof(addr)) ||
            (errno == EINPROGRESS && (answered = bulk_poll_one(fd, POLLOUT, BULK_CONNECT_MS)) &&
             !getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) && !err))
            return fd;
        *timed_out |= errno == EINPROGRESS && !answered;
        char text[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &addr.sin_addr, text, sizeof(text));
        LOG(LOG_INIT, "transport", "bulk lane: PE %d not reached at %s:%u", pe, text,
            ntohs(peer->port));
        close(fd);
    }
    return -1;
}

/* Writes all of data on a connection just made (a few bytes: the socket takes them at once). */
static int bulk_write_all(int fd, const void *data, size_t len)
{
    const char *at = data;
    while (len) {
        ssize_t n = send(fd, at, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno != EAGAIN || !bulk_poll_one(fd, POLLOUT, BULK_CONNECT_MS)))
            return -1;
        if (n > 0)
            at += n, len -= (size_t)n;
    }
    return 0;
}

/* This PE's connection to pe, with its hello sent. Returns 0 or -1 (pe has no lane, or none of
 * its addresses answers). */
static int bulk_connect(struct transport *t, int pe, struct bulk_out *out)
{
    struct bulk_published peer;
    size_t len = sizeof(peer);
    if (t->config.exchange.fetch(pe, BULK_KEY, &peer, &len) || len != sizeof(peer) || !peer.n_addrs)
        return -1;
    int timed_out = 0, fd = bulk_connect_any(&peer, pe, &timed_out);
    if (timed_out) {
        /* Every other peer would cost the same wait: no lane from this PE at all. */
        LOG(LOG_INIT, "transport", "bulk lane: PE %d did not answer; no lane from this PE", pe);
        __atomic_store_n(&t->bulk->off, 1, __ATOMIC_RELEASE);
    }
    if (fd < 0)
        return -1;
    int one = 1;
    struct bulk_hello hello = {.magic = BULK_MAGIC, .from = t->config.my_pe};
    memcpy(hello.secret, peer.secret, sizeof(hello.secret));
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
        bulk_write_all(fd, &hello, sizeof(hello))) {
        close(fd);
        return -1;
    }
    out->fd = fd;
    LOG(LOG_INIT, "transport", "bulk lane: connected to PE %d", pe);
    return 0;
}

/* Writes what the socket takes of out's message, up to most bytes. Returns whether some is
 * left. */
static int bulk_write_upto(struct bulk_out *out, size_t most)
{
    pthread_mutex_lock(&out->write_lock);
    while (out->left && most) {
        size_t want = out->left < most ? out->left : most;
        ssize_t n = send(out->fd, out->data, want, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            out->data += n;
            out->left -= (size_t)n;
            most -= (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
                out->error = n ? errno : EPIPE;
                out->left = 0;
            }
            break;
        }
    }
    int left = out->left != 0;
    pthread_mutex_unlock(&out->write_lock);
    return left;
}

static int bulk_write_some(struct bulk_out *out)
{
    return bulk_write_upto(out, SIZE_MAX);
}

static void bulk_writing_set(struct bulk_lane *b, int pe, int on)
{
    pthread_mutex_lock(&b->writing_lock);
    if (on) {
        b->writing[b->n_writing++] = pe;
    } else {
        for (int i = 0; i < b->n_writing; i++)
            if (b->writing[i] == pe) {
                b->writing[i] = b->writing[--b->n_writing];
                break;
            }
    }
    pthread_mutex_unlock(&b->writing_lock);
}

/* This PE's connection state for pe, made on the first message to it; NULL without memory. */
static struct bulk_out *bulk_out_of(struct bulk_lane *b, int pe)
{
    struct bulk_out *out = __atomic_load_n(&b->out[pe], __ATOMIC_ACQUIRE);
    if (out)
        return out;
    pthread_mutex_lock(&b->out_lock);
    out = b->out[pe];
    if (!out && (out = calloc(1, sizeof(*out)))) {
        out->fd = -1;
        pthread_mutex_init(&out->send_lock, NULL);
        pthread_mutex_init(&out->write_lock, NULL);
        __atomic_store_n(&b->out[pe], out, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&b->out_lock);
    return out;
}

int bulk_lane_begin(struct transport_worker *w, int pe, const void *src, size_t len)
{
    struct bulk_lane *b = w->t->bulk;
    /* One lane to each peer, whose data must come in the order of the headers: the default
     * worker's alone (a context's messages go on endpoints of their own, in no order with it). */
    if (!b || w != w->t->workers)
        return 1;
    struct bulk_out *out = bulk_out_of(b, pe);
    if (!out || __atomic_load_n(&out->unreachable, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&b->off, __ATOMIC_ACQUIRE))
        return 1;
    pthread_mutex_lock(&out->send_lock);
    if (out->fd < 0 && bulk_connect(w->t, pe, out)) {
        LOG(LOG_INIT, "transport", "bulk lane: none to PE %d, its messages go through the network",
            pe);
        __atomic_store_n(&out->unreachable, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&out->send_lock);
        return 1;
    }
    pthread_mutex_lock(&out->write_lock);
    out->data = src;
    out->left = len;
    out->error = 0;
    pthread_mutex_unlock(&out->write_lock);
    bulk_writing_set(b, pe, 1);
    bulk_write_upto(out, BULK_AHEAD_BYTES);
    return 0;
}

int bulk_lane_finish(struct transport_worker *w, int pe, int announced)
{
    struct bulk_lane *b = w->t->bulk;
    struct bulk_out *out = b->out[pe];
    if (announced) {
        progress_wait_also_writable(out->fd);
        TRANSPORT_WAIT_WHILE(w, bulk_write_some(out));
        progress_wait_also_writable(-1);
    }
    bulk_writing_set(b, pe, 0);
    int error = announced ? out->error : ECANCELED;
    if (error) {
        /* What went of the data would be read as the next message's: no more on this lane. */
        close(out->fd);
        out->fd = -1;
        __atomic_store_n(&out->unreachable, 1, __ATOMIC_RELEASE);
        log_error("transport", "bulk lane: a message to PE %d broke off: %s", pe, strerror(error));
    }
    pthread_mutex_unlock(&out->send_lock);
    return error ? -1 : 0;
}

/* Writes what the sockets take of this PE's messages under way, and makes b->fds a poll entry
 * for each one still unfinished, with room for BULK_MAX_UNNAMED + 1 more after them. Returns how
 * many it made, or -1 without memory for them. */
static int bulk_write_all_under_way(struct bulk_lane *b)
{
    int n = 0;
    pthread_mutex_lock(&b->writing_lock);
    size_t room = (size_t)b->n_writing + BULK_MAX_UNNAMED + 1;
    struct pollfd *grown = room <= b->fds_room ? b->fds : realloc(b->fds, room * sizeof(*grown));
    if (grown) {
        b->fds = grown;
        b->fds_room = room > b->fds_room ? room : b->fds_room;
    }
    for (int i = 0; grown && i < b->n_writing; i++) {
        struct bulk_out *out = b->out[b->writing[i]];
        if (bulk_write_some(out))
            b->fds[n++] = (struct pollfd){.fd = out->fd, .events = POLLOUT};
    }
    pthread_mutex_unlock(&b->writing_lock);
    return grown ? n : -1;
}

static void bulk_unnamed_drop(struct bulk_lane *b, int i, int close_it)
{
    if (close_it)
        close(b->unnamed[i]);
    b->unnamed[i] = b->unnamed[--b->n_unnamed];
}

/* Reports a connection that did not begin as a peer's does, with where it came from. */
static void bulk_refused(int fd)
{
    struct sockaddr_in from = {0};
    socklen_t len = sizeof(from);
    char text[INET_ADDRSTRLEN] = "?";
    if (!getpeername(fd, (struct sockaddr *)&from, &len))
        inet_ntop(AF_INET, &from.sin_addr, text, sizeof(text));
    log_error("transport", "bulk lane: a connection from %s:%u that is not a peer's was closed",
              text, ntohs(from.sin_port));
}

/* Accepts the connections waiting, and names those whose hello has come: a peer's, with this
 * PE's secret, becomes its connection; any other is closed. */
static void bulk_accept(struct bulk_lane *b, int n_pes)
{
    int fd;
    while ((fd = accept4(b->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
        if (b->n_unnamed == BULK_MAX_UNNAMED)
            bulk_unnamed_drop(b, 0, 1);
        b->unnamed[b->n_unnamed++] = fd;
    }
    for (int i = 0; i < b->n_unnamed;) {
        struct bulk_hello hello;
        ssize_t n = recv(b->unnamed[i], &hello, sizeof(hello), MSG_PEEK | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            i++;
            continue;
        }
        if (n > 0 && (size_t)n < sizeof(hello)) {
            i++; /* the rest is on its way */
            continue;
        }
        int named = n == (ssize_t)sizeof(hello) && hello.magic == BULK_MAGIC && hello.from >= 0 &&
                    hello.from < n_pes && b->in[hello.from] < 0 &&
                    !memcmp(hello.secret, b->secret, sizeof(b->secret)) &&
                    recv(b->unnamed[i], &hello, sizeof(hello), MSG_DONTWAIT) == (ssize_t)n;
        if (named)
            b->in[hello.from] = b->unnamed[i];
        else
            bulk_refused(b->unnamed[i]);
        bulk_unnamed_drop(b, i, !named);
    }
}

/* Reads what has come of len bytes from fd into dest (NULL: away) from *got on. Returns 0, or
 * once the connection has failed its errno (ECONNRESET where it was closed). */
static int bulk_read_some(int fd, char *dest, size_t len, size_t *got)
{
    char away[4096];
    while (*got < len) {
        size_t want = len - *got;
        char *into = dest ? dest + *got : away;
        ssize_t n = recv(fd, into, dest || want < sizeof(away) ? want : sizeof(away), MSG_DONTWAIT);
        if (n > 0)
            *got += (size_t)n;
        else if (n < 0 && errno == EINTR)
            continue;
        else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        else
            return n < 0 ? errno : ECONNRESET;
    }
    return 0;
}

void bulk_lane_receive(struct transport *t, int pe, void *dest, size_t len)
{
    struct bulk_lane *b = t->bulk;
    int n_pes = t->config.n_pes;
    if (!b || pe < 0 || pe >= n_pes)
        log_fatal("transport", "a bulk message from PE %d, which has no lane here", pe);
    size_t got = 0, got_before = 0;
    int idle_ms = 0;
    long long since = wait_now_ns();
    for (;;) {
        if (b->in[pe] < 0)
            bulk_accept(b, n_pes);
        int fd = b->in[pe], error = fd >= 0 ? bulk_read_some(fd, dest, len, &got) : 0;
        if (error)
            log_fatal("transport", "a message of %zu bytes from PE %d broke off after %zu: %s", len,
                      pe, got, strerror(error));
        if (got == len)
            break;
        /* Wait for the peer's data (or its connection) while writing this PE's own: spinning as
         * long as a wait for a transport event does (the rest of the data follows its header
         * at once), then sleeping until a socket is ready. */
        int n = bulk_write_all_under_way(b);
        if (n < 0)
            log_fatal("transport", "out of memory receiving %zu bytes from PE %d", len, pe);
        struct pollfd *fds = b->fds;
        long long now = wait_now_ns();
        if (got != got_before)
            since = now, got_before = got;
        if (now - since < wait_spin_ns) {
            wait_pause();
            continue;
        }
        if (fd >= 0) {
            fds[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
        } else {
            fds[n++] = (struct pollfd){.fd = b->listen_fd, .events = POLLIN};
            for (int i = 0; i < b->n_unnamed; i++)
                fds[n++] = (struct pollfd){.fd = b->unnamed[i], .events = POLLIN};
        }
        int ready;
        while ((ready = poll(fds, (nfds_t)n, 100)) < 0 && errno == EINTR)
            ;
        idle_ms = ready ? 0 : idle_ms + 100;
        if (idle_ms >= BULK_STALL_MS)
            log_fatal("transport", "a message of %zu bytes from PE %d stopped after %zu for %d s",
                      len, pe, got, BULK_STALL_MS / 1000);
    }
}
