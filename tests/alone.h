/*
 * The tests that run with no other test beside them, on any runner of this machine (pk_tests -j N
 * runs the rest N at a time, and `just test` runs the Debug and ASan suites side by side). Each
 * one measures: wall-clock limits with a tolerance, a benchmark run whose verdicts depend on the
 * machine's noise, or the machine's load itself. A test belongs here only when it must measure
 * time; a test that merely fails under load is a bug to fix in the test.
 */
#define PK_TEST_ALONE(X)                                                                           \
    X(cpu_hog_leaves_conclusions_unchanged)                                                        \
    X(cpu_hog_in_calibration_leaves_counts_and_verdicts)                                           \
    X(rounds_settle_keeps_the_previous_series_out_of_a_sample)                                     \
    X(check_against_head_decides_unchanged)                                                        \
    X(ab_finds_an_injected_slowdown)                                                               \
    X(bisect_finds_the_first_bad_commit)
