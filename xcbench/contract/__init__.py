"""The method contract: what a plugin implements and how it is checked.

``method`` (the ``Method`` base class, ``MethodSpec`` and the input/output helpers a method
uses), ``method_params`` (parameter values, defaults and constraints), ``hookspecs`` and
``plugins`` (the plugin manager and registry), ``validate`` (checks of a method's outputs),
``conformance`` and ``state_diff`` (the conformance checks that ``xcbench.testing`` runs).
"""
