"""The one-run-per-output lock: an exclusive lock on ``<out>.lock`` that leaves no file behind.

A run holds an exclusive ``flock`` (POSIX) on ``<out>.lock`` while it reads, appends to and folds its output; the
kernel drops the lock with the process, so a killed run never blocks the next one. Unlike :mod:`filelock`'s Unix
lock, the file is removed on release — after a finished, failed or refused run nothing stays beside the output —
without weakening the guarantee: the holder unlinks the file *while still holding it*, and a process that acquires
the lock then checks that the file it locked is still the one at that path (same device and inode) and otherwise
retries on the new file. So two processes never both believe they hold the lock: one locking the unlinked inode
sees the mismatch; everyone else contends for the file now at the path.

Where ``fcntl`` is missing (Windows) :class:`filelock.FileLock` is used; its Windows lock already deletes the file
on release.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from evallab.errors import LockTimeout


class OutputLock:
    """Exclusive lock on the file ``path`` (created on acquire, removed on release).

    Parameters
    ----------
    path : str or Path
        The lock file, e.g. ``<out>.lock``. Its folder must exist.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._fd: int | None = None
        self._fallback = None

    @property
    def is_locked(self) -> bool:
        return self._fd is not None or self._fallback is not None

    def _try(self) -> bool:
        import fcntl

        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # held by another process (BlockingIOError), or the file system refuses
                os.close(fd)
                return False
            try:
                now = os.stat(self.path)
            except FileNotFoundError:  # the holder released (and removed) it after we opened it: retry
                os.close(fd)
                continue
            mine = os.fstat(fd)
            if (now.st_dev, now.st_ino) != (mine.st_dev, mine.st_ino):  # we locked a removed file: retry
                os.close(fd)
                continue
            self._fd = fd
            return True

    def acquire(self, timeout: float = -1, poll_interval: float = 0.05) -> None:
        """Take the lock, waiting up to ``timeout`` seconds (``-1``: forever; ``0``: not at all).

        Raises
        ------
        LockTimeout
            Another process holds the lock for longer than ``timeout``.
        """
        try:
            import fcntl  # noqa: F401
        except ImportError:  # Windows: filelock's lock deletes its file on release
            from filelock import FileLock, Timeout

            lock = FileLock(str(self.path), thread_local=False)
            try:
                lock.acquire(timeout=timeout, poll_interval=poll_interval)
            except Timeout:
                raise LockTimeout(str(self.path)) from None
            self._fallback = lock
            return
        deadline = None if timeout < 0 else time.monotonic() + timeout
        while not self._try():
            if deadline is not None and time.monotonic() >= deadline:
                raise LockTimeout(str(self.path))
            time.sleep(poll_interval)

    def release(self) -> None:
        """Remove the lock file, then drop the lock (in that order: see the module docstring). Idempotent."""
        if self._fallback is not None:
            self._fallback.release()
            self._fallback = None
            return
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)  # closing the last descriptor drops the flock
            self._fd = None
