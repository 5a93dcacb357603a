"""Search extensions: the results that capabilities above retrieval add to ``/search``.

Retrieval sits below procedural memory and dream in the layers, so it never imports them. A
capability with results of its own for a question registers a ``SearchExtension`` in its
``AppConfig.ready``::

    from apps.retrieval.extensions import SearchExtension, search_extension_register

    search_extension_register(SearchExtension(name="skills", memory_type="procedural",
                                              search=..., serializer=..., help_text=...))

When a request names the extension's ``memory_type``, ``/search`` runs its ``search`` after
reading the evidence and returns the result under ``typed[name]``, rendered by ``serializer``;
the OpenAPI schema lists every registered extension as an optional field of ``typed``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Protocol

from rest_framework import serializers

from apps.platform.registry import named_register
from apps.tenancy.models import Subject


class ExtensionSearch(Protocol):
    def __call__(self, *, subject: Subject, query: str) -> object: ...


@dataclass(frozen=True)
class SearchExtension:
    name: str  # unique; its key in the response's ``typed`` results
    memory_type: str  # run when the request names this store
    search: ExtensionSearch
    serializer: type[serializers.Serializer[Any]]  # renders what ``search`` returns
    help_text: str


_EXTENSIONS: dict[str, SearchExtension] = {}


def search_extension_register(extension: SearchExtension) -> SearchExtension:
    return named_register(_EXTENSIONS, extension, kind="a search extension")


def search_extensions() -> list[SearchExtension]:
    """Every registered extension, in registration order."""
    return list(_EXTENSIONS.values())


def search_extensions_run(*, subject: Subject, query: str, memory_types: Collection[str]) -> dict[str, object]:
    """The results of the extensions of the requested stores, by name."""
    return {
        extension.name: extension.search(subject=subject, query=query)
        for extension in _EXTENSIONS.values()
        if extension.memory_type in memory_types
    }
