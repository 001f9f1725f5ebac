/*
 * errno names on Windows: the Microsoft C runtime has no strerrorname_np, so this is a table of
 * the values its <errno.h> defines (the POSIX supplement included). strerror gives the message.
 */
#include "errname.h"

#include <errno.h>
#include <stddef.h>

#define PK__ERRNO_MAP(XX)                                                                          \
    XX(EPERM)                                                                                      \
    XX(ENOENT)                                                                                     \
    XX(ESRCH)                                                                                      \
    XX(EINTR)                                                                                      \
    XX(EIO)                                                                                        \
    XX(ENXIO)                                                                                      \
    XX(E2BIG)                                                                                      \
    XX(ENOEXEC)                                                                                    \
    XX(EBADF)                                                                                      \
    XX(ECHILD)                                                                                     \
    XX(EAGAIN)                                                                                     \
    XX(ENOMEM)                                                                                     \
    XX(EACCES)                                                                                     \
    XX(EFAULT)                                                                                     \
    XX(EBUSY)                                                                                      \
    XX(EEXIST)                                                                                     \
    XX(EXDEV)                                                                                      \
    XX(ENODEV)                                                                                     \
    XX(ENOTDIR)                                                                                    \
    XX(EISDIR)                                                                                     \
    XX(EINVAL)                                                                                     \
    XX(ENFILE)                                                                                     \
    XX(EMFILE)                                                                                     \
    XX(ENOTTY)                                                                                     \
    XX(EFBIG)                                                                                      \
    XX(ENOSPC)                                                                                     \
    XX(ESPIPE)                                                                                     \
    XX(EROFS)                                                                                      \
    XX(EMLINK)                                                                                     \
    XX(EPIPE)                                                                                      \
    XX(EDOM)                                                                                       \
    XX(ERANGE)                                                                                     \
    XX(EDEADLK)                                                                                    \
    XX(ENAMETOOLONG)                                                                               \
    XX(ENOLCK)                                                                                     \
    XX(ENOSYS)                                                                                     \
    XX(ENOTEMPTY)                                                                                  \
    XX(EILSEQ)                                                                                     \
    XX(ETIMEDOUT)                                                                                  \
    XX(ECANCELED)                                                                                  \
    XX(ENOTSUP)                                                                                    \
    XX(EOVERFLOW)                                                                                  \
    XX(EWOULDBLOCK)                                                                                \
    XX(EBADMSG)                                                                                    \
    XX(ENOTCONN)                                                                                   \
    XX(EPROTO)

const char *pk__errno_name(int e)
{
    /* EAGAIN and EWOULDBLOCK may share a value: the first match wins. */
#define PK__ERRNO_IF(name)                                                                         \
    if (e == name)                                                                                 \
        return #name;
    PK__ERRNO_MAP(PK__ERRNO_IF)
#undef PK__ERRNO_IF
    return NULL;
}
