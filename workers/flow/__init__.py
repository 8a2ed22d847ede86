"""The job flow behind the Celery tasks, without Celery: attempt, slice, merge, delivery, poison cap."""
