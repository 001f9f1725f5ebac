/*
 * The tiny static helper: no libc, no dynamic loader, `_start` exits 0. Spawning it measures the
 * kernel's process creation, exec and teardown and nothing else (see METHODOLOGY.md, "The spawn
 * floor").
 */
    .text
    .globl  _start
_start:
    mov     $60, %eax           /* __NR_exit */
    xor     %edi, %edi
    syscall
    hlt
    .section .note.GNU-stack, "", @progbits
