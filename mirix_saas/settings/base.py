"""Settings shared by every environment, assembled from topic modules."""

from mirix_saas.settings.components.api import *  # noqa: F403
from mirix_saas.settings.components.cache import *  # noqa: F403
from mirix_saas.settings.components.celery import *  # noqa: F403
from mirix_saas.settings.components.console import *  # noqa: F403
from mirix_saas.settings.components.database import *  # noqa: F403
from mirix_saas.settings.components.django import *  # noqa: F403
from mirix_saas.settings.components.erasure import *  # noqa: F403
from mirix_saas.settings.components.logging import *  # noqa: F403
from mirix_saas.settings.components.performance import *  # noqa: F403
from mirix_saas.settings.components.procedural import *  # noqa: F403
from mirix_saas.settings.components.providers import *  # noqa: F403
from mirix_saas.settings.components.sentry import *  # noqa: F403
from mirix_saas.settings.components.storage import *  # noqa: F403
from mirix_saas.settings.components.timeouts import *  # noqa: F403
from mirix_saas.settings.components.vault import *  # noqa: F403
from mirix_saas.settings.components.webhooks import *  # noqa: F403
