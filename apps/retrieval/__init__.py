"""Graph-owned retrieval: the framework-free core (paper §2.4, A.3, A.4; architecture §7).

``planner`` builds the plan Π(q), ``scoring`` ranks anchors and facts, ``fusion`` picks the
returned rows under the plan's budgets, ``answer_check`` is the answer-time verifier, and
``types`` holds the data they share with the adapters. See README.md.
"""
