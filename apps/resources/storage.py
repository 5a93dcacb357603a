"""Object storage for resource blobs: one small interface, a filesystem and an S3 backend.

Keys are namespaced ``org/<organization id>/subject/<subject id>/<object id>`` so that
erasure of a subject or an organization is one ``delete_prefix``. Every key and prefix is
validated before it reaches a backend: relative segments only, no ``.``/``..``, no
backslashes, so no key can leave the filesystem root or its namespace.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings

from apps.platform.errors import NotFound, ServiceUnavailable, ValidationFailed

logger = logging.getLogger(__name__)

MAX_KEY_LENGTH = 1024
_SEGMENT = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_KEY_PATTERN = re.compile(rf"^{_SEGMENT}(?:/{_SEGMENT})*$")
_PREFIX_PATTERN = re.compile(rf"^{_SEGMENT}(?:/{_SEGMENT})*/?$")
_S3_DELETE_BATCH = 1000


class InvalidObjectKey(ValidationFailed):
    pass


class ObjectNotFound(NotFound):
    pass


class ObjectStorageUnavailable(ServiceUnavailable):
    pass


class ObjectStorage(Protocol):
    def put(self, key: str, data: bytes, content_type: str) -> None: ...

    def get(self, key: str) -> bytes: ...

    def delete(self, key: str) -> None: ...

    def exists(self, key: str) -> bool: ...

    def delete_prefix(self, prefix: str) -> int: ...


def organization_prefix(*, organization_id: uuid.UUID) -> str:
    return f"org/{organization_id}/"


def subject_prefix(*, organization_id: uuid.UUID, subject_id: uuid.UUID) -> str:
    return f"{organization_prefix(organization_id=organization_id)}subject/{subject_id}/"


def object_key(*, organization_id: uuid.UUID, subject_id: uuid.UUID, object_id: uuid.UUID | None = None) -> str:
    """A new (or the given) object's key inside the subject's namespace."""
    return f"{subject_prefix(organization_id=organization_id, subject_id=subject_id)}{object_id or uuid.uuid4()}"


def validate_key(key: str) -> str:
    if len(key) > MAX_KEY_LENGTH or not _KEY_PATTERN.match(key) or any(s in {".", ".."} for s in key.split("/")):
        raise InvalidObjectKey("Invalid object key.", details={"key": key[:200]})
    return key


def validate_prefix(prefix: str) -> str:
    """A non-empty prefix: an empty one would erase every tenant's objects."""
    segments = prefix.rstrip("/").split("/")
    if len(prefix) > MAX_KEY_LENGTH or not _PREFIX_PATTERN.match(prefix) or any(s in {".", ".."} for s in segments):
        raise InvalidObjectKey("Invalid object key prefix.", details={"prefix": prefix[:200]})
    return prefix


class FilesystemObjectStorage:
    """Objects as files under ``root``; the content type is not kept (S3 keeps it for HTTP)."""

    def __init__(self, *, root: Path) -> None:
        self.root = root.resolve()

    def _path(self, key: str) -> Path:
        path = (self.root / validate_key(key)).resolve()
        if not path.is_relative_to(self.root):
            raise InvalidObjectKey("Invalid object key.", details={"key": key[:200]})
        return path

    def put(self, key: str, data: bytes, content_type: str) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write beside the target and rename: readers never see a partial object. The
        # temporary name starts with a dot, which no valid key segment can.
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            raise ObjectNotFound("Object not found.") from None

    def delete(self, key: str) -> None:
        path = self._path(key)
        if path.is_file():
            path.unlink(missing_ok=True)
            self._prune(path.parent)

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def delete_prefix(self, prefix: str) -> int:
        """Delete every object whose key starts with ``prefix`` (S3 semantics); returns the count."""
        directory, _, name_start = validate_prefix(prefix).rpartition("/")
        parent = (self.root / directory).resolve() if directory else self.root
        if not parent.is_relative_to(self.root) or not parent.is_dir():
            return 0
        deleted = 0
        for entry in parent.iterdir():
            if not entry.name.startswith(name_start):
                continue
            if entry.is_dir() and not entry.is_symlink():
                deleted += sum(1 for file in entry.rglob("*") if file.is_file())
                shutil.rmtree(entry)
            else:
                deleted += 1
                entry.unlink(missing_ok=True)
        self._prune(parent)
        return deleted

    def _prune(self, directory: Path) -> None:
        """Remove empty directories up to the root: their names are organization and subject ids."""
        while directory != self.root and directory.is_relative_to(self.root):
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent


