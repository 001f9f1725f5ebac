/*
 * The Windows scenarios' child, built as cat.exe next to pkbench.exe: standard input to
 * standard output, unchanged, in 64 KiB ReadFile/WriteFile calls, until end of file. It is the
 * role `cat` plays on Linux (the seed's Windows run used `cmd /c findstr`, whose speed is
 * findstr's and whose output is re-ended with CRLF); exit status 0 only when every byte read
 * was written.
 */
#include <windows.h>

int main(void)
{
    HANDLE in = GetStdHandle(STD_INPUT_HANDLE), out = GetStdHandle(STD_OUTPUT_HANDLE);
    static char buf[65536];
    for (;;) {
        DWORD n = 0;
        if (!ReadFile(in, buf, sizeof buf, &n, NULL) || n == 0)
            return GetLastError() == ERROR_BROKEN_PIPE || n == 0 ? 0 : 1;
        for (DWORD off = 0; off < n;) {
            DWORD w = 0;
            if (!WriteFile(out, buf + off, n - off, &w, NULL))
                return 1;
            off += w;
        }
    }
}
