/* Bootstraps: single, the env rendezvous with forked ranks (allgathers of several sizes, bad
 * variables, unreachable root, ranks that die or disagree, stray connections), the oob adapter
 * over in-process fakes, and mpirun detection. The MPI bootstrap runs under mpirun in
 * tests/integration. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bootstrap/bootstrap.h"
#include "util/util.h"

#define PORT_IN_USE 77 /* a role's exit code: the root's port was taken, try another */

/* ---- helpers ---- */

/* A port that was free a moment ago: bind port 0, read what the kernel chose, release it. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void set_env_int(const char *name, int v)
{
    char text[32];
    snprintf(text, sizeof text, "%d", v);
    setenv(name, text, 1);
}

static void set_root(const char *host, int port)
{
    char text[300];
    snprintf(text, sizeof text, "%s:%d", host, port);
    setenv("MESHCAST_ROOT", text, 1);
}

static void clear_env(void)
{
    unsetenv("MESHCAST_RANK");
    unsetenv("MESHCAST_NRANKS");
    unsetenv("MESHCAST_ROOT");
}

static unsigned char pattern(int rank, int round, size_t i)
{
    return (unsigned char)(rank * 31 + round * 7 + (int)(i % 251));
}

static int has(const char *text, const char *part)
{
    return strstr(text, part) != NULL;
}

/* One process of a job: its MESHCAST_RANK / MESHCAST_NRANKS and what it does (returns 0 when
 * everything went as that role expects). */
typedef struct proc proc_t;
struct proc {
    int rank, nranks;
    int (*role)(const proc_t *p);
    const void *arg;
    int delay_ms; /* starts this much later */
};

static int role_main(const proc_t *p)
{
    usleep((useconds_t)p->delay_ms * 1000);
    set_env_int("MESHCAST_RANK", p->rank);
    set_env_int("MESHCAST_NRANKS", p->nranks);
    return p->role(p);
}

/* Runs procs[parent] here and the others in forked children (they report through their exit
 * status), with the root at host and a fresh port; retries when the port turned out to be
 * taken. */
