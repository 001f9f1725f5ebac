/*
 * The terminal (tty.posix.c): handing it to a command that leads its own process group when the
 * command needs it, and job control while the command runs.
 */
#ifndef PKRUN_TTY_POSIX_H
#define PKRUN_TTY_POSIX_H

#include <stdbool.h>

struct pkr_tty {
    int fd;      /* pkrun's controlling terminal among 0..2, -1 when none */
    int pgid;    /* the command's process group */
    bool handed; /* the terminal is the command's */
};

/* For a command that leads its own process group, on pkrun's controlling terminal: watches the
 * command's stops, and catches SIGTSTP to stop the command with it. The terminal stays pkrun's
 * group's until the command needs it (pkr_tty_check_stop). */
void pkr_tty_start(struct pkr_tty *t, int command_pgid, int pidfd);
/* SIGCHLD arrived: when the command stopped on the terminal (SIGTTIN, SIGTTOU) while pkrun's
 * group has it, gives it the terminal and continues it; when it stopped for job control (Ctrl-Z,
 * a terminal read from the background), takes the terminal back, stops pkrun so that the shell
 * sees the job stopped, and once continued gives the terminal back and continues the command. */
void pkr_tty_check_stop(struct pkr_tty *t, int pidfd);
/* SIGTSTP arrived (Ctrl-Z while pkrun's group has the terminal): stops the command's group,
 * whose stop then stops pkrun. */
void pkr_tty_on_tstp(struct pkr_tty *t);
/* Gives the terminal back to pkrun's own process group. */
void pkr_tty_restore(struct pkr_tty *t);

#endif /* PKRUN_TTY_POSIX_H */
