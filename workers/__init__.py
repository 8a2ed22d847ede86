"""Everything that touches the outside: Celery app, model client, simulator, Redis store, Sentry, CLI."""
