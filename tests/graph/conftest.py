from tests.providers.conftest import meter, metering  # noqa: F401  (fixtures)
