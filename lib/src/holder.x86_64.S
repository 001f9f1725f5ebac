/*
 * pk__holder_clone(args, size, keep_fd): clone3 a leaf holder (see holder.linux.c).
 *
 * The holder shares our memory (CLONE_VM) and runs at the same time as us, so it must not touch
 * anything we use: not errno, not a libc lock, not our stack. This code uses registers and
 * read-only data only; the one buffer the kernel could write (read's, if a byte ever arrived on a
 * pipe nobody writes to) is its own. No stack: args has none, so the child starts on our stack
 * pointer, which it never uses (a call would push onto it). Until its signals are blocked a signal
 * can only take its default action (CLONE_CLEAR_SIGHAND reset the handlers): no frame is pushed.
 *
 * The child is cloned sharing our descriptor table (CLONE_FILES, holder.linux.c) and first takes a
 * private copy of its low part only, close_range(keep_fd + 1, ~0, CLOSE_RANGE_UNSHARE): the kernel
 * copies the descriptors below keep_fd + 1 and no other, so the cost and the size of the holder's
 * table do not grow with ours (a process running thousands of runs holds tens of thousands). If
 * that fails it exits at once: it must never close anything in the table it shares with us. Then
 * it closes 0..keep_fd - 1 of its copy and keeps only keep_fd (the read end of a pipe whose one
 * writer is this process, held O_CLOEXEC), blocks every signal it can, names itself "pk-holder"
 * for ps, and sleeps in read() until the read returns 0: that is when the writer is gone, i.e. we
 * exited or exec'd. Then it exits. SIGKILL (cgroup.kill, or holder.linux.c when the leaf goes)
 * ends it earlier.
 * Returns the child's pid (parent) or -errno, as the raw system call does.
 * In: rdi = struct clone_args *, rsi = size, edx = keep_fd.
 */
    .text
    .globl  pk__holder_clone
    .hidden pk__holder_clone
    .type   pk__holder_clone, @function
pk__holder_clone:
    .cfi_startproc
    mov     %edx, %r9d          /* keep_fd survives every syscall in r9 (they clobber rax, rcx, */
    mov     $435, %eax          /* r11 only); __NR_clone3 */
    syscall
    test    %rax, %rax
    jz      1f
    ret                         /* parent: pid, or -errno */
1:
    .cfi_undefined rip          /* child: nothing to unwind to */
    lea     1(%r9), %edi        /* close_range(keep_fd + 1, ~0U, CLOSE_RANGE_UNSHARE) */
    mov     $-1, %esi
    mov     $2, %edx            /* CLOSE_RANGE_UNSHARE */
    mov     $436, %eax          /* __NR_close_range */
    syscall
    test    %rax, %rax
    jnz     4f                  /* still sharing our table: touch nothing, exit */
    test    %r9d, %r9d          /* close_range(0, keep_fd - 1, 0) in the private copy */
    jz      2f
    xor     %edi, %edi
    lea     -1(%r9), %esi
    xor     %edx, %edx
    mov     $436, %eax
    syscall
2:
    xor     %edi, %edi          /* rt_sigprocmask(SIG_BLOCK, &all, NULL, 8) */
    lea     pk__holder_all(%rip), %rsi
    xor     %edx, %edx
    mov     $8, %r10d
    mov     $14, %eax           /* __NR_rt_sigprocmask */
    syscall
    mov     $15, %edi           /* prctl(PR_SET_NAME, "pk-holder") */
    lea     pk__holder_name(%rip), %rsi
    mov     $157, %eax          /* __NR_prctl */
    syscall
3:
    mov     %r9d, %edi          /* read(keep_fd, scratch, 1) */
    lea     pk__holder_scratch(%rip), %rsi
    mov     $1, %edx
    xor     %eax, %eax          /* __NR_read */
    syscall
    test    %rax, %rax
    jg      3b                  /* a byte (nobody writes one): read again */
4:
    xor     %edi, %edi          /* 0 (the writer is gone) or an error: exit(0) */
    mov     $60, %eax           /* __NR_exit */
    syscall
    hlt
    .cfi_endproc
    .size   pk__holder_clone, .-pk__holder_clone

    .section .rodata
    .balign 8
pk__holder_all:
    .quad   -1                  /* every signal; the kernel ignores SIGKILL and SIGSTOP */
pk__holder_name:
    .asciz  "pk-holder"

    .bss
pk__holder_scratch:
    .byte   0

    .section .note.GNU-stack, "", @progbits