static void run_job_at(const char *host, const proc_t *procs, int nprocs, int parent)
{
    for (int attempt = 0;; attempt++) {
        assert_true(attempt < 5);
        set_root(host, free_port());
        pid_t pids[32];
        assert_true(nprocs <= 32);
        fflush(stdout);
        fflush(stderr);
        for (int i = 0; i < nprocs; i++) {
            if (i == parent)
                continue;
            pids[i] = fork();
            assert_true(pids[i] >= 0);
            if (pids[i] == 0) {
                alarm(20); /* never outlive a broken test */
                _exit(role_main(&procs[i]));
            }
        }
        int code = role_main(&procs[parent]), retry = code == PORT_IN_USE;
        if (retry)
            for (int i = 0; i < nprocs; i++)
                if (i != parent)
                    kill(pids[i], SIGKILL);
        for (int i = 0; i < nprocs; i++) {
            if (i == parent)
                continue;
            int status;
            assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
            if (retry)
                continue;
            if (WIFEXITED(status) && WEXITSTATUS(status) == PORT_IN_USE) {
                retry = 1;
                continue;
            }
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("process %d (rank %d) failed: %s %d", i, procs[i].rank,
                         WIFEXITED(status) ? "exit" : "signal",
                         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        }
        if (!retry) {
            assert_int_equal(code, 0);
            break;
        }
    }
    clear_env();
}

static void run_job(const proc_t *procs, int nprocs, int parent)
{
    run_job_at("127.0.0.1", procs, nprocs, parent);
}

/* mc_bootstrap_env, or PORT_IN_USE / 1 as the role's exit code. */
static int env_boot(const proc_t *p, double timeout_s, mc_bootstrap_t **b)
{
    mc_status_t st = mc_bootstrap_env(timeout_s, b);
    if (st == MC_OK)
        return 0;
    if (st == MC_ERR_IO && has(mc_last_error(), "in use"))
        return PORT_IN_USE;
    fprintf(stderr, "rank %d: bootstrap: %s\n", p->rank, mc_last_error());
    return 1;
}

/* ---- roles ---- */

typedef struct {
    const size_t *sizes;
    int count;
} rounds_t;

/* Several allgathers of rank-dependent bytes, each checked in full. */
static int role_allgathers(const proc_t *p)
{
    const rounds_t *rounds = p->arg;
    mc_bootstrap_t *b = NULL;
    int rc = env_boot(p, 10, &b);
    if (rc)
        return rc;
    rc = 2;
    if (b->rank != p->rank || b->nranks != p->nranks || strcmp(b->name, "env"))
        goto out;
    for (int k = 0; k < rounds->count; k++) {
        size_t size = rounds->sizes[k];
        unsigned char *send = malloc(size + 1), *recv = malloc((size_t)p->nranks * size + 1);
        int ok = send && recv;
        for (size_t i = 0; ok && i < size; i++)
            send[i] = pattern(p->rank, k, i);
        mc_status_t st = ok ? b->allgather(b, send, recv, size, 10) : MC_ERR_NOMEM;
        if (st)
            fprintf(stderr, "rank %d: allgather %d (%zu bytes): %s\n", p->rank, k, size,
                    mc_last_error());
        for (int r = 0; !st && r < p->nranks; r++)
            for (size_t i = 0; i < size; i++)
                if (recv[(size_t)r * size + i] != pattern(r, k, i)) {
                    fprintf(stderr, "rank %d: allgather %d: byte %zu of rank %d wrong\n", p->rank,
                            k, i, r);
                    st = MC_ERR_INTERNAL;
                    break;
                }
        free(send);
        free(recv);
        if (st)
            goto out;
    }
    rc = 0;
out:
    b->destroy(b);
    return rc;
}

/* Joins, then exits without taking part in the allgather. */
static int role_exit_early(const proc_t *p)
{
    mc_bootstrap_t *b = NULL;
    int rc = env_boot(p, 10, &b);
    if (!rc)
        b->destroy(b);
    return rc;
}

/* Expects the allgather to fail fast with the status in arg and a message naming the cause. */
typedef struct {
    mc_status_t status;
    const char *message; /* a part of the message */
    size_t size;         /* bytes this rank sends */
} expect_t;

static int role_expect_failure(const proc_t *p)
{
    const expect_t *e = p->arg;
    mc_bootstrap_t *b = NULL;
    int rc = env_boot(p, 10, &b);
    if (rc)
        return rc;
    unsigned char send[16] = {0}, recv[16 * 8];
    double t0 = mc_now();
    mc_status_t st = b->allgather(b, send, recv, e->size, 5);
    double dt = mc_now() - t0;
    rc = 0;
    if (st != e->status || !has(mc_last_error(), e->message) || dt > 4) {
        fprintf(stderr, "rank %d: allgather returned %d after %.2f s: '%s' (expected %d '%s')\n",
                p->rank, st, dt, mc_last_error(), e->status, e->message);
        rc = 3;
    }
    /* The bootstrap stays unusable, without hanging. */
    if (!rc && b->allgather(b, send, recv, e->size, 5) == MC_OK)
        rc = 4;
    b->destroy(b);
    return rc;
}

/* Expects mc_bootstrap_env itself to fail fast with the status and message in arg. */
static int role_expect_boot_failure(const proc_t *p)
{
    const expect_t *e = p->arg;
    mc_bootstrap_t *b = NULL;
    double t0 = mc_now();
    mc_status_t st = mc_bootstrap_env(5, &b);
    double dt = mc_now() - t0;
    if (st == MC_ERR_IO && has(mc_last_error(), "in use"))
        return PORT_IN_USE;
    if (st == MC_OK)
        b->destroy(b);
    if (st != e->status || !has(mc_last_error(), e->message) || dt > 4) {
        fprintf(stderr, "rank %d: bootstrap returned %d after %.2f s: '%s' (expected %d '%s')\n",
                p->rank, st, dt, mc_last_error(), e->status, e->message);
        return 3;
    }
    return 0;
}

/* Not a meshcast rank: connects to the root's port and sends arg's 16 bytes (or closes at
 * once when arg is NULL, like a port probe). */
static int role_raw_client(const proc_t *p)
{
    const char *root = getenv("MESHCAST_ROOT");
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons((uint16_t)atoi(strrchr(root, ':') + 1))};
    for (int tries = 0; tries < 1000; tries++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            return 5;
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            if (p->arg && send(fd, p->arg, 16, MSG_NOSIGNAL) != 16)
                return 6;
            char c;
            if (p->arg)
                (void)!recv(fd, &c, 1, 0); /* until the root closes it */
            close(fd);
            return 0;
        }
        close(fd);
        usleep(2000);
    }
    return 7;
}

