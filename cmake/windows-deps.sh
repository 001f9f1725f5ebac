#!/bin/sh
# Builds the Windows preset's third-party libraries — Google Benchmark 1.7.1 and jansson — for
# x86_64-w64-mingw32, from Debian's own source packages, into DIR (default build/windows-deps):
#   DIR/prefix/{include,lib,lib/cmake,lib/pkgconfig}   what the windows preset finds
# The sources are fetched with `apt-get source --download-only` through a private apt
# configuration under DIR (a deb-src list naming the mirror the system already uses, its own
# lists and cache): the system's apt sources and lists are left untouched, and nothing is ever
# copied into the repository. A second run with the prefix in place does nothing.
# Exit status: 0 done; 1 a step failed (named on stderr).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$here/build/windows-deps}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
prefix=$dir/prefix
say() { printf 'windows-deps: %s\n' "$*" >&2; }
if [ -f "$prefix/lib/libbenchmark.a" ] && [ -f "$prefix/lib/libjansson.a" ]; then
    exit 0
fi

# The mirror the system uses for Debian's main archive (deb822 or one-line format).
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*debian\)$/\1/p' /etc/apt/sources.list.d/*.sources \
    2>/dev/null | head -n 1)
if [ -z "$mirror" ]; then
    mirror=$(sed -n 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]*\)\{0,1\}\([^[:space:]]*\).*/\2/p' \
        /etc/apt/sources.list 2>/dev/null | grep -v security | head -n 1)
fi
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
[ -n "$mirror" ] || { say "cannot find the Debian mirror in /etc/apt"; exit 1; }

apt=$dir/apt
mkdir -p "$apt/parts" "$apt/lists/partial" "$apt/cache/archives/partial" "$dir/src"
printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' "$mirror" \
    "$suite" /usr/share/keyrings/debian-archive-keyring.gpg > "$apt/parts/src.sources"
O="-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$apt/parts -o Dir::State::Lists=$apt/lists -o Dir::Cache=$apt/cache"
cd "$dir/src"
if ! ls benchmark_1.7.1*.orig.tar.* >/dev/null 2>&1 || ! ls jansson_*.orig.tar.* >/dev/null 2>&1; then
    say "fetching the source packages benchmark and jansson from $mirror ($suite)"
    # shellcheck disable=SC2086
    apt-get $O -qq update
    # shellcheck disable=SC2086
    apt-get $O -qq source --download-only benchmark jansson >/dev/null
fi
bench_tar=$(ls benchmark_1.7.1*.orig.tar.* | head -n 1)
jansson_tar=$(ls jansson_*.orig.tar.* | head -n 1)
rm -rf benchmark jansson && mkdir benchmark jansson
tar -xf "$bench_tar" -C benchmark --strip-components=1
tar -xf "$jansson_tar" -C jansson --strip-components=1

toolchain=$here/cmake/mingw-w64-x86_64.cmake
say "building Google Benchmark ($bench_tar) for Windows"
cmake -S benchmark -B benchmark/build -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DBENCHMARK_ENABLE_TESTING=OFF \
    -DBENCHMARK_ENABLE_WERROR=OFF -DBENCHMARK_ENABLE_GTEST_TESTS=OFF -DBENCHMARK_ENABLE_INSTALL=ON \
    -DBUILD_SHARED_LIBS=OFF >/dev/null
cmake --build benchmark/build >/dev/null
cmake --install benchmark/build >/dev/null
say "building jansson ($jansson_tar) for Windows"
cmake -S jansson -B jansson/build -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DJANSSON_BUILD_DOCS=OFF \
    -DJANSSON_WITHOUT_TESTS=ON -DJANSSON_EXAMPLES=OFF -DJANSSON_BUILD_SHARED_LIBS=OFF >/dev/null
cmake --build jansson/build >/dev/null
cmake --install jansson/build >/dev/null
say "installed into $prefix"
