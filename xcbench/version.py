"""The xcbench version (a leaf module, so every layer can read it without importing the
public API in ``xcbench/__init__.py``)."""
__version__ = "0.1.0"