/* ---- tests: single ---- */

static void test_single(void **state)
{
    (void)state;
    mc_bootstrap_t *b = NULL;
    assert_int_equal(mc_bootstrap_single(&b), MC_OK);
    assert_int_equal(b->rank, 0);
    assert_int_equal(b->nranks, 1);
    assert_string_equal(b->name, "single");
    char send[5] = "abcd", recv[5] = {0};
    assert_int_equal(b->allgather(b, send, recv, 5, 1), MC_OK);
    assert_string_equal(recv, "abcd");
    assert_int_equal(b->allgather(b, recv, recv, 5, 1), MC_OK); /* in place */
    assert_int_equal(b->allgather(b, NULL, NULL, 0, 1), MC_OK);
    b->destroy(b);
}

/* ---- tests: env ---- */

static void test_env_4_ranks(void **state)
{
    (void)state;
    static const size_t sizes[] = {8, 0, 1, 4096, 300000, 3};
    rounds_t rounds = {sizes, 6};
    proc_t procs[4];
    for (int r = 0; r < 4; r++)
        procs[r] = (proc_t){r, 4, role_allgathers, &rounds, 0};
    run_job(procs, 4, 0); /* the root runs here, so its code is leak-checked */
}

static void test_env_16_ranks(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 64, 100000};
    rounds_t rounds = {sizes, 3};
    proc_t procs[16];
    for (int r = 0; r < 16; r++)
        procs[r] = (proc_t){r, 16, role_allgathers, &rounds, 0};
    run_job(procs, 16, 5); /* a non-root rank runs here */
}

static void test_env_one_rank(void **state)
{
    (void)state;
    setenv("MESHCAST_RANK", "0", 1);
    setenv("MESHCAST_NRANKS", "1", 1);
    mc_bootstrap_t *b = NULL;
    assert_int_equal(mc_bootstrap_env(1, &b), MC_OK); /* no MESHCAST_ROOT needed */
    assert_int_equal(b->nranks, 1);
    int send = 42, recv = 0;
    assert_int_equal(b->allgather(b, &send, &recv, sizeof send, 1), MC_OK);
    assert_int_equal(recv, 42);
    b->destroy(b);
    clear_env();
}

