from tests.providers.conftest import openai_stub, stub_config  # noqa: F401  (fixtures)
