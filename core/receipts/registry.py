"""Every receipt kind Lancelot writes, declared once: its name, its role, what it records.

To add a kind, add one line to KINDS (docs/architecture.md, "How to add a receipt kind"):
the receipt page and the digest read its role and section from here. A test run fails
when any test writes a kind that is not declared here (tests/receipt_kinds.py).
"""

from __future__ import annotations

from enum import StrEnum

from core.receipts.kinds import KindRegistry, ReceiptKind, Role, Section


class GovernanceReceipt(StrEnum):
    """`action_type` of every receipt a governed action leaves."""

    POLICY_DECISION = "policy_decision"  # what the Soul decided, with the rule and tier
    CRUSADER_AUTO_APPROVAL = "crusader_auto_approval"  # Crusader mode approved it instead
    TOOL_INTENT = "tool_intent"  # on disk before an action that may change anything runs
    TOOL_RUN = "tool_run"  # the run itself: provider, inputs, outputs, file changes
    TOOL_INTERRUPTED = "tool_interrupted"  # an intent with no outcome: Lancelot stopped
    INTENTS_CHECKED = "intents_checked"  # the intents up to a seq were matched after a start
    DRY_RUN = "dry_run"  # a shell command run in a copy of the workspace: output, effects
    DRY_RUN_DISCARDED = "dry_run_discarded"  # its effects were not applied (Deny, lapsed)
    CHANGE_UNDONE = "change_undone"  # an applied change taken back (Undo)
    UNDO_REFUSED = "undo_refused"  # Undo refused: a later change touched the same files
    SKILL_ACTION_REFUSED = "skill_action_refused"  # a skill asked beyond its permissions
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL_GRANTED = "approval_granted"
    APPROVAL_DENIED = "approval_denied"
    APPROVAL_EXPIRED = "approval_expired"
    APPROVAL_REFUSED = "approval_refused"  # a press for an action that changed since
    APPROVAL_REMINDED = "approval_reminded"
    APPROVAL_INTERRUPTED = "approval_interrupted"  # running when Lancelot stopped


class SwitchReceipt(StrEnum):
    """`action_type` of the receipts the owner's switches leave (/features, /crusader)."""

    TOGGLED = "feature_switched"  # a FEATURE_* toggle: which, on or off, where kept
    MCP_SWITCHED = "mcp_switched"  # an MCP server or tool turned on or off from /mcp
    MCP_TIER_CHOSEN = "mcp_tier_chosen"  # an MCP tool set to ask first or not, from /mcp


class McpReceipt(StrEnum):
    """`action_type` of the receipts an MCP server's tool call leaves."""

    CALLED = "mcp_call"  # server, tool, arguments' digest, result size, duration, error


class FileReceipt(StrEnum):
    """`action_type` of the receipts files to and from the owner's phone leave."""

    FILE_RECEIVED = "file_received"  # saved in workspace/inbox: path, size, sha256
    FILE_REFUSED = "file_refused"  # not saved: too big, a key file, the download failed
    VOICE_TRANSCRIBED = "voice_transcribed"  # what the provider heard (its length, who)
    FILE_SENT = "file_sent"  # a workspace file sent to the phone: path, size, sha256
    UNHANDLED_UPDATE = "unhandled_update"  # a sticker, a location, an edit: answered, not run


class JobReceipt(StrEnum):
    """`action_type` of the receipts jobs created from chat leave (their runs leave the
    scheduler's scheduled_job_* receipts)."""

    JOB_PROPOSED = "job_proposed"  # a Create / Cancel card was sent: what, when, tier
    JOB_CREATED = "job_created"  # the owner tapped Create: the job is kept and scheduled
    JOB_NOT_CREATED = "job_not_created"  # Cancel, or Create after its time had passed
    JOB_DELETED = "job_deleted"  # Delete on /jobs: it will not run again


class TaskReceipt(StrEnum):
    """`action_type` of the receipts a stopped task leaves (the owner's Stop or /stop)."""

    STOP_REQUESTED = "stop_requested"  # who asked, through which channel, when, which quest
    TASK_STOPPED = "task_stopped"  # where it stopped, what was cut short, how long it took


G, F, J, T = GovernanceReceipt, FileReceipt, JobReceipt, TaskReceipt
R, S, A, D, E, U, P, H = (
    Role.REQUEST,
    Role.STEP,
    Role.ASK,
    Role.DECISION,
    Role.EFFECT,
    Role.UNDO,
    Role.PRESS,
    Role.HIDDEN,
)
JOB = "scheduled job {subject}"