static void test_env_bad_values(void **state)
{
    (void)state;
    static const struct {
        const char *rank, *nranks, *root; /* NULL: unset */
        const char *message;
    } cases[] = {
        {"0", NULL, "h:1", "MESHCAST_NRANKS is not set"},
        {"0", "0", "h:1", "MESHCAST_NRANKS='0' is not an integer in [1, "},
        {"0", "four", "h:1", "MESHCAST_NRANKS='four'"},
        {"0", "4x", "h:1", "MESHCAST_NRANKS='4x'"},
        {"0", "", "h:1", "MESHCAST_NRANKS=''"},
        {NULL, "4", "h:1", "MESHCAST_RANK is not set"},
        {"x", "4", "h:1", "MESHCAST_RANK='x' is not an integer in [0, 4)"},
        {"4", "4", "h:1", "MESHCAST_RANK='4' is not an integer in [0, 4)"},
        {"-1", "4", "h:1", "MESHCAST_RANK='-1' is not an integer in [0, 4)"},
        {" 1", "4", "h:1", "MESHCAST_RANK=' 1'"},
        {"1", "4", NULL, "MESHCAST_ROOT is not set"},
        {"1", "4", "foo", "MESHCAST_ROOT 'foo' is not host:port"},
        {"1", "4", ":29500", "MESHCAST_ROOT ':29500' is not host:port"},
        {"1", "4", "foo:", "MESHCAST_ROOT 'foo:': port '' is not an integer in [1, 65535]"},
        {"1", "4", "foo:0", "MESHCAST_ROOT 'foo:0': port '0'"},
        {"1", "4", "foo:65536", "MESHCAST_ROOT 'foo:65536': port '65536'"},
        {"1", "4", "foo:12x", "MESHCAST_ROOT 'foo:12x': port '12x'"},
        {"1", "4", "foo:-5", "MESHCAST_ROOT 'foo:-5'"},
        {"1", "4", "::1:29500", "write an IPv6 address as [addr]:port"},
        {"1", "4", "[::1]29500", "MESHCAST_ROOT '[::1]29500' is not [ipv6]:port"},
        {"1", "4", "[::1:29500", "MESHCAST_ROOT '[::1:29500' is not [ipv6]:port"},
        {"1", "4", "[]:29500", "MESHCAST_ROOT '[]:29500' is not host:port"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_env();
        if (cases[i].rank)
            setenv("MESHCAST_RANK", cases[i].rank, 1);
        if (cases[i].nranks)
            setenv("MESHCAST_NRANKS", cases[i].nranks, 1);
        if (cases[i].root)
            setenv("MESHCAST_ROOT", cases[i].root, 1);
        mc_bootstrap_t *b = NULL;
        mc_status_t st = mc_bootstrap_env(1, &b);
        if (st != MC_ERR_INVALID || !has(mc_last_error(), cases[i].message))
            fail_msg("case %zu: status %d, message '%s', expected '%s'", i, st, mc_last_error(),
                     cases[i].message);
        assert_null(b);
    }
    /* A non-positive or NaN timeout is refused too. */
    setenv("MESHCAST_RANK", "0", 1);
    setenv("MESHCAST_NRANKS", "1", 1);
    mc_bootstrap_t *b = NULL;
    assert_int_equal(mc_bootstrap_env(0, &b), MC_ERR_INVALID);
    assert_true(has(mc_last_error(), "timeout"));
    assert_int_equal(mc_bootstrap_env(NAN, &b), MC_ERR_INVALID);
    assert_null(b);
    clear_env();
}

/* Host names and bracketed IPv6 addresses: they parse (rank 0 of 1 connects nowhere) and
 * work end to end (IPv6 where this host has a loopback ::1). */
static void test_env_root_forms(void **state)
{
    (void)state;
    static const char *roots[] = {"[::1]:29500", "localhost:1", "node-7.example.org:65535"};
    for (size_t i = 0; i < 3; i++) {
        setenv("MESHCAST_RANK", "0", 1);
        setenv("MESHCAST_NRANKS", "1", 1);
        setenv("MESHCAST_ROOT", roots[i], 1);
        mc_bootstrap_t *b = NULL;
        if (mc_bootstrap_env(1, &b) != MC_OK)
            fail_msg("%s: %s", roots[i], mc_last_error());
        b->destroy(b);
    }
    clear_env();
    static const size_t sizes[] = {5, 70000};
    rounds_t rounds = {sizes, 2};
    proc_t procs[2] = {{0, 2, role_allgathers, &rounds, 0}, {1, 2, role_allgathers, &rounds, 0}};
    run_job_at("localhost", procs, 2, 1);
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    int have_v6 = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0)
        close(fd);
    if (have_v6)
        run_job_at("[::1]", procs, 2, 1);
    else
        print_message("no IPv6 loopback here: [::1] root not tried\n");
}

