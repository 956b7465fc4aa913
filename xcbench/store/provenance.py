"""Which code made a record: the xcbench commit, whether the checkout had uncommitted
changes (and a digest of them), and the version of each plugin's distribution.

The runner stores this as the record's ``code`` section and puts it in the record's key,
so ``--resume`` reuses only records made by the same code; :func:`why_stale` says why a
stored record of a planned measurement was not reused.
"""
from __future__ import annotations

import hashlib
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path

#: the parts of a checkout that are code (results and reports written into the checkout,
#: e.g. by a report's suite, do not make it "dirty")
CODE_PATHS = ("xcbench", "plugins", "pyproject.toml")
ENTRY_POINT_GROUP = "xcbench"


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None


def _checkout_root() -> Path | None:
    """The git checkout xcbench is imported from (None for an installed copy)."""
    package = Path(__file__).resolve().parents[1]  # xcbench/, this file is in xcbench/store
    top = _git(package, "rev-parse", "--show-toplevel")
    if not top:
        return None
    root = Path(top.strip())
    return root if (root / "xcbench" / "__init__.py").resolve().parent == package else None


def git_state(root: Path | None = None) -> dict:
    """``{"commit", "dirty", "changes"}`` of the xcbench checkout: the HEAD commit, whether
    the code (``CODE_PATHS``) has uncommitted changes or untracked files, and a 12-hex digest
    of those changes (None when clean); all None outside a git checkout."""
    root = root or _checkout_root()
    commit = _git(root, "rev-parse", "HEAD") if root else None
    if not commit:
        return {"commit": None, "dirty": None, "changes": None}
    status = _git(root, "status", "--porcelain", "--untracked-files=all", "--", *CODE_PATHS)
    if status is None:
        return {"commit": commit.strip(), "dirty": None, "changes": None}
    if not status.strip():
        return {"commit": commit.strip(), "dirty": False, "changes": None}
    digest = hashlib.sha256((_git(root, "diff", "HEAD", "--", *CODE_PATHS) or "").encode())
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "--", *CODE_PATHS)
    for name in sorted((untracked or "").splitlines()):
        digest.update(name.encode())
        try:
            digest.update((root / name).read_bytes())
        except OSError:
            pass
    return {"commit": commit.strip(), "dirty": True, "changes": digest.hexdigest()[:12]}


def plugin_distributions() -> dict[str, str]:
    """{distribution name: version} of every distribution registering an xcbench plugin
    (entry-point group ``xcbench``); xcbench's built-in plugins are in ``xcbench``."""
    out = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(ep, "dist", None)
        if dist is not None:
            out[dist.name] = dist.version
    return dict(sorted(out.items()))


def plugin_distribution(plugin: str) -> tuple[str, str] | None:
    """(distribution name, version) of the plugin registered under entry-point name
    ``plugin``, or None (a plugin registered in-process)."""
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == plugin and getattr(ep, "dist", None) is not None:
            return ep.dist.name, ep.dist.version
    return None


@lru_cache(maxsize=1)
def _cached_git_state() -> tuple:
    return tuple(git_state().items())


def code_state(fresh: bool = False) -> dict:
    """The record's ``code`` section for this process: xcbench version, git state and
    plugin distributions. Computed once per process unless ``fresh``."""
    from ..version import __version__

    if fresh:
        _cached_git_state.cache_clear()
    return {"xcbench": __version__, **dict(_cached_git_state()),
            "plugins": plugin_distributions()}


def key_code(code: dict, plugin: str | None) -> dict:
    """The part of ``code`` that goes into the key of a record of a method from ``plugin``:
    version, commit, uncommitted-changes digest and that plugin's distribution version (so
    installing an unrelated plugin does not invalidate every record)."""
    dist = plugin_distribution(plugin) if plugin else None
    return {"xcbench": code.get("xcbench"), "commit": code.get("commit"),
            "dirty": code.get("dirty"), "changes": code.get("changes"),
            "plugin": list(dist) if dist else None}


def record_code(record: dict) -> dict:
    """The code behind a stored record: its ``code`` section, or for records older than it
    what the environment says (version and commit; ``dirty`` unknown)."""
    if record.get("code"):
        return record["code"]
    env = record.get("environment") or {}
    return {"xcbench": env.get("xcbench"), "commit": env.get("git_commit"), "dirty": None,
            "changes": None, "plugins": {}}


def short_commit(code: dict) -> str:
    """``abc1234``, ``abc1234+dirty`` (uncommitted changes), or ``unknown commit``."""
    commit = (code.get("commit") or "")[:7]
    if not commit:
        return "unknown commit"
    return commit + ("+dirty" if code.get("dirty") else "")


def why_stale(record: dict, code: dict, plugin: str | None = None) -> str:
    """Why ``record`` (a stored measurement of a planned cell) was not made by ``code``:
    the first difference found, as a short phrase."""
    old = record_code(record)
    if not record.get("code"):
        return f"made at {short_commit(old)} before records kept their code state"
    if old.get("commit") != code.get("commit"):
        return f"made at commit {short_commit(old)} (now {short_commit(code)})"
    if old.get("dirty") != code.get("dirty") or old.get("changes") != code.get("changes"):
        return (f"made with other uncommitted changes at {short_commit(old)} (now "
                f"{short_commit(code)})")
    if old.get("xcbench") != code.get("xcbench"):
        return f"made by xcbench {old.get('xcbench')} (now {code.get('xcbench')})"
    dist = plugin_distribution(plugin) if plugin else None
    if dist and (old.get("plugins") or {}).get(dist[0]) != dist[1]:
        return (f"made with {dist[0]} {(old.get('plugins') or {}).get(dist[0])} "
                f"(now {dist[1]})")
    return "made by other code"

