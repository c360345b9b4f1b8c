"""Which device a BO job runs on: a CUDA device it holds alone, else the CPU.

``snakemake --resources gpu=N`` only counts the jobs that declare ``gpu=1``; it does not tell
a job which device to use. Each job therefore claims one itself: an exclusive ``flock`` on one
lock file per device, taken without blocking on the first free device and held while the job
runs. The kernel drops a ``flock`` when its process ends, however it ends (``SIGKILL``
included), so a killed job never leaves a device claimed, and two live jobs never hold the
same one.

A device's lock file is named by its UUID, not its index: the index depends on the
``CUDA_VISIBLE_DEVICES`` a job sees (SLURM gives every job of a node its own numbering), the
UUID does not. Which devices are candidates is torch's list, which ``CUDA_VISIBLE_DEVICES``
already restricts and orders.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

#: Where lock files go unless the config's ``device_locks`` says otherwise: node-local, so
#: that every job on this machine (any checkout, any user) sees the same locks, and no
#: network filesystem's locking is relied on.
DEFAULT_LOCK_DIR = Path(tempfile.gettempdir(), "oscbo-device-locks")


@dataclass(frozen=True)
class DeviceClaim:
    """Where a job runs (a torch device string) and how that was decided, for its log and record."""

    device: str
    note: str


def cuda_devices() -> list[str]:
    """UUIDs of the CUDA devices this process sees, in torch's index order ([] without CUDA)."""
    import torch

    if not torch.cuda.is_available():
        return []
    return [str(torch.cuda.get_device_properties(i).uuid) for i in range(torch.cuda.device_count())]


def lock_path(lock_dir: str | Path, slot: str) -> Path:
    return Path(lock_dir, re.sub(r"[^A-Za-z0-9._-]", "_", slot) + ".lock")


def _try_lock(path: Path) -> int | None:
    """An open descriptor holding an exclusive lock on ``path``, or None if another process holds it."""
    import fcntl

    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)  # read-only: another user's lock file will do
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _lock_first_free(slots: Sequence[str], lock_dir: Path) -> tuple[int, int] | None:
    """(index, descriptor) of the first slot this process could lock, or None if all are held."""
    for index, slot in enumerate(slots):
        fd = _try_lock(lock_path(lock_dir, slot))
        if fd is not None:
            return index, fd
    return None


@contextmanager
def hold_free_slot(slots: Sequence[str], lock_dir: str | Path, poll_seconds: float = 2.0) -> Iterator[int]:
    """Claim the first free slot of ``slots`` and hold it until the block exits.

    Waits (polling) while every slot is held: a job never shares a device. That happens only
    when more jobs ask for devices than there are, e.g. ``--resources gpu=N`` above the
    number of GPUs, or GPUs seen by jobs that declared none (``use_gpu: false``).

    Args:
        slots: device identities (UUIDs), in torch index order; tests pass made-up ones.
        lock_dir: folder of the lock files, shared by the jobs that share the devices.
        poll_seconds: how often to look again while every slot is held.

    Yields:
        The index of the claimed slot in ``slots``.
    """
    if not slots:
        raise ValueError("no device slots to claim")
    lock_dir = Path(lock_dir)
    lock_dir.mkdir(parents=True, exist_ok=True)
    claimed = _lock_first_free(slots, lock_dir)
    if claimed is None:
        print(
            f"all {len(slots)} CUDA devices are claimed by other jobs (locks in {lock_dir}); waiting for "
            "one. Run GPU jobs with use_gpu: true and --resources gpu=N, N the number of GPUs.",
            file=sys.stderr,
            flush=True,
        )
    while claimed is None:
        time.sleep(poll_seconds)
        claimed = _lock_first_free(slots, lock_dir)
    index, fd = claimed
    try:
        yield index
    finally:
        os.close(fd)  # releases the lock (the kernel does the same if the process is killed)


@contextmanager
def claim(device: str = "auto", lock_dir: str | Path | None = None) -> Iterator[DeviceClaim]:
    """The device a BO job runs on, held for the duration of the block.

    ``cpu`` and an explicit ``cuda:i`` are used as given. ``auto`` and ``cuda`` claim a free
    CUDA device (:func:`hold_free_slot`) and make it torch's current device; with no CUDA,
    ``auto`` runs on the CPU and says so in the claim's note, ``cuda`` is an error.

    Args:
        device: the config's ``device``: ``auto``, ``cpu``, ``cuda`` or ``cuda:i``.
        lock_dir: folder of the lock files (default :data:`DEFAULT_LOCK_DIR`).
    """
    if device == "cpu" or device.startswith("cuda:"):
        yield DeviceClaim(device, f"{device}, as configured (no device claimed)")
        return
    if device not in ("auto", "cuda"):
        raise ValueError(f"device must be auto, cpu, cuda or cuda:<index>, got {device!r}")
    slots = cuda_devices()
    if not slots:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        why = "torch sees no CUDA device" + (f" (CUDA_VISIBLE_DEVICES={visible})" if visible is not None else "")
        if device == "cuda":
            raise RuntimeError(f"device 'cuda' is configured but {why}")
        yield DeviceClaim("cpu", f"cpu: {why}")
        return
    import torch

    if lock_dir is None:
        lock_dir = DEFAULT_LOCK_DIR
        if not lock_dir.is_dir():
            lock_dir.mkdir(parents=True, exist_ok=True)
            with suppress(PermissionError):  # another user's job made it first
                os.chmod(lock_dir, 0o1777)  # like /tmp: every user's jobs add their devices' locks
    with hold_free_slot(slots, lock_dir) as index:
        torch.cuda.set_device(index)
        yield DeviceClaim(
            f"cuda:{index}", f"cuda:{index} ({slots[index]}), claimed: {lock_path(lock_dir, slots[index])}"
        )


def resolve_device(name: str = "auto"):
    """``auto`` is CUDA when present, else CPU (a ``torch.device``)."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def limit_threads(threads: int) -> None:
    """Cap torch's and the BLAS/OpenMP pools: two jobs on two cores must not oversubscribe."""
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(threads)
    threadpool_limits(limits=threads)
