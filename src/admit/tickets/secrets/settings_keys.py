"""The event setting ``ticket_secret_generator`` (``E/settings/``): ``random`` or
``pretix_sig1``. Kept in its own column of ``events`` (the order paths read it from the event
row they have); switching an event to signed secrets makes its key pair at once, so scanners
can fetch ``valid_keys`` before the first ticket is sold, and an event clone gets a fresh pair
of its own (clones store every bound setting through :func:`_store`)."""

from __future__ import annotations

from typing import Any, Literal

from sqlalchemy.ext.asyncio import AsyncSession

from admit.events.settings import EVENT_SETTINGS, GENERAL
from admit.kit.resources.settings import Binding, Setting
from admit.models import Event
from admit.tickets.secrets import generator, keys

KEY = "ticket_secret_generator"


async def _load(_session: AsyncSession, event: Event) -> Any:
    return event.ticket_secret_generator or generator.RANDOM


async def _store(session: AsyncSession, event: Event, value: Any) -> None:
    event.ticket_secret_generator = value or generator.RANDOM
    if generator.is_signed(event):
        await keys.ensure_async(session, event)


def register() -> None:
    if KEY in EVENT_SETTINGS:
        return
    EVENT_SETTINGS.register(
        Setting(
            key=KEY,
            annotation=Literal["random", "pretix_sig1"],
            default=generator.RANDOM,
            label="Ticket code generator",
            permission=GENERAL,
            help_text=(
                "random: random ticket codes. pretix_sig1: codes signed with the event's key "
                "(published in valid_keys), which scanners verify offline."
            ),
            binding=Binding(load=_load, store=_store),
        )
    )


register()
