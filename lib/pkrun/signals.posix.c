/*
 * Signals sent to pkrun: caught, recorded, and acted on by the event loop (pkrun.posix.c).
 *
 * Every asynchronous signal whose default action ends a process is caught — HUP, INT, QUIT,
 * TERM, ALRM, USR1, USR2, PIPE, XCPU, XFSZ, VTALRM, PROF, IO, PWR, STKFLT and the real-time
 * signals — so that none can end pkrun while the tree lives on. Faults (SEGV, BUS, FPE, ILL,
 * TRAP, SYS, ABRT) are left alone: they mean pkrun itself is broken, and the command's
 * PR_SET_PDEATHSIG covers that. SIGKILL cannot be caught; the same parent-death signal answers it.
 *
 * A signal ignored when pkrun starts stays ignored, for pkrun and (through exec) for the command,
 * as nohup intends. SIGCHLD goes back to its default, whatever pkrun inherited, so that the kernel
 * never reaps the command behind pkrun's back and the command does not inherit SIG_IGN either.
 *
 * The handler only writes two bytes — the signal and whether the kernel sent it (a terminal's
 * Ctrl-C or hang-up: si_code SI_KERNEL) — to a non-blocking self-pipe the loop polls. One signal
 * is dropped there: the SIGPIPE pkrun's own write raises when its reader is gone (si_pid is
 * pkrun's own pid); the write's EPIPE says the same thing to the relay.
 */
#define _GNU_SOURCE
#include "signals.posix.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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
    if (!(signo == SIGPIPE && si->si_code == SI_USER && si->si_pid == self_pid)) {
        unsigned char msg[2] = {(unsigned char)signo, si->si_code == SI_KERNEL};
        (void)!write(pipe_fds[1], msg, sizeof msg); /* full: the loop has signals to read */
    }
    errno = saved;
}

static void catch_unless_ignored(int signo)
{
    struct sigaction old;
    if (sigaction(signo, NULL, &old) != 0 || old.sa_handler == SIG_IGN)
        return;
    struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigfillset(&sa.sa_mask);
    if (sigaction(signo, &sa, NULL) == 0)
        sigaddset(&caught, signo);
}

int pkr_signals_init(void)
{
    self_pid = getpid();
    if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0)
        return -errno;
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGCHLD, &dfl, NULL);
    sigemptyset(&caught);
    for (size_t i = 0; i < sizeof caught_fixed / sizeof caught_fixed[0]; i++)
        catch_unless_ignored(caught_fixed[i]);
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
        catch_unless_ignored(s);
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

void pkr_signals_watch_stops(void)
{
    struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigfillset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
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
