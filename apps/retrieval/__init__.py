"""Graph-owned retrieval: the framework-free core (docs/architecture.md, "Retrieval plane").

``planner`` builds the plan of a question, ``scoring`` ranks anchors and facts, ``fusion`` picks the
returned rows under the plan's budgets, ``answer_check`` is the answer-time verifier, and
``types`` holds the data they share with the adapters. See README.md.
"""
