"""Object storage: one contract, run against the filesystem and against a real S3 server over HTTP."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings
from moto.server import ThreadedMotoServer

from apps.resources.storage import (
    FilesystemObjectStorage,
    InvalidObjectKey,
    ObjectNotFound,
    ObjectStorage,
    ObjectStorageUnavailable,
    S3ObjectStorage,
    object_key,
    organization_prefix,
    s3_client,
    storage,
    subject_prefix,
)
from infra.embedded.environment import var_dir

INVALID_KEYS = [
    "",
    "/etc/passwd",
    "../outside",
    "org/../../outside",
    "org/./x",
    "org//x",
    "org/x/",
    "org\\..\\x",
    "org/x\x00",
    ".hidden",
    "org/..",
    "a" * 1025,
]


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")


def _s3_storage(endpoint_url: str) -> S3ObjectStorage:
    client = s3_client(endpoint_url=endpoint_url, region="us-east-1", connect_timeout=2, read_timeout=5, max_attempts=2)
    bucket = f"mirix-test-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=bucket)
    return S3ObjectStorage(client=client, bucket=bucket)


@pytest.fixture(params=["filesystem", "s3"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStorage:
    if request.param == "filesystem":
        return FilesystemObjectStorage(root=tmp_path / "objects")
    request.getfixturevalue("aws_credentials")
    return _s3_storage(request.getfixturevalue("s3_endpoint"))


def test_keys_are_namespaced_by_organization_and_subject() -> None:
    organization_id, subject_id = uuid.uuid4(), uuid.uuid4()
    key = object_key(organization_id=organization_id, subject_id=subject_id)
    assert re.fullmatch(rf"org/{organization_id}/subject/{subject_id}/[0-9a-f-]{{36}}", key)
    assert key.startswith(subject_prefix(organization_id=organization_id, subject_id=subject_id))
    assert key.startswith(organization_prefix(organization_id=organization_id))
    assert key != object_key(organization_id=organization_id, subject_id=subject_id)
    fixed = uuid.uuid4()
    assert object_key(organization_id=organization_id, subject_id=subject_id, object_id=fixed).endswith(str(fixed))


def test_put_get_exists_delete_round_trip(backend: ObjectStorage) -> None:
    key = object_key(organization_id=uuid.uuid4(), subject_id=uuid.uuid4())
    assert not backend.exists(key)
    backend.put(key, b"\x00binary\xffpayload", "application/octet-stream")
    assert backend.exists(key)
    assert backend.get(key) == b"\x00binary\xffpayload"
    backend.put(key, b"replaced", "text/plain")
    assert backend.get(key) == b"replaced"
    backend.delete(key)
    assert not backend.exists(key)
    with pytest.raises(ObjectNotFound):
        backend.get(key)
    backend.delete(key)  # deleting what is gone is not an error: erasure can be retried


def test_delete_prefix_erases_exactly_one_subject_then_one_organization(backend: ObjectStorage) -> None:
    org, other_org = uuid.uuid4(), uuid.uuid4()
    erased, kept = uuid.uuid4(), uuid.uuid4()
    erased_keys = [object_key(organization_id=org, subject_id=erased) for _ in range(3)]
    kept_key = object_key(organization_id=org, subject_id=kept)
    other_key = object_key(organization_id=other_org, subject_id=erased)  # same subject id, another tenant
    for key in [*erased_keys, kept_key, other_key]:
        backend.put(key, key.encode(), "text/plain")

    assert backend.delete_prefix(subject_prefix(organization_id=org, subject_id=erased)) == 3
    assert not any(backend.exists(key) for key in erased_keys)
    assert backend.get(kept_key) == kept_key.encode()
    assert backend.delete_prefix(subject_prefix(organization_id=org, subject_id=erased)) == 0

    assert backend.delete_prefix(organization_prefix(organization_id=org)) == 1
    assert not backend.exists(kept_key)
    assert backend.get(other_key) == other_key.encode()


@pytest.mark.parametrize("key", INVALID_KEYS)
def test_invalid_keys_are_rejected_before_reaching_the_backend(backend: ObjectStorage, key: str) -> None:
    for operation in (
        lambda: backend.put(key, b"x", "text/plain"),
        lambda: backend.get(key),
        lambda: backend.exists(key),
        lambda: backend.delete(key),
    ):
        with pytest.raises(InvalidObjectKey):
            operation()


@pytest.mark.parametrize("prefix", ["", "/", "../", "org/../", "org//", "/org/"])
def test_invalid_prefixes_are_rejected(backend: ObjectStorage, prefix: str) -> None:
    with pytest.raises(InvalidObjectKey):
        backend.delete_prefix(prefix)


def test_filesystem_stays_inside_its_root_and_leaves_no_trace(tmp_path: Path) -> None:
    root = tmp_path / "objects"
    outside = tmp_path / "outside"
    outside.mkdir()
    backend = FilesystemObjectStorage(root=root)
    organization_id = uuid.uuid4()
    key = object_key(organization_id=organization_id, subject_id=uuid.uuid4())
    backend.put(key, b"data", "text/plain")
    assert (root / key).read_bytes() == b"data"
    assert [p.name for p in (root / key).parent.iterdir()] == [key.rsplit("/", 1)[1]]  # no temporary files left

    (root / "escape").symlink_to(outside, target_is_directory=True)
    with pytest.raises(InvalidObjectKey):
        backend.put("escape/stolen", b"x", "text/plain")
    assert list(outside.iterdir()) == []

    assert backend.delete_prefix(organization_prefix(organization_id=organization_id)) == 1
    assert not (root / "org" / str(organization_id)).exists()  # directory names carry ids


def test_s3_client_has_bounded_timeouts_and_retries(s3_endpoint: str, aws_credentials: None) -> None:
    client = s3_client(endpoint_url=s3_endpoint, region="eu-west-1", connect_timeout=3, read_timeout=7, max_attempts=4)
    config = client.meta.config
    assert (config.connect_timeout, config.read_timeout) == (3, 7)
    assert config.retries == {"total_max_attempts": 4, "mode": "standard"}
    assert config.s3 == {"addressing_style": "path"}
    assert client.meta.endpoint_url == s3_endpoint


def test_s3_keeps_the_content_type(s3_endpoint: str, aws_credentials: None) -> None:
    backend = _s3_storage(s3_endpoint)
    key = object_key(organization_id=uuid.uuid4(), subject_id=uuid.uuid4())
    backend.put(key, b"{}", "application/json")
    assert backend.client.head_object(Bucket=backend.bucket, Key=key)["ContentType"] == "application/json"


def test_an_unreachable_s3_endpoint_is_a_service_unavailable_error(aws_credentials: None) -> None:
    client = s3_client(
        endpoint_url="http://127.0.0.1:1", region="us-east-1", connect_timeout=1, read_timeout=1, max_attempts=1
    )
    backend = S3ObjectStorage(client=client, bucket="unreachable")
    with pytest.raises(ObjectStorageUnavailable):
        backend.put("org/x/subject/y/z", b"x", "text/plain")
    with pytest.raises(ObjectStorageUnavailable):
        backend.exists("org/x/subject/y/z")


def test_storage_returns_the_configured_backend(s3_endpoint: str, aws_credentials: None) -> None:
    default = storage()
    assert isinstance(default, FilesystemObjectStorage)
    assert settings.OBJECT_STORAGE_ROOT == var_dir() / "objects"
    assert default.root == settings.OBJECT_STORAGE_ROOT.resolve()

    bucket = _s3_storage(s3_endpoint).bucket
    with override_settings(OBJECT_STORAGE="s3", S3_BUCKET=bucket, S3_ENDPOINT_URL=s3_endpoint):
        configured = storage()
        assert isinstance(configured, S3ObjectStorage) and configured.bucket == bucket
        assert storage() is configured  # one client per configuration
        key = object_key(organization_id=uuid.uuid4(), subject_id=uuid.uuid4())
        configured.put(key, b"through settings", "text/plain")
        assert configured.get(key) == b"through settings"
