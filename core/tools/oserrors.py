"""OS errors as the owner and the model read them: one short clause, no errno, no traceback.

Tools translate an OSError here at their edge (ToolFailed), so a name over 255 bytes or a
full disk comes back as a clear refusal instead of an exception that ends the turn.
"""

from __future__ import annotations

import errno

from core.errors import ToolFailed

MAX_SHOWN = 80  # characters of a path quoted in a message; the rest is elided

_PLAIN = {
    errno.ENAMETOOLONG: "the name is too long (at most 255 bytes for each part of a path)",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "the file is too large",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "the file system is read-only",
    errno.EISDIR: "it is a folder, not a file",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.ELOOP: "a symbolic link is in the way",
    errno.ENOENT: "no such file or directory",
    errno.EEXIST: "it already exists",
    errno.ENOTEMPTY: "the folder is not empty",
    errno.EBUSY: "it is busy; try again later",
    errno.EMFILE: "too many files are open; try again later",
    errno.ENFILE: "too many files are open; try again later",
    errno.EXDEV: "it cannot be moved across file systems",
    errno.EINVAL: "the name or argument is not valid",
    errno.EIO: "the disk reported an input/output error",
}


def explain(exc: OSError) -> str:
    """What went wrong, in words (lower case, no file name)."""
    if exc.errno in _PLAIN:
        return _PLAIN[exc.errno]
    return (exc.strerror or str(exc) or "the operating system refused").lower()


def shorten(name: str) -> str:
    """A path short enough to quote in a message."""
    if len(name) <= MAX_SHOWN:
        return name
    half = MAX_SHOWN // 2
    return f"{name[:half]}…{name[-half:]}"


def tool_failure(exc: OSError, what: str) -> ToolFailed:
    """A ToolFailed saying what failed (`file.write /workspace/x`) and why, for the owner."""
    message = f"{shorten(what)}: {explain(exc)}"
    return ToolFailed(message, user_message=message)
