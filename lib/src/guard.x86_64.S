/*
 * pk__guard_clone(args, size, watch_fd, dir_fd, state, generation): clone3 this process's guardian
 * (see guard.linux.c).
 *
 * Like a holder (holder.x86_64.S) the guardian shares our memory (CLONE_VM) and runs beside us, so
 * it touches nothing we use: registers, read-only data, and the table in `state`, which it reads
 * only once we are gone and so no longer write it. No stack: the child starts on our stack
 * pointer and never pushes onto it. CLONE_CLEAR_SIGHAND reset the handlers, so until its signals
 * are blocked a signal can only take its default action.
 *
 * The child keeps only watch_fd (the read end of a pipe whose one writer is this process, held
 * O_CLOEXEC) and dir_fd (the directory of our leaves), blocks every signal it can, names itself
 * "pk-guard" and sleeps in read() until the read returns 0: we exited, exec'd, or let it go.
 * If we let it go, state->released is at least its generation: it exits. Otherwise we died (or
 * exec'd) without removing our leaves: for every slot in use it writes "1" to
 * <dir>/<slot path> (the leaf's cgroup.kill), then removes each leaf (the slot's name, cut
 * before "/cgroup.kill"), retrying those still busy every 10 ms for up to 3 s, and exits.
 * Returns the child's pid (parent) or -errno, as the raw system call does.
 * In: rdi = struct clone_args *, rsi = size, edx = watch_fd, ecx = dir_fd, r8 = state,
 *     r9d = generation.
 * The state's layout (guard.linux.c checks it): u32 released at 0, u32 used at 4, then `used`
 * slots of 64 bytes from 8, each u32 state (1: in use) at 0, u32 name_len at 4, path at 8.
 */
    .text
    .globl  pk__guard_clone
    .hidden pk__guard_clone
    .type   pk__guard_clone, @function
pk__guard_clone:
    .cfi_startproc
    mov     %rcx, %r10          /* dir_fd: rcx does not survive the syscall, r10 does */
    mov     $435, %eax          /* __NR_clone3 */
    syscall
    test    %rax, %rax
    jz      1f
    ret                         /* parent: pid, or -errno (no callee-saved register touched) */
1:
    .cfi_undefined rip          /* child: nothing to unwind to; every register is its own now */
    mov     %edx, %r12d         /* watch fd */
    mov     %r10d, %r13d        /* dir fd */
    mov     %r8, %r14           /* state */
    mov     %r9d, %r15d         /* generation */
    mov     %r12d, %ebx         /* ebx = the lower of the two kept descriptors, ebp the higher */
    mov     %r13d, %ebp
    cmp     %ebp, %ebx
    jbe     2f
    xchg    %ebx, %ebp
2:
    test    %ebx, %ebx          /* close_range(0, lo - 1, 0), when lo > 0 */
    jz      3f
    xor     %edi, %edi
    lea     -1(%rbx), %esi
    xor     %edx, %edx
    mov     $436, %eax          /* __NR_close_range */
    syscall
3:
    lea     1(%rbx), %edi       /* close_range(lo + 1, hi - 1, 0), when there is a gap */
    cmp     %ebp, %edi
    jae     4f
    lea     -1(%rbp), %esi
    xor     %edx, %edx
    mov     $436, %eax
    syscall
4:
    lea     1(%rbp), %edi       /* close_range(hi + 1, ~0U, 0) */
    mov     $-1, %esi
    xor     %edx, %edx
    mov     $436, %eax
    syscall
    xor     %edi, %edi          /* rt_sigprocmask(SIG_BLOCK, &all, NULL, 8) */
    lea     pk__guard_all(%rip), %rsi
    xor     %edx, %edx
    mov     $8, %r10d
    mov     $14, %eax           /* __NR_rt_sigprocmask */
    syscall
    mov     $15, %edi           /* prctl(PR_SET_NAME, "pk-guard") */
    lea     pk__guard_name(%rip), %rsi
    mov     $157, %eax          /* __NR_prctl */
    syscall
