"""Durations as people write them (``10m``, ``1h30m``, ``90s`` or plain seconds): one parser
for every time xcbench takes, on the command line (``xcbench.cli.common.duration``) and in
suite files (``timeout = "15m"``)."""
from __future__ import annotations

import re

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text) -> float:
    """Seconds of ``90``, ``90s``, ``30m``, ``1.5h`` or ``1h30m`` (a number alone is
    seconds); ValueError for anything else, zero or negative."""
    shown = str(text).strip()
    lowered = shown.lower()
    if re.fullmatch(r"\d+(\.\d+)?", lowered):
        seconds = float(lowered)
    else:
        parts = re.findall(r"(\d+(?:\.\d+)?)([smhd])", lowered)
        if not parts or "".join(n + u for n, u in parts) != lowered:
            raise ValueError(f"{shown!r} is not a duration: write e.g. 600, 90s, 30m, 2h or "
                             "1h30m")
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise ValueError(f"duration {shown!r} must be positive")
    return seconds
