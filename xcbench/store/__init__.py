"""The results store: the record schema and the JSON-lines file (``results``), and what
reads it back as rows (``export``) or compares two stores (``compare``)."""
