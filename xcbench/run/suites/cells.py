"""A parsed suite's cells (checked before any work), and how they match stored records."""
from __future__ import annotations

from ...store.identity import UNSTATED, measurement_identity, newness, record_identity
from .spec import Suite, SuiteError


def suite_cells(suite: Suite) -> list[tuple]:
    """Every (run, cell) of ``suite``, checked before any work: dataset names (registered,
    or ``file:`` names whose files exist), method, dataset-independent parameter names and
    values (``validate_cells``), names under ``query`` that are not query parameters, and a
    measurement planned twice under the same measuring options."""
    from ..plan import validate_cells
    from ...contract.plugins import get_method_spec
    from ...data import get_dataset_spec
    from ...data.fetch import DataError
    from ...store.identity import KEYED_OPTIONS

    planned, seen = [], {}
    for run in suite.runs:
        for dataset in run.datasets:
            try:
                get_dataset_spec(dataset)
            except KeyError as exc:
                raise SuiteError(f"{run.label}: {exc.args[0] if exc.args else exc}") from None
            except DataError as exc:
                raise SuiteError(f"{run.label}: {exc}") from None
        try:
            cells = run.cells()
            validate_cells(cells)
        except KeyError as exc:
            raise SuiteError(f"{run.label}: {exc.args[0] if exc.args else exc}") from None
        except ValueError as exc:
            raise SuiteError(f"{run.label}: {exc}") from None
        for method, names in run.query.items():
            spec = get_method_spec(method)
            build = [p for n in names for p in n.split("+") if p not in spec.query_params]
            if build:
                raise SuiteError(f"{run.label}: query.{method} names build parameter(s) "
                                 f"{', '.join(build)}; query parameters of {method}: "
                                 f"{', '.join(spec.query_params) or '(none)'} (move the "
                                 "others to params)")
        for cell in cells:
            for params, ident in zip(cell.run_params(), _cell_identities(run, cell)):
                if ident in seen:
                    raise SuiteError(f"{run.label}: {cell.method} {params} on {cell.dataset} "
                                     f"seed {cell.seed} is planned in {seen[ident]} already "
                                     f"with the same {', '.join(KEYED_OPTIONS)}")
                seen[ident] = run.label
            planned.append((run, cell))
    return planned


def _cell_identities(run, cell) -> list[tuple]:
    """``measurement_identity`` of each measurement of one planned cell of ``run``."""
    keyed = run.run_options().keyed()
    return [measurement_identity(cell.method, p, cell.dataset, cell.seed, keyed)
            for p in cell.run_params()]


def _same_params(method: str, planned: str, stored: str) -> bool:
    """Whether planned params (JSON) match a record's: equal, once the planned query
    parameters the record does not have are left out (a query parameter the method gained
    after the record was made, e.g. a new decoder's beam width, measured the same way)."""
    import json

    from ...contract.plugins import get_method_spec

    if planned == stored:
        return True
    planned, stored = json.loads(planned), json.loads(stored)
    query = get_method_spec(method).query_params
    return {k: v for k, v in planned.items() if k in stored or k not in query} == stored


def _planned_identities(suite: Suite) -> list[tuple]:
    """``measurement_identity`` of every measurement ``suite`` plans."""
    return [ident for run, cell in suite_cells(suite) for ident in _cell_identities(run, cell)]


def _plan_matches(plan: tuple, rec: tuple) -> bool:
    """Whether a record's identity serves a planned one: an option a record does not state
    (older records) matches any value, and so does a query parameter it does not have."""
    return plan[0] == rec[0] and plan[2:4] == rec[2:4] \
        and _same_params(plan[0], plan[1], rec[1]) and all(
            r[1] == UNSTATED or p[1] == r[1] for p, r in zip(plan[4], rec[4]))


def plan_vs_records(suite: Suite, records: list[dict]) -> tuple[list, list]:
    """(planned measurements no record holds, records the suite does not plan), each a list
    of ``measurement_identity`` tuples (matched by ``_plan_matches``)."""
    planned = _planned_identities(suite)
    stored = list(dict.fromkeys(record_identity(r) for r in records))
    missing = [p for p in planned if not any(_plan_matches(p, r) for r in stored)]
    extra = [r for r in stored if not any(_plan_matches(p, r) for p in planned)]
    return missing, extra


def stored_cell_seconds(suite: Suite, records: list[dict]) -> tuple[dict, int]:
    """What the suite's cells took when last measured: ({dataset: seconds}, cells with no
    record). Each planned cell counts once, with the wall time of the newest record that
    serves one of its measurements (the measurements of one fit share its wall time), made
    by any code on any machine."""
    stored = [(newness(r, i), record_identity(r), r) for i, r in enumerate(records)]
    seconds, without = {}, 0
    for run, cell in suite_cells(suite):
        plans = _cell_identities(run, cell)
        served = [(rank, r) for rank, ident, r in stored
                  if any(_plan_matches(plan, ident) for plan in plans)]
        if not served:
            without += 1
            continue
        newest = max(served, key=lambda pair: pair[0])[1]
        seconds[cell.dataset] = seconds.get(cell.dataset, 0.0) + (newest.get("wall_seconds")
                                                                   or 0.0)
    return seconds, without


def planned_test(suite: Suite):
    """A function of a record: does ``suite`` plan its measurement (``_plan_matches``)?"""
    planned = _planned_identities(suite)
    return lambda record: any(_plan_matches(p, record_identity(record)) for p in planned)


def newest_per_planned(suite: Suite, records: list[dict]) -> list[dict]:
    """``records`` (in order) without those that a newer record of the same planned
    measurement supersedes. An older record can serve a planned measurement that a newer
    one serves exactly (it lacks a query parameter or the run options, which match any
    value), so after a suite re-ran a cell both would otherwise stay in its report, from two
    commits. Records the suite does not plan are kept."""
    planned = _planned_identities(suite)
    served, newest = [], {}
    for index, record in enumerate(records):
        rank = newness(record, index)
        ident = record_identity(record)
        plans = [j for j, plan in enumerate(planned) if _plan_matches(plan, ident)]
        served.append((plans, rank))
        for j in plans:
            newest[j] = max(rank, newest.get(j, rank))
    return [record for record, (plans, rank) in zip(records, served)
            if not plans or any(newest[j] == rank for j in plans)]
