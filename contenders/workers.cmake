# The contenders in other languages that must be compiled (registry.c's W lines name them with
# PKB_WORKER_BUILT): rust_std and rust_tokio with Debian's cargo and rustc, offline, from the crates
# Debian packages in /usr/share/cargo/registry; go_exec with Debian's go, offline (no module has a
# dependency). Each is built into PKB_WORKERS_DIR as part of the default target, only where its
# toolchain is installed; a worker that is not built is "not run" with that reason (remote.c).
#
# Debian's toolchains are taken by their paths, never from PATH, so a rustup toolchain or another
# go first on PATH changes nothing: what CI builds is what a developer builds. Nothing is fetched:
# cargo runs --offline with a private CARGO_HOME whose config replaces crates.io with Debian's
# directory, and go runs with GOPROXY=off. The cargo workspace is a copy of the sources in the
# build tree (so Cargo.lock and target/ never land in the source tree), built once per preset; go's
# build cache lives in the build tree too.
set(PKB_WORKERS_DIR ${CMAKE_CURRENT_BINARY_DIR}/workers)
file(MAKE_DIRECTORY ${PKB_WORKERS_DIR})
set(PKB_WORKER_OUTPUTS "")
# A build that runs no benchmark and no test (the fuzz preset) need not compile them.
option(PK_BUILD_WORKERS "Build the contenders in other languages (Rust, Go) where their toolchains are installed" ON)
if(NOT PK_BUILD_WORKERS)
    add_custom_target(pk_workers)
    return()
endif()

