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


@pytest.fixture
def table(tmp_path, monkeypatch):
    path = tmp_path / "mountinfo"
    path.write_text(TABLE)
    monkeypatch.setattr(mounts, "MOUNTINFO", str(path))
    monkeypatch.setattr(mounts, "_mounts", None)
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
    try:
        assert mounts.file_system_type("/mnt/x") is None
        assert not mounts.on_network_file_system("/mnt/x")
    finally:
        mounts._mounts = None
