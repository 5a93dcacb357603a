"""Celery entry points only: ids in, organization scope set, one service called."""
