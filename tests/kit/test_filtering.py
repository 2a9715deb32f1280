"""Query-string parsers, filter sets and allow-listed ordering (admit.kit.resources.filtering)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from urllib.parse import urlencode

import pytest
from sqlalchemy import Boolean, Column, Integer, MetaData, String, Table, select
from starlette.datastructures import QueryParams
from starlette.requests import Request

from admit.kit.http.errors import FieldErrors
from admit.kit.resources.filtering import (
    Filter,
    FilterSet,
    Ordering,
    parse_bool,
    parse_datetime,
    parse_decimal,
    parse_int,
    parse_int_list,
)

things = Table(
    "things",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("name", String),
    Column("rank", Integer),
    Column("active", Boolean),
)

ORDERING = Ordering(
    fields={"name": things.c.name, "rank": things.c.rank}, default=("name",), pk=things.c.id
)


def request(**params: str) -> Request:
    return Request(
        {"type": "http", "method": "GET", "path": "/", "query_string": urlencode(params).encode()}
    )


def order_sql(ordering: Ordering, req: Request | None) -> str:
    query = ordering.apply(select(things.c.id), req)
    return str(query.compile()).split("ORDER BY", 1)[1].strip()


# -- parse_bool ---------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["true", "True", "TRUE", "1", "yes", "on", " true "])
def test_parse_bool_true(raw: str):
    assert parse_bool(raw) is True


@pytest.mark.parametrize("raw", ["false", "False", "0", "no", "off", " FALSE"])
def test_parse_bool_false(raw: str):
    assert parse_bool(raw) is False


@pytest.mark.parametrize("raw", ["", "maybe", "2", "truee", "t", "null"])
def test_parse_bool_rejects_anything_else(raw: str):
    with pytest.raises(ValueError, match="valid boolean"):
        parse_bool(raw)


# -- parse_int / parse_int_list -----------------------------------------------------------


@pytest.mark.parametrize(("raw", "value"), [("0", 0), ("42", 42), (" 7 ", 7), ("-3", -3)])
def test_parse_int(raw: str, value: int):
    assert parse_int(raw) == value


@pytest.mark.parametrize(
    "raw",
    ["", "abc", "1.5", "1e3", "0x10", "1_000", "\u0663", "9" * 30, str(2**63), str(2**31), "--1"],
)
def test_parse_int_rejects_non_integers_and_values_no_database_column_holds(raw: str):
    with pytest.raises(ValueError, match="whole number"):
        parse_int(raw)


def test_parse_int_accepts_the_integer_column_range():
    assert parse_int(str(2**31 - 1)) == 2**31 - 1


def test_parse_int_list():
    assert parse_int_list("1,2,3") == [1, 2, 3]
    assert parse_int_list(" 4 , 5,,6, ") == [4, 5, 6]
    assert parse_int_list("") == []


@pytest.mark.parametrize("raw", ["1,x", "1;2", "1,2.5", f"1,{2**70}"])
def test_parse_int_list_rejects_bad_members(raw: str):
    with pytest.raises(ValueError, match="comma-separated list of whole numbers"):
        parse_int_list(raw)


# -- parse_datetime -----------------------------------------------------------------------


def test_parse_datetime_keeps_the_offset():
    value = parse_datetime("2024-03-01T10:30:00+02:00")
    assert value == dt.datetime(2024, 3, 1, 8, 30, tzinfo=dt.UTC)
    assert value.utcoffset() == dt.timedelta(hours=2)


def test_parse_datetime_zulu_and_naive_are_utc():
    assert parse_datetime("2024-03-01T10:30:00Z") == dt.datetime(2024, 3, 1, 10, 30, tzinfo=dt.UTC)
    naive = parse_datetime("2024-03-01T10:30:00")
    assert naive.tzinfo is not None
    assert naive == dt.datetime(2024, 3, 1, 10, 30, tzinfo=dt.UTC)


def test_parse_datetime_date_only_is_midnight_utc():
    assert parse_datetime("2024-03-01") == dt.datetime(2024, 3, 1, tzinfo=dt.UTC)


def test_parse_datetime_plus_decoded_as_space_in_query_string():
    # "?x=2024-03-01T10:00:00+02:00" unescaped arrives with a space in place of "+".
    assert parse_datetime("2024-03-01T10:00:00 02:00") == dt.datetime(2024, 3, 1, 8, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "yesterday",
        "2024-13-01",
        "2024-02-30T10:00:00",
        "2024-01-01T25:00:00",
        "9999-12-31T23:00:00-05:00",  # past year 9999 in UTC
        "0001-01-01T00:00:00+01:00",  # before year 1 in UTC
    ],
)
def test_parse_datetime_rejects_invalid_and_unrepresentable(raw: str):
    with pytest.raises(ValueError, match="valid date/time"):
        parse_datetime(raw)


def test_parse_decimal():
    assert parse_decimal("12.50") == Decimal("12.50")
    for raw in ["abc", "NaN", "Infinity", ""]:
        with pytest.raises(ValueError, match="Enter a number"):
            parse_decimal(raw)


# -- FilterSet ----------------------------------------------------------------------------


FILTERS = FilterSet(
    (
        Filter.boolean("active", things.c.active),
        Filter.eq("name", things.c.name),
        Filter.eq("rank", things.c.rank, parse_int),
        Filter.where("rank_in", parse_int_list, lambda v: things.c.rank.in_(v)),
    )
)


def where_sql(params: dict[str, str]) -> str:
    query = FILTERS.apply(select(things.c.id), QueryParams(params))
    compiled = query.compile(compile_kwargs={"literal_binds": True})
    return str(compiled).split("WHERE", 1)[1].strip() if "WHERE" in str(compiled) else ""


def test_filterset_applies_parsed_values():
    sql = where_sql({"active": "yes", "rank": "3", "rank_in": "1,2"})
    assert "things.active IS true" in sql
    assert "things.rank = 3" in sql
    assert "things.rank IN (1, 2)" in sql


def test_filterset_ignores_unknown_and_empty_typed_params():
    assert where_sql({"unknown": "x", "active": "", "rank": ""}) == ""


def test_filterset_empty_string_still_filters_string_fields():
    assert where_sql({"name": ""}) == "things.name = ''"


def test_filterset_collects_all_errors_keyed_by_parameter():
    with pytest.raises(FieldErrors) as info:
        FILTERS.apply(select(things.c.id), QueryParams({"active": "maybe", "rank": "x"}))
    assert info.value.status == 400
    assert info.value.errors == {
        "active": ["Enter a valid boolean: true or false."],
        "rank": ["Enter a whole number."],
    }


def test_filterset_names():
    assert FILTERS.names == ["active", "name", "rank", "rank_in"]


# -- Ordering -----------------------------------------------------------------------------


def test_ordering_default_ends_with_pk():
    assert order_sql(ORDERING, request()) == "things.name ASC, things.id ASC"
    assert order_sql(ORDERING, None) == "things.name ASC, things.id ASC"


def test_ordering_from_query_string():
    assert order_sql(ORDERING, request(ordering="rank")) == "things.rank ASC, things.id ASC"


def test_ordering_descending_prefix_and_pk_follows_the_last_direction():
    assert order_sql(ORDERING, request(ordering="-rank")) == "things.rank DESC, things.id DESC"
    sql = order_sql(ORDERING, request(ordering="-rank,name"))
    assert sql == "things.rank DESC, things.name ASC, things.id ASC"


def test_ordering_pk_tie_break_is_always_last():
    for raw in ["name", "-name", "rank,-name", " rank , name ", "name,"]:
        clauses = order_sql(ORDERING, request(ordering=raw)).split(", ")
        assert clauses[-1] in ("things.id ASC", "things.id DESC")
        assert sum("things.id" in c for c in clauses) == 1


def test_ordering_empty_value_uses_default():
    assert order_sql(ORDERING, request(ordering="")) == "things.name ASC, things.id ASC"
    assert order_sql(ORDERING, request(ordering=" , ")) == "things.name ASC, things.id ASC"


@pytest.mark.parametrize("raw", ["color", "-color", "id", "--name", "rank__x", "secret,-id"])
def test_ordering_ignores_names_outside_the_allow_list(raw: str):
    """As the reference: unknown names are dropped (never a 400); none left is the default."""
    assert order_sql(ORDERING, request(ordering=raw)) == "things.name ASC, things.id ASC"
    assert ORDERING.known(raw) is None


@pytest.mark.parametrize(
    ("raw", "known", "sql"),
    [
        ("-rank,color", "-rank", "things.rank DESC, things.id DESC"),
        ("color,-rank", "-rank", "things.rank DESC, things.id DESC"),
        ("name,secret", "name", "things.name ASC, things.id ASC"),
        ("x, rank ,-y", "rank", "things.rank ASC, things.id ASC"),
    ],
)
def test_ordering_keeps_the_known_names_of_a_mixed_list(raw: str, known: str, sql: str):
    assert ORDERING.known(raw) == known
    assert order_sql(ORDERING, request(ordering=raw)) == sql
