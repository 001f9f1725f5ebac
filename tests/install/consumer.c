/*
 * A program from outside the tree, built against an installed processkit: tests/install/run.sh
 * compiles it with pkg-config (shared, then --static) and with CMake's find_package (the shared
 * and the static target), then runs each build. It runs `echo hi` through pk_run and checks the
 * typed outcome and the captured output, that the library it runs with is the version its header
 * and its build system announced, and that the header saw PK_STATIC exactly when the static
 * library was asked for (pkg-config's Cflags.private, the static target's compile definition).
 *
 * Usage: consumer VERSION shared|static. Exit status: 0 every check passed; 1 one failed, named
 * on stderr; 2 bad usage.
 */
#include <processkit.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#ifdef PK_STATIC
static const bool header_static = true;
#else
static const bool header_static = false;
#endif

static int failed(const char *what)
{
    fprintf(stderr, "consumer: FAIL: %s\n", what);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "shared") != 0 && strcmp(argv[2], "static") != 0)) {
        fputs("usage: consumer VERSION shared|static\n", stderr);
        return 2;
    }
    char header_version[32];
    snprintf(header_version, sizeof header_version, "%d.%d.%d", PK_VERSION_MAJOR, PK_VERSION_MINOR,
             PK_VERSION_PATCH);
    if (strcmp(pk_version(), argv[1]) != 0 || strcmp(header_version, argv[1]) != 0) {
        fprintf(stderr, "consumer: library %s, header %s, build system %s\n", pk_version(),
                header_version, argv[1]);
        return failed("the versions disagree");
    }
    if (header_static != (strcmp(argv[2], "static") == 0))
        return failed(header_static ? "PK_STATIC defined for a shared build"
                                    : "PK_STATIC missing from a static build");

    pk_result r;
    int rc = pk_run(&(pk_command){.argv = (const char *const[]){"echo", "hi", NULL}}, &r);
    bool ok = rc == 0 && r.outcome.kind == PK_OUTCOME_EXITED && r.outcome.code == 0 &&
              r.out.len == 3 && memcmp(r.out.data, "hi\n", 3) == 0 && r.out.total_lines == 1 &&
              r.err.total_bytes == 0 && r.outcome.pid > 0;
    if (!ok) {
        fprintf(stderr, "consumer: pk_run returned %s; outcome %s, code %d, stdout '%s'\n",
                pk_errname(rc), pk_outcome_kind_name(r.outcome.kind), r.outcome.code,
                r.out.data != NULL ? r.out.data : "");
        pk_result_release(&r);
        return failed("echo hi through pk_run");
    }
    printf("consumer (%s, processkit %s): echo hi -> %s %d, stdout \"hi\\n\", spawn %s, "
           "containment %s\n",
           argv[2], pk_version(), pk_outcome_kind_name(r.outcome.kind), r.outcome.code,
           pk_mechanism_name(pk_spawn_mechanism()), pk_containment_name(r.containment));
    pk_result_release(&r);
    pk_cleanup();
    return 0;
}
