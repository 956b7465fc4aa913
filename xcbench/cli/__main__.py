"""``python -m xcbench.cli``: the ``xcbench`` command."""
import sys

from .main import main

sys.exit(main())
