# The observe suite's parts beyond the suite folder's own *.c (which harness/CMakeLists.txt
# globs into pkb_suites): the observer contenders (observers/), the workload program pk_churn
# (workload/), and the BPF programs (bpf/), compiled with clang's BPF target against a vmlinux.h
# dumped at build time from this kernel's BTF, then turned into a skeleton header by bpftool.
#
# Without clang, bpftool, libbpf or /sys/kernel/btf/vmlinux (or with -DPK_OBSERVE_BPF=OFF) the
# suite builds without its BPF half: observers/bpf.absent.c stands in for the loader, and the
# eBPF observers SKIP at run time with the reason given here.
option(PK_OBSERVE_BPF "Build the observe suite's eBPF observers (clang, bpftool, libbpf, BTF)" ON)

set(PKB_OBSERVE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/suites/observe)
target_sources(pkb_suites PRIVATE
    ${PKB_OBSERVE_DIR}/observers/none.c
    ${PKB_OBSERVE_DIR}/observers/proc_poller.c
    ${PKB_OBSERVE_DIR}/observers/diag_poller.c
    ${PKB_OBSERVE_DIR}/observers/iter_poller.c
    ${PKB_OBSERVE_DIR}/observers/ebpf_ringbuf.c
    ${PKB_OBSERVE_DIR}/observers/ebpf_ringbuf_batched.c
    ${PKB_OBSERVE_DIR}/observers/poll.c
    ${PKB_OBSERVE_DIR}/observers/tables.c
    ${PKB_OBSERVE_DIR}/observers/ring.c)

# The workload: a server and a client of loopback churn, started by the suite with processkit.
add_executable(pk_churn ${PKB_OBSERVE_DIR}/workload/churn.c)
target_link_libraries(pk_churn PRIVATE pk_warnings)
target_compile_definitions(pkb_suites PRIVATE PKB_CHURN_PATH="$<TARGET_FILE:pk_churn>")
add_dependencies(pkb_suites pk_churn)

set(PKB_OBSERVE_BPF_MISSING "")
if(NOT PK_OBSERVE_BPF)
    set(PKB_OBSERVE_BPF_MISSING "configured with -DPK_OBSERVE_BPF=OFF")
elseif(NOT CMAKE_SYSTEM_PROCESSOR STREQUAL "x86_64")
    set(PKB_OBSERVE_BPF_MISSING "the BPF programs are written for x86_64 (syscall numbers, pt_regs)")
else()
    pkg_check_modules(LIBBPF IMPORTED_TARGET libbpf)
    find_program(PKB_BPFTOOL bpftool PATHS /usr/sbin /sbin /usr/local/sbin)
    find_program(PKB_BPF_CLANG NAMES clang clang-16 clang-15 clang-14)
    if(NOT LIBBPF_FOUND)
        set(PKB_OBSERVE_BPF_MISSING "libbpf was not found (Debian: libbpf-dev)")
    elseif(NOT PKB_BPFTOOL)
        set(PKB_OBSERVE_BPF_MISSING "bpftool was not found (Debian: bpftool)")
    elseif(NOT PKB_BPF_CLANG)
        set(PKB_OBSERVE_BPF_MISSING "clang (the BPF target) was not found (Debian: clang)")
    elseif(NOT EXISTS /sys/kernel/btf/vmlinux)
        set(PKB_OBSERVE_BPF_MISSING "the build host has no /sys/kernel/btf/vmlinux for vmlinux.h")
    endif()
endif()

if(PKB_OBSERVE_BPF_MISSING STREQUAL "")
    set(gen ${CMAKE_CURRENT_BINARY_DIR}/observe-gen)
    set(out ${gen}/suites/observe/bpf)
    file(MAKE_DIRECTORY ${out})
    add_custom_command(OUTPUT ${gen}/vmlinux.h
        COMMAND sh -c "'${PKB_BPFTOOL}' btf dump file /sys/kernel/btf/vmlinux format c > '${gen}/vmlinux.h.tmp'"
        COMMAND ${CMAKE_COMMAND} -E rename ${gen}/vmlinux.h.tmp ${gen}/vmlinux.h
        COMMENT "vmlinux.h from this kernel's BTF"
        VERBATIM)
    add_custom_command(OUTPUT ${out}/observe.bpf.o
        COMMAND ${PKB_BPF_CLANG} -target bpf -g -O2 -D__TARGET_ARCH_x86 -Wall -Werror
            -I${gen} -I${CMAKE_CURRENT_SOURCE_DIR}
            -c ${PKB_OBSERVE_DIR}/bpf/observe.bpf.c -o ${out}/observe.bpf.o
        DEPENDS ${PKB_OBSERVE_DIR}/bpf/observe.bpf.c ${PKB_OBSERVE_DIR}/bpf/event.h ${gen}/vmlinux.h
        COMMENT "the observe suite's BPF programs"
        VERBATIM)
    # `gen object` links the object and drops its DWARF (the skeleton shrinks from megabytes to
    # about a hundred KiB).
    add_custom_command(OUTPUT ${out}/observe.skel.h
        COMMAND ${PKB_BPFTOOL} gen object ${out}/observe.lnk.o ${out}/observe.bpf.o
        COMMAND sh -c "'${PKB_BPFTOOL}' gen skeleton '${out}/observe.lnk.o' name pkb_observe_bpf > '${out}/observe.skel.h.tmp'"
        COMMAND ${CMAKE_COMMAND} -E rename ${out}/observe.skel.h.tmp ${out}/observe.skel.h
        DEPENDS ${out}/observe.bpf.o
        COMMENT "the BPF skeleton"
        VERBATIM)
    target_sources(pkb_suites PRIVATE ${PKB_OBSERVE_DIR}/observers/bpf.linux.c ${out}/observe.skel.h)
    target_include_directories(pkb_suites PRIVATE ${gen})
    target_link_libraries(pkb_suites PUBLIC PkgConfig::LIBBPF)
else()
    message(STATUS "observe suite: eBPF observers not built: ${PKB_OBSERVE_BPF_MISSING}")
    target_sources(pkb_suites PRIVATE ${PKB_OBSERVE_DIR}/observers/bpf.absent.c)
    target_compile_definitions(pkb_suites PRIVATE
        PKB_OBSERVE_BPF_MISSING="${PKB_OBSERVE_BPF_MISSING}")
endif()
