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

/* Catches every asynchronous terminating signal that was not ignored at start (a signal ignored
 * then stays ignored, for pkrun and the command: nohup), resets SIGCHLD to its default, and makes
 * the self-pipe whose read end pkr_signals_fd returns. Returns 0 or -errno. */
int pkr_signals_init(void);
int pkr_signals_fd(void);
/* Reads what the handlers recorded into sigs (up to cap); returns how many. */
size_t pkr_signals_take(struct pkr_signal *sigs, size_t cap);
/* After the spawn (the command keeps the mask pkrun was started with): unblocks the caught
 * signals for pkrun and blocks SIGTTIN and SIGTTOU, so pkrun's own terminal writes and tcsetpgrp
 * from the background never stop it. */
void pkr_signals_after_spawn(void);
/* Asks for SIGCHLD on the command's stops (job control, tty.posix.c). */
void pkr_signals_watch_stops(void);
/* Ends pkrun the way the command ended: by the same signal (no core file of pkrun's own), or
 * 128 + signo when that signal cannot end it. */
_Noreturn void pkr_die_like(int signo);

#endif /* PKRUN_SIGNALS_POSIX_H */