def s3_client(
    *,
    endpoint_url: str | None,
    region: str,
    connect_timeout: int,
    read_timeout: int,
    max_attempts: int,
) -> Any:
    """A boto3 S3 client with bounded timeouts and retries; path-style addressing at custom endpoints."""
    config = Config(
        region_name=region,
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        retries={"total_max_attempts": max_attempts, "mode": "standard"},
        s3={"addressing_style": "path" if endpoint_url else "auto"},
    )
    return boto3.session.Session().client("s3", endpoint_url=endpoint_url, config=config)


def _is_missing(exc: ClientError) -> bool:
    error = exc.response.get("Error", {})
    return error.get("Code") in {"NoSuchKey", "404", "NotFound"}


class S3ObjectStorage:
    def __init__(self, *, client: Any, bucket: str) -> None:
        self.client = client
        self.bucket = bucket

    @contextmanager
    def _unavailable_on_error(self, operation: str) -> Iterator[None]:
        try:
            yield
        except (BotoCoreError, ClientError) as exc:
            logger.warning(
                "object storage request failed",
                extra={"operation": operation, "bucket": self.bucket, "error_type": type(exc).__name__},
            )
            raise ObjectStorageUnavailable("Object storage is unavailable; retry later.") from exc

    def put(self, key: str, data: bytes, content_type: str) -> None:
        with self._unavailable_on_error("put"):
            self.client.put_object(Bucket=self.bucket, Key=validate_key(key), Body=data, ContentType=content_type)

    def get(self, key: str) -> bytes:
        with self._unavailable_on_error("get"):
            try:
                response = self.client.get_object(Bucket=self.bucket, Key=validate_key(key))
            except ClientError as exc:
                if _is_missing(exc):
                    raise ObjectNotFound("Object not found.") from None
                raise
            body: bytes = response["Body"].read()
        return body

    def delete(self, key: str) -> None:
        with self._unavailable_on_error("delete"):
            self.client.delete_object(Bucket=self.bucket, Key=validate_key(key))

    def exists(self, key: str) -> bool:
        with self._unavailable_on_error("exists"):
            try:
                self.client.head_object(Bucket=self.bucket, Key=validate_key(key))
            except ClientError as exc:
                if _is_missing(exc):
                    return False
                raise
        return True

    def delete_prefix(self, prefix: str) -> int:
        """Delete every object under ``prefix``; returns the count.

        The bucket must not be versioned (or must expire noncurrent versions): erasure has to
        leave no copy behind.
        """
        deleted = 0
        with self._unavailable_on_error("delete_prefix"):
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=validate_prefix(prefix), PaginationConfig={"PageSize": _S3_DELETE_BATCH}
            )
            for page in pages:
                objects = [{"Key": item["Key"]} for item in page.get("Contents", [])]
                if not objects:
                    continue
                response = self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": objects, "Quiet": True})
                errors = response.get("Errors", [])
                if errors:
                    logger.error(
                        "object storage prefix delete incomplete",
                        extra={"bucket": self.bucket, "failed": len(errors), "error_code": errors[0].get("Code")},
                    )
                    raise ObjectStorageUnavailable("Object storage did not delete every object; retry later.")
                deleted += len(objects)
        return deleted


@dataclass(frozen=True)
class _StorageConfig:
    backend: str
    root: Path
    bucket: str | None
    endpoint_url: str | None
    region: str
    connect_timeout: int
    read_timeout: int
    max_attempts: int


@functools.lru_cache(maxsize=4)
def _backend(config: _StorageConfig) -> ObjectStorage:
    if config.backend == "filesystem":
        return FilesystemObjectStorage(root=config.root)
    if config.bucket is None:
        raise ObjectStorageUnavailable("Object storage is not configured.")
    client = s3_client(
        endpoint_url=config.endpoint_url,
        region=config.region,
        connect_timeout=config.connect_timeout,
        read_timeout=config.read_timeout,
        max_attempts=config.max_attempts,
    )
    return S3ObjectStorage(client=client, bucket=config.bucket)


def storage() -> ObjectStorage:
    """The configured backend; one instance (and one thread-safe boto3 client) per configuration."""
    return _backend(
        _StorageConfig(
            backend=settings.OBJECT_STORAGE,
            root=settings.OBJECT_STORAGE_ROOT,
            bucket=settings.S3_BUCKET,
            endpoint_url=settings.S3_ENDPOINT_URL,
            region=settings.S3_REGION,
            connect_timeout=settings.S3_CONNECT_TIMEOUT_SECONDS,
            read_timeout=settings.S3_READ_TIMEOUT_SECONDS,
            max_attempts=settings.S3_MAX_ATTEMPTS,
        )
    )
