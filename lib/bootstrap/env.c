/* Environment rendezvous bootstrap: MESHCAST_RANK, MESHCAST_NRANKS, MESHCAST_ROOT=host:port.
 *
 * A star over TCP: rank 0 listens on the port of MESHCAST_ROOT and every other rank connects
 * to it; the connections stay open until destroy. In an allgather the ranks send their bytes
 * to the root, which assembles them and sends the whole result back to each rank.
 *
 * The root listens on every interface at that port (like PyTorch's TCPStore): the host in
 * MESHCAST_ROOT is how the other ranks reach the root, and on the root itself a host name
 * often resolves to a loopback address that remote ranks could not reach.
 *
 * Wire format (integers big-endian): the handshake is hello {magic, rank, nranks, 0} from a
 * rank and welcome {magic, verdict, nranks, 0} from the root. In an allgather a rank sends
 * {magic, seq, size64} and its bytes; the root answers {magic, seq, verdict, culprit, size64,
 * culprit_size64} and, when the verdict is OK, nranks * size bytes. A failing root tells the
 * ranks why (verdict, culprit) so every rank reports the same cause.
 *
 * Every wait is a poll() with a deadline; sockets are non-blocking, and send() uses
 * MSG_NOSIGNAL so a dead peer is an error, not SIGPIPE. */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "bootstrap/bootstrap.h"
#include "util/util.h"

#define ENV_MAGIC 0x4d434231u /* "MCB1": bump on any wire change */
#define ENV_MAX_RANKS 65536
#define HELLO_LEN 16
#define PART_LEN 16  /* a rank's allgather header */
#define REPLY_LEN 32 /* the root's allgather header */

/* Verdicts in welcome and reply headers. */
enum {
    V_OK,
    V_DUPLICATE,    /* welcome: this rank already joined */
    V_NRANKS,       /* welcome: MESHCAST_NRANKS differs from the root's */
    V_SIZE,         /* reply: culprit sent culprit_size bytes, the root size */
    V_PEER_GONE,    /* reply: culprit closed its connection */
    V_PEER_TIMEOUT, /* reply: the root timed out waiting for culprit */
    V_PROTOCOL      /* reply: culprit sent a malformed header */
};

typedef struct {
    mc_bootstrap_t base;
    int *fds;            /* root: fds[r] is rank r's connection (fds[0] = -1); others: fds[0] */
    int nfds;            /* entries in fds */
    uint32_t seq;        /* allgathers so far; both ends check they agree */
    int broken;          /* a failed allgather leaves streams mid-message: refuse later ones */
    char root_text[300]; /* MESHCAST_ROOT, for messages */
} env_bootstrap_t;

int mc_bootstrap_under_mpirun(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

/* Big-endian integers in wire headers. */
static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (24 - 8 * i));
}
static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}
static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* ---- environment parsing ---- */

/* A decimal integer in [lo, hi] with nothing around it; 0 on success. */
static int parse_int(const char *text, long lo, long hi, int *out)
{
    if (!text || !(*text == '-' || (*text >= '0' && *text <= '9')))
        return -1;
    errno = 0;
    char *end;
    long v = strtol(text, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* Splits "host:port" or "[ipv6]:port" into host (no brackets) and port text. */
static mc_status_t parse_root(const char *text, char *host, size_t host_size, char *port,
                              size_t port_size)
{
    const char *colon;
    size_t host_len;
    const char *host_start = text;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':')
            return mc_error(MC_ERR_INVALID, "MESHCAST_ROOT '%s' is not [ipv6]:port", text);
        host_start = text + 1;
        host_len = (size_t)(close - host_start);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon)
            return mc_error(MC_ERR_INVALID, "MESHCAST_ROOT '%s' is not host:port", text);
        host_len = (size_t)(colon - text);
        if (memchr(text, ':', host_len))
            return mc_error(MC_ERR_INVALID,
                            "MESHCAST_ROOT '%s' is not host:port (write an IPv6 address as "
                            "[addr]:port)",
                            text);
    }
    if (host_len == 0)
        return mc_error(MC_ERR_INVALID, "MESHCAST_ROOT '%s' is not host:port (no host)", text);
    if (host_len >= host_size)
        return mc_error(MC_ERR_INVALID, "MESHCAST_ROOT '%s': host name too long", text);
    int port_num;
    if (colon[1] < '0' || colon[1] > '9' || parse_int(colon + 1, 1, 65535, &port_num) ||
        strlen(colon + 1) >= port_size)
        return mc_error(MC_ERR_INVALID,
                        "MESHCAST_ROOT '%s': port '%s' is not an integer in "
                        "[1, 65535]",
                        text, colon + 1);
    memcpy(host, host_start, host_len);
    host[host_len] = '\0';
    strcpy(port, colon + 1);
    return MC_OK;
}

