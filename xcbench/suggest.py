""""Did you mean" hints for misspelt names (methods, datasets, parameters)."""
from __future__ import annotations

import difflib


def close_matches(name: str, choices, n: int = 3, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` of ``choices`` that look like ``name`` (difflib ratio >= ``cutoff``),
    best first; case is ignored when comparing."""
    choices = [str(c) for c in choices]
    by_lower = {c.lower(): c for c in choices}
    found = difflib.get_close_matches(str(name).lower(), list(by_lower), n=n, cutoff=cutoff)
    return [by_lower[f] for f in found]


def did_you_mean(name: str, choices) -> str:
    """``" (did you mean 'x'?)"`` or ``" (did you mean 'x' or 'y'?)"`` for the choices
    close to ``name``; an empty string when none is."""
    found = close_matches(name, choices)
    if not found:
        return ""
    quoted = [repr(f) for f in found]
    shown = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f" (did you mean {shown}?)"
