/*
 * pk_churn — the observe suite's workload (METHODOLOGY.md, "What watching costs"): TCP connection
 * churn on loopback between two processes, on an exact schedule, that reports the truth the
 * observers are judged against. pkbench starts both with processkit, inside the cell's fresh
 * network namespace, and talks to them line by line over stdin and stdout:
 *
 *   pk_churn server
 *       -> "listening PORT"                   a listener on 127.0.0.1, backlog 4096
 *       <- "go T0"                            T0: CLOCK_MONOTONIC ns; CPU is sampled at T0
 *       <- "sync"                             (after the client's freeze) accepts what is
 *       -> "synced"                           pending, so the frozen state includes every accept
 *       <- "stop"
 *       -> "cpu cpu_ns=.. user_us=.. sys_us=.. accepted=.. before=.."  CPU since T0; accepts
 *       -> "s INODE" per connection accepted since T0, then "end"
 *       <- EOF                                closes everything, exits 0
 *   pk_churn client PORT LONG_LIVED RATE DURATION_MS HOLD_MS
 *       -> "ready"                            after LONG_LIVED connections were opened
 *       <- "go T0"
 *            from T0, connect i is due at T0 + i / RATE (clock_nanosleep, TIMER_ABSTIME) until
 *            T0 + DURATION; each is closed HOLD_MS after it was due (at once for 0): the client
 *            closes first. At T0 + DURATION nothing more is opened or closed (frozen), so what
 *            is open stays open while the observers take their last look.
 *       -> "frozen churned=.. failures=.. open=.. late_max_us=.. late_1ms=.. cpu_ns=.. user_us=..
 *           sys_us=.."                        CPU from T0 to the freeze
 *       <- "ledger"
 *       -> "l INODE" per long-lived connection, "c INODE" per churned one, then "end"
 *       <- EOF                                closes everything, exits 0
 *
 * Connections are keyed by their socket inode (fstat on the descriptor), never by port: loopback
 * reuses client ports within a run. A failed connect is counted and the schedule goes on. Exit
 * status: 0, 2 on bad arguments, 1 when set-up fails (message on stderr).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

struct cpu {
    int64_t ns, user_us, sys_us;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct cpu cpu_now(void)
{
    struct timespec ts;
    struct rusage ru;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    getrusage(RUSAGE_SELF, &ru);
    return (struct cpu){(int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec,
                        (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
                        (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec};
}

static void sleep_until(int64_t t)
{
    struct timespec ts = {.tv_sec = t / 1000000000, .tv_nsec = t % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static uint64_t inode_of(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* A growable array of inodes: the ledger. */
struct ledger {
    uint64_t *v;
    size_t n, cap;
};

static void ledger_add(struct ledger *l, uint64_t inode)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        uint64_t *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL) {
            fputs("pk_churn: out of memory\n", stderr);
            exit(1);
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = inode;
}

static void ledger_print(const struct ledger *l, char tag)
{
    for (size_t i = 0; i < l->n; i++)
        printf("%c %llu\n", tag, (unsigned long long)l->v[i]);
}

/* Reads one command line from stdin; false at EOF. */
static bool command(char *buf, size_t cap)
{
    if (fgets(buf, (int)cap, stdin) == NULL)
        return false;
    buf[strcspn(buf, "\n")] = '\0';
    return true;
}

static bool parse_go(const char *line, int64_t *t0)
{
    long long v;
    if (sscanf(line, "go %lld", &v) != 1)
        return false;
    *t0 = v;
    return true;
}

/* ---- server -------------------------------------------------------------------------------- */

struct server {
    int ep, listener, timer;
    bool window; /* T0 has passed */
    int64_t t0;  /* T0 once told (0 before) */
    struct cpu cpu0;
    unsigned long before; /* accepted before T0 (the long-lived ones) */
    struct ledger accepted;
    char line[256];
    size_t linelen;
};

/* T0 has come: the window opens (once). */
static void server_window(struct server *s)
{
    if (!s->window && s->t0 != 0 && now_ns() >= s->t0) {
        s->cpu0 = cpu_now();
        s->window = true;
    }
}

static void server_accept(struct server *s)
{
    /* By the clock, not by which event epoll lists first: the first churned connect is due at
     * T0 exactly, and its accept can come in the same wake-up as the timer, ahead of it. */
    server_window(s);
    for (;;) {
        int fd = accept4(s->listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN: drained; anything else: the client will count its failure */
        if (s->window)
            ledger_add(&s->accepted, inode_of(fd));
        else
            s->before++;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.fd = fd};
        if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) != 0)
            close(fd);
    }
}

