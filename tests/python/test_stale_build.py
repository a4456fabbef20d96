"""The session guard of conftest.py: a build of this checkout at another commit stops the run
before any test (the run.sh tests would relink it while other workers execute it)."""

import subprocess

from conftest import ROOT, stale_build_reason


def fake_build(tmp_path, revision, home=ROOT):
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "version.h").write_text(f'#define GPUBENCH_GIT_REVISION "{revision}"\n')
    (tmp_path / "CMakeCache.txt").write_text(f"CMAKE_HOME_DIRECTORY:INTERNAL={home}\n")
    (tmp_path / "gpubench").write_text("")
    return tmp_path / "gpubench"


def head():
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def now():
    """The revision a build of the checkout as it is would record (cmake/WriteVersion.cmake)."""
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, check=True).stdout.strip()
    return head()[:12] + ("-dirty" if dirty else "")


def test_a_build_of_another_commit_is_named_with_both_revisions(tmp_path):
    other = "0" * 12 if not head().startswith("0" * 12) else "1" * 12
    reason = stale_build_reason(fake_build(tmp_path, other), ROOT)
    assert f"built at git {other}, the checkout is at {now()}" in reason


def test_a_build_of_this_commit_with_other_changes_is_stale_too(tmp_path):
    """A clean build with tracked changes since (or the reverse) is relinked by run.sh as well."""
    other_state = head()[:12] if now().endswith("-dirty") else head()[:12] + "-dirty"
    reason = stale_build_reason(fake_build(tmp_path, other_state), ROOT)
    assert f"built at git {other_state}, the checkout is at {now()}" in reason


def test_a_build_of_this_checkout_or_of_another_tree_passes(tmp_path):
    (tmp_path / "a").mkdir()
    assert stale_build_reason(fake_build(tmp_path / "a", now()), ROOT) == ""
    (tmp_path / "b").mkdir()
    assert stale_build_reason(fake_build(tmp_path / "b", "0" * 12, home="/elsewhere"), ROOT) == ""