static void test_env_root_unreachable(void **state)
{
    (void)state;
    set_env_int("MESHCAST_RANK", 1);
    set_env_int("MESHCAST_NRANKS", 2);
    int port = free_port(); /* nobody listens there */
    set_root("127.0.0.1", port);
    char expect[128];
    snprintf(expect, sizeof expect, "rank 1 timed out after 1 s connecting to root 127.0.0.1:%d",
             port);
    mc_bootstrap_t *b = NULL;
    double t0 = mc_now();
    mc_status_t st = mc_bootstrap_env(1, &b);
    double dt = mc_now() - t0;
    assert_int_equal(st, MC_ERR_TIMEOUT);
    if (!has(mc_last_error(), expect))
        fail_msg("message '%s', expected '%s'", mc_last_error(), expect);
    assert_true(dt >= 0.99 && dt < 2);
    assert_null(b);
    clear_env();
}

static void test_env_root_alone(void **state)
{
    (void)state;
    for (int attempt = 0;; attempt++) {
        assert_true(attempt < 5);
        set_env_int("MESHCAST_RANK", 0);
        set_env_int("MESHCAST_NRANKS", 3);
        set_root("127.0.0.1", free_port());
        mc_bootstrap_t *b = NULL;
        double t0 = mc_now();
        mc_status_t st = mc_bootstrap_env(1, &b);
        double dt = mc_now() - t0;
        if (st == MC_ERR_IO && has(mc_last_error(), "in use"))
            continue;
        assert_int_equal(st, MC_ERR_TIMEOUT);
        if (!has(mc_last_error(), "root timed out after 1 s waiting for rank 1 to join"))
            fail_msg("message '%s'", mc_last_error());
        assert_true(dt >= 0.99 && dt < 2);
        break;
    }
    clear_env();
}

static void test_env_rank_dies(void **state)
{
    (void)state;
    expect_t root = {MC_ERR_PEER, "rank 2 closed its bootstrap connection (died?)", 8};
    expect_t other = {MC_ERR_PEER,
                      "rank 2 closed its bootstrap connection (died?) (rank 1 was "
                      "told by the root)",
                      8};
    proc_t procs[3] = {{0, 3, role_expect_failure, &root, 0},
                       {1, 3, role_expect_failure, &other, 0},
                       {2, 3, role_exit_early, NULL, 0}};
    run_job(procs, 3, 0);
}

static void test_env_root_dies(void **state)
{
    (void)state;
    expect_t rank = {MC_ERR_PEER, "root (rank 0) at 127.0.0.1:", 8};
    proc_t procs[3] = {{0, 3, role_exit_early, NULL, 0},
                       {1, 3, role_expect_failure, &rank, 0},
                       {2, 3, role_expect_failure, &rank, 0}};
    run_job(procs, 3, 1);
}

static void test_env_size_mismatch(void **state)
{
    (void)state;
    expect_t root = {MC_ERR_MISMATCH,
                     "allgather sizes differ: rank 2 sent 9 bytes, root (rank "
                     "0) 8",
                     8};
    expect_t small = {MC_ERR_MISMATCH, "rank 2 sent 9 bytes, root (rank 0) 8 (rank 1 was told", 8};
    expect_t big = {MC_ERR_MISMATCH, "rank 2 sent 9 bytes, root (rank 0) 8 (rank 2 was told", 9};
    proc_t procs[3] = {{0, 3, role_expect_failure, &root, 0},
                       {1, 3, role_expect_failure, &small, 0},
                       {2, 3, role_expect_failure, &big, 0}};
    run_job(procs, 3, 0);
}