/* ---- non-blocking socket plumbing ---- */

/* Milliseconds until deadline for poll(), rounded up so poll never returns early. */
static int poll_ms(double deadline)
{
    double left = deadline - mc_now();
    if (left <= 0)
        return 0;
    return left > INT_MAX / 1000 - 1 ? INT_MAX : (int)(left * 1000) + 1;
}

/* One connection's pending output (up to two pieces, sent in order) and input. */
typedef struct {
    int fd;
    const unsigned char *out[2];
    size_t out_len[2];
    int out_piece; /* piece being sent; 2 when all is sent */
    size_t out_off;
    unsigned char *in;
    size_t in_len, in_off;
    int stop_on_input; /* done once its input is in, even if output is pending */
} chan_t;

static void chan_init(chan_t *c, int fd)
{
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->out_piece = 2;
}
static void chan_send(chan_t *c, const void *a, size_t a_len, const void *b, size_t b_len)
{
    c->out[0] = a;
    c->out_len[0] = a_len;
    c->out[1] = b;
    c->out_len[1] = b_len;
    c->out_piece = 0;
    c->out_off = 0;
}
static void chan_recv(chan_t *c, void *in, size_t len)
{
    c->in = in;
    c->in_len = len;
    c->in_off = 0;
}
static int chan_out_busy(const chan_t *c)
{
    return c->out_piece < 2;
}
static int chan_in_busy(const chan_t *c)
{
    return c->in_off < c->in_len;
}
static int chan_done(const chan_t *c)
{
    return !chan_in_busy(c) && (!chan_out_busy(c) || (c->stop_on_input && c->in_len));
}

enum { IO_OK, IO_EOF, IO_ERRNO };

/* Sends what the socket takes now. */
static int chan_push(chan_t *c, int *err)
{
    while (c->out_piece < 2) {
        size_t left = c->out_len[c->out_piece] - c->out_off;
        if (!left) {
            c->out_piece++;
            c->out_off = 0;
            continue;
        }
        ssize_t n =
            send(c->fd, c->out[c->out_piece] + c->out_off, left, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return IO_OK;
            *err = errno;
            return errno == EPIPE || errno == ECONNRESET ? IO_EOF : IO_ERRNO;
        }
        c->out_off += (size_t)n;
    }
    return IO_OK;
}

/* Receives what has arrived. */
static int chan_pull(chan_t *c, int *err)
{
    while (chan_in_busy(c)) {
        ssize_t n = recv(c->fd, c->in + c->in_off, c->in_len - c->in_off, MSG_DONTWAIT);
        if (n == 0)
            return IO_EOF;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return IO_OK;
            *err = errno;
            return errno == ECONNRESET ? IO_EOF : IO_ERRNO;
        }
        c->in_off += (size_t)n;
    }
    return IO_OK;
}

/* How an exchange failed: on which channel, and why. */
typedef struct {
    int chan;
    int what; /* IO_EOF, IO_ERRNO, or -1 for the deadline */
    int err;  /* errno for IO_ERRNO */
} fail_t;

/* Moves bytes on every channel at once until all are done (MC_OK), one fails or the
 * deadline passes (MC_ERR_PEER / MC_ERR_TIMEOUT; *f says where, the caller words it).
 * Sending and receiving together keeps large transfers from deadlocking and lets a rank
 * read the root's verdict while it is still sending. */
