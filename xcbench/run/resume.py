"""What ``--resume`` may reuse: stored records made by the same code (their key matches),
less the statuses ``--retry`` asks to run again; and why the others are run again."""
from __future__ import annotations

from collections import Counter

from ..store.identity import measurement_identity, record_identity
from ..store.provenance import why_stale

#: statuses ``--retry`` accepts; ``failed`` stands for all of them
RETRY_STATUSES = ("error", "timeout", "refused")


def parse_retry(text: str | None) -> tuple[str, ...]:
    """``"failed"`` -> every non-ok status; ``"error,refused"`` -> those; ValueError for
    another word."""
    if not text:
        return ()
    out = []
    for word in (w.strip() for w in text.split(",") if w.strip()):
        if word == "failed":
            out += RETRY_STATUSES
        elif word in RETRY_STATUSES:
            out.append(word)
        else:
            raise ValueError(f"--retry {text!r}: {word!r} is not one of failed, "
                             f"{', '.join(RETRY_STATUSES)}")
    return tuple(dict.fromkeys(out))


def newest_by_key(records) -> dict:
    """key -> its newest record (``records`` in file order: the last of a key wins)."""
    return {record["key"]: record for record in records}


def reusable(newest: dict, retry, isolated: bool = True) -> dict:
    """The records of ``newest`` (key -> newest record) whose status ``--retry`` does not
    run again, less, for an ``isolated`` run, those made ``--in-process``. Filter after
    taking the newest: an older record of another status must not stand in for a retried
    one."""
    return {k: r for k, r in newest.items()
            if r["status"] not in retry and not (isolated and made_in_process(r))}


def made_in_process(record: dict) -> bool:
    """Whether ``record`` was measured ``--in-process`` (no isolation: an isolated run does
    not reuse it)."""
    return bool((record.get("run_options") or {}).get("in_process"))


class ResumeState:
    """The stored records of a results folder as ``--resume`` sees them.

    ``stored`` maps each key to its newest record, without those whose status is in
    ``retry`` and, for an ``isolated`` run, those made ``--in-process``; :meth:`reuse`
    returns the stored records of a cell's keys and notes, for each key it cannot serve, why
    (a retried status, made in-process, or a record of the same measurement made by other
    code or on other data). :meth:`usable` judges the records read again when a cell is
    claimed: a retried record stored by another run since this one started counts as done
    (that run retried it)."""

    def __init__(self, records: list[dict], code: dict, retry=(), isolated: bool = True):
        newest = newest_by_key(records)
        self.code = code
        self.retry = tuple(retry)
        self.isolated = isolated
        self.stored = reusable(newest, self.retry, isolated)
        self._seen = Counter(record["key"] for record in records)
        self._retried = {k: r["status"] for k, r in newest.items() if r["status"] in self.retry}
        self._in_process = {k for k, r in newest.items()
                            if k not in self._retried and k not in self.stored}
        self._same_measurement: dict[tuple, dict] = {}
        for record in newest.values():
            self._same_measurement[record_identity(record)] = record
            if not record.get("run_options"):  # older records: options not recorded
                self._same_measurement[record_identity(record)[:4]] = record
        self.retried: Counter = Counter()
        self.stale: Counter = Counter()
        self.reused = 0

    def reuse(self, cell, keys: list[str], checksum: str, keyed_options: dict,
              plugin: str | None) -> list[dict]:
        """The stored records of ``keys`` (one per measurement of ``cell``); the others are
        counted under ``retried`` or ``stale`` with their reason."""
        found = []
        for key, params in zip(keys, cell.run_params()):
            if key in self.stored:
                found.append(self.stored[key])
                continue
            if key in self._retried:
                self.retried[self._retried[key]] += 1
                continue
            if key in self._in_process:
                self.stale["made --in-process (an isolated run measures it again)"] += 1
                continue
            ident = measurement_identity(cell.method, params, cell.dataset, cell.seed,
                                         keyed_options)
            old = self._same_measurement.get(ident) or self._same_measurement.get(ident[:4])
            if old is None:
                continue
            if old.get("dataset_checksum") != checksum:
                self.stale[f"made on other data (dataset checksum "
                           f"{old.get('dataset_checksum')}, now {checksum})"] += 1
            else:
                self.stale[why_stale(old, self.code, plugin)] += 1
        self.reused += len(found)
        return found

    def usable(self, records) -> dict:
        """key -> newest record of ``records`` (the store read again, in file order) that
        this run need not measure: ``stored``'s rule, except that a record of a retried
        status stored after this run started (by a concurrent run) is done."""
        records = list(records)
        newest = newest_by_key(records)
        count = Counter(record["key"] for record in records)
        retry = {k: () if count[k] > self._seen[k] else self.retry for k in newest}
        return {k: r for k, r in newest.items()
                if reusable({k: r}, retry[k], self.isolated)}

    def summary(self) -> str | None:
        """One paragraph: how many records were reused, how many re-run and why."""
        if not (self.reused or self.stale or self.retried):
            return None
        parts = [f"--resume: reused {self.reused} stored record(s) made by this code"]
        if self.stale:
            parts.append(f"re-running {sum(self.stale.values())} whose stored record was made "
                         "by other code or data: " + "; ".join(
                             f"{n} {reason}" for reason, n in self.stale.most_common()))
        if self.retried:
            parts.append("re-running " + ", ".join(
                f"{n} {status}" for status, n in sorted(self.retried.items()))
                + f" (--retry {','.join(self.retry)})")
        return "; ".join(parts)
