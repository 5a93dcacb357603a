"""The local language toolkit, framework-free: ``words`` (tokens, stems, lemma candidates, stop
words, singulars), ``calendar`` (the month and weekday table), ``dates`` (date expressions
resolved against the time they were said), ``lexicon`` (relation families and role groups) and
``pipeline`` (the process's spaCy pipeline). Nothing here imports Django or Celery; the import
contracts in pyproject.toml keep it so.
"""
