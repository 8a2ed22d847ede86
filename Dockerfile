# Minimal image for docker-compose.yml: the suture package and its CLI, run as a non-root user.
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
# The versions CI tested (requirements/constraints.txt), not whatever the index holds on build day.
COPY requirements ./requirements
COPY config ./config
COPY contracts ./contracts
COPY tasks ./tasks
COPY workers ./workers
# suture/ is the package root: the public API and links to the four folders above (one import name).
COPY suture ./suture
RUN pip install --no-cache-dir -c requirements/constraints.txt ".[all]" && useradd --create-home suture

USER suture
CMD ["suture", "worker"]
