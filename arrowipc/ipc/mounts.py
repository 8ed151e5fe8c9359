"""Whether a local path lives on a network file system (NFS, SMB, a FUSE mount such as sshfs or
gcsfuse, Lustre ...), from the mount table of Linux (/proc/self/mountinfo).

Opening a file there waits on the network: a dataset scan then opens its files on a pool of
threads, several at a time, where for files on a local disk it opens them in the consumer's
thread (there the work is Python that holds the GIL, which threads would only pass around).
Elsewhere than Linux, or when the table cannot be read, no path is taken to be on a network
file system. The table is read once per process; a path is matched to its mount by the device
it is on (one `stat`), and each device's answer is kept.
"""
from __future__ import annotations

import os
import threading

__all__ = ["NETWORK_FILE_SYSTEMS", "file_system_type", "on_network_file_system"]

# file system types whose reads go over a network (a "fuse." prefix: any FUSE file system, as
# most of them are network or object-store clients)
NETWORK_FILE_SYSTEMS = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "afs", "9p", "ceph", "glusterfs",
    "lustre", "gpfs", "beegfs", "ocfs2", "gfs2", "fuse", "fuseblk", "davfs", "sshfs"})

MOUNTINFO = "/proc/self/mountinfo"

_lock = threading.Lock()
_mounts: list[tuple[str, str]] | None = None     # (mount point, file system type), longest first
_devices: dict[str, str] = {}                   # "major:minor" of a mount -> its type
_by_device: dict[int, str | None] = {}          # st_dev -> type, as found for a path on it


def _unescaped(field: str) -> str:
    # the table writes a space, tab, newline and backslash in a path as octal escapes
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n") \
        .replace("\\134", "\\")


def _mount_table() -> list[tuple[str, str]]:
    global _mounts
    with _lock:
        if _mounts is None:
            found: list[tuple[str, str]] = []
            _devices.clear()
            try:
                with open(MOUNTINFO, encoding="utf-8", errors="replace") as f:
                    for line in f:
                        fields = line.split()
                        if "-" not in fields:
                            continue
                        dash = fields.index("-")
                        if len(fields) > dash + 1 and len(fields) > 4:
                            found.append((_unescaped(fields[4]), fields[dash + 1]))
                            _devices[fields[2]] = fields[dash + 1]
            except OSError:
                found = []
            found.sort(key=lambda m: len(m[0]), reverse=True)
            _mounts = found
            _by_device.clear()
        return _mounts


def file_system_type(path: str) -> str | None:
    """The type of the file system `path` is on, per the mount table: by the device the
    file is on (one `stat`; links followed), or else by the longest mount point holding the
    path made absolute, links resolved; None when it is not known."""
    table = _mount_table()
    try:
        device: int | None = os.stat(path).st_dev
    except (OSError, ValueError):
        device = None
    if device is not None:
        if device in _by_device:
            return _by_device[device]
        kind = _devices.get(f"{os.major(device)}:{os.minor(device)}")
        if kind is not None:
            _by_device[device] = kind
            return kind
    full = os.path.realpath(path)
    found = None
    for point, kind in table:
        if full == point or full.startswith(point.rstrip("/") + "/"):
            found = kind
            break
    if device is not None:
        _by_device[device] = found      # the same device, the same file system
    return found


def on_network_file_system(path: str) -> bool:
    """Whether `path` is on a network file system (NETWORK_FILE_SYSTEMS, or any FUSE one)."""
    kind = file_system_type(path)
    return kind is not None and (kind in NETWORK_FILE_SYSTEMS or kind.startswith("fuse."))
