"""A small multi-session conversation written for these tests (two speakers, three sessions)."""

from __future__ import annotations

SECRET_PASSWORD = "Blue-Heron-4417!"

SESSIONS: list[list[dict[str, str]]] = [
    [
        {
            "id": "s1:1",
            "role": "user",
            "name": "Maya",
            "timestamp": "2023-05-08T18:02:00Z",
            "content": "Yesterday I ran the Bay to Breakers race with my brother Tom. We finished in 1 hour 42 minutes.",
        },
        {
            "id": "s1:2",
            "role": "assistant",
            "name": "Coach",
            "timestamp": "2023-05-08T18:03:00Z",
            "content": "Congratulations! How did your knee hold up?",
        },
        {
            "id": "s1:3",
            "role": "user",
            "name": "Maya",
            "timestamp": "2023-05-08T18:05:00Z",
            "content": "Fine. I'm a pediatric nurse, so I know to ice it. "
            f"By the way, my password for the race portal is {SECRET_PASSWORD}",
        },
    ],
    [
        {
            "id": "s2:1",
            "role": "user",
            "name": "Maya",
            "timestamp": "2023-06-14T09:30:00Z",
            "content": "Next month we will fly to Lisbon for my cousin's wedding on 22 July 2023.",
        },
        {
            "id": "s2:2",
            "role": "user",
            "name": "Maya",
            "timestamp": "2023-06-14T09:31:00Z",
            "content": "I bought 3 dresses for $240 last Saturday.",
        },
    ],
    [
        {
            "id": "s3:1",
            "role": "user",
            "name": "Maya",
            "timestamp": "2023-08-02T20:00:00Z",
            "content": "How I make cold brew: first grind 100 grams of coffee coarsely, then steep it in 1 litre of "
            "water for 16 hours, then strain it through a paper filter.",
        },
    ],
]