static void test_env_duplicate_rank(void **state)
{
    (void)state;
    /* The root fails at the second rank 1; that one is told why, the first sees the root go.
     * Which of the two children connects first varies, so both accept either outcome. */
    expect_t root = {MC_ERR_INVALID, "rank 1 joined twice (two processes with MESHCAST_RANK=1?)",
                     0};
    proc_t root_proc = {0, 3, role_expect_boot_failure, &root, 0};
    /* The children's outcomes differ, so they are run here rather than by run_job. */
    for (int attempt = 0;; attempt++) {
        assert_true(attempt < 5);
        set_root("127.0.0.1", free_port());
        pid_t pids[2];
        fflush(stderr);
        for (int i = 0; i < 2; i++) {
            pids[i] = fork();
            assert_true(pids[i] >= 0);
            if (pids[i] == 0) {
                alarm(20);
                set_env_int("MESHCAST_RANK", 1);
                set_env_int("MESHCAST_NRANKS", 3);
                mc_bootstrap_t *b = NULL;
                mc_status_t st = mc_bootstrap_env(5, &b);
                /* 0: told it is the duplicate; 1: saw the root go; 2: anything else. */
                _exit(st == MC_ERR_INVALID && has(mc_last_error(), "rejected rank 1: that rank "
                                                                   "already joined")
                          ? 0
                      : st == MC_ERR_PEER && has(mc_last_error(), "during the handshake") ? 1
                                                                                          : 2);
            }
        }
        int code = role_main(&root_proc), seen[3] = {0};
        for (int i = 0; i < 2; i++) {
            int status;
            if (code == PORT_IN_USE)
                kill(pids[i], SIGKILL);
            assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
            if (WIFEXITED(status) && WEXITSTATUS(status) < 3)
                seen[WEXITSTATUS(status)]++;
        }
        if (code == PORT_IN_USE)
            continue;
        assert_int_equal(code, 0);
        assert_int_equal(seen[0], 1);
        assert_int_equal(seen[1], 1);
        break;
    }
    clear_env();
}

static void test_env_nranks_mismatch(void **state)
{
    (void)state;
    expect_t root = {MC_ERR_MISMATCH, "rank 1 has MESHCAST_NRANKS=3 but root has 2", 0};
    expect_t rank = {MC_ERR_MISMATCH, "MESHCAST_NRANKS is 3 here but 2 at the root", 0};
    proc_t procs[2] = {{0, 2, role_expect_boot_failure, &root, 0},
                       {1, 3, role_expect_boot_failure, &rank, 0}};
    run_job(procs, 2, 0);
}

static void test_env_stray_connections(void **state)
{
    (void)state;
    /* A port probe that connects and closes is ignored; the job still forms. */
    static const size_t sizes[] = {16};
    rounds_t rounds = {sizes, 1};
    proc_t ok[3] = {{0, 2, role_allgathers, &rounds, 0},
                    {1, 2, role_allgathers, &rounds, 200}, /* after the probe */
                    {9, 9, role_raw_client, NULL, 0}};
    run_job(ok, 3, 0);
    /* Something that is not a meshcast rank fails the root with a clear error. */
    static const char junk[16] = "GET / HTTP/1.0\r\n";
    expect_t root = {MC_ERR_MISMATCH, "sent a bad handshake", 0};
    proc_t bad[2] = {{0, 2, role_expect_boot_failure, &root, 0}, {9, 9, role_raw_client, junk, 0}};
    run_job(bad, 2, 0);
}

/* ---- tests: oob adapter ---- */

typedef struct {
    int busy;  /* req_test answers MC_INPROGRESS this many more times */
    int tests; /* req_test calls */
    int frees; /* req_free calls */
    int rank, nranks;
    mc_status_t start_status, test_status; /* what allgather / a finished req_test return */
    int no_request;                        /* allgather completes at once, request NULL */
    int request;                           /* the request handed out */
} fake_oob_t;

static mc_status_t fake_allgather(const void *send, void *recv, size_t size, void *info,
                                  void **request)
{
    fake_oob_t *f = info;
    if (f->start_status < 0)
        return f->start_status;
    /* The other ranks' bytes are their rank number; ours are what we send. */
    for (int r = 0; r < f->nranks; r++)
        if (r == f->rank)
            memcpy((char *)recv + (size_t)r * size, send, size);
        else
            memset((char *)recv + (size_t)r * size, r, size);
    *request = f->no_request ? NULL : &f->request;
    return MC_OK;
}

