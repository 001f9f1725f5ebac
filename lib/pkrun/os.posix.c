/*
 * pkrun's platform services on POSIX: writev for a line and its newline in one call, sigaction
 * for SIGINT/SIGTERM/SIGHUP (the handler only triggers the cancel handle: async-signal-safe), and
 * rename(2) for the atomic JSON file.
 */
#define _GNU_SOURCE
#include "os.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

static pk_cancel *forward_to;

static void on_signal(int sig)
{
    pk_cancel_trigger_signal(forward_to, sig); /* async-signal-safe */
}

void pkrun_os_init(void)
{
}

void pkrun_write(int stream, const char *p, size_t n, bool newline)
{
    struct iovec iov[2] = {{(void *)p, n}, {"\n", newline ? 1 : 0}};
    int cnt = 2;
    struct iovec *v = iov;
    while (cnt > 0) {
        ssize_t k = writev(stream == 1 ? 1 : 2, v, cnt);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return; /* our own output is gone: keep running the child, drop its output */
        while (cnt > 0 && (size_t)k >= v->iov_len) {
            k -= (ssize_t)v->iov_len;
            v++, cnt--;
        }
        if (cnt > 0) {
            v->iov_base = (char *)v->iov_base + k;
            v->iov_len -= (size_t)k;
        }
    }
}

int pkrun_forward_signals(pk_cancel *cancel)
{
    forward_to = cancel;
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    return 0;
}

FILE *pkrun_create_temp(const char *path, char *tmp, size_t cap)
{
    snprintf(tmp, cap, "%s.tmp.%d", path, (int)getpid());
    return fopen(tmp, "we");
}

int pkrun_replace(const char *tmp, const char *path)
{
    return rename(tmp, path);
}
