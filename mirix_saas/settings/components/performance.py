"""Request timing, the query-embedding cache and the CPU policy of API and worker processes
(ADR 0052, ADR 0053)."""

from __future__ import annotations

from mirix_saas.settings.env import env_bool, env_int, env_str

# "on-request": a request carrying `X-Server-Timing: 1` gets a `Server-Timing` header with
# its phases; "always": every request does; "off": none does.
SERVER_TIMING = env_str("MIRIX_SERVER_TIMING", "on-request")
if SERVER_TIMING not in {"off", "on-request", "always"}:
    raise ValueError("MIRIX_SERVER_TIMING must be off, on-request or always")

# Query embeddings kept per process (per organization, model and text); 0 turns the cache off.
QUERY_EMBEDDING_CACHE_SIZE = env_int("MIRIX_QUERY_EMBEDDING_CACHE_SIZE", 1024)

# Processes and threads (ADR 0052). An API process's torch threads, never more than its share
# of the cores (cores // API processes; 0 asks for all of that share): one by default, as a
# query's embedding gains little from more and loses much when another process takes a core;
# a worker process's, and the niceness it lowers itself to (and its session's group, ADR
# 0092), so indexing yields the cores: the lowest priority, ADR 0094.
API_TORCH_THREADS = env_int("MIRIX_API_TORCH_THREADS", 1)
WORKER_TORCH_THREADS = env_int("MIRIX_WORKER_TORCH_THREADS", 1)
WORKER_NICE = env_int("MIRIX_WORKER_NICE", 19)
# How long a worker's batch of write completion waits, at most, while other processes wait for
# a core (ADR 0106): niceness cannot lower the database work the batch asks of Postgres. 0: never.
WORKER_YIELD_MS = env_int("MIRIX_WORKER_YIELD_MS", 3000)
# Load and run the local models once before a process takes traffic.
WARM_START = env_bool("MIRIX_WARM_START", True)
# A Celery pool process has this long to warm up before the pool gives up on it.
CELERY_WORKER_PROC_ALIVE_TIMEOUT = env_int("MIRIX_WORKER_START_SECONDS", 180)