static mc_status_t fake_test(void *request)
{
    fake_oob_t *f = (fake_oob_t *)((char *)request - offsetof(fake_oob_t, request));
    f->tests++;
    if (f->busy < 0 || f->busy-- > 0)
        return MC_INPROGRESS;
    return f->test_status;
}

static mc_status_t fake_free(void *request)
{
    fake_oob_t *f = (fake_oob_t *)((char *)request - offsetof(fake_oob_t, request));
    f->frees++;
    return MC_OK;
}

static mc_oob_t make_oob(fake_oob_t *f)
{
    return (mc_oob_t){fake_allgather, fake_test, fake_free, f, f->rank, f->nranks};
}

static void test_oob_one_rank(void **state)
{
    (void)state;
    fake_oob_t f = {.rank = 0, .nranks = 1};
    mc_oob_t oob = make_oob(&f);
    mc_bootstrap_t *b = NULL;
    assert_int_equal(mc_bootstrap_oob(&oob, &b), MC_OK);
    memset(&oob, 0, sizeof oob); /* the bootstrap keeps its own copy */
    assert_string_equal(b->name, "oob");
    assert_int_equal(b->rank, 0);
    assert_int_equal(b->nranks, 1);
    uint64_t send = 0x1122334455667788u, recv = 0;
    assert_int_equal(b->allgather(b, &send, &recv, sizeof send, 1), MC_OK);
    assert_true(recv == send);
    assert_int_equal(f.tests, 1);
    assert_int_equal(f.frees, 1);
    f.no_request = 1; /* completed at once: nothing to test or free */
    assert_int_equal(b->allgather(b, &send, &recv, sizeof send, 1), MC_OK);
    assert_int_equal(f.tests, 1);
    assert_int_equal(f.frees, 1);
    b->destroy(b);
}

static void test_oob_in_progress(void **state)
{
    (void)state;
    fake_oob_t f = {.busy = 5, .rank = 2, .nranks = 3};
    mc_oob_t oob = make_oob(&f);
    mc_bootstrap_t *b = NULL;
    assert_int_equal(mc_bootstrap_oob(&oob, &b), MC_OK);
    assert_int_equal(b->rank, 2);
    assert_int_equal(b->nranks, 3);
    char send[4] = {9, 9, 9, 9}, recv[12];
    assert_int_equal(b->allgather(b, send, recv, 4, 1), MC_OK);
    assert_int_equal(f.tests, 6);
    assert_int_equal(f.frees, 1);
    static const char want[12] = {0, 0, 0, 0, 1, 1, 1, 1, 9, 9, 9, 9};
    assert_memory_equal(recv, want, 12);
    b->destroy(b);
}

static void test_oob_failures(void **state)
{
    (void)state;
    char send[4] = {0}, recv[8];
    mc_bootstrap_t *b = NULL;
    /* Never completes: times out, and the request is still freed. */
    fake_oob_t f = {.busy = -1, .rank = 1, .nranks = 2};
    mc_oob_t oob = make_oob(&f);
    assert_int_equal(mc_bootstrap_oob(&oob, &b), MC_OK);
    double t0 = mc_now();
    assert_int_equal(b->allgather(b, send, recv, 4, 0.05), MC_ERR_TIMEOUT);
    assert_true(mc_now() - t0 < 0.5);
    assert_true(
        has(mc_last_error(), "rank 1 timed out after 0.05 s waiting for the oob allgather"));
    assert_int_equal(f.frees, 1);
    /* req_test fails: its status comes back. */
    f = (fake_oob_t){.busy = 2, .rank = 1, .nranks = 2, .test_status = MC_ERR_PEER};
    assert_int_equal(b->allgather(b, send, recv, 4, 1), MC_ERR_PEER);
    assert_true(has(mc_last_error(), "req_test returned -8"));
    assert_int_equal(f.frees, 1);
    /* allgather fails to start: nothing to free. */
    f = (fake_oob_t){.rank = 1, .nranks = 2, .start_status = MC_ERR_IO};
    assert_int_equal(b->allgather(b, send, recv, 4, 1), MC_ERR_IO);
    assert_true(has(mc_last_error(), "failed to start"));
    assert_int_equal(f.frees, 0);
    assert_int_equal(b->allgather(b, send, recv, 4, -1), MC_ERR_INVALID);
    b->destroy(b);
}

