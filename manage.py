#!/usr/bin/env python
"""Django's command-line utility; with no URLs configured it starts the embedded stack."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mirix_saas.settings.local")
    from mirix_saas.bootstrap import migrate_if_due, prepare_environment

    if prepare_environment() and sys.argv[1:2] != ["migrate"]:
        migrate_if_due()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
