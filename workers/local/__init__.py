"""The embedded local stack: a private Redis, workers, the simulator and Flower, and how commands stop.

``stack`` (``LocalStack``) starts and stops it from ``redis_server``, ``celery_processes`` and
``child_process``; ``discovery`` lets other shells of the same user find a running ``suture up``;
``shutdown`` is how every command stops on Ctrl-C or SIGTERM; ``errors`` holds the package's errors.
"""
