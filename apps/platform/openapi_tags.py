"""The resources the API's operations are grouped by: each operationId is ``<tag>_<action>``
(ADR 0041), and the OpenAPI document tags the operation with its first word(s)."""

from __future__ import annotations

TAGS: dict[str, str] = {
    "subjects": "The people, agents and teams whose memories are kept.",
    "memories": "Writing, listing, reading and updating rows of the typed stores; core blocks, resources, vault.",
    "search": "Bounded, cited retrieval over a subject's memories, and answers from them.",
    "graph": "The provenance hypergraph: anchors, frames and its health check.",
    "dream": "Semantic AutoDream: merging anchors that name the same thing.",
    "skills": "Verified procedural memory: task sessions, skills, skill search, feedback.",
    "consent": "Per-purpose consent of a subject.",
    "erasure": "Erasing and exporting a subject, and the erasure requests.",
    "webhooks": "Endpoints that receive events, and their deliveries.",
    "keys": "API keys of the organization.",
    "audit": "The organization's hash-chained audit log.",
    "jobs": "Background work and its outcome.",
    "usage": "What the organization used, per day and per key.",
    "providers": "The organization's own model provider.",
    "organization": "The organization's settings.",
}
