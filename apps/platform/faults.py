"""Named pause points for the crash and timeout tests: a worker holds a job there until it is
killed, a request is held there past its time budget.

``fault_pause("indexing.before_commit")`` sleeps for the seconds that ``settings.FAULT_PAUSES``
gives that point. Only the test settings define ``FAULT_PAUSES`` (read from
``MIRIX_TEST_FAULT_PAUSES="point=seconds,…"``, set by a test for the one worker process it
means to kill), so everywhere else a pause point costs a dictionary lookup and does nothing.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings

logger = logging.getLogger(__name__)


def fault_pause(point: str) -> None:
    seconds = getattr(settings, "FAULT_PAUSES", {}).get(point)
    if seconds:
        logger.warning("fault pause %s", point, extra={"point": point, "seconds": seconds})
        time.sleep(seconds)
