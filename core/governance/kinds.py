"""The receipt kinds governance writes, named once: the ledger, the digest, the receipt page
and the tests all read these names."""

from __future__ import annotations

from enum import StrEnum


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
