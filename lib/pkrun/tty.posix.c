/*
 * The terminal, when the command leads a process group of its own (every containment but
 * --foreground: its `kill 0` must not reach pkrun's caller).
 *
 * A terminal lets only its foreground process group read it or change its modes; a background
 * process that tries is stopped (SIGTTIN, SIGTTOU). pkrun's own group is the foreground one when
 * a shell runs it at the prompt, but the command's new group is not. Handing it the terminal at
 * the start, as a shell gives a job the terminal, would take it from everyone else in pkrun's
 * group: the pager in `pkrun 10 git log | less` would stop at its first keystroke, and make's
 * Ctrl-C would reach only the recipe under pkrun, not make. So the terminal is handed over only
 * when the command needs it: when it stops for SIGTTIN or SIGTTOU while pkrun's group has the
 * terminal, pkrun gives the command's group the terminal (tcsetpgrp) and continues it; the read
 * or the mode change it was stopped in is then made again and succeeds. Until then the terminal's
 * Ctrl-C reaches pkrun, which passes it on to the tree (once: the command is not in the group the
 * terminal sent it to); after, it reaches the command's group directly.
 *
 * Job control follows. pkrun catches SIGTSTP (Ctrl-Z while its group has the terminal) and stops
 * the command's group with it. When the command stops for any other reason than a terminal it
 * can take (Ctrl-Z while it has the terminal, a terminal read from the background after `bg`),
 * pkrun takes the terminal back and stops itself, so the shell sees its job stopped and gets the
 * terminal; when the shell continues pkrun (`fg`), pkrun gives the terminal back if the command
 * had it and pkrun is in the foreground again, and continues the command. At the end the terminal
 * returns to pkrun's group. pkrun blocks SIGTTOU (signals.posix.c), so tcsetpgrp works from the
 * background.
 *
 * With --foreground the command stays in pkrun's process group and none of this is needed.
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
    pkr_signals_catch_tstp();
    /* A stop before the handler was there sent a SIGCHLD nobody caught; waitid still says. */
    pkr_tty_check_stop(t, pidfd);
}

void pkr_tty_on_tstp(struct pkr_tty *t)
{
    if (t->fd >= 0)
        kill(-t->pgid, SIGTSTP); /* its stop then stops pkrun (pkr_tty_check_stop) */
}

/* Gives the command's group the terminal when pkrun's group has it. */
static void hand(struct pkr_tty *t)
{
    if (tcgetpgrp(t->fd) == getpgrp() && tcsetpgrp(t->fd, t->pgid) == 0)
        t->handed = true;
}

void pkr_tty_check_stop(struct pkr_tty *t, int pidfd)
{
    if (t->fd < 0 || pidfd < 0)
        return;
    siginfo_t si = {0};
    if (waitid(P_PIDFD, (id_t)pidfd, &si, WSTOPPED | WNOHANG) != 0 || si.si_pid == 0 ||
        si.si_code != CLD_STOPPED)
        return;
    bool tty_stop = si.si_status == SIGTTIN || si.si_status == SIGTTOU;
    if (tty_stop && !t->handed && tcgetpgrp(t->fd) == getpgrp()) {
        hand(t); /* it needs the terminal, and pkrun's group has it to give */
        kill(-t->pgid, SIGCONT);
        return;
    }
    bool had = t->handed;
    if (t->handed)
        tcsetpgrp(t->fd, getpgrp());
    t->handed = false;
    /* Stopped as a job is (SIGTSTP is pkrun's own to catch now, so SIGSTOP): the shell sees the
     * job stopped and gets the terminal. Returns once pkrun is continued. */
    raise(SIGSTOP);
    /* Continued: `fg` makes pkrun's group the foreground again; `bg` does not. A command that
     * had the terminal gets it back; one stopped by a terminal read from the background asks
     * for it again by retrying, and gets it now that pkrun's group is the foreground. */
    if (had)
        hand(t);
    kill(-t->pgid, SIGCONT);
}

void pkr_tty_restore(struct pkr_tty *t)
{
    if (t->fd >= 0 && t->handed)
        tcsetpgrp(t->fd, getpgrp());
    t->handed = false;
}
