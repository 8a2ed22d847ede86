"""Reports for people: the batch report (JSON, HTML), live progress, and the policy comparison of ``suture
eval``."""
