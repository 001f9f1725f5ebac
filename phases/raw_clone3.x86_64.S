/*
 * raw_clone3(args, size, fn, arg) for the floor benchmark's raw clone3 baseline. The baseline must
 * not go through processkit, so it carries its own copy of the same idea: the kernel starts the
 * child on the new stack, the child calls fn(arg) and exits with its result; the parent gets the
 * pid or -errno.
 */
    .text
    .globl  raw_clone3
    .hidden raw_clone3
    .type   raw_clone3, @function
raw_clone3:
    mov     %rdx, %r8
    mov     %rcx, %r9
    mov     $435, %eax          /* __NR_clone3 */
    syscall
    test    %rax, %rax
    jz      1f
    ret
1:  xor     %ebp, %ebp
    mov     %r9, %rdi
    call    *%r8
    mov     %eax, %edi
    mov     $60, %eax           /* __NR_exit */
    syscall
    hlt
    .size   raw_clone3, .-raw_clone3
    .section .note.GNU-stack, "", @progbits
