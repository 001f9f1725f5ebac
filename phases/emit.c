/*
 * pk_emit — writes LINES lines of LEN bytes plus a newline to stdout, as fast as write(2) allows:
 * one prebuilt 1 MiB block of whole lines, written again and again, so the child costs nothing
 * beyond the pipe and the reader is what pk_stream_rate measures.
 *
 * usage: pk_emit LINES LEN      exit 0 when everything was written, 1 on a write error, 2 usage
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(1, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long long lines = atoll(argv[1]);
    long len = atol(argv[2]);
    if (lines < 0 || len < 0 || len > (1 << 20))
        return 2;
    size_t per = (size_t)len + 1, block_lines = ((size_t)1 << 20) / per;
    if (block_lines == 0)
        block_lines = 1;
    char *block = malloc(block_lines * per);
    if (block == NULL)
        return 1;
    for (size_t i = 0; i < block_lines; i++) {
        memset(block + i * per, 'a' + (int)(i % 26), (size_t)len);
        block[i * per + (size_t)len] = '\n';
    }
    while (lines > 0) {
        size_t n = (long long)block_lines < lines ? block_lines : (size_t)lines;
        if (write_all(block, n * per) != 0)
            return 1;
        lines -= (long long)n;
    }
    free(block);
    return 0;
}