find_program(PKB_CARGO cargo PATHS /usr/bin NO_DEFAULT_PATH)
find_program(PKB_RUSTC rustc PATHS /usr/bin NO_DEFAULT_PATH)
set(PKB_CARGO_REGISTRY /usr/share/cargo/registry)
file(GLOB PKB_TOKIO_CRATE ${PKB_CARGO_REGISTRY}/tokio-1.*)
file(GLOB PKB_LIBC_CRATE ${PKB_CARGO_REGISTRY}/libc-0.2.*)
if(PKB_CARGO AND PKB_RUSTC AND PKB_LIBC_CRATE)
    set(PKB_RUST_MEMBERS rust_std)
    if(PKB_TOKIO_CRATE)
        list(APPEND PKB_RUST_MEMBERS rust_tokio)
    else()
        message(STATUS "contenders: rust_tokio not built (no tokio in ${PKB_CARGO_REGISTRY}: "
            "Debian package librust-tokio-dev)")
    endif()
    # What the workers say they run on (their greeting's runtime=).
    execute_process(COMMAND ${PKB_RUSTC} --version OUTPUT_VARIABLE PKB_RUSTC_VERSION
        OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    string(REGEX REPLACE "^rustc ([^ ]+).*" "\\1" PKB_RUSTC_VERSION "${PKB_RUSTC_VERSION}")
    set(PKB_TOKIO_VERSION "")
    if(PKB_TOKIO_CRATE)
        list(GET PKB_TOKIO_CRATE 0 PKB_TOKIO_VERSION)
        string(REGEX REPLACE ".*/tokio-" "" PKB_TOKIO_VERSION "${PKB_TOKIO_VERSION}")
    endif()
    set(PKB_CARGO_DIR ${CMAKE_CURRENT_BINARY_DIR}/cargo)
    file(MAKE_DIRECTORY ${PKB_CARGO_DIR}/home)
    file(WRITE ${PKB_CARGO_DIR}/home/config.toml
        "# Written by contenders/workers.cmake: Debian's crates, never the network.\n"
        "[source.crates-io]\nreplace-with = \"debian\"\n"
        "[source.debian]\ndirectory = \"${PKB_CARGO_REGISTRY}\"\n"
        "[net]\noffline = true\n")
    list(JOIN PKB_RUST_MEMBERS "\", \"" PKB_MEMBERS_TOML)
    file(WRITE ${PKB_CARGO_DIR}/Cargo.toml.in
        "# Written by contenders/workers.cmake: the workspace of the Rust workers.\n"
        "[workspace]\nmembers = [\"${PKB_MEMBERS_TOML}\"]\n"
        "[profile.release]\nopt-level = 3\ndebug = false\npanic = \"abort\"\n")
    configure_file(${PKB_CARGO_DIR}/Cargo.toml.in ${PKB_CARGO_DIR}/src/Cargo.toml COPYONLY)
    set(PKB_RUST_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/pkw/pkw.rs)
    set(PKB_RUST_COPY "")
    foreach(m IN LISTS PKB_RUST_MEMBERS)
        list(APPEND PKB_RUST_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${m}/Cargo.toml
            ${CMAKE_CURRENT_SOURCE_DIR}/${m}/main.rs)
        list(APPEND PKB_RUST_COPY
            COMMAND ${CMAKE_COMMAND} -E copy_directory ${CMAKE_CURRENT_SOURCE_DIR}/${m}
                ${PKB_CARGO_DIR}/src/${m})
        list(APPEND PKB_WORKER_OUTPUTS ${PKB_WORKERS_DIR}/${m})
    endforeach()
    set(PKB_RUST_INSTALL "")
    foreach(m IN LISTS PKB_RUST_MEMBERS)
        list(APPEND PKB_RUST_INSTALL
            COMMAND ${CMAKE_COMMAND} -E copy ${PKB_CARGO_DIR}/target/release/${m}
                ${PKB_WORKERS_DIR}/${m})
    endforeach()
    add_custom_command(
        OUTPUT ${PKB_WORKER_OUTPUTS} ${PKB_CARGO_DIR}/built.stamp
        ${PKB_RUST_COPY}
        COMMAND ${CMAKE_COMMAND} -E copy_directory ${CMAKE_CURRENT_SOURCE_DIR}/pkw
            ${PKB_CARGO_DIR}/src/pkw
        COMMAND ${CMAKE_COMMAND} -E env CARGO_HOME=${PKB_CARGO_DIR}/home RUSTC=${PKB_RUSTC}
            CARGO_TARGET_DIR=${PKB_CARGO_DIR}/target RUSTUP_TOOLCHAIN= RUSTFLAGS=
            PKB_RUSTC_VERSION=${PKB_RUSTC_VERSION} PKB_TOKIO_VERSION=${PKB_TOKIO_VERSION}
            ${PKB_CARGO} build --offline --release --quiet
            --manifest-path ${PKB_CARGO_DIR}/src/Cargo.toml
        ${PKB_RUST_INSTALL}
        COMMAND ${CMAKE_COMMAND} -E touch ${PKB_CARGO_DIR}/built.stamp
        DEPENDS ${PKB_RUST_SOURCES} ${PKB_CARGO_DIR}/src/Cargo.toml
        COMMENT "Building the Rust workers (${PKB_RUST_MEMBERS}) with Debian's cargo, offline"
        VERBATIM)
    list(APPEND PKB_WORKER_STAMPS ${PKB_CARGO_DIR}/built.stamp)
else()
    message(STATUS "contenders: rust_std and rust_tokio not built (Debian's /usr/bin/cargo, "
        "/usr/bin/rustc and the libc crate are needed: packages cargo rustc librust-tokio-dev)")
endif()

find_program(PKB_GO go PATHS /usr/lib/go/bin /usr/bin NO_DEFAULT_PATH)
if(PKB_GO)
    set(PKB_GO_CACHE ${CMAKE_CURRENT_BINARY_DIR}/go)
    add_custom_command(
        OUTPUT ${PKB_WORKERS_DIR}/go_exec
        COMMAND ${CMAKE_COMMAND} -E env GOCACHE=${PKB_GO_CACHE}/cache GOPATH=${PKB_GO_CACHE}/path
            GOPROXY=off GOFLAGS=-mod=mod GO111MODULE=on GOTOOLCHAIN=local GOWORK=off
            ${PKB_GO} build -trimpath -o ${PKB_WORKERS_DIR}/go_exec .
        WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/go_exec
        DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/go_exec/main.go ${CMAKE_CURRENT_SOURCE_DIR}/go_exec/go.mod
        COMMENT "Building the Go worker (go_exec) with Debian's go, offline"
        VERBATIM)
    list(APPEND PKB_WORKER_STAMPS ${PKB_WORKERS_DIR}/go_exec)
else()
    message(STATUS "contenders: go_exec not built (Debian's go is needed: package golang-go)")
endif()

if(PKB_WORKER_STAMPS)
    add_custom_target(pk_workers ALL DEPENDS ${PKB_WORKER_STAMPS})
else()
    add_custom_target(pk_workers)
endif()
