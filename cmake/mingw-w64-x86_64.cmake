# Cross-building for 64-bit Windows from Debian with mingw-w64 (the `windows` preset). The -posix
# compilers use winpthreads, which Google Benchmark's std::thread needs. Executables are linked
# statically (libgcc, libstdc++, winpthread), so they run under Wine or on Windows without
# mingw's DLLs beside them.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(PK_MINGW_PREFIX x86_64-w64-mingw32)

set(CMAKE_C_COMPILER ${PK_MINGW_PREFIX}-gcc-posix)
set(CMAKE_CXX_COMPILER ${PK_MINGW_PREFIX}-g++-posix)
set(CMAKE_RC_COMPILER ${PK_MINGW_PREFIX}-windres)

set(CMAKE_FIND_ROOT_PATH /usr/${PK_MINGW_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
# Tests and benchmarks run through Wine: ctest and CMake's own checks use it as the emulator.
set(CMAKE_CROSSCOMPILING_EMULATOR /usr/lib/wine/wine64)

# The Windows builds of Google Benchmark and jansson (cmake/windows-deps.sh), when the preset
# names them: found by find_package and, through pkg-config, instead of the host's.
if(PK_WINDOWS_DEPS)
    list(APPEND CMAKE_FIND_ROOT_PATH ${PK_WINDOWS_DEPS})
    set(ENV{PKG_CONFIG_LIBDIR} ${PK_WINDOWS_DEPS}/lib/pkgconfig)
    set(ENV{PKG_CONFIG_PATH} "")
endif()
