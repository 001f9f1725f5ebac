/*
 * pk__clone3_raw(args, size, fn, arg): clone3 with a child stack, running fn(arg) in the child.
 *
 * glibc 2.36 exports no clone3 wrapper, and a C-level syscall() cannot be used: the child would
 * return through the parent's frame on a stack it does not own. Here the child never returns: it
 * starts on the new stack the kernel installed, calls fn(arg) and exits with its result.
 * Returns the child's pid (parent) or -errno, as the raw system call does.
 * In: rdi = struct clone_args *, rsi = size, rdx = fn, rcx = arg.
 */
    .text
    .globl  pk__clone3_raw
    .hidden pk__clone3_raw
    .type   pk__clone3_raw, @function
pk__clone3_raw:
    .cfi_startproc
    mov     %rdx, %r8           /* fn and arg survive the syscall in r8/r9 (only rcx, r11 and */
    mov     %rcx, %r9           /* rax are clobbered), and the child inherits them */
    mov     $435, %eax          /* __NR_clone3 */
    syscall
    test    %rax, %rax
    jz      1f
    ret                         /* parent: pid, or -errno */
1:
    .cfi_undefined rip          /* child: outermost frame, nothing to unwind to */
    xor     %ebp, %ebp
    mov     %r9, %rdi
    call    *%r8
    mov     %eax, %edi
    mov     $60, %eax           /* __NR_exit */
    syscall
    hlt
    .cfi_endproc
    .size   pk__clone3_raw, .-pk__clone3_raw

    .section .note.GNU-stack, "", @progbits
