"""Which tests a mutated file is run against: a few files each, so a run takes minutes."""

from __future__ import annotations

SECURITY = "tests/core/security"
RECEIPTS = "tests/core/receipts"
APPROVAL_TESTS = (
    "tests/core/governance/test_approval_binding.py",
    "tests/core/governance/test_run_and_approvals.py",
)
# The service also wakes the agent that waits (Deny), holds its Stop while an approved
# change is applied or withdraws a pending question, keeps the deadline's instant, expires,
# reminds, and reconciles after a restart.
APPROVAL_SERVICE_TESTS = (
    *APPROVAL_TESTS,
    "tests/core/governance/test_approval_deadline.py",
    "tests/core/governance/test_approval_service.py",
    "tests/core/governance/test_deadlines.py::test_an_expiry_loop_that_dies_anyway_is_named_in_health",
    "tests/core/governance/test_soul_and_expiry.py",
    "tests/bot/channels/telegram/test_progress.py::test_stop_while_an_approval_is_pending_withdraws_it",
    "tests/core/agent/test_conversations.py::test_t3_call_denied_and_the_model_adapts",
    "tests/bot/channels/telegram/test_progress.py::test_stop_while_an_approved_change_is_applied_lets_it_finish",
)
# The pure decision and the engine over it (replay's and what-if's tests need Docker: slow).
DECISION_TESTS = (
    "tests/core/governance/test_decision.py",
    "tests/core/governance/test_deciding.py",
    "tests/core/governance/test_policy.py",
)
FLOW_RULES = (
    "the_souls_flow_rules_decide",
    "what_the_owner_named_may_go_and_change",
    "an_address_written_in_a_workspace_file_is_no_strangers_link",
    "gits_own_files_always_ask_even_when_the_owner_names_them",
    "the_asking_action_carries_the_names_its_card_shows",
)
# Which ref changes lose history: judged over real repositories on the host, no sandbox.
HISTORY_TESTS = ("tests/core/tools/effects/test_history_judge.py",)
# How the Soul reads a command line: the red team's lists and the reading's own cases.
SHELL_READING = ("tests/soul/test_redteam_shell.py", "tests/soul/test_shell_reading.py")
LEXED = (
    "the_command_that_really_runs_is_read",
    "unknown_wrappers_read_every_word_that_may_be_the_command",
    "known_wrappers_name_the_command_they_run",
    "a_command_word_known_only_at_run_time_is_marked",
    "paths_are_spelled_every_way_the_shell_reads_them",
    "text_a_shell_reads_is_read_as_commands",
    "cd_to_an_unknown_place_loses_track",
    "tiers_follow_the_reading",
)
# The gateway's by-effect branches on the real sandbox (Docker: a few, each a branch).
BY_EFFECT = (
    "a_write_applies_at_once_and_undo_takes_it_back",
    "a_disguised_delete_waits_for_a_card_that_names_the_file",
    "a_failed_command_and_a_move",
    "a_message_handled_again_after_a_crash_asks_once",
    "without_a_sandbox_only_provably_read_only_commands_run_at_once",
    "the_gateway_tells_a_command_that_changed_nothing_or_failed_as_a_t0_run",
)
# /run's by-effect branches on the real sandbox (Docker).
RUN_BY_EFFECT = (
    "a_write_applies_at_once_and_undo_takes_it_back",
    "a_workspace_changed_under_the_dry_run_is_not_applied",
    "a_delete_whose_files_are_already_gone_is_not_applied_again",
    "a_message_handled_again_after_a_crash_asks_once",
    "a_step_failing_its_check_is_undone_and_the_card_says_so",
)
# What governance asks of the effect engine: dry runs, their discard and staleness, and the
# apply that commits one (Docker).
PROVIDED = (
    "a_write_applies_at_once_and_undo_takes_it_back",
    "approve_applies_the_dry_run_and_nothing_runs_again",
    "a_workspace_changed_under_the_dry_run_is_not_applied",
    "a_restart_between_dry_run_and_approve",
    "without_a_sandbox_only_provably_read_only_commands_run_at_once",
)
COMMANDS_RUN = (
    "output_stderr_and_exit_code_come_from_the_dry_run",
    "a_command_past_its_time_is_killed_and_what_it_wrote_is_still_shown",
    "a_command_flooding_its_output_is_killed_and_its_start_still_shown",
    "processes_left_running_die_with_the_command",
)
# A few dry runs on the real engine: the container's hardening, its streams, no token.
DRY_RUNS = (
    "every_dry_run_container_is_hardened",
    "output_stderr_and_exit_code_come_from_the_dry_run",
    "nothing_runs_without_the_policy_engines_token",
    "processes_left_running_die_with_the_command",
)
# Dry runs that take slots from the warm pool, and one refused before any is made.
POOLED = (
    "output_stderr_and_exit_code_come_from_the_dry_run",
    "nothing_runs_without_the_policy_engines_token",
)
# What an apply commits, refuses and drops (the comparisons with a real run are slow).
APPLIED = (
    "a_file_changed_since_the_dry_run_stops_the_apply",
    "a_path_that_appeared_or_a_directory_that_grew_is_stale",
    "only_the_effects_shown_can_be_applied",
    "an_unknown_dry_run_cannot_be_applied",
    "apply_runs_nothing_again",
    "a_dry_run_expires",
    "a_dry_run_whose_copy_was_lost_is_gone",
)
# Undo's refusals, window and backups (the host changes restore every kind).
UNDONE = (
    "an_unknown_change_cannot_be_undone",
    "undo_refuses_when_a_later_change_touched_a_file",
    "undo_after_a_later_change_was_itself_undone",
    "the_undo_window_closes",
    "backups_are_kept_by_content_and_released_after_undo",
    "backups_over_budget_or_age_are_pruned",
)
TARGETS: dict[str, tuple[str, ...]] = {
    "core/security/tokens.py": (f"{SECURITY}/test_tokens.py",),
    "core/security/pairing.py": (f"{SECURITY}/test_pairing.py",),
    "core/security/viewer_access.py": (f"{SECURITY}/test_viewer_access.py",),
    "core/security/gate.py": (f"{SECURITY}/test_gate.py",),
    "core/security/ratelimit.py": (f"{SECURITY}/test_ratelimit.py",),
    "core/security/owners.py": (f"{SECURITY}/test_pairing.py",),
    "core/governance/approval_service.py": APPROVAL_SERVICE_TESTS,
    "core/governance/approval_transitions.py": (
        *APPROVAL_TESTS,
        "tests/core/governance/test_approval_transitions.py",
    ),
    "core/governance/policy.py": ("tests/core/governance/test_policy.py",),
    "core/governance/deciding.py": DECISION_TESTS,
    "core/governance/decision.py": DECISION_TESTS,
    "core/governance/by_effect.py": (
        "tests/core/governance/test_dry_run_views.py",
        "tests/core/governance/test_by_effect.py::test_without_a_sandbox_only_provably_read_only_commands_run_at_once",
    ),
    "core/governance/sensitive.py": (
        "tests/core/governance/test_sensitive.py",
        "tests/core/agent/test_flow_rules.py::test_the_asking_action_carries_the_names_its_card_shows",
    ),
    # The rules on plain values (the agent's own flow tests start Lancelot: slow).
    "core/governance/flow.py": (
        "tests/core/governance/test_flow.py",
        "tests/core/governance/test_sensitive.py",
        *(f"tests/core/agent/test_flow_rules.py::test_{name}" for name in FLOW_RULES),
    ),
    # The executor alone, and through T1 rollback, the tool receipts and approved runs.
    "core/governance/execution.py": (
        "tests/core/governance/test_execution.py",
        "tests/core/governance/test_rollback.py",
        "tests/core/governance/test_tool_receipts.py",
        "tests/core/governance/test_approval_transitions.py",
    ),
    "core/governance/approvals.py": (
        "tests/core/governance/test_approvals.py",
        "tests/core/governance/test_approval_transitions.py",
    ),
    "core/receipts/chain.py": (f"{RECEIPTS}/test_chain.py", f"{RECEIPTS}/test_ledger.py"),
    "core/receipts/verify.py": (
        f"{RECEIPTS}/test_verify.py",
        f"{RECEIPTS}/test_ledger.py",
        f"{RECEIPTS}/test_checkpoint_chain.py",
        f"{RECEIPTS}/test_checkpoints.py",
        f"{RECEIPTS}/test_chain_start.py",
        f"{RECEIPTS}/test_incremental_verify.py",
    ),
    "core/receipts/signing.py": (
        f"{RECEIPTS}/test_signing.py",
        f"{RECEIPTS}/test_checkpoint_chain.py",
        f"{RECEIPTS}/test_chain_start.py",  # whether this start made the key, in a receipt
    ),
    "core/receipts/redaction.py": (
        f"{RECEIPTS}/test_redaction.py",
        f"{RECEIPTS}/test_encoded_secrets.py",
    ),
    "core/receipts/incremental.py": (f"{RECEIPTS}/test_incremental_verify.py",),
    "core/receipts/checkpoint_chain.py": (
        f"{RECEIPTS}/test_checkpoint_chain.py",
        f"{RECEIPTS}/test_incremental_verify.py",
    ),
    "core/receipts/chain_start.py": (
        f"{RECEIPTS}/test_chain_start.py",
        f"{RECEIPTS}/test_checkpoint_chain.py",
    ),
    "core/receipts/checkpoints.py": (
        f"{RECEIPTS}/test_checkpoint_file.py",
        f"{RECEIPTS}/test_checkpoints.py",
        f"{RECEIPTS}/test_checkpoint_chain.py",
        f"{RECEIPTS}/test_incremental_verify.py",
        f"{RECEIPTS}/test_chain_start.py",
        f"{RECEIPTS}/test_verify.py",
    ),
    "core/receipts/writer.py": (
        f"{RECEIPTS}/test_writer.py",
        f"{RECEIPTS}/test_ledger.py",
        f"{RECEIPTS}/test_ledger_open.py",
    ),
    "core/receipts/evidence.py": (
        f"{RECEIPTS}/test_checkpoint_chain.py",
        f"{RECEIPTS}/test_chain_start.py",
        f"{RECEIPTS}/test_checkpoint_file.py",
        f"{RECEIPTS}/test_incremental_verify.py",
        f"{RECEIPTS}/test_checkpoints.py::test_a_forged_or_deleted_checkpoint_file_is_reported",
    ),
    "core/receipts/fingerprints.py": (
        f"{RECEIPTS}/test_checkpoints.py::test_a_fingerprint_must_look_like_one",
        f"{RECEIPTS}/test_checkpoints.py::test_a_bad_fingerprint_is_told_what_one_looks_like",
        f"{RECEIPTS}/test_checkpoints.py::test_a_fingerprint_from_elsewhere_is_checked",
        f"{RECEIPTS}/test_checkpoint_chain.py",
    ),
    "core/receipts/base.py": (f"{RECEIPTS}/test_base.py",),
    "core/receipts/export.py": (f"{RECEIPTS}/test_file_readers.py",),
    "core/receipts/history.py": (f"{RECEIPTS}/test_file_readers.py",),
    "core/receipts/schema.py": (f"{RECEIPTS}/test_schema.py", f"{RECEIPTS}/test_ledger.py"),
    "core/receipts/model.py": (
        f"{RECEIPTS}/test_model.py",
        f"{RECEIPTS}/test_chain.py",
        f"{RECEIPTS}/test_ledger.py",
    ),
    "core/receipts/encodings.py": (
        f"{RECEIPTS}/test_encodings.py",
        f"{RECEIPTS}/test_encoded_secrets.py",
        f"{RECEIPTS}/test_redaction.py",
    ),
    "core/receipts/ledger.py": (
        f"{RECEIPTS}/test_ledger.py",
        f"{RECEIPTS}/test_ledger_open.py",
        f"{RECEIPTS}/test_ledger_failures.py",
        f"{RECEIPTS}/test_ledger_reads.py",
        f"{RECEIPTS}/test_writer.py",
        f"{RECEIPTS}/test_kinds.py",
        f"{RECEIPTS}/test_verify.py",
        f"{RECEIPTS}/test_checkpoints.py",
        f"{RECEIPTS}/test_chain_start.py",
        f"{RECEIPTS}/test_story_undos.py",
        f"{RECEIPTS}/test_ledger_retry.py",  # slow (12 s): last, for those that survive
    ),
    "core/receipts/reader.py": (
        f"{RECEIPTS}/test_reader.py",
        f"{RECEIPTS}/test_ledger.py",
        f"{RECEIPTS}/test_ledger_reads.py",
        f"{RECEIPTS}/test_story_undos.py",
    ),
    "core/receipts/search.py": (
        f"{RECEIPTS}/test_search.py",
        f"{RECEIPTS}/test_ledger_open.py",
        f"{RECEIPTS}/test_reader.py",
        f"{RECEIPTS}/test_ledger_reads.py",
        f"{RECEIPTS}/test_ledger.py",
    ),
    "core/tools/effects/history.py": HISTORY_TESTS,
    "core/tools/effects/gitobjects.py": (
        "tests/core/tools/effects/test_gitobjects.py",
        *HISTORY_TESTS,
    ),
    # Upper layers laid out by hand on the host (the sandbox's own tests need Docker: slow).
    "core/tools/effects/scan.py": ("tests/core/tools/effects/test_scan.py",),
    # Start-up and periodic tidying over a real journal and object store, no engine.
    "core/tools/effects/upkeep.py": ("tests/core/tools/effects/test_upkeep.py",),
    "core/tools/effects/errors.py": ("tests/core/tools/effects/test_errors.py",),
    "core/tools/effects/records.py": ("tests/core/tools/effects/test_records.py",),
    "core/tools/effects/sources.py": ("tests/core/tools/effects/test_sources.py",),
    "core/tools/effects/objects.py": ("tests/core/tools/effects/test_objects.py",),
    "core/tools/effects/tree.py": ("tests/core/tools/effects/test_tree.py",),
    "soul/linter.py": ("tests/soul/test_linter.py",),
    "soul/denylist.py": ("tests/soul/test_rules.py", "tests/soul/test_redteam_shell.py"),
    "soul/rules.py": (
        "tests/soul/test_rules.py",
        "tests/soul/test_redteam_shell.py",
        "tests/core/governance/test_deciding.py",
    ),
    "core/governance/crusader.py": (
        "tests/core/governance/test_crusader_mode.py",
        "tests/core/governance/test_crusader.py",
    ),
    "core/governance/switches.py": (
        "tests/core/governance/test_switches.py",
        "tests/core/test_feature_switches.py",
    ),
    "core/governance/intents.py": ("tests/core/governance/test_intents.py",),
    "core/governance/approval_cards.py": ("tests/core/governance/test_approval_cards.py",),
    "core/governance/crusader_commands.py": (
        "tests/core/governance/test_crusader.py",
        "tests/core/governance/test_crusader_mode.py",
    ),
    "core/governance/settlement.py": (
        "tests/core/governance/test_settlement.py",
        *APPROVAL_SERVICE_TESTS,
    ),
    "soul/readonly.py": ("tests/soul/test_readonly.py", *SHELL_READING),
    "soul/wrappers.py": ("tests/soul/test_wrappers.py", *SHELL_READING),
    "soul/shell.py": ("tests/soul/test_shell.py", *SHELL_READING),
    "soul/spelling.py": ("tests/soul/test_spelling.py", *SHELL_READING, "tests/soul/test_rules.py"),
    # The effect set on hand-made effects (the dry runs that build real ones need Docker).
    "core/tools/effects/effectset.py": (
        "tests/core/tools/effects/test_effect_set.py",
        "tests/core/tools/effects/test_effect_categories.py",
        "tests/core/governance/test_dry_run_views.py",
        "tests/core/governance/test_redteam.py::test_an_effect_set_counts_what_git_cannot_give_back",
    ),
    # Checking and staging on layers laid out by hand (an apply through a dry run needs Docker).
    "core/tools/effects/stage.py": ("tests/core/tools/effects/test_stage.py",),
    "core/tools/effects/commit.py": ("tests/core/tools/effects/test_commit.py",),
    "core/security/sanitizer.py": (f"{SECURITY}/test_sanitizer.py",),
    # Pages and search results fenced for the model, each through a fake peer on localhost.
    "core/security/untrusted.py": (
        "tests/core/tools/test_web_fetch.py",
        "tests/core/tools/test_web_search.py",
    ),
    "core/security/refusals.py": (f"{SECURITY}/test_refusals.py",),
    "core/security/owner_view.py": ("tests/core/test_owner_time.py",),
    # The pathological lines' time bound does not hold under the runner's line tracer.
    "soul/lexer.py": (
        "tests/soul/test_lexer.py",
        "tests/soul/test_shell.py",
        "tests/soul/test_redteam_shell.py",
        *(f"tests/soul/test_shell_reading.py::test_{name}" for name in LEXED),
    ),
    # The expiry loop over a store that fails on demand, and as the service drives it.
    "core/governance/deadlines.py": (
        "tests/core/governance/test_deadlines.py",
        "tests/core/governance/test_approval_deadline.py",
        "tests/core/governance/test_approval_service.py",
    ),
    # What a governed call came to, as the gateway's callers and a step asked again hear it.
    "core/governance/outcomes.py": (
        "tests/core/governance/test_gateway.py",
        "tests/core/governance/test_step_keys.py",
        "tests/core/governance/test_run_and_approvals.py",
        "tests/core/governance/test_tool_receipts.py",
        "tests/core/agent/test_tool_failures.py",
    ),
    # The gateway from /run, the agent and skills; its by-effect path on the real sandbox.
    "core/governance/gateway.py": (
        "tests/core/governance/test_gateway.py",
        "tests/core/governance/test_run_and_approvals.py",
        "tests/core/governance/test_one_path.py",
        "tests/core/governance/test_step_keys.py",
        "tests/core/governance/test_tool_receipts.py",
        "tests/core/governance/test_crusader.py",
        "tests/core/agent/test_tool_failures.py",
        *(f"tests/core/governance/test_by_effect.py::test_{name}" for name in BY_EFFECT),
    ),
    # A real effects.db on disk, and the upkeep over it (no engine).
    "core/tools/effects/journal.py": (
        "tests/core/tools/effects/test_journal.py",
        "tests/core/tools/effects/test_upkeep.py",
    ),
    # The owner's words for hand-made effects (the dry runs that make real ones need Docker).
    "core/tools/effects/summary.py": (
        "tests/core/tools/effects/test_summary.py",
        "tests/core/tools/effects/test_effect_set.py",
    ),
    # A Soul's YAML read into the model, with located findings (the linter reads through it).
    "soul/document.py": (
        "tests/soul/test_document.py",
        "tests/soul/test_linter.py",
        "tests/soul/test_store.py",
    ),
    # The desk over changes kept in memory (the chat's Undo on the real sandbox needs Docker).
    "core/governance/undo.py": ("tests/core/governance/test_undo_desk.py",),
    # The journal on a real workspace; through the real executor and SafeREPL.
    "core/governance/rollback.py": (
        "tests/core/governance/test_rollback_journal.py",
        "tests/core/governance/test_rollback.py",
        "tests/core/governance/test_execution.py::"
        "test_a_change_that_could_not_run_fails_its_check_and_stops_the_risky_step",
    ),
    # Over changes and dry runs kept in memory (the flow on the real sandbox needs Docker).
    "core/governance/effect_followups.py": ("tests/core/governance/test_effect_followups.py",),
    # The card's copies on a bus and store of its own; reminders and /approvals' fresh
    # copies through the app's durable outbox.
    "core/governance/approval_delivery.py": (
        "tests/core/governance/test_approval_delivery.py",
        "tests/core/governance/test_run_and_approvals.py::test_approvals_lists_pending_with_buttons",
        "tests/core/governance/test_soul_and_expiry.py::"
        "test_undecided_approval_is_reminded_once_and_the_reminder_decides",
    ),
    # /run's facts on a real workspace; /run and /approvals from the chat; the by-effect
    # branches (Undo, Dry run again, a crash's replay) on the real sandbox.
    "core/governance/commands.py": (
        "tests/core/governance/test_shell_facts.py",
        "tests/core/governance/test_run_and_approvals.py",
        *(f"tests/core/governance/test_by_effect.py::test_{name}" for name in RUN_BY_EFFECT),
    ),
    # What an effect is, on hand-made states, and as a scan and a stage read them on the host.
    "core/tools/effects/model.py": (
        "tests/core/tools/effects/test_model.py",
        "tests/core/tools/effects/test_effect_set.py",
        "tests/core/tools/effects/test_effect_categories.py",
        "tests/core/tools/effects/test_scan.py",
        "tests/core/tools/effects/test_stage.py",
    ),
    # Paths read on the host as a scan, a stage and a commit read them.
    "core/tools/effects/files.py": (
        "tests/core/tools/effects/test_files.py",
        "tests/core/tools/effects/test_scan.py",
        "tests/core/tools/effects/test_stage.py",
        "tests/core/tools/effects/test_commit.py",
    ),
    # Git's changes from hand-made effects, and as a scan reads them off real repositories.
    "core/tools/effects/git.py": (
        "tests/core/tools/effects/test_git_changes.py",
        "tests/core/tools/effects/test_scan.py",
    ),
    # The file tools' changes read on the host, through the journal (no dry run, no engine).
    "core/tools/effects/host.py": (
        "tests/core/tools/effects/test_host_effects.py",
        "tests/core/tools/effects/test_host_changes.py",
        "tests/core/tools/test_file_ops.py",
    ),
    # Governance's view of the effect engine: the by-effect path on the real sandbox.
    "core/tools/effects/provider.py": (
        "tests/core/tools/effects/test_provider.py",
        *(f"tests/core/governance/test_by_effect.py::test_{name}" for name in PROVIDED),
    ),
    # One command in an overlay slot on the real sandbox: output, exit code, time and flood.
    "core/tools/effects/command.py": (
        "tests/core/tools/effects/test_edges.py::"
        "test_opaque_directories_are_read_from_user_xattrs_when_mounted_with_userxattr",
        *(f"tests/core/tools/effects/test_dry_run.py::test_{name}" for name in COMMANDS_RUN),
    ),
    # The registry's checks, and the page and the digest reading roles and sections.
    "core/receipts/kinds.py": (
        f"{RECEIPTS}/test_kind_recipe.py",
        f"{RECEIPTS}/test_kinds.py",
        "tests/core/digest/test_digest.py::test_digest_after_a_scripted_day",
        "tests/bot/web/test_story_page.py::test_a_request_with_its_approval_and_tool_run_on_a_phone",
    ),
    "core/receipts/fts.py": (f"{RECEIPTS}/test_fts.py", f"{RECEIPTS}/test_reader.py"),
    "core/receipts/query.py": (
        f"{RECEIPTS}/test_reader.py",
        f"{RECEIPTS}/test_ledger_reads.py",
        f"{RECEIPTS}/test_story_undos.py",
        f"{RECEIPTS}/test_ledger.py",
    ),
    # Every kind renders into docs/receipts.md: a changed name, role, about, line, verdict
    # or section changes the page the test compares. Registry mutants run at import time.
    "core/receipts/registry.py": (f"{RECEIPTS}/test_reference.py", f"{RECEIPTS}/test_kinds.py"),
    "core/receipts/reference.py": (f"{RECEIPTS}/test_reference.py",),
    "core/receipts/walk.py": (
        f"{RECEIPTS}/test_walk.py",
        f"{RECEIPTS}/test_verify.py",
        f"{RECEIPTS}/test_incremental_verify.py",
    ),
    # How a word's characters are read: through the lexer, as the Soul reads whole lines.
    "soul/words.py": (
        "tests/soul/test_words.py",
        "tests/soul/test_lexer.py",
        "tests/soul/test_shell.py",
        "tests/soul/test_redteam_shell.py",
        *(f"tests/soul/test_shell_reading.py::test_{name}" for name in LEXED),
    ),
    "soul/expansions.py": (
        "tests/soul/test_expansions.py",
        "tests/soul/test_lexer.py",
        "tests/soul/test_shell.py",
        "tests/soul/test_redteam_shell.py",
        *(f"tests/soul/test_shell_reading.py::test_{name}" for name in LEXED),
    ),
    "soul/git_reads.py": ("tests/soul/test_git_reads.py", "tests/soul/test_redteam_shell.py"),
    # Slots on the real engine (Docker): made, used, swept after a crash, masked; the
    # mount options on plain paths.
    "core/tools/effects/overlay.py": (
        "tests/core/tools/effects/test_overlay.py",
        "tests/core/tools/effects/test_edges.py",
        *(f"tests/core/tools/effects/test_dry_run.py::test_{name}" for name in DRY_RUNS),
        "tests/core/tools/effects/test_restart.py",
        "tests/core/tools/effects/test_masked.py::test_a_dry_run_never_shows_a_masked_file_changed",
    ),
    # The warm pool under real dry runs (Docker): filled, warmed, swept at its first start,
    # a slot masked for a workspace since changed thrown away, failures reported, emptied.
    "core/tools/effects/pool.py": (
        "tests/core/tools/effects/test_pool.py",
        *(f"tests/core/tools/effects/test_dry_run.py::test_{name}" for name in POOLED),
        "tests/core/tools/effects/test_masked.py::"
        "test_a_sensitive_file_added_after_the_slots_were_made_is_masked",
        "tests/core/tools/effects/test_overlay.py::"
        "test_used_and_waiting_slots_leave_only_a_kept_dry_runs_private_upper_layer",
        "tests/core/tools/effects/test_edges.py::"
        "test_a_missing_image_fails_the_dry_run_clearly_and_runs_nothing",
        "tests/core/tools/effects/test_restart.py::"
        "test_a_start_with_no_mark_leaves_the_engine_alone_until_the_pool_starts",
        "tests/core/tools/effects/test_apply.py::test_apply_runs_nothing_again",
    ),
    # The engine's service: the file tools' changes and their undo on the host (no dry run),
    # then dry runs, applies, discards, undos and expiry on the real sandbox (Docker).
    "core/tools/effects/service.py": (
        "tests/core/tools/effects/test_host_changes.py",
        *(f"tests/core/tools/effects/test_apply.py::test_{name}" for name in APPLIED),
        *(f"tests/core/tools/effects/test_undo.py::test_{name}" for name in UNDONE),
        "tests/core/tools/effects/test_provider.py",
        "tests/core/tools/effects/test_restart.py::"
        "test_approve_after_a_restart_applies_the_dry_run_and_undo_still_works",
        "tests/core/tools/effects/test_restart.py::"
        "test_dry_runs_that_expired_while_down_are_cleaned_at_startup",
        *(f"tests/core/tools/effects/test_dry_run.py::test_{name}" for name in POOLED),
        "tests/core/tools/effects/test_dry_run.py::test_processes_left_running_die_with_the_command",
        "tests/core/tools/effects/test_edges.py::test_health_says_when_dry_runs_can_run",
        "tests/core/tools/effects/test_edges.py::"
        "test_a_missing_image_fails_the_dry_run_clearly_and_runs_nothing",
        "tests/core/tools/effects/test_overlay.py::"
        "test_used_and_waiting_slots_leave_only_a_kept_dry_runs_private_upper_layer",
    ),
    # The versions on disk and their amendments, over a private copy of the shipped ones.
    "soul/store.py": ("tests/soul/test_store.py", "tests/soul/test_amendments.py"),
    "soul/amendments.py": ("tests/soul/test_amendments.py",),
    "soul/atomic.py": ("tests/soul/test_atomic.py",),
    # What a finding and a report say, and a rejected soul's error; an effect set's tier.
    "soul/report.py": ("tests/soul/test_findings.py", "tests/soul/test_linter.py"),
    "soul/errors.py": ("tests/soul/test_findings.py", "tests/soul/test_store.py"),
    "soul/effects.py": ("tests/soul/test_effects.py",),
    # The shape of a soul: defaults and bounds; the shipped soul read through the linter.
    "soul/schema.py": ("tests/soul/test_schema.py", "tests/soul/test_document.py"),
    # Recorded decisions decided again: receipts made by hand and by the engine, the suite's
    # guard over them, and /run's and the agent's ledgers on the real sandbox (Docker).
    "core/governance/replay.py": (
        "tests/core/governance/test_replay.py",
        "tests/test_replayed_decisions.py",
        "tests/core/governance/test_decision.py::test_decisions_an_earlier_release_recorded_replay_the_same",
    ),
    # A proposed Soul over receipts the engine made, and over a real ledger's period: the
    # amendment's card and its page after /run on the real sandbox (Docker).
    "core/governance/whatif.py": (
        "tests/core/governance/test_whatif.py",
        "tests/core/governance/test_soul_commands.py::"
        "test_a_ledger_that_cannot_be_read_is_named_on_the_card",
    ),
    # The owner's /soul commands, through the assembled app (no Docker) and on their own.
    "core/governance/soul_commands.py": (
        "tests/core/governance/test_soul_commands.py",
        *(
            f"tests/core/governance/test_soul_and_expiry.py::test_{name}"
            for name in (
                "soul_amendment_from_chat",
                "amendment_breaking_an_invariant_never_activates",
                "a_proposal_that_changes_nothing_asks_for_no_approval",
            )
        ),
    ),
}

