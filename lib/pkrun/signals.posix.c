/*
 * Signals sent to pkrun: caught, recorded, and acted on by the event loop (pkrun.posix.c).
 *
 * Every asynchronous signal whose default action ends a process is caught — HUP, INT, QUIT,
 * TERM, ALRM, USR1, USR2, PIPE, XCPU, XFSZ, VTALRM, PROF, IO, PWR, STKFLT and the real-time
 * signals — so that none can end pkrun while the tree lives on. Faults (SEGV, BUS, FPE, ILL,
 * TRAP, SYS, ABRT) are left alone: they mean pkrun itself is broken, and the command's
 * PR_SET_PDEATHSIG covers that. SIGKILL cannot be caught; the same parent-death signal answers it.
 *
 * INT, QUIT, HUP, TERM, ALRM and the signal -s names are caught whatever their disposition at
 * start, as timeout catches them: a background job of a non-interactive shell starts with INT and
 * QUIT ignored, and `kill -INT` must still end `pkrun 3 sleep 2 &` (130, as timeout), so the
 * command gets them at their default too (exec resets a caught signal, keeps an ignored one). Any
 * other signal ignored at start stays ignored, for pkrun and the command. SIGCHLD goes back to
 * its default, whatever pkrun inherited, so that the kernel never reaps the command behind
 * pkrun's back and the command does not inherit SIG_IGN either.
 *
 * The handler only writes two bytes — the signal and whether the kernel sent it (a terminal's
 * Ctrl-C or hang-up: si_code SI_KERNEL) — to a non-blocking self-pipe the loop polls. Two signals
 * are dropped there: the SIGPIPE pkrun's own write raises when its reader is gone, and the
 * SIGXFSZ it raises past RLIMIT_FSIZE (si_pid is pkrun's own pid); the write's EPIPE or EFBIG says
 * the same thing to whoever wrote.
 */
#define _GNU_SOURCE
#include "signals.posix.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static const int caught_fixed[] = {SIGHUP,    SIGINT,  SIGQUIT, SIGTERM, SIGALRM,
                                   SIGUSR1,   SIGUSR2, SIGPIPE, SIGXCPU, SIGXFSZ,
                                   SIGVTALRM, SIGPROF, SIGIO,   SIGPWR,  SIGSTKFLT};

static int pipe_fds[2] = {-1, -1};
static volatile pid_t self_pid;
static sigset_t caught; /* the signals with our handler */

static void on_signal(int signo, siginfo_t *si, void *ctx)
{
    (void)ctx;
    int saved = errno;
    bool own_write =
        (signo == SIGPIPE || signo == SIGXFSZ) && si->si_code == SI_USER && si->si_pid == self_pid;
    if (!own_write) {
        unsigned char msg[2] = {(unsigned char)signo, si->si_code == SI_KERNEL};
        (void)!write(pipe_fds[1], msg, sizeof msg); /* full: the loop has signals to read */
    }
    errno = saved;
}

/* The signals timeout catches whatever their disposition (with -s's). */
static const int caught_always[] = {SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGALRM};

static bool always_caught(int signo, int limit_signo)
{
    for (size_t i = 0; i < sizeof caught_always / sizeof caught_always[0]; i++)
        if (signo == caught_always[i])
            return true;
    return signo == limit_signo;
}

static void catch_signal(int signo, int limit_signo)
{
    struct sigaction old;
    if (sigaction(signo, NULL, &old) != 0 ||
        (old.sa_handler == SIG_IGN && !always_caught(signo, limit_signo)))
        return;
    struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigfillset(&sa.sa_mask);
    if (sigaction(signo, &sa, NULL) == 0)
        sigaddset(&caught, signo);
}

int pkr_signals_init(int limit_signo)
{
    self_pid = getpid();
    if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0)
        return -errno;
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGCHLD, &dfl, NULL);
    sigemptyset(&caught);
    for (size_t i = 0; i < sizeof caught_fixed / sizeof caught_fixed[0]; i++)
        catch_signal(caught_fixed[i], limit_signo);
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
        catch_signal(s, limit_signo);
    return 0;
}

int pkr_signals_fd(void)
{
    return pipe_fds[0];
}

size_t pkr_signals_take(struct pkr_signal *sigs, size_t cap)
{
    size_t n = 0;
    unsigned char msg[2];
    while (n < cap && read(pipe_fds[0], msg, sizeof msg) == (ssize_t)sizeof msg)
        sigs[n++] = (struct pkr_signal){msg[0], msg[1] != 0};
    return n;
}

void pkr_signals_after_spawn(void)
{
    sigprocmask(SIG_UNBLOCK, &caught, NULL);
    sigset_t tty;
    sigemptyset(&tty);
    sigaddset(&tty, SIGTTIN);
    sigaddset(&tty, SIGTTOU);
    sigprocmask(SIG_BLOCK, &tty, NULL);
}

void pkr_signals_watch_children(void)
{
    struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigfillset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
}

void pkr_signals_catch_tstp(void)
{
    struct sigaction old;
    if (sigaction(SIGTSTP, NULL, &old) != 0 || old.sa_handler == SIG_IGN)
        return; /* a shell without job control: Ctrl-Z means nothing here either */
    struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigfillset(&sa.sa_mask);
    sigaction(SIGTSTP, &sa, NULL);
}

_Noreturn void pkr_die_like(int signo)
{
    /* The command's core file, if any, is the one that matters: never add pkrun's own. */
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(signo, &dfl, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signo);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(signo);
    /* Not reached for a signal that can end a process, which is what ended the command. */
    exit(128 + signo);
}