static mc_status_t exchange(chan_t *c, int n, struct pollfd *pfd, int *map, double deadline,
                            fail_t *f)
{
    for (;;) {
        int np = 0;
        for (int i = 0; i < n; i++) {
            if (c[i].fd < 0 || chan_done(&c[i]))
                continue;
            pfd[np].fd = c[i].fd;
            pfd[np].events =
                (short)((chan_out_busy(&c[i]) ? POLLOUT : 0) | (chan_in_busy(&c[i]) ? POLLIN : 0));
            pfd[np].revents = 0;
            map[np++] = i;
        }
        if (!np)
            return MC_OK;
        if (mc_now() >= deadline) {
            *f = (fail_t){map[0], -1, 0};
            return MC_ERR_TIMEOUT;
        }
        int r = poll(pfd, (nfds_t)np, poll_ms(deadline));
        if (r < 0 && errno != EINTR) {
            *f = (fail_t){map[0], IO_ERRNO, errno};
            return MC_ERR_PEER;
        }
        for (int k = 0; r > 0 && k < np; k++) {
            chan_t *ch = &c[map[k]];
            int err = 0, io = IO_OK;
            if (!pfd[k].revents)
                continue;
            if (chan_in_busy(ch))
                io = chan_pull(ch, &err);
            if (io == IO_OK && chan_out_busy(ch) && !chan_done(ch))
                io = chan_push(ch, &err);
            if (io != IO_OK) {
                *f = (fail_t){map[k], io, err};
                return MC_ERR_PEER;
            }
        }
    }
}

/* Headers are small and answered at once: no Nagle delays. (Sockets are made non-blocking
 * and close-on-exec where they are created.) */
static void no_delay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* ---- connecting (ranks other than 0) ---- */

/* One connection attempt to ai; the socket or -1 with why in last. */
static int try_connect(const struct addrinfo *ai, double deadline, char *last, size_t last_size)
{
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(last, last_size, "socket: %s", strerror(errno));
        return -1;
    }
    int err = 0;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        err = errno;
        if (err == EINPROGRESS || err == EINTR) {
            struct pollfd p = {fd, POLLOUT, 0};
            int r;
            while ((r = poll(&p, 1, poll_ms(deadline))) < 0 && errno == EINTR)
                ;
            socklen_t len = sizeof err;
            if (r == 0)
                err = ETIMEDOUT;
            else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                err = errno;
        }
    }
    /* Connecting to a free local port can succeed as a TCP "simultaneous open" with itself
     * (source port = destination port); that is not the root. */
    struct sockaddr_storage me, peer;
    socklen_t me_len = sizeof me, peer_len = sizeof peer;
    if (!err && !getsockname(fd, (struct sockaddr *)&me, &me_len) &&
        !getpeername(fd, (struct sockaddr *)&peer, &peer_len) && me_len == peer_len &&
        !memcmp(&me, &peer, me_len))
        err = ECONNREFUSED;
    if (err) {
        snprintf(last, last_size, "%s", strerror(err));
        close(fd);
        return -1;
    }
    no_delay(fd);
    return fd;
}

/* Connects to the root, retrying every failure (root not listening yet, name not yet in
 * DNS) with growing pauses until the deadline. */
static mc_status_t connect_root(env_bootstrap_t *b, const char *host, const char *port,
                                double timeout_s, double deadline, int *out)
{
    char last[200] = "no attempt";
    long pause_ns = 2000000; /* 2 ms, doubling up to 100 ms */
    for (;;) {
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
        int gai = getaddrinfo(host, port, &hints, &res);
        if (gai) {
            snprintf(last, sizeof last, "cannot resolve the host: %s", gai_strerror(gai));
        } else {
            int fd = -1;
            for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
                fd = try_connect(ai, deadline, last, sizeof last);
            freeaddrinfo(res);
            if (fd >= 0) {
                *out = fd;
                return MC_OK;
            }
        }
        if (mc_now() >= deadline)
            return mc_error(MC_ERR_TIMEOUT,
                            "rank %d timed out after %g s connecting to root %s (last error: %s)",
                            b->base.rank, timeout_s, b->root_text, last);
        mc_bootstrap_backoff(&pause_ns, 100000000, deadline);
    }
}

