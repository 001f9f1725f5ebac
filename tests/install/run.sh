#!/usr/bin/env bash
# The install test (`just test-install`): installs a build tree into a temporary prefix and checks
# what a user of the installed package gets.
#
#   1. the files: header, libprocesskit.a, libprocesskit.so.<version> with its soname and
#      symlinks, pkrun, processkit.pc, the CMake package;
#   2. the shared library exports exactly the functions processkit.h declares (the compiler lists
#      them with -aux-info): nothing else, no internal pk__ symbol, none missing;
#   3. consumer.c built with pkg-config, shared (run with LD_LIBRARY_PATH) and --static;
#   4. consumer.c built by a CMake project with find_package(processkit), both targets;
#   5. the installed pkrun runs a command;
#   6. the header compiles as C++;
#   7. the man pages are installed and groff reads them without a warning.
#
# Usage: tests/install/run.sh BUILD_DIR. Prints one line per check; exit status 0 when every
# check passed, 1 at the first failure (which it names, with the output that shows why).
set -euo pipefail

build=${1:?usage: tests/install/run.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$build/CMakeCache.txt" ] || { echo "test-install: $build is not a configured build tree" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pk-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
checks=0

fail() {
    printf 'test-install: FAIL: %s\n' "$1" >&2
    if [ $# -gt 1 ] && [ -s "$2" ]; then sed 's/^/  | /' "$2" >&2; fi
    exit 1
}
ok() {
    checks=$((checks + 1))
    printf 'test-install: ok: %s\n' "$*"
}
# Runs a command with its output in $tmp/out; fails with that output when it fails.
run() {
    local what=$1
    shift
    "$@" >"$tmp/out" 2>&1 || fail "$what (exit $?): $*" "$tmp/out"
}

run "cmake --install" cmake --install "$build" --prefix "$prefix"
ok "cmake --install $build --prefix \$tmp/prefix"

# ---- 1. the files -------------------------------------------------------------------------------
lib=$(dirname "$(find "$prefix" -name libprocesskit.a -print -quit)")
[ -d "$lib" ] && [ "$lib" != . ] || fail "no libprocesskit.a installed"
inc=$prefix/include
pcdir=$lib/pkgconfig
export PKG_CONFIG_PATH=$pcdir PKG_CONFIG_LIBDIR=$pcdir # this prefix only, never the system's
version=$(pkg-config --modversion processkit 2>"$tmp/out") || fail "pkg-config cannot read processkit.pc" "$tmp/out"
major=${version%%.*}
[ "$(pkg-config --variable=prefix processkit)" = "$prefix" ] ||
    fail "processkit.pc's prefix is $(pkg-config --variable=prefix processkit), not the install prefix $prefix"
header_version=$(sed -n 's/^#define PK_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$inc/processkit.h" | paste -sd.)
[ "$version" = "$header_version" ] || fail "processkit.pc says $version, processkit.h $header_version"
for f in "$inc/processkit.h" "$lib/libprocesskit.a" "$lib/libprocesskit.so.$version" \
    "$prefix/bin/pkrun" "$pcdir/processkit.pc" "$lib/cmake/processkit/processkitConfig.cmake" \
    "$lib/cmake/processkit/processkitConfigVersion.cmake" "$lib/cmake/processkit/processkitTargets.cmake"; do
    [ -f "$f" ] || fail "not installed: ${f#"$prefix"/}"
done
[ "$(readlink "$lib/libprocesskit.so.$major")" = "libprocesskit.so.$version" ] ||
    fail "libprocesskit.so.$major is not a symlink to libprocesskit.so.$version"
[ "$(readlink "$lib/libprocesskit.so")" = "libprocesskit.so.$major" ] ||
    fail "libprocesskit.so is not a symlink to libprocesskit.so.$major"
readelf -d "$lib/libprocesskit.so.$version" >"$tmp/out"
grep -q "Library soname: \[libprocesskit.so.$major\]" "$tmp/out" || fail "soname is not libprocesskit.so.$major" "$tmp/out"
ok "installed: processkit.h, libprocesskit.a, libprocesskit.so.$version (soname libprocesskit.so.$major, symlinks), pkrun, processkit.pc $version (prefix: the install prefix), CMake package"

# ---- 2. exports ---------------------------------------------------------------------------------
echo '#include <processkit.h>' >"$tmp/decls.c"
run "listing the header's functions" cc -std=c17 -I"$inc" -fsyntax-only -aux-info "$tmp/decls.txt" "$tmp/decls.c"
grep 'processkit\.h:' "$tmp/decls.txt" | sed -n 's/.*[ *]\([A-Za-z_][A-Za-z0-9_]*\) (.*/\1/p' | sort -u >"$tmp/declared"
nm -D --defined-only "$lib/libprocesskit.so.$version" | awk '{print $NF}' | sort -u >"$tmp/exported"
[ "$(wc -l <"$tmp/declared")" -ge 40 ] || fail "found only $(wc -l <"$tmp/declared") functions in processkit.h" "$tmp/decls.txt"
grep -v '^pk_' "$tmp/exported" >"$tmp/bad" && fail "the shared library exports symbols without the pk_ prefix:" "$tmp/bad"
comm -13 "$tmp/declared" "$tmp/exported" >"$tmp/bad"
[ -s "$tmp/bad" ] && fail "the shared library exports symbols processkit.h does not declare:" "$tmp/bad"
comm -23 "$tmp/declared" "$tmp/exported" >"$tmp/bad"
[ -s "$tmp/bad" ] && fail "processkit.h declares functions the shared library does not export (PK_API missing?):" "$tmp/bad"
ok "libprocesskit.so exports exactly the $(wc -l <"$tmp/exported") functions processkit.h declares, all pk_, no pk__"

# ---- 3. pkg-config ------------------------------------------------------------------------------
strict=(-std=c17 -Wall -Wextra -Wpedantic -Wstrict-prototypes -Wmissing-prototypes -Werror)
read -ra pc_shared <<<"$(pkg-config --cflags --libs processkit)"
run "building with pkg-config" cc "${strict[@]}" "$here/consumer.c" "${pc_shared[@]}" -o "$tmp/pc-shared"
readelf -d "$tmp/pc-shared" >"$tmp/out"
grep -q 'NEEDED.*\[libprocesskit\.so\.'"$major"'\]' "$tmp/out" || fail "pkg-config build does not need libprocesskit.so.$major" "$tmp/out"
LD_LIBRARY_PATH=$lib ldd "$tmp/pc-shared" >"$tmp/out" 2>&1
grep -q "libprocesskit\.so\.$major => $lib/" "$tmp/out" || fail "pkg-config build does not load the installed library" "$tmp/out"
LD_LIBRARY_PATH=$lib run "running the pkg-config build" "$tmp/pc-shared" "$version" shared
ok "pkg-config, shared (${pc_shared[*]}): $(cat "$tmp/out")"

read -ra pc_static <<<"$(pkg-config --static --cflags --libs processkit)"
printf '%s\n' "${pc_static[@]}" | grep -qx -- -pthread || fail "pkg-config --static lacks -pthread (Libs.private)"
run "building with pkg-config --static" cc "${strict[@]}" "$here/consumer.c" "${pc_static[@]}" -static -o "$tmp/pc-static"
readelf -d "$tmp/pc-static" >"$tmp/out" 2>&1 || true
grep -q NEEDED "$tmp/out" && fail "the pkg-config --static build is not static" "$tmp/out"
run "running the pkg-config --static build" "$tmp/pc-static" "$version" static
ok "pkg-config --static (${pc_static[*]} -static): $(cat "$tmp/out")"

# ---- 4. find_package ----------------------------------------------------------------------------
unset PKG_CONFIG_PATH PKG_CONFIG_LIBDIR
run "configuring a find_package(processkit) project" cmake -S "$here" -B "$tmp/cmake" -G Ninja \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release -DPK_EXPECT_VERSION="$version"
run "building the find_package(processkit) project" cmake --build "$tmp/cmake"
readelf -d "$tmp/cmake/consumer_shared" >"$tmp/out"
grep -q 'NEEDED.*\[libprocesskit\.so\.'"$major"'\]' "$tmp/out" || fail "processkit::processkit is not the shared library" "$tmp/out"
ldd "$tmp/cmake/consumer_shared" >"$tmp/out" 2>&1
grep -q "libprocesskit\.so\.$major => $lib/" "$tmp/out" || fail "consumer_shared does not load the installed library (rpath)" "$tmp/out"
run "running consumer_shared" "$tmp/cmake/consumer_shared" "$version" shared
ok "find_package(processkit $version EXACT), processkit::processkit: $(cat "$tmp/out")"
readelf -d "$tmp/cmake/consumer_static" >"$tmp/out"
grep -q 'NEEDED.*libprocesskit' "$tmp/out" && fail "processkit::processkit_static links the shared library" "$tmp/out"
run "running consumer_static" "$tmp/cmake/consumer_static" "$version" static
ok "find_package(processkit), processkit::processkit_static: $(cat "$tmp/out")"

# ---- 5. pkrun -----------------------------------------------------------------------------------
set +e
out=$("$prefix/bin/pkrun" --timeout 10 -- sh -c 'echo from-pkrun; exit 3' 2>&1)
rc=$?
set -e
[ "$rc" = 3 ] && [ "$out" = from-pkrun ] || fail "installed pkrun: exit $rc, output '$out' (expected 3, 'from-pkrun')"
ok "installed pkrun runs a command: its output forwarded, its exit code 3 returned"

# ---- 6. C++ -------------------------------------------------------------------------------------
if command -v c++ >/dev/null; then
    run "compiling processkit.h as C++" c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only \
        -I"$inc" -x c++ "$tmp/decls.c"
    ok "processkit.h compiles as C++17"
fi

# ---- 7. man pages -------------------------------------------------------------------------------
pages=(pkrun)
grep -q '^PK_BUILD_BENCH:BOOL=ON' "$build/CMakeCache.txt" && pages+=(pkbench)
for page in "${pages[@]}"; do
    f=$prefix/share/man/man1/$page.1
    [ -f "$f" ] || fail "not installed: share/man/man1/$page.1 (is scdoc installed?)"
    grep -q "^\.TH \"$page\" \"1\"" "$f" || fail "$page.1 has no .TH $page 1 line"
    groff -man -ww -z "$f" >"$tmp/out" 2>&1 || fail "groff cannot read $page.1" "$tmp/out"
    [ -s "$tmp/out" ] && fail "groff warns about $page.1" "$tmp/out"
    groff -man -Tutf8 "$f" 2>/dev/null | sed 's/.\x08//g' >"$tmp/out"
    for section in NAME SYNOPSIS DESCRIPTION "EXIT STATUS" ENVIRONMENT EXAMPLES; do
        grep -q "^$section" "$tmp/out" || fail "$page.1 renders without a $section section" "$tmp/out"
    done
done
ok "man pages installed and read by groff without warnings: ${pages[*]/%/.1}"

echo "test-install: all $checks checks passed"
