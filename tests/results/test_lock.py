"""Taking a run folder's lock while another driver removes the folder it gave up on."""

from __future__ import annotations

import os

from tauray.results.tables import lock as lock_mod
from tauray.results.tables.lock import RunLock


def test_a_lock_file_removed_between_open_and_flock_is_not_trusted(tmp_path, monkeypatch):
    """The other driver unlinked the file we opened (and then released it): our flock on the
    removed file guards nothing, so the lock is taken again on the file at the path."""
    out = tmp_path / "run"
    real_stat, real_open = os.stat, os.open
    seen = {"stat": 0, "open": 0}

    def stat_of_a_replaced_file(path, *a, **kw):
        st = real_stat(path, *a, **kw)
        if str(path).endswith(lock_mod.LOCK_NAME) and seen["stat"] == 0:
            seen["stat"] += 1
            return os.stat_result((st.st_mode, st.st_ino + 1, *st[2:10]))
        return st

    def open_after_the_folder_went(path, *a, **kw):
        if str(path).endswith(lock_mod.LOCK_NAME) and seen["open"] == 0:
            seen["open"] += 1
            raise FileNotFoundError(path)
        return real_open(path, *a, **kw)

    monkeypatch.setattr(lock_mod.os, "stat", stat_of_a_replaced_file)
    monkeypatch.setattr(lock_mod.os, "open", open_after_the_folder_went)
    held = RunLock(out)
    try:
        fd = lock_mod._held[held._key][0]
        assert seen == {"stat": 1, "open": 1}  # both races were met and taken again
        assert os.fstat(fd).st_ino == real_stat(out / lock_mod.LOCK_NAME).st_ino
    finally:
        held.release()
