"""Shared field types: datetimes, time zones, numbers, multi-lingual text."""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import BaseModel, ValidationError

from admit.kit.resources.schema import DateTime, I18n, Number, TimeZoneName


class Sample(BaseModel):
    when: DateTime | None = None
    tz: TimeZoneName = "UTC"
    lat: Number | None = None
    name: I18n = {}


@pytest.mark.parametrize("value", [12, 1.5, "1700000000", "2030-01-01", "yesterday", True])
def test_datetime_needs_iso_text_with_a_time(value):
    with pytest.raises(ValidationError) as info:
        Sample(when=value)
    assert "Datetime has wrong format" in str(info.value)


def test_datetime_without_offset_is_utc_and_offsets_are_kept_as_instants():
    assert Sample(when="2030-01-01T10:00").when == dt.datetime(2030, 1, 1, 10, tzinfo=dt.UTC)
    aware = Sample(when="2030-01-01T12:00:00+02:00").when
    assert aware.astimezone(dt.UTC) == dt.datetime(2030, 1, 1, 10, tzinfo=dt.UTC)


@pytest.mark.parametrize("value", ["localtime", "Factory", "Mars/Olympus", ""])
def test_unknown_time_zones_are_refused(value):
    with pytest.raises(ValidationError):
        Sample(tz=value)


def test_known_time_zone_is_accepted():
    assert Sample(tz="Europe/Berlin").tz == "Europe/Berlin"


def test_booleans_are_not_numbers():
    with pytest.raises(ValidationError):
        Sample(lat=True)
    assert Sample(lat=52).lat == 52.0


def test_plain_string_is_english_text():
    assert Sample(name="Hello").name == {"en": "Hello"}