# Tests that reach a file only in a child they fork (to run as another user, say): the line
# tracer does not see a child's lines, so these run against every mutant of that file.
IN_A_CHILD: dict[str, tuple[str, ...]] = {
    "core/tools/effects/objects.py": (
        "tests/core/tools/effects/test_objects.py::"
        "test_a_file_its_owner_cannot_read_is_neither_linked_nor_copied",
    ),
    "core/tools/effects/tree.py": (
        "tests/core/tools/effects/test_tree.py::"
        "test_folders_locked_against_their_own_owner_are_opened_up_and_removed",
        "tests/core/tools/effects/test_tree.py::test_what_cannot_go_is_logged_and_left",
        "tests/core/tools/effects/test_tree.py::"
        "test_a_folder_holding_one_of_roots_is_tried_once_and_left",
    ),
    "core/tools/effects/files.py": (
        "tests/core/tools/effects/test_files.py::"
        "test_a_folder_lancelot_may_not_open_is_refused_as_such_not_as_blocked",
    ),
    "core/receipts/fts.py": (
        "tests/core/receipts/test_fts.py::"
        "test_a_lone_surrogate_is_no_word_even_when_asked_about_first",
    ),
    "core/tools/effects/overlay.py": (
        "tests/core/tools/effects/test_overlay.py::"
        "test_a_lancelot_that_is_not_root_reads_opaque_folders_from_user_xattrs",
    ),
}


def chosen(names: list[str]) -> list[str]:
    """The mapped files under any of `names` (a file or a folder, e.g. core/security)."""
    picked = [p for p in TARGETS if any(p == n or p.startswith(n.rstrip("/") + "/") for n in names)]
    return picked
