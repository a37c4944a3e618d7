"""Files written whole: a stop, a crash or a full disk never leaves half of one; and where they are.

    with atomic_write(path) as f:      # a temporary file beside path, which replaces it at the end
        f.write(text)

A file that cannot be written (a full disk, a read-only file system, no permission) raises
``WriteFailed`` naming it. The results tables (``act_experiments.tables``) and a run's
checkpoints and logs (``act_experiments.training.checkpoints``) are written through here.

``ROOT`` is the folder that holds the course's packages: the repository in a clone, where runs/,
results/, figures/ and notebooks/ are named relative to it. The one definition, so that the
experiments and the course's own machinery both import it.
"""

import contextlib
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class WriteFailed(OSError):
    """A file of a run or a sweep could not be written: a full disk, a read-only file system, no permission.

    path: the file (the one meant, not its temporary twin); reason: the system's words for it, e.g.
    "No space left on device"; checkpoint: the iteration of the run's last intact checkpoint, or
    None when no checkpoint was written or none belongs to the file. The message is one line.
    An OSError, so that code catching OSError catches it as it caught the original.
    """

    def __init__(self, path, errno, reason, checkpoint=None):
        super().__init__(errno, reason, str(path))
        self.path, self.reason, self.checkpoint = Path(path), reason, checkpoint

    @classmethod
    def of(cls, path, err, checkpoint=None):
        """The WriteFailed for ``path`` from the OSError that stopped the write (one may name a
        temporary file, or no file at all, and say nothing of the checkpoint)."""
        if isinstance(err, WriteFailed):
            path = err.path
            checkpoint = err.checkpoint if checkpoint is None else checkpoint
        reason = err.strerror or str(err) or type(err).__name__
        return cls(path, err.errno, reason, checkpoint)

    def __str__(self):
        text = f"cannot write {self.path} ({self.reason})"
        if self.checkpoint is None:
            return text
        return f"{text}; the last intact checkpoint is at iteration {self.checkpoint}"

    def __reduce__(self):
        # a sweep's worker sends it to its parent: rebuild it from the same four fields
        return type(self), (str(self.path), self.errno, self.reason, self.checkpoint)


@contextlib.contextmanager
def writing(path, checkpoint=None):
    """Turn any OSError inside the block into a WriteFailed naming ``path`` (and the checkpoint)."""
    try:
        yield
    except OSError as err:
        raise WriteFailed.of(path, err, checkpoint) from err


@contextlib.contextmanager
def atomic_write(path, mode="w"):
    """Write ``path`` all at once: yields a temporary file beside it that replaces it on success.

    mode: "w" (UTF-8 text, newlines written as given) or "wb". A crash, a kill or an exception
    inside the block leaves ``path`` as it was: readers see the old file or the new one, never
    half of one, and the temporary file is removed. An OSError (a full disk, say) comes out as
    a WriteFailed naming ``path``. Every file a run or a sweep writes whole goes through here.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    text_mode = {} if "b" in mode else {"encoding": "utf-8", "newline": ""}
    try:
        with writing(path):
            with open(tmp, mode, **text_mode) as f:
                yield f
                f.flush()
                os.fsync(f.fileno())    # the bytes reach the disk before the name points at them
            os.replace(tmp, path)       # one step: the old file until here, the new one after
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
