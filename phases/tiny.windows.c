/*
 * pk_tiny.exe: the Windows floor's child. It exits 0 at once, so a start of it costs the
 * operating system's process creation, the C runtime's start-up and the exit, nothing else.
 */
int main(void)
{
    return 0;
}
