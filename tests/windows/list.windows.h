/*
 * Every Windows test, with its timeout in seconds (before PK_TEST_TIMEOUT_MULTIPLIER). One line
 * each. The Windows runner (runner.windows.c) runs them; under Wine, `just test-windows`.
 */
#define PK_TEST_LIST(X)                                                                            \
    X(win_exit_codes, 20)                                                                          \
    X(win_crash_is_ntstatus, 20)                                                                   \
    X(win_quoting_round_trips, 20)                                                                 \
    X(win_argv0_with_quote_refused, 10)                                                            \
    X(win_spawn_failures_typed, 20)                                                                \
    X(win_env_set_unset_clear, 20)                                                                 \
    X(win_pathext_resolution_equals_launch, 30)                                                    \
    X(win_batch_arguments_inert, 30)                                                               \
    X(win_batch_injection_refused, 20)                                                             \
    X(win_mechanism_default, 30)                                                                   \
    X(win_mechanism_suspended_fallback, 30)                                                        \
    X(win_capture_and_stdin, 20)                                                                   \
    X(win_bounded_capture, 20)                                                                     \
    X(win_lines_streamed_in_order, 20)                                                             \
    X(win_final_unterminated_line_delivered, 60)                                                   \
    X(win_pull_api, 20)                                                                            \
    X(win_timeout_with_grace, 30)                                                                  \
    X(win_timeout_break_ends_grace_early, 40)                                                      \
    X(win_idle_timeout, 20)                                                                        \
    X(win_cancel, 20)                                                                              \
    X(win_grandchild_dies_with_run, 30)                                                            \
    X(win_group_tree_kill_members_stats, 30)                                                       \
    X(win_signal_kill_is_signaled, 20)                                                             \
    X(win_no_handle_leak_300_runs, 120)                                                            \
    X(win_loop_16_children, 60)                                                                    \
    X(win_pkrun_exit_statuses, 30)                                                                 \
    X(win_pkrun_timeout_ends_tree, 30)                                                             \
    X(win_pkrun_forwards_bytes_and_json, 30)                                                       \
    X(win_pkrun_command_line_as_on_posix, 60)                                                      \
    X(win_pkrun_json_schema_as_on_posix, 30)                                                       \
    X(win_pkrun_passes_bytes_through, 30)
