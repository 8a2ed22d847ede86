"""The generation work: retry policy, the pure engine deciding each next step, prompts, thin Celery tasks."""