static void test_oob_invalid(void **state)
{
    (void)state;
    fake_oob_t f = {.rank = 0, .nranks = 2};
    mc_bootstrap_t *b = NULL;
    assert_int_equal(mc_bootstrap_oob(NULL, &b), MC_ERR_INVALID);
    assert_true(has(mc_last_error(), "NULL"));
    static const struct {
        int field, value;
        const char *message;
    } cases[] = {
        {0, 0, "mc_oob_t.allgather is NULL"},
        {1, 0, "mc_oob_t.req_test is NULL"},
        {2, 0, "mc_oob_t.req_free is NULL"},
        {3, -1, "mc_oob_t.rank = -1 is not in [0, 2)"},
        {3, 2, "mc_oob_t.rank = 2 is not in [0, 2)"},
        {4, 0, "mc_oob_t.nranks = 0 is not positive"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mc_oob_t oob = make_oob(&f);
        switch (cases[i].field) {
        case 0:
            oob.allgather = NULL;
            break;
        case 1:
            oob.req_test = NULL;
            break;
        case 2:
            oob.req_free = NULL;
            break;
        case 3:
            oob.rank = cases[i].value;
            break;
        default:
            oob.nranks = cases[i].value;
            break;
        }
        assert_int_equal(mc_bootstrap_oob(&oob, &b), MC_ERR_INVALID);
        if (!has(mc_last_error(), cases[i].message))
            fail_msg("case %zu: '%s', expected '%s'", i, mc_last_error(), cases[i].message);
        assert_null(b);
    }
}

/* ---- tests: mpirun detection ---- */

static void test_under_mpirun(void **state)
{
    (void)state;
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"};
    char *saved[3];
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        saved[i] = v ? strdup(v) : NULL;
        unsetenv(vars[i]);
    }
    assert_int_equal(mc_bootstrap_under_mpirun(), 0);
    for (int i = 0; i < 3; i++) {
        setenv(vars[i], "4", 1);
        assert_int_equal(mc_bootstrap_under_mpirun(), 1);
        unsetenv(vars[i]);
    }
    for (int i = 0; i < 3; i++) {
        if (saved[i])
            setenv(vars[i], saved[i], 1);
        free(saved[i]);
    }
}

int main(void)
{
    /* SIGPIPE keeps its default (fatal) disposition: a dead peer must be an error instead. */
    clear_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single),
        cmocka_unit_test(test_env_4_ranks),
        cmocka_unit_test(test_env_16_ranks),
        cmocka_unit_test(test_env_one_rank),
        cmocka_unit_test(test_env_bad_values),
        cmocka_unit_test(test_env_root_forms),
        cmocka_unit_test(test_env_root_unreachable),
        cmocka_unit_test(test_env_root_alone),
        cmocka_unit_test(test_env_rank_dies),
        cmocka_unit_test(test_env_root_dies),
        cmocka_unit_test(test_env_size_mismatch),
        cmocka_unit_test(test_env_duplicate_rank),
        cmocka_unit_test(test_env_nranks_mismatch),
        cmocka_unit_test(test_env_stray_connections),
        cmocka_unit_test(test_oob_one_rank),
        cmocka_unit_test(test_oob_in_progress),
        cmocka_unit_test(test_oob_failures),
        cmocka_unit_test(test_oob_invalid),
        cmocka_unit_test(test_under_mpirun),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
