"""The Celery runtime: the app and its queues, the thin task adapters, events, watchdog clock, Sentry,
kombu fixes."""
