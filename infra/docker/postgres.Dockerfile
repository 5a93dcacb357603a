# Postgres with pgvector and Apache AGE, from the PostgreSQL project's Debian packages
# (the official image already carries their apt source). Production runs Postgres ≥ 16
# (architecture §2); the embedded stack runs 18 with the same two extensions.
ARG PG_MAJOR=17
FROM postgres:${PG_MAJOR}-bookworm
ARG PG_MAJOR
RUN apt-get update \
 && apt-get install -y --no-install-recommends "postgresql-${PG_MAJOR}-pgvector" "postgresql-${PG_MAJOR}-age" \
 && rm -rf /var/lib/apt/lists/*
# Non-superusers cannot LOAD 'age': every session gets it preloaded (db_bootstrap also sets
# this with ALTER SYSTEM on clusters it did not create).
CMD ["postgres", "-c", "session_preload_libraries=age", "-c", "max_connections=200", "-c", "shared_buffers=512MB"]
HEALTHCHECK --interval=5s --timeout=3s --retries=20 CMD pg_isready -U postgres -d postgres
