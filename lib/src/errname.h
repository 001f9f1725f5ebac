/*
 * The symbolic name of an errno value ("ENOENT"), from the platform: glibc's strerrorname_np
 * (errname.linux.c) or a table of the values the Windows C runtime defines (errname.windows.c).
 */
#ifndef PK_ERRNAME_H
#define PK_ERRNAME_H

/* The name of the positive errno value e, or NULL when the platform does not know it. */
const char *pk__errno_name(int e);

#endif /* PK_ERRNAME_H */
