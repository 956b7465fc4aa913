"""The ``xcbench`` command line: a thin layer over the Python API.

``main`` parses the arguments and runs one subcommand; each subcommand lives in its own
module (``run``, ``report``, ``plot``, ``listing``, ``describe``, ``check``; ``export`` and
``compare`` beside the store they read), the exit codes in ``exit_codes``.
"""
from .exit_codes import (EXIT_CELL_FAILED, EXIT_CODES, EXIT_INTERRUPTED, EXIT_NOT_STORED,
                         EXIT_OK, EXIT_USAGE)
from .main import build_parser, main

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_CELL_FAILED", "EXIT_USAGE",
           "EXIT_NOT_STORED", "EXIT_INTERRUPTED", "EXIT_CODES"]
