"""Running a plan: cells (``plan``), each measured in an isolated child (``cell``,
``isolation``, ``measure``, ``memory``), run by an executor (``executors``,
``dask_executor``, ``cell_job``), with progress output (``progress``); ``runner`` ties them
together and appends the records to the store. Nothing is imported here, so importing
``xcbench.run.fork_safety`` first stays cheap."""
