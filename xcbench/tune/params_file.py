"""Parameter files: the ``best-METHOD.json`` a tuning run writes, read back by
``xcbench run --params-file FILE`` as fixed parameters of that method."""
from __future__ import annotations

import json
from pathlib import Path


def read_params_file(path) -> tuple[str, dict]:
    """(method, params) of a params file: a JSON object with ``method`` (a name) and
    ``params`` (name -> one value); ValueError naming the file and the problem."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ValueError(f"--params-file {path}: cannot read it ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"--params-file {path}: not JSON ({exc})") from None
    if not (isinstance(data, dict) and isinstance(data.get("method"), str)
            and isinstance(data.get("params"), dict)):
        raise ValueError(f"--params-file {path}: expected a JSON object with \"method\" (a "
                         "name) and \"params\" (name -> value), as `xcbench tune` writes")
    return data["method"], data["params"]


def merge_params_files(paths, overrides: dict) -> dict:
    """``overrides`` (``--param`` values, method -> {name: [values]}) with each file's
    parameters added as single values; a name ``--param`` sets keeps its values, and two
    files for one method are refused."""
    merged = {m: dict(p) for m, p in overrides.items()}
    seen: dict = {}
    for path in paths or []:
        method, params = read_params_file(path)
        if method in seen:
            raise ValueError(f"--params-file {path}: {method!r} already has a params file "
                             f"({seen[method]})")
        seen[method] = path
        given = merged.setdefault(method, {})
        names_given = {part for key in given for part in key.split("+")}
        for name, value in params.items():
            if name not in names_given:
                given[name] = [value]
    return merged
