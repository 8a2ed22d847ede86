"""The API's routes, one module per resource: ``jobs``, ``service`` (stats, health), ``review`` (pages)."""
