import pytest

from apps.tenancy import keys

pytestmark = pytest.mark.unit

PREFIX = "mx_live_"


def test_generated_key_is_prefixed_and_carries_32_random_bytes() -> None:
    new = keys.generate_key(PREFIX, "pepper")
    assert new.full_key.startswith(PREFIX)
    body = new.full_key[len(PREFIX) :]
    assert len(body) == keys.LOOKUP_ID_LENGTH + keys.SECRET_LENGTH
    assert set(body) <= set(keys.ALPHABET)
    assert 62**keys.SECRET_LENGTH >= 2**256


def test_keys_are_unique_and_only_their_hmac_matches() -> None:
    a, b = keys.generate_key(PREFIX, "pepper"), keys.generate_key(PREFIX, "pepper")
    assert a.full_key != b.full_key and a.lookup_id != b.lookup_id
    assert keys.hash_matches(a.full_key, a.key_hash, "pepper")
    assert not keys.hash_matches(b.full_key, a.key_hash, "pepper")
    assert not keys.hash_matches(a.full_key, a.key_hash, "another pepper")
    assert a.full_key not in a.key_hash


def test_parse_accepts_only_well_formed_keys() -> None:
    new = keys.generate_key(PREFIX, "pepper")
    parsed = keys.parse_key(new.full_key, PREFIX)
    assert parsed is not None and parsed.lookup_id == new.lookup_id
    for bad in [
        "",
        PREFIX,
        new.full_key[:-1],
        new.full_key + "x",
        "mx_test_" + new.full_key[len(PREFIX) :],
        new.full_key[:-1] + "!",
        new.full_key.replace(PREFIX, PREFIX.upper()),
    ]:
        assert keys.parse_key(bad, PREFIX) is None, bad


def test_base62_pads_to_length() -> None:
    assert keys.base62(b"\x00", 4) == "0000"
    assert keys.base62(b"\x3d", 1) == "z"


def test_invalid_scopes_are_reported() -> None:
    assert keys.invalid_scopes(["memories:read", "root", "admin", "x"]) == ["root", "x"]
