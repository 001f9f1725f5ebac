/*
 * The terminal, when the command leads a process group of its own (process-group containment).
 *
 * A terminal lets only its foreground process group read it; a background reader is stopped by
 * SIGTTIN. pkrun's own group is the foreground one when a shell runs it, but a command in a new
 * group is not: it would stop at its first read and the run would hang. So pkrun does what a
 * shell does for a job: the command's group takes the terminal in the child, before exec
 * (processkit's take_terminal), and pkrun checks after the spawn, giving it (tcsetpgrp) and
 * continuing the group if the child could not. Ctrl-C and Ctrl-Z go to the command's group from
 * its first instruction, as they would without pkrun: none can reach pkrun in between.
 *
 * Job control follows. When the command stops (Ctrl-Z, or a background read after `bg`), pkrun
 * takes the terminal back and stops itself, so the shell sees its job stopped and gets the
 * terminal; when the shell continues pkrun (`fg`), pkrun gives the terminal back if it is in the
 * foreground again and continues the command. At the end the terminal returns to pkrun's group.
 * pkrun blocks SIGTTOU (signals.posix.c), so tcsetpgrp works from the background.
 *
 * With cgroup containment (or --foreground) the command stays in pkrun's process group and none
 * of this is needed.
 */
#define _GNU_SOURCE
#include "signals.posix.h"
#include "tty.posix.h"

#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

void pkr_tty_start(struct pkr_tty *t, int command_pgid, int pidfd)
{
    *t = (struct pkr_tty){.fd = -1, .pgid = command_pgid};
    for (int fd = 0; fd < 3 && t->fd < 0; fd++)
        if (isatty(fd) && tcgetpgrp(fd) >= 0)
            t->fd = fd; /* pkrun's controlling terminal (tcgetpgrp fails on any other) */
    if (t->fd < 0)
        return;
    /* Watched even from the background: a command stopped there by a terminal read stops pkrun
     * too, so that the shell shows the job stopped and `fg` brings both back. */
    pkr_signals_watch_children();
    /* The library normally did it already, in the child before exec (take_terminal): then the
     * terminal is only to be given back at the end. */
    pid_t fg = tcgetpgrp(t->fd);
    if (fg == command_pgid) {
        t->handed = true;
    } else if (fg == getpgrp() && tcsetpgrp(t->fd, command_pgid) == 0) {
        t->handed = true;
        kill(-command_pgid, SIGCONT);
    }
    /* A stop before the handler was there sent a SIGCHLD nobody caught; waitid still says. */
    pkr_tty_check_stop(t, pidfd);
}

/* Stops pkrun as a job would be: SIGTSTP like the command, or SIGSTOP when pkrun was started
 * with SIGTSTP ignored. Returns once pkrun is continued. */
static void stop_self(void)
{
    struct sigaction sa;
    int signo = sigaction(SIGTSTP, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL ? SIGTSTP : SIGSTOP;
    raise(signo);
}

void pkr_tty_check_stop(struct pkr_tty *t, int pidfd)
{
    if (t->fd < 0 || pidfd < 0)
        return;
    siginfo_t si = {0};
    if (waitid(P_PIDFD, (id_t)pidfd, &si, WSTOPPED | WNOHANG) != 0 || si.si_pid == 0 ||
        si.si_code != CLD_STOPPED)
        return;
    if (t->handed)
        tcsetpgrp(t->fd, getpgrp());
    t->handed = false;
    stop_self();
    /* Continued: `fg` makes pkrun's group the foreground again; `bg` does not. */
    if (tcgetpgrp(t->fd) == getpgrp() && tcsetpgrp(t->fd, t->pgid) == 0)
        t->handed = true;
    kill(-t->pgid, SIGCONT);
}

void pkr_tty_restore(struct pkr_tty *t)
{
    if (t->fd >= 0 && t->handed)
        tcsetpgrp(t->fd, getpgrp());
    t->handed = false;
}