/* A command on stdin. Returns false at EOF. */
static bool server_command(struct server *s)
{
    char buf[256];
    ssize_t n = read(0, buf, sizeof buf);
    if (n <= 0)
        return false;
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] != '\n') {
            if (s->linelen < sizeof s->line - 1)
                s->line[s->linelen++] = buf[i];
            continue;
        }
        s->line[s->linelen] = '\0';
        s->linelen = 0;
        int64_t t0;
        if (parse_go(s->line, &t0)) {
            s->t0 = t0;
            struct itimerspec its = {.it_value = {t0 / 1000000000, t0 % 1000000000}};
            timerfd_settime(s->timer, TFD_TIMER_ABSTIME, &its, NULL);
        } else if (strcmp(s->line, "sync") == 0) {
            /* The client has frozen: accept what it completed, so the observers' last look
             * sees the server's side of every connection (a loaded server lags behind). */
            server_accept(s);
            puts("synced");
            fflush(stdout);
        } else if (strcmp(s->line, "stop") == 0) {
            /* Connections the client completed but we have not accepted yet count too. */
            server_accept(s);
            struct cpu c = cpu_now();
            printf("cpu cpu_ns=%lld user_us=%lld sys_us=%lld accepted=%zu before=%lu\n",
                   (long long)(c.ns - s->cpu0.ns), (long long)(c.user_us - s->cpu0.user_us),
                   (long long)(c.sys_us - s->cpu0.sys_us), s->accepted.n, s->before);
            ledger_print(&s->accepted, 's');
            puts("end");
            fflush(stdout);
        }
    }
    return true;
}

static int server(void)
{
    struct server s = {.ep = epoll_create1(EPOLL_CLOEXEC)};
    s.listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    s.timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (s.ep < 0 || s.listener < 0 || s.timer < 0 ||
        bind(s.listener, (struct sockaddr *)&a, sizeof a) != 0 || listen(s.listener, 4096) != 0 ||
        getsockname(s.listener, (struct sockaddr *)&a, &alen) != 0) {
        fprintf(stderr, "pk_churn server: cannot listen on 127.0.0.1: %s\n", strerror(errno));
        return 1;
    }
    int fds[] = {0, s.listener, s.timer};
    for (size_t i = 0; i < 3; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};
        epoll_ctl(s.ep, EPOLL_CTL_ADD, fds[i], &ev);
    }
    printf("listening %u\n", ntohs(a.sin_port));
    fflush(stdout);
    for (bool open = true; open;) {
        struct epoll_event evs[64];
        int n = epoll_wait(s.ep, evs, 64, -1);
        for (int i = 0; i < n && open; i++) {
            int fd = evs[i].data.fd;
            if (fd == 0) {
                open = server_command(&s);
            } else if (fd == s.listener) {
                server_accept(&s);
            } else if (fd == s.timer) {
                uint64_t ticks;
                if (read(s.timer, &ticks, sizeof ticks) == sizeof ticks)
                    server_window(&s);
            } else {
                /* The client closes first: read its EOF, then close our end. */
                char sink[512];
                ssize_t r = read(fd, sink, sizeof sink);
                if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
                    close(fd);
            }
        }
    }
    /* Exiting closes every connection. */
    free(s.accepted.v);
    return 0;
}

/* ---- client -------------------------------------------------------------------------------- */

struct held {
    int fd;
    int64_t close_at;
};

static int connect_to(const struct sockaddr_in *a)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (const struct sockaddr *)a, sizeof *a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

struct client_stats {
    unsigned long churned, failures, late_1ms;
    int64_t late_max_ns;
};

/* The churn window: connects on the schedule, closes after the hold, frozen at the end. Returns
 * the queue of connections still held (the caller closes them when told). */
