"""The exit codes of ``xcbench``, in one place."""

#: exit codes of ``xcbench`` (documented in ``xcbench --help``)
EXIT_OK, EXIT_CELL_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_CODES = ("exit codes: 0 every run finished ok; 1 some run failed, timed out or was "
              "refused; 2 usage or input error (bad option, unknown name, data problem); "
              "130 interrupted (Ctrl-C or SIGTERM)")
