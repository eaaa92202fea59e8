"""Renderers over the result model: JSON/YAML documents and the terminal views."""