/* Connects, says hello and waits to be admitted (the root admits all ranks at once). */
static mc_status_t join_root(env_bootstrap_t *b, const char *host, const char *port,
                             double timeout_s)
{
    double deadline = mc_now() + timeout_s;
    int fd = -1;
    mc_status_t st = connect_root(b, host, port, timeout_s, deadline, &fd);
    if (st)
        return st;
    b->fds[0] = fd;
    unsigned char hello[HELLO_LEN] = {0}, welcome[HELLO_LEN];
    put32(hello, ENV_MAGIC);
    put32(hello + 4, (uint32_t)b->base.rank);
    put32(hello + 8, (uint32_t)b->base.nranks);
    chan_t c;
    chan_init(&c, fd);
    chan_send(&c, hello, sizeof hello, NULL, 0);
    chan_recv(&c, welcome, sizeof welcome);
    struct pollfd pfd;
    int map;
    fail_t f;
    st = exchange(&c, 1, &pfd, &map, deadline, &f);
    if (st == MC_ERR_TIMEOUT)
        return mc_error(st,
                        "rank %d timed out after %g s waiting for root %s to admit it (are all "
                        "%d ranks started?)",
                        b->base.rank, timeout_s, b->root_text, b->base.nranks);
    if (st)
        return mc_error(st,
                        "rank %d: root %s closed the connection during the handshake (%s; see "
                        "rank 0's error)",
                        b->base.rank, b->root_text,
                        f.what == IO_ERRNO ? strerror(f.err) : "root failed or rejected it");
    if (get32(welcome) != ENV_MAGIC)
        return mc_error(MC_ERR_MISMATCH,
                        "rank %d: %s answered with a bad handshake (magic 0x%08x, expected "
                        "0x%08x): not a meshcast root of this version",
                        b->base.rank, b->root_text, get32(welcome), ENV_MAGIC);
    switch (get32(welcome + 4)) {
    case V_OK:
        return MC_OK;
    case V_DUPLICATE:
        return mc_error(MC_ERR_INVALID,
                        "root %s rejected rank %d: that rank already joined (two processes "
                        "with MESHCAST_RANK=%d?)",
                        b->root_text, b->base.rank, b->base.rank);
    case V_NRANKS:
        return mc_error(MC_ERR_MISMATCH,
                        "root %s rejected rank %d: MESHCAST_NRANKS is %d here but %u at the root",
                        b->root_text, b->base.rank, b->base.nranks, get32(welcome + 8));
    default:
        return mc_error(MC_ERR_MISMATCH, "rank %d: root %s sent unknown verdict %u", b->base.rank,
                        b->root_text, get32(welcome + 4));
    }
}

/* ---- listening and admitting (rank 0) ---- */

/* Listens on every interface at port: IPv6 with IPv4-mapped addresses when the host has
 * IPv6, IPv4 otherwise. */
static mc_status_t root_listen(const char *port_text, int *out)
{
    int port = atoi(port_text), one = 1, zero = 0, fd = -1;
    struct sockaddr_in6 a6 = {
        .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port), .sin6_addr = IN6ADDR_ANY_INIT};
    struct sockaddr_in a4 = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_ANY)};
    fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) < 0) {
        close(fd);
        fd = -1;
    }
    int v6 = fd >= 0;
    if (!v6)
        fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return mc_error(MC_ERR_IO, "root: cannot create a socket: %s", strerror(errno));
    /* A previous job's connections in TIME_WAIT must not block the port. */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc = v6 ? bind(fd, (struct sockaddr *)&a6, sizeof a6)
                : bind(fd, (struct sockaddr *)&a4, sizeof a4);
    if (rc < 0 || listen(fd, SOMAXCONN) < 0) {
        int err = errno;
        close(fd);
        return mc_error(MC_ERR_IO, "root cannot listen on port %d: %s%s", port, strerror(err),
                        err == EADDRINUSE ? " (another job's root, or another program?)" : "");
    }
    *out = fd;
    return MC_OK;
}

/* A connection that has not yet said which rank it is. */
typedef struct {
    int fd;
    unsigned char hello[HELLO_LEN];
    size_t got;
} pending_t;

