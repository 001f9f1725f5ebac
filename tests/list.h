/*
 * Every test, with its timeout in seconds (before PK_TEST_TIMEOUT_MULTIPLIER). One line each;
 * tests/CMakeLists.txt reads this list to register one ctest entry per test.
 */
#define PK_TEST_LIST(X)                                                                            \
    X(exit_codes, 10)                                                                              \
    X(signaled, 10)                                                                                \
    X(not_found_creates_no_child, 10)                                                              \
    X(not_executable_is_eacces_at_exec, 10)                                                        \
    X(missing_absolute_path_is_enoent_at_exec, 10)                                                 \
    X(bad_cwd_is_enoent_at_chdir, 10)                                                              \
    X(bad_input, 10)                                                                               \
    X(error_names, 10)                                                                             \
    X(spawn_signal_wait, 10)                                                                       \
    X(free_kills_and_reaps, 10)                                                                    \
    X(spawn_failure_typed, 10)                                                                     \
    X(child_cpu_time_reported, 20)                                                                 \
    X(stdin_closed_by_default, 10)                                                                 \
    X(stdin_bytes_exact, 10)                                                                       \
    X(duplex_64mib_through_cat, 30)                                                                \
    X(stdin_reader_gone_early, 10)                                                                 \
    X(stderr_merged_in_order, 10)                                                                  \
    X(stdout_and_stderr_separate, 10)                                                              \
    X(files_in_out_append, 10)                                                                     \
    X(caller_fd_and_inherit, 10)                                                                   \
    X(child_sees_only_fds_0_1_2, 10)                                                               \
    X(standard_fds_closed_in_parent, 10)                                                           \
    X(process_fd_read_by_caller, 10)                                                               \
    X(env_set_unset_clear, 10)                                                                     \
    X(resolve_matches_proc_self_exe, 10)                                                           \
    X(resolve_rules, 10)                                                                           \
    X(threads_16x200_spawns, 60)                                                                   \
    X(threads_no_fd_crosses_to_children, 30)                                                       \
    X(host_sigchld_handler_coexists, 10)                                                           \
    X(mechanism_probe_picks_clone3, 10)                                                            \
    X(mechanism_clone3_default, 10)                                                                \
    X(mechanism_clone, 10)                                                                         \
    X(mechanism_vfork, 10)                                                                         \
    X(mechanism_posix_spawn, 10)                                                                   \
    X(runner_flags_leaked_fd, 20)                                                                  \
    X(runner_flags_left_child, 20)                                                                 \
    X(runner_enforces_timeout, 20)                                                                 \
    X(runner_asan_catches_leak, 20)                                                                \
    X(runner_reports_unknown_test, 10)                                                             \
    X(stats_rng_reference, 10)                                                                     \
    X(stats_descriptive, 10)                                                                       \
    X(stats_mwu_small_reference, 10)                                                               \
    X(stats_mwu_large_reference, 10)                                                               \
    X(stats_holm_reference, 10)                                                                    \
    X(stats_bootstrap_deterministic, 10)                                                           \
    X(stats_mde_from_aa, 10)                                                                       \
    X(stats_verdict_rules, 10)                                                                     \
    X(stats_undecidable, 10)                                                                       \
    X(stats_synthetic_aa_false_positive, 10)                                                       \
    X(stats_synthetic_shift, 10)
