"""Constraints for a method's ``_parameter_constraints`` (checked by ``_validate_params``
in ``fit``, and by ``xcbench run`` before any cell runs): scikit-learn's ``Interval`` and
``StrOptions``, importable from here so that a plugin does not import scikit-learn's
private ``sklearn.utils._param_validation`` itself (if scikit-learn moves them, only this
module changes).

``Interval(Real, 0, None, closed="neither")`` is a float > 0, ``Interval(Integral, 1, None,
closed="left")`` an int >= 1, ``StrOptions({"exact", "beam"})`` one of those strings.
"""
from sklearn.utils._param_validation import Interval, StrOptions

__all__ = ["Interval", "StrOptions"]
