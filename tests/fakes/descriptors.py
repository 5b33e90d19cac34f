"""Whether a block of code leaves a file open: the process's open descriptors before and
after it, compared as sets.

Another test's forgotten file may be closed by the garbage collector at any moment, and that
lowers a plain count while the block runs (seen in CI: 357 open before, 339 after). So the
collector runs first and is held off while the block runs, and the check is that no
descriptor is open afterwards that was not open before, and none went away.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator


def open_descriptors() -> set[str]:
    """The numbers of this process's open file descriptors."""
    return set(os.listdir("/proc/self/fd"))


@contextlib.contextmanager
def leaves_no_file_open() -> Iterator[None]:
    """Fail when the block leaves a descriptor open that it opened (or closes one it did not)."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        before = open_descriptors()
        yield
        after = open_descriptors()
    finally:
        if was_enabled:
            gc.enable()
    assert after == before, f"left open: {sorted(after - before)}; closed: {sorted(before - after)}"