static struct held *churn(const struct sockaddr_in *a,
                          double rate,
                          int64_t t0,
                          int64_t duration_ns,
                          int64_t hold_ns,
                          struct ledger *led,
                          struct client_stats *st,
                          size_t *nheld)
{
    int64_t end = t0 + duration_ns;
    /* Held connections close in the order they opened: a FIFO ring, sized for the most that can
     * be open at once. */
    size_t cap = (size_t)(rate * ((double)hold_ns / 1e9) + 2.0) + 1, head = 0, count = 0;
    struct held *q = calloc(cap, sizeof *q);
    if (q == NULL) {
        fputs("pk_churn: out of memory\n", stderr);
        exit(1);
    }
    for (uint64_t i = 0;;) {
        int64_t due = rate > 0 ? t0 + (int64_t)((double)i * 1e9 / rate) : INT64_MAX;
        bool connect_next = due < end;
        int64_t close_next = count > 0 ? q[head].close_at : INT64_MAX;
        if (!connect_next && close_next >= end)
            break;
        bool closing = close_next <= due;
        int64_t t = closing ? close_next : due;
        sleep_until(t);
        if (closing) {
            close(q[head].fd);
            head = (head + 1) % cap;
            count--;
            continue;
        }
        int64_t late = now_ns() - due;
        if (late > st->late_max_ns)
            st->late_max_ns = late;
        st->late_1ms += late > 1000000;
        i++;
        int fd = connect_to(a);
        if (fd < 0) {
            st->failures++;
            continue;
        }
        st->churned++;
        ledger_add(led, inode_of(fd));
        if (hold_ns == 0) {
            close(fd);
        } else {
            q[(head + count) % cap] = (struct held){fd, due + hold_ns};
            count++;
        }
    }
    /* Pack the still-held ones for the caller. */
    struct held *left = calloc(count ? count : 1, sizeof *left);
    for (size_t k = 0; left != NULL && k < count; k++)
        left[k] = q[(head + k) % cap];
    free(q);
    *nheld = count;
    return left;
}

/* A whole decimal argument in [0, max], or -1. */
static double number(const char *s, double max)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    return end == s || *end != '\0' || errno != 0 || !(v >= 0 && v <= max) ? -1 : v;
}

static int client(int argc, char **argv)
{
    double port = argc == 7 ? number(argv[2], 65535) : -1;
    double long_lived_d = argc == 7 ? number(argv[3], 100000) : -1;
    double rate = argc == 7 ? number(argv[4], 1e6) : -1;
    double duration_ms = argc == 7 ? number(argv[5], 86400e3) : -1;
    double hold_ms = argc == 7 ? number(argv[6], 86400e3) : -1;
    if (port < 1 || long_lived_d < 0 || rate < 0 || duration_ms < 0 || hold_ms < 0) {
        fputs("usage: pk_churn client PORT LONG_LIVED RATE DURATION_MS HOLD_MS\n", stderr);
        return 2;
    }
    long long_lived = (long)long_lived_d;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct ledger lived = {0}, churned = {0};
    int *keep = calloc((size_t)long_lived + 1, sizeof *keep);
    for (long i = 0; keep != NULL && i < long_lived; i++) {
        if ((keep[i] = connect_to(&a)) < 0) {
            fprintf(stderr, "pk_churn client: long-lived connect: %s\n", strerror(errno));
            return 1;
        }
        ledger_add(&lived, inode_of(keep[i]));
    }
    puts("ready");
    fflush(stdout);
    char line[256];
    int64_t t0;
    if (!command(line, sizeof line) || !parse_go(line, &t0)) {
        fputs("pk_churn client: expected \"go T0\" on stdin\n", stderr);
        return 1;
    }
    sleep_until(t0);
    struct cpu c0 = cpu_now();
    struct client_stats st = {0};
    size_t nheld = 0;
    struct held *held = churn(&a, rate, t0, (int64_t)(duration_ms * 1e6), (int64_t)(hold_ms * 1e6),
                              &churned, &st, &nheld);
    struct cpu c1 = cpu_now();
    printf("frozen churned=%lu failures=%lu open=%zu late_max_us=%lld late_1ms=%lu cpu_ns=%lld "
           "user_us=%lld sys_us=%lld\n",
           st.churned, st.failures, (size_t)long_lived + nheld, (long long)(st.late_max_ns / 1000),
           st.late_1ms, (long long)(c1.ns - c0.ns), (long long)(c1.user_us - c0.user_us),
           (long long)(c1.sys_us - c0.sys_us));
    fflush(stdout);
    while (command(line, sizeof line)) {
        if (strcmp(line, "ledger") == 0) {
            ledger_print(&lived, 'l');
            ledger_print(&churned, 'c');
            puts("end");
            fflush(stdout);
        }
    }
    /* EOF: close the client's ends first, as during the churn. */
    for (size_t k = 0; held != NULL && k < nheld; k++)
        close(held[k].fd);
    for (long i = 0; i < long_lived; i++)
        close(keep[i]);
    free(held);
    free(keep);
    free(lived.v);
    free(churned.v);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "server") == 0)
        return server();
    if (argc >= 2 && strcmp(argv[1], "client") == 0)
        return client(argc, argv);
    fputs("usage: pk_churn server\n"
          "       pk_churn client PORT LONG_LIVED RATE DURATION_MS HOLD_MS\n",
          stderr);
    return 2;
}
