"""The waiting list's keys in the event settings (``E/settings/``): ``waiting_list_auto`` and
``waiting_list_hours``, the reference's names for what ``E/waitinglist_settings/`` calls
``auto_assign`` and ``voucher_hours``. Both endpoints read and write the same row of
``waiting_list_settings``, which the periodic assignment queries."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field
from sqlalchemy.ext.asyncio import AsyncSession

from admit.events.settings import EVENT_SETTINGS, GENERAL
from admit.kit.resources.settings import Binding, Setting
from admit.models import Event, WaitingListSettings
from admit.models.waitinglist import DEFAULT_VOUCHER_HOURS
from admit.waitinglist.schemas import MAX_VOUCHER_HOURS, _int_input

_COLUMNS = {"waiting_list_auto": "auto_assign", "waiting_list_hours": "voucher_hours"}
_DEFAULTS = {"auto_assign": False, "voucher_hours": DEFAULT_VOUCHER_HOURS}


def _binding(column: str) -> Binding:
    async def load(session: AsyncSession, event: Event) -> Any:
        row = await session.get(WaitingListSettings, event.id)
        return getattr(row, column) if row is not None else _DEFAULTS[column]

    async def store(session: AsyncSession, event: Event, value: Any) -> None:
        row = await session.get(WaitingListSettings, event.id, with_for_update=True)
        if row is None:
            row = WaitingListSettings(event_id=event.id, **_DEFAULTS)
            session.add(row)
            await session.flush()  # the other key's store finds it
        setattr(row, column, _DEFAULTS[column] if value is None else value)

    return Binding(load=load, store=store)


def register() -> None:
    if "waiting_list_auto" in EVENT_SETTINGS:
        return
    EVENT_SETTINGS.register(
        Setting(
            key="waiting_list_auto",
            annotation=bool,
            default=False,
            label="Automatic waiting list assignments",
            permission=GENERAL,
            binding=_binding("auto_assign"),
        ),
        Setting(
            key="waiting_list_hours",
            annotation=Annotated[
                int, BeforeValidator(_int_input), Field(ge=1, le=MAX_VOUCHER_HOURS)
            ],
            default=DEFAULT_VOUCHER_HOURS,
            label="Waiting list response time",
            permission=GENERAL,
            binding=_binding("voucher_hours"),
        ),
    )


register()
