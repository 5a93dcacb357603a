"""Object storage (§2): the local filesystem by default, any S3 endpoint when configured.

S3 credentials are not settings: boto3 reads ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``
(or an instance role) through its own credential chain.
"""

from __future__ import annotations

from pathlib import Path

from mirix_saas.settings.components.django import BASE_DIR
from mirix_saas.settings.env import MissingSetting, env_int, env_optional, env_str

OBJECT_STORAGE = env_str("MIRIX_OBJECT_STORAGE", "filesystem")
if OBJECT_STORAGE not in {"filesystem", "s3"}:
    raise MissingSetting(f"MIRIX_OBJECT_STORAGE must be 'filesystem' or 's3', got {OBJECT_STORAGE!r}")

# The same var directory as the embedded stack (infra/embedded/environment.py).
OBJECT_STORAGE_ROOT = Path(env_optional("MIRIX_VAR_DIR") or BASE_DIR / "var") / "objects"

S3_BUCKET = env_str("MIRIX_S3_BUCKET") if OBJECT_STORAGE == "s3" else env_optional("MIRIX_S3_BUCKET")
S3_ENDPOINT_URL = env_optional("MIRIX_S3_ENDPOINT_URL")
S3_REGION = env_str("MIRIX_S3_REGION", "us-east-1")
S3_CONNECT_TIMEOUT_SECONDS = env_int("MIRIX_S3_CONNECT_TIMEOUT_SECONDS", 5)
S3_READ_TIMEOUT_SECONDS = env_int("MIRIX_S3_READ_TIMEOUT_SECONDS", 30)
S3_MAX_ATTEMPTS = env_int("MIRIX_S3_MAX_ATTEMPTS", 4)
