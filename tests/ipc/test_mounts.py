"""ipc/mounts.py: which local paths are on a network file system, from a mount table."""
import pytest

from arrowipc.ipc import mounts

TABLE = """\
22 1 0:21 / / rw,relatime - ext4 /dev/vda rw
30 22 0:40 / /mnt rw,relatime - nfs4 server:/export rw,vers=4.2
31 30 8:1 / /mnt/local rw,relatime - ext4 /dev/sdb1 rw
32 22 0:41 / /home/me/remote\\040box rw,nosuid shared:7 - fuse.sshfs me@box: rw
33 22 0:42 / /data rw,relatime master:3 - cifs //host/share rw
"""


def _fresh_device_caches(monkeypatch):
    # the kinds found by device under a test's table must not outlive it: the real table,
    # put back by monkeypatch, comes back with the real caches
    monkeypatch.setattr(mounts, "_devices", {})
    monkeypatch.setattr(mounts, "_by_device", {})


@pytest.fixture
def table(tmp_path, monkeypatch):
    path = tmp_path / "mountinfo"
    path.write_text(TABLE)
    monkeypatch.setattr(mounts, "MOUNTINFO", str(path))
    monkeypatch.setattr(mounts, "_mounts", None)
    _fresh_device_caches(monkeypatch)
    monkeypatch.setattr(mounts.os.path, "realpath", lambda p: p)
    yield
    mounts._mounts = None


@pytest.mark.parametrize("path, kind, network", [
    ("/mnt/sales/part-0.arrow", "nfs4", True),
    ("/mnt/local/part-0.arrow", "ext4", False),          # the longest mount point wins
    ("/mntx/part-0.arrow", "ext4", False),               # a prefix of a name is not a parent
    ("/mnt", "nfs4", True),
    ("/home/me/remote box/f.arrow", "fuse.sshfs", True),   # \040 in the table is a space
    ("/data/f.arrow", "cifs", True),
    ("/tmp/f.arrow", "ext4", False),
])
def test_a_path_takes_the_file_system_of_its_longest_mount_point(table, path, kind, network):
    assert mounts.file_system_type(path) == kind
    assert mounts.on_network_file_system(path) is network


def test_without_a_mount_table_no_path_is_on_a_network(tmp_path, monkeypatch):
    monkeypatch.setattr(mounts, "MOUNTINFO", str(tmp_path / "missing"))
    monkeypatch.setattr(mounts, "_mounts", None)
    _fresh_device_caches(monkeypatch)
    try:
        assert mounts.file_system_type("/mnt/x") is None
        assert not mounts.on_network_file_system("/mnt/x")
    finally:
        mounts._mounts = None


def test_a_file_takes_the_file_system_of_its_device(tmp_path, monkeypatch):
    """A file that exists is matched by the device it is on (the table's major:minor), with no
    path resolved; a second file on that device is answered from the device's kept answer."""
    import os
    files = [tmp_path / "a.arrow", tmp_path / "b.arrow"]
    for f in files:
        f.write_bytes(b"")
    device = os.stat(files[0]).st_dev
    table = tmp_path / "mountinfo"
    table.write_text(f"40 1 {os.major(device)}:{os.minor(device)} / /somewhere/else rw - "
                     "nfs4 server:/export rw\n")
    monkeypatch.setattr(mounts, "MOUNTINFO", str(table))
    monkeypatch.setattr(mounts, "_mounts", None)
    _fresh_device_caches(monkeypatch)

    def no_resolving(path):
        raise AssertionError("a path was resolved")
    monkeypatch.setattr(mounts.os.path, "realpath", no_resolving)
    try:
        assert [mounts.file_system_type(str(f)) for f in files] == ["nfs4", "nfs4"]
        assert mounts.on_network_file_system(str(files[1]))
    finally:
        mounts._mounts = None


def test_a_device_missing_from_the_table_goes_by_mount_point(tmp_path, monkeypatch):
    """Some file systems (btrfs subvolumes, overlays) report a device the table does not
    list: the file's resolved path is matched to mount points then."""
    import os
    path = tmp_path / "a.arrow"
    path.write_bytes(b"")
    table = tmp_path / "mountinfo"
    table.write_text(f"40 1 999:999 / {os.path.realpath(tmp_path)} rw - cifs //host/share rw\n")
    monkeypatch.setattr(mounts, "MOUNTINFO", str(table))
    monkeypatch.setattr(mounts, "_mounts", None)
    _fresh_device_caches(monkeypatch)
    try:
        assert mounts.file_system_type(str(path)) == "cifs"
        assert mounts.on_network_file_system(str(path))
    finally:
        mounts._mounts = None
