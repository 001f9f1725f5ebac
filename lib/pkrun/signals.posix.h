/*
 * The signals pkrun catches (signals.posix.c): recorded by their handler, read by the event loop
 * through a self-pipe, and at the end pkrun dies of the command's signal when it must.
 */
#ifndef PKRUN_SIGNALS_POSIX_H
#define PKRUN_SIGNALS_POSIX_H

#include <stdbool.h>
#include <stddef.h>

/* A signal pkrun caught, as its handler recorded it. */
struct pkr_signal {
    int signo;
    bool from_kernel; /* si_code SI_KERNEL: sent by the terminal (Ctrl-C, hang-up), not kill(2) */
};

/* Catches every asynchronous terminating signal: INT, QUIT, HUP, TERM, ALRM and limit_signo (-s's)
 * whatever their disposition, as timeout does; any other only when it was not ignored at start
 * (then it stays ignored, for pkrun and the command). Resets SIGCHLD to its default, and makes
 * the self-pipe whose read end pkr_signals_fd returns. Returns 0 or -errno. */
int pkr_signals_init(int limit_signo);
int pkr_signals_fd(void);
/* Reads what the handlers recorded into sigs (up to cap); returns how many. */
size_t pkr_signals_take(struct pkr_signal *sigs, size_t cap);
/* After the spawn (the command keeps the mask pkrun was started with): unblocks the caught
 * signals for pkrun and blocks SIGTTIN and SIGTTOU, so pkrun's own terminal writes and tcsetpgrp
 * from the background never stop it. */
void pkr_signals_after_spawn(void);
/* Asks for SIGCHLD (recorded like the others): on the command's stops (job control, tty.posix.c)
 * and on any child's exit (the orphans pkrun reaps as the first process of a PID namespace). */
void pkr_signals_watch_children(void);
/* Catches SIGTSTP (recorded like the others), for job control with a terminal (tty.posix.c). */
void pkr_signals_catch_tstp(void);
/* Ends pkrun the way the command ended: by the same signal (no core file of pkrun's own), or
 * 128 + signo when that signal cannot end it. */
_Noreturn void pkr_die_like(int signo);

#endif /* PKRUN_SIGNALS_POSIX_H */