KINDS = KindRegistry(
    (
        # What starts a request, and the owner's hands on it
        ReceiptKind("inbound", R, "a message from the owner", "message: {subject}"),
        ReceiptKind("command", S, "a /command and its answer", "command /{subject}"),
        ReceiptKind("reply", Role.ANSWER, "the card a request was answered with"),
        ReceiptKind("button", P, "a button press the token allowed"),
        ReceiptKind("button_refused", P, "a press refused: a bad, used or expired token"),
        ReceiptKind("input_refused", S, "a message refused before it was read"),
        ReceiptKind("handler_failed", S, "a message or press whose handling crashed"),
        ReceiptKind("update_abandoned", S, "a platform update given up after retries"),
        ReceiptKind("delivery", S, "a card that could not be delivered"),
        ReceiptKind("stranger", S, "a message or press from someone not the owner"),
        ReceiptKind("unverified", S, "a Google Chat event whose signature failed"),
        ReceiptKind("webhook", S, "a webhook call refused: no secret, malformed"),
        ReceiptKind("pairing", S, "a pairing attempt and its verdict"),
        ReceiptKind("onboarding", S, "a step of the first-run conversation"),
        ReceiptKind("system", S, "Lancelot started or shut down"),
        ReceiptKind("checkpoint_chain", S, "the checkpoint chain began, or was found lost"),
        # Governance: the Soul's decision, the owner's, and what ran
        ReceiptKind(G.POLICY_DECISION, D, "what the Soul decided: rule, tier", "policy: {subject}"),
        ReceiptKind(G.CRUSADER_AUTO_APPROVAL, D, "Crusader mode approved an action"),
        ReceiptKind(G.TOOL_INTENT, H, "written before an action that may change anything"),
        ReceiptKind(G.TOOL_RUN, E, "a governed tool ran: inputs, outputs, files", "ran: {subject}"),
        ReceiptKind(G.TOOL_INTERRUPTED, S, "an intent with no outcome", "interrupted: {subject}"),
        ReceiptKind(G.INTENTS_CHECKED, S, "intents matched to outcomes after a start"),
        ReceiptKind(G.DRY_RUN, S, "a command run in a copy of the workspace", "dry run: {subject}"),
        ReceiptKind(G.DRY_RUN_DISCARDED, S, "a dry run's effects not applied"),
        ReceiptKind(G.CHANGE_UNDONE, U, "an applied change taken back", "undone: {subject}"),
        ReceiptKind(G.UNDO_REFUSED, U, "Undo refused: says why", "{subject}"),
        ReceiptKind(G.SKILL_ACTION_REFUSED, S, "a skill asked beyond its permissions"),
        ReceiptKind(G.APPROVAL_REQUESTED, A, "the owner was asked to approve an action"),
        ReceiptKind(G.APPROVAL_GRANTED, D, "the owner approved", verdict="approved"),
        ReceiptKind(
            G.APPROVAL_DENIED, D, "the owner denied (or a Stop withdrew it)", verdict="denied"
        ),
        ReceiptKind(G.APPROVAL_EXPIRED, D, "no decision before the deadline", verdict="expired"),
        ReceiptKind(G.APPROVAL_REFUSED, S, "a press for an action that changed since"),
        ReceiptKind(G.APPROVAL_REMINDED, S, "a fresh copy of an undecided approval card"),
        ReceiptKind(G.APPROVAL_INTERRUPTED, S, "an approved action running when Lancelot stopped"),
        ReceiptKind("verification_failed", S, "an action's check failed: it is rolled back"),
        ReceiptKind("rollback", S, "files put back after a failed verification"),
        ReceiptKind(SwitchReceipt.TOGGLED, S, "a FEATURE_* switch turned on or off"),
        ReceiptKind(SwitchReceipt.MCP_SWITCHED, S, "an MCP server or tool turned on or off"),
        ReceiptKind(SwitchReceipt.MCP_TIER_CHOSEN, S, "an MCP tool set to ask first or not"),
        ReceiptKind(McpReceipt.CALLED, S, "an MCP server's tool called", "mcp: {subject}"),
        ReceiptKind("crusader", S, "Crusader mode switched on or off"),
        ReceiptKind("soul_amendment_proposed", S, "a change to the Soul proposed"),
        ReceiptKind("soul_amendment_rejected", S, "a proposed Soul change rejected"),
        ReceiptKind("soul_amendment_refused", S, "a Soul change refused by the linter"),
        ReceiptKind("soul_activated", S, "a Soul version made active"),
        # The agent's steps
        ReceiptKind("agent_request", S, "the agent took a request"),
        ReceiptKind("intent", S, "what the request was found to ask"),
        ReceiptKind("plan", S, "the agent's plan, or why it was invalid"),
        ReceiptKind("verify", S, "a plan step checked against what ran"),
        ReceiptKind("tool_call", S, "a tool the model asked for"),
        ReceiptKind("tool_failed", S, "a tool call that failed"),
        ReceiptKind("capability_gap", S, "a tool the model asked for that does not exist"),
        ReceiptKind("context_compiled", S, "the memory put into a request's context"),
        ReceiptKind("deep_reasoning", S, "a request sent to the deep lane"),
        ReceiptKind("task_experience", S, "what a finished task taught, kept in memory"),
        ReceiptKind("agent_reply", S, "the agent's answer"),
        ReceiptKind(T.STOP_REQUESTED, S, "the owner asked a task to stop"),
        ReceiptKind(T.TASK_STOPPED, S, "a task stopped: where, what was cut short"),
        # Models and their budget
        ReceiptKind(
            "router_decision", S, "a model call: lane, tokens, cost", section=Section.USAGE
        ),
        ReceiptKind("budget_allowance", S, "the day's model budget set"),
        ReceiptKind("budget_warning", S, "the model budget nearly spent"),
        ReceiptKind("budget_ask", S, "the owner asked to spend past the budget"),
        ReceiptKind("budget_stay_local", S, "a request kept on the local model (budget)"),
        # Memory
        ReceiptKind("memory_edit_committed", S, "a memory edit kept"),
        ReceiptKind("memory_edit_quarantined", S, "a memory edit held for the owner's review"),
        ReceiptKind("memory_edit_rejected", S, "a quarantined memory edit rejected"),
        ReceiptKind("memory_cleanup", S, "old memory cleaned up"),
        # Files to and from the phone
        ReceiptKind(F.FILE_RECEIVED, S, "a file saved in workspace/inbox"),
        ReceiptKind(F.FILE_REFUSED, S, "a file not saved"),
        ReceiptKind(F.VOICE_TRANSCRIBED, S, "a voice note transcribed"),
        ReceiptKind(F.FILE_SENT, S, "a workspace file sent to the phone"),
        ReceiptKind(F.UNHANDLED_UPDATE, S, "a sticker, a location, an edit: answered, not run"),
        # Jobs
        ReceiptKind(
            "scheduled_job_run", R, "a scheduled run that ended well", JOB, section=Section.JOBS
        ),
        ReceiptKind(
            "scheduled_job_failed", R, "a scheduled run that failed", JOB, section=Section.JOBS
        ),
        ReceiptKind(
            "scheduled_job_skipped", R, "a run skipped or missed", JOB, section=Section.JOBS
        ),
        ReceiptKind(J.JOB_PROPOSED, S, "a Create / Cancel card for a job was sent"),
        ReceiptKind(J.JOB_CREATED, S, "a job created from chat"),
        ReceiptKind(J.JOB_NOT_CREATED, S, "a proposed job not created"),
        ReceiptKind(J.JOB_DELETED, S, "a job deleted"),
        ReceiptKind("job_paused", S, "a job paused by the owner"),
        ReceiptKind("job_resumed", S, "a job resumed by the owner"),
        ReceiptKind("digest_sent", S, "a digest card sent"),
        # Health
        ReceiptKind("health_ok", S, "the first health check passed"),
        ReceiptKind("health_degraded", S, "health turned degraded", section=Section.HEALTH),
        ReceiptKind("health_recovered", S, "health recovered", section=Section.HEALTH),
        ReceiptKind("health_muted", S, "health alerts muted for a while"),
        # Skills
        ReceiptKind("skill_proposed", S, "a skill proposed for installation"),
        ReceiptKind("skill_proposal_decided", S, "the owner decided on a proposed skill"),
        ReceiptKind("skill_install", S, "a skill installed"),
        ReceiptKind("skill_enable", S, "a skill enabled"),
        ReceiptKind("skill_disable", S, "a skill disabled"),
        ReceiptKind("skill_grant", S, "permissions granted to a skill"),
        ReceiptKind("skill_configure", S, "a skill's settings changed"),
        ReceiptKind("skill_update", S, "a skill updated"),
        ReceiptKind("skill_uninstall", S, "a skill uninstalled"),
        ReceiptKind("skill_run", S, "a skill ran"),
    )
)