/* Tells a rejected rank why, best effort (the socket is fresh, so 16 bytes fit). */
static void send_welcome(int fd, uint32_t verdict, int nranks)
{
    unsigned char w[HELLO_LEN] = {0};
    put32(w, ENV_MAGIC);
    put32(w + 4, verdict);
    put32(w + 8, (uint32_t)nranks);
    (void)!send(fd, w, sizeof w, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Checks one complete hello; on success the connection becomes rank's. */
static mc_status_t admit(env_bootstrap_t *b, pending_t *p)
{
    uint32_t magic = get32(p->hello), rank = get32(p->hello + 4), nranks = get32(p->hello + 8);
    int n = b->base.nranks;
    if (magic != ENV_MAGIC)
        return mc_error(MC_ERR_MISMATCH,
                        "root: a connection to port %s sent a bad handshake (magic 0x%08x, "
                        "expected 0x%08x): another program or meshcast version on this port?",
                        strrchr(b->root_text, ':') + 1, magic, ENV_MAGIC);
    if (nranks != (uint32_t)n) {
        send_welcome(p->fd, V_NRANKS, n);
        return mc_error(MC_ERR_MISMATCH, "rank %u has MESHCAST_NRANKS=%u but root has %d", rank,
                        nranks, n);
    }
    if (rank == 0 || rank >= (uint32_t)n || b->fds[rank] >= 0) {
        send_welcome(p->fd, V_DUPLICATE, n);
        return mc_error(MC_ERR_INVALID,
                        "rank %u joined twice (two processes with MESHCAST_RANK=%u?)", rank, rank);
    }
    b->fds[rank] = p->fd;
    p->fd = -1;
    return MC_OK;
}

/* Accepts connections until every rank has said hello, then admits them all. Connections
 * that close before saying hello (port probes) are dropped. */
static mc_status_t gather_ranks(env_bootstrap_t *b, int lfd, double timeout_s)
{
    double deadline = mc_now() + timeout_s;
    int n = b->base.nranks, joined = 1, npend = 0, max_pend = n + 16;
    mc_status_t st = MC_OK;
    pending_t *pend = mc_calloc((size_t)max_pend, sizeof *pend);
    struct pollfd *pfd = mc_calloc((size_t)max_pend + 1, sizeof *pfd);
    if (!pend || !pfd) {
        st = MC_ERR_NOMEM;
        goto out;
    }
    while (joined < n) {
        if (mc_now() >= deadline) {
            int missing = 1;
            while (b->fds[missing] >= 0)
                missing++;
            st = mc_error(MC_ERR_TIMEOUT,
                          "root timed out after %g s waiting for rank %d to join (%d of %d ranks "
                          "joined)",
                          timeout_s, missing, joined, n);
            goto out;
        }
        /* The listening socket is polled only while there is room for one more. */
        int listening = npend < max_pend;
        pfd[0] = (struct pollfd){listening ? lfd : -1, POLLIN, 0};
        for (int i = 0; i < npend; i++)
            pfd[i + 1] = (struct pollfd){pend[i].fd, POLLIN, 0};
        int r = poll(pfd, (nfds_t)npend + 1, poll_ms(deadline));
        if (r < 0 && errno != EINTR) {
            st = mc_error(MC_ERR_IO, "root: poll failed: %s", strerror(errno));
            goto out;
        }
        if (r <= 0)
            continue;
        /* Hellos first: the indices in pfd refer to pend as it was before accepting. */
        for (int i = npend - 1; i >= 0; i--) {
            if (!pfd[i + 1].revents)
                continue;
            pending_t *p = &pend[i];
            ssize_t got = recv(p->fd, p->hello + p->got, HELLO_LEN - p->got, MSG_DONTWAIT);
            if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
                continue;
            if (got > 0) {
                p->got += (size_t)got;
                if (p->got < HELLO_LEN)
                    continue;
                st = admit(b, p);
                if (st)
                    goto out;
                joined++;
            }
            if (p->fd >= 0)
                close(p->fd); /* closed or failed before its hello */
            pend[i] = pend[--npend];
        }
        if (listening && (pfd[0].revents & POLLIN)) {
            while (npend < max_pend) {
                int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                    break; /* EAGAIN, or an aborted connection: poll again */
                no_delay(fd);
                pend[npend++] = (pending_t){.fd = fd};
            }
        }
    }
    /* Everyone is here: admit them all at once, so a rank that returns knows the job is
     * complete. */
    for (int r = 1; r < n; r++)
        send_welcome(b->fds[r], V_OK, n);
out:
    for (int i = 0; pend && i < npend; i++)
        close(pend[i].fd);
    free(pend);
    free(pfd);
    return st;
}

/* ---- allgather ---- */

/* Ends this bootstrap's use after a failure: later allgathers fail at once, and shutting
 * down the sending side (after any verdicts queued) lets the peers see it immediately. */
static void break_bootstrap(env_bootstrap_t *b)
{
    b->broken = 1;
    for (int i = 0; i < b->nfds; i++)
        if (b->fds[i] >= 0)
            shutdown(b->fds[i], SHUT_WR);
}

/* The root's failure verdict to every rank, culprit included (it may only be slow). Only
 * used before any of this allgather's reply is sent, so every stream from the root is at a
 * message boundary and its send buffer is empty: best effort suffices. */
static void send_verdicts(env_bootstrap_t *b, uint32_t verdict, int culprit, size_t size,
                          uint64_t culprit_size)
{
    unsigned char h[REPLY_LEN] = {0};
    put32(h, ENV_MAGIC);
    put32(h + 4, b->seq);
    put32(h + 8, verdict);
    put32(h + 12, (uint32_t)culprit);
    put64(h + 16, size);
    put64(h + 24, culprit_size);
    for (int r = 1; r < b->base.nranks; r++)
        (void)!send(b->fds[r], h, sizeof h, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static mc_status_t root_allgather(env_bootstrap_t *b, const void *send, unsigned char *recv,
                                  size_t size, double timeout_s)
{
    double deadline = mc_now() + timeout_s;
    int n = b->base.nranks;
    mc_status_t st = MC_OK;
    fail_t f;
    unsigned char *hdrs = mc_calloc((size_t)n, PART_LEN), reply[REPLY_LEN] = {0};
    chan_t *c = mc_calloc((size_t)n, sizeof *c);
    struct pollfd *pfd = mc_calloc((size_t)n, sizeof *pfd);
    int *map = mc_calloc((size_t)n, sizeof *map);
    if (!hdrs || !c || !pfd || !map) {
        st = MC_ERR_NOMEM;
        goto out;
    }
    memmove(recv, send, size);
    /* Phase 1: every rank's header, checked before its bytes are read into recv. */
    chan_init(&c[0], -1);
    for (int r = 1; r < n; r++) {
        chan_init(&c[r], b->fds[r]);
        chan_recv(&c[r], hdrs + (size_t)r * PART_LEN, PART_LEN);
    }
    st = exchange(c, n, pfd, map, deadline, &f);
    if (st)
        goto peer_failed;
    for (int r = 1; r < n; r++) {
        const unsigned char *h = hdrs + (size_t)r * PART_LEN;
        if (get32(h) != ENV_MAGIC || get32(h + 4) != b->seq) {
            st = mc_error(MC_ERR_INTERNAL,
                          "root: rank %d sent a malformed allgather header (magic 0x%08x, "
                          "allgather %u, expected %u)",
                          r, get32(h), get32(h + 4), b->seq);
            send_verdicts(b, V_PROTOCOL, r, size, 0);
            goto out;
        }
        if (get64(h + 8) != size) {
            st = mc_error(MC_ERR_MISMATCH,
                          "allgather sizes differ: rank %d sent %llu bytes, root (rank 0) %zu", r,
                          (unsigned long long)get64(h + 8), size);
            send_verdicts(b, V_SIZE, r, size, get64(h + 8));
            goto out;
        }
        chan_recv(&c[r], recv + (size_t)r * size, size);
    }
    /* Phase 2: their bytes. */
    st = exchange(c, n, pfd, map, deadline, &f);
    if (st)
        goto peer_failed;
    /* Phase 3: the result to everyone. A rank that has gone is dropped and the others still
     * get theirs, so this allgather completes wherever it can. */
    put32(reply, ENV_MAGIC);
    put32(reply + 4, b->seq);
    put64(reply + 16, size);
    for (int r = 1; r < n; r++)
        chan_send(&c[r], reply, sizeof reply, recv, (size_t)n * size);
    fail_t gone = {0, 0, 0};
    while ((st = exchange(c, n, pfd, map, deadline, &f)) == MC_ERR_PEER) {
        if (!gone.chan)
            gone = f;
        c[f.chan].fd = -1;
    }
    if (!st && gone.chan) {
        st = MC_ERR_PEER;
        f = gone;
    }
    if (st == MC_ERR_TIMEOUT)
        st = mc_error(st, "root timed out after %g s sending allgather %u to rank %d", timeout_s,
                      b->seq, f.chan);
    else if (st)
        st = mc_error(st, "rank %d closed its bootstrap connection (died?): %s", f.chan,
                      f.what == IO_ERRNO ? strerror(f.err) : "connection closed");
    goto out;
peer_failed:
    if (st == MC_ERR_TIMEOUT) {
        st = mc_error(st, "root timed out after %g s waiting for rank %d in allgather %u",
                      timeout_s, f.chan, b->seq);
        send_verdicts(b, V_PEER_TIMEOUT, f.chan, size, 0);
    } else {
        st = mc_error(st, "rank %d closed its bootstrap connection (died?)%s%s", f.chan,
                      f.what == IO_ERRNO ? ": " : "", f.what == IO_ERRNO ? strerror(f.err) : "");
        send_verdicts(b, V_PEER_GONE, f.chan, size, 0);
    }
out:
    free(hdrs);
    free(c);
    free(pfd);
    free(map);
    return st;
}

/* The root's failure verdict, worded for this rank. */
static mc_status_t verdict_error(env_bootstrap_t *b, const unsigned char *reply, double timeout_s)
{
    int culprit = (int)get32(reply + 12);
    switch (get32(reply + 8)) {
    case V_SIZE:
        return mc_error(MC_ERR_MISMATCH,
                        "allgather sizes differ: rank %d sent %llu bytes, root (rank 0) %llu "
                        "(rank %d was told by the root)",
                        culprit, (unsigned long long)get64(reply + 24),
                        (unsigned long long)get64(reply + 16), b->base.rank);
    case V_PEER_GONE:
        return mc_error(MC_ERR_PEER,
                        "rank %d closed its bootstrap connection (died?) (rank %d was told by "
                        "the root)",
                        culprit, b->base.rank);
    case V_PEER_TIMEOUT:
        return mc_error(MC_ERR_TIMEOUT,
                        "root timed out after %g s waiting for rank %d in allgather %u (rank %d "
                        "was told by the root)",
                        timeout_s, culprit, b->seq, b->base.rank);
    case V_PROTOCOL:
        return mc_error(MC_ERR_INTERNAL,
                        "rank %d sent the root a malformed allgather header (rank %d was told "
                        "by the root)",
                        culprit, b->base.rank);
    default:
        return mc_error(MC_ERR_INTERNAL, "rank %d: root sent unknown allgather verdict %u",
                        b->base.rank, get32(reply + 8));
    }
}

static mc_status_t rank_allgather(env_bootstrap_t *b, const void *send, unsigned char *recv,
                                  size_t size, double timeout_s)
{
    double deadline = mc_now() + timeout_s;
    unsigned char part[PART_LEN] = {0}, reply[REPLY_LEN];
    put32(part, ENV_MAGIC);
    put32(part + 4, b->seq);
    put64(part + 8, size);
    chan_t c;
    struct pollfd pfd;
    int map;
    fail_t f;
    chan_init(&c, b->fds[0]);
    chan_send(&c, part, sizeof part, send, size);
    chan_recv(&c, reply, sizeof reply);
    c.stop_on_input = 1; /* a verdict can come before all is sent */
    mc_status_t st = exchange(&c, 1, &pfd, &map, deadline, &f);
    if (!st) {
        if (get32(reply) != ENV_MAGIC || get32(reply + 4) != b->seq)
            return mc_error(MC_ERR_INTERNAL,
                            "rank %d: malformed allgather reply from the root (magic 0x%08x, "
                            "allgather %u, expected %u)",
                            b->base.rank, get32(reply), get32(reply + 4), b->seq);
        if (get32(reply + 8) != V_OK)
            return verdict_error(b, reply, timeout_s);
        if (chan_out_busy(&c) || get64(reply + 16) != size)
            return mc_error(MC_ERR_INTERNAL, "rank %d: the root answered allgather %u early",
                            b->base.rank, b->seq);
        c.stop_on_input = 0;
        chan_recv(&c, recv, (size_t)b->base.nranks * size);
        st = exchange(&c, 1, &pfd, &map, deadline, &f);
    }
    if (st == MC_ERR_TIMEOUT)
        return mc_error(st,
                        "rank %d timed out after %g s waiting for root %s in allgather %u "
                        "(another rank late?)",
                        b->base.rank, timeout_s, b->root_text, b->seq);
    if (st)
        return mc_error(st, "root (rank 0) at %s closed its bootstrap connection (died?)%s%s",
                        b->root_text, f.what == IO_ERRNO ? ": " : "",
                        f.what == IO_ERRNO ? strerror(f.err) : "");
    return MC_OK;
}

static mc_status_t env_allgather(mc_bootstrap_t *base, const void *send, void *recv, size_t size,
                                 double timeout_s)
{
    env_bootstrap_t *b = (env_bootstrap_t *)base;
    mc_status_t st = mc_bootstrap_check_timeout(timeout_s, "env allgather");
    if (st)
        return st;
    if (b->broken)
        return mc_error(MC_ERR_PEER, "rank %d: env bootstrap unusable after an earlier failure",
                        base->rank);
    if (size && (size_t)base->nranks > SIZE_MAX / size)
        return mc_error(MC_ERR_OVERFLOW, "env allgather: %d ranks x %zu bytes overflows",
                        base->nranks, size);
    if (base->nranks == 1) {
        memmove(recv, send, size);
        return MC_OK;
    }
    st = base->rank == 0 ? root_allgather(b, send, recv, size, timeout_s)
                         : rank_allgather(b, send, recv, size, timeout_s);
    if (st)
        break_bootstrap(b);
    b->seq++;
    return st;
}

static void env_destroy(mc_bootstrap_t *base)
{
    env_bootstrap_t *b = (env_bootstrap_t *)base;
    if (!b)
        return;
    for (int i = 0; i < b->nfds; i++)
        if (b->fds[i] >= 0)
            close(b->fds[i]);
    free(b->fds);
    free(b);
}

mc_status_t mc_bootstrap_env(double timeout_s, mc_bootstrap_t **out)
{
    mc_status_t st = mc_bootstrap_check_timeout(timeout_s, "env bootstrap");
    if (st)
        return st;
    const char *rank_text = getenv("MESHCAST_RANK"), *nranks_text = getenv("MESHCAST_NRANKS"),
               *root_text = getenv("MESHCAST_ROOT");
    int rank, nranks;
    char host[NI_MAXHOST], port[8];
    if (!nranks_text)
        return mc_error(MC_ERR_INVALID, "MESHCAST_NRANKS is not set (the env bootstrap needs "
                                        "MESHCAST_RANK, MESHCAST_NRANKS and MESHCAST_ROOT)");
    if (parse_int(nranks_text, 1, ENV_MAX_RANKS, &nranks))
        return mc_error(MC_ERR_INVALID, "MESHCAST_NRANKS='%s' is not an integer in [1, %d]",
                        nranks_text, ENV_MAX_RANKS);
    if (!rank_text)
        return mc_error(MC_ERR_INVALID, "MESHCAST_RANK is not set (the env bootstrap needs "
                                        "MESHCAST_RANK, MESHCAST_NRANKS and MESHCAST_ROOT)");
    if (parse_int(rank_text, 0, nranks - 1, &rank))
        return mc_error(MC_ERR_INVALID, "MESHCAST_RANK='%s' is not an integer in [0, %d)",
                        rank_text, nranks);
    if (!root_text && nranks > 1)
        return mc_error(MC_ERR_INVALID, "MESHCAST_ROOT is not set (host:port where rank 0 "
                                        "listens)");
    if (root_text && (st = parse_root(root_text, host, sizeof host, port, sizeof port)))
        return st;

    env_bootstrap_t *b = mc_calloc(1, sizeof *b);
    if (!b)
        return MC_ERR_NOMEM;
    b->base.rank = rank;
    b->base.nranks = nranks;
    b->base.name = "env";
    b->base.allgather = env_allgather;
    b->base.destroy = env_destroy;
    snprintf(b->root_text, sizeof b->root_text, "%s", root_text ? root_text : "(none)");
    if (nranks == 1)
        goto done; /* nothing to connect */
    b->nfds = rank == 0 ? nranks : 1;
    b->fds = mc_calloc((size_t)b->nfds, sizeof *b->fds);
    if (!b->fds) {
        st = MC_ERR_NOMEM;
        goto err;
    }
    for (int i = 0; i < b->nfds; i++)
        b->fds[i] = -1;
    if (rank == 0) {
        int lfd = -1;
        st = root_listen(port, &lfd);
        if (st)
            goto err;
        st = gather_ranks(b, lfd, timeout_s);
        close(lfd); /* every rank is in: later connections are refused */
    } else {
        st = join_root(b, host, port, timeout_s);
    }
    if (st)
        goto err;
done:
    *out = &b->base;
    return MC_OK;
err:
    env_destroy(&b->base);
    return st;
}
