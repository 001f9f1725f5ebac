/*
 * The terminal (tty.posix.c): handing it to a command that leads its own process group, and job
 * control while the command has it.
 */
#ifndef PKRUN_TTY_POSIX_H
#define PKRUN_TTY_POSIX_H

#include <stdbool.h>

struct pkr_tty {
    int fd;      /* pkrun's controlling terminal among 0..2, -1 when none or not foreground */
    int pgid;    /* the command's process group */
    bool handed; /* the terminal is the command's */
};

/* For a command that leads its own process group, on pkrun's controlling terminal: when pkrun is
 * in the terminal's foreground, gives the terminal to the command's group (as a shell gives it to
 * a job) and continues it; either way watches the command's stops. */
void pkr_tty_start(struct pkr_tty *t, int command_pgid, int pidfd);
/* SIGCHLD arrived: when the command stopped for job control (Ctrl-Z, background tty access),
 * takes the terminal back, stops pkrun so that the shell sees the job stopped, and on `fg` gives
 * the terminal back and continues the command. */
void pkr_tty_check_stop(struct pkr_tty *t, int pidfd);
/* Gives the terminal back to pkrun's own process group. */
void pkr_tty_restore(struct pkr_tty *t);

#endif /* PKRUN_TTY_POSIX_H */
