"""The scheduled e-mail rules API, ``E/sendmail_rules/`` (see :mod:`admit.sendmail.service`).
Importing this module also makes event cloning copy the rules."""

from __future__ import annotations

from admit.events.cloning import extra_copiers
from admit.kit.http.routing import api_router
from admit.kit.resources.crud import mount_crud
from admit.sendmail.cloning import copy_rules
from admit.sendmail.service import sendmail_rules

router = api_router(tags=["sendmail"])

mount_crud(router, sendmail_rules)
if copy_rules not in extra_copiers:
    extra_copiers.append(copy_rules)