5:
    mov     %r12d, %edi         /* read(watch_fd, scratch, 1) */
    lea     pk__guard_scratch(%rip), %rsi
    mov     $1, %edx
    xor     %eax, %eax          /* __NR_read */
    syscall
    test    %rax, %rax
    jg      5b                  /* a byte (nobody writes one): read again */
    cmp     $-4, %rax
    je      5b                  /* EINTR: read again */
    mov     (%r14), %eax        /* released >= our generation: let go, nothing to do */
    cmp     %r15d, %eax
    jae     20f

    lea     8(%r14), %rbx       /* the kill pass: rbx = slot, ebp = slots left */
    mov     4(%r14), %ebp
6:
    test    %ebp, %ebp
    jz      8f
    cmpl    $1, (%rbx)
    jne     7f
    mov     %r13d, %edi         /* openat(dir_fd, slot->path, O_WRONLY | O_CLOEXEC, 0) */
    lea     8(%rbx), %rsi
    mov     $0x80001, %edx
    xor     %r10d, %r10d
    mov     $257, %eax          /* __NR_openat */
    syscall
    test    %rax, %rax
    js      7f
    mov     %eax, %r12d         /* the watch fd is no longer needed: r12 holds this one */
    mov     %r12d, %edi         /* write(fd, "1", 1) */
    lea     pk__guard_one(%rip), %rsi
    mov     $1, %edx
    mov     $1, %eax            /* __NR_write */
    syscall
    mov     %r12d, %edi         /* close(fd) */
    mov     $3, %eax            /* __NR_close */
    syscall
7:
    add     $64, %rbx
    dec     %ebp
    jmp     6b

8:
    mov     $300, %r12d         /* the removal rounds: up to 300, 10 ms apart */
9:
    lea     8(%r14), %rbx
    mov     4(%r14), %ebp
    xor     %r15d, %r15d        /* r15 = some leaf still busy */
10:
    test    %ebp, %ebp
    jz      12f
    cmpl    $1, (%rbx)
    jne     11f
    mov     4(%rbx), %eax       /* cut the path to the leaf's name */
    movb    $0, 8(%rbx,%rax)
    mov     %r13d, %edi         /* unlinkat(dir_fd, name, AT_REMOVEDIR) */
    lea     8(%rbx), %rsi
    mov     $0x200, %edx
    mov     $263, %eax          /* __NR_unlinkat */
    syscall
    cmp     $-16, %rax          /* EBUSY: its tree is still dying, try again next round */
    jne     13f
    mov     $1, %r15d
    jmp     11f
13:
    movl    $0, (%rbx)          /* removed, or it cannot be: done with it */
11:
    add     $64, %rbx
    dec     %ebp
    jmp     10b
12:
    test    %r15d, %r15d
    jz      20f
    dec     %r12d
    jz      20f
    lea     pk__guard_pause(%rip), %rdi /* nanosleep(&10ms, NULL) */
    xor     %esi, %esi
    mov     $35, %eax           /* __NR_nanosleep */
    syscall
    jmp     9b
20:
    xor     %edi, %edi          /* exit(0) */
    mov     $60, %eax           /* __NR_exit */
    syscall
    hlt
    .cfi_endproc
    .size   pk__guard_clone, .-pk__guard_clone

    .section .rodata
    .balign 8
pk__guard_all:
    .quad   -1                  /* every signal; the kernel ignores SIGKILL and SIGSTOP */
pk__guard_pause:
    .quad   0                   /* struct timespec: 0 s, 10 ms */
    .quad   10000000
pk__guard_name:
    .asciz  "pk-guard"
pk__guard_one:
    .ascii  "1"

    .bss
pk__guard_scratch:
    .byte   0

    .section .note.GNU-stack, "", @progbits
