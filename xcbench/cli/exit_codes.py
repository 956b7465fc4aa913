"""The exit codes of ``xcbench``, in one place."""

#: exit codes of ``xcbench`` (documented in ``xcbench --help``)
EXIT_OK, EXIT_CELL_FAILED, EXIT_USAGE, EXIT_NOT_STORED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_CODES = ("exit codes: 0 every run finished ok; 1 some run failed, timed out or was "
              "refused; 2 usage or input error (bad option, unknown name, data problem); "
              "3 a result could not be stored (disk full or write error; nothing half-written, "
              "--resume re-runs it); 130 interrupted (Ctrl-C or SIGTERM)")
