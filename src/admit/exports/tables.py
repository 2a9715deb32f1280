"""Streaming table files: CSV and XLSX written row by row into a job's result file.

Exporters describe rows once and pick the file type from the requested format
(:func:`admit.exports.formats.table_file`). Cell values are plain Python values or
:class:`Money` (a Decimal with its currency's places: a number with that many decimals in
XLSX, the exact string in CSV). CSV goes straight through; XLSX is written by
:mod:`admit.exports.xlsx` in constant memory.
Memory stays flat at any size either way.
"""

from __future__ import annotations

import codecs
import csv
import datetime as dt
import re
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, BinaryIO, Protocol

XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CSV_TYPE = "text/csv; charset=utf-8"

# Excel's limits: rows per sheet, characters per cell.
XLSX_MAX_ROWS = 1_048_576
XLSX_MAX_CHARS = 32_767


class TableLimitExceeded(ValueError):
    """More rows than the file type can hold (XLSX: 1,048,576 per sheet)."""


class Money:
    """An amount with its currency's decimal places (a plain class: an export makes one per
    money cell, hundreds of thousands of them)."""

    __slots__ = ("places", "value")

    def __init__(self, value: Decimal, places: int = 2) -> None:
        self.value = value
        self.places = places

    def __str__(self) -> str:
        text = str(self.value)
        dot = text.find(".")
        # Stored amounts usually have the currency's places already.
        if dot >= 0 and len(text) - dot - 1 == self.places and "E" not in text:
            return text
        # Else half away from zero, as the spreadsheet's number format (and round_amount).
        exact = self.value.quantize(Decimal(1).scaleb(-self.places), rounding=ROUND_HALF_UP)
        return f"{exact:.{self.places}f}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Money):
            return NotImplemented
        return (self.value, self.places) == (other.value, other.places)

    def __hash__(self) -> int:
        return hash((self.value, self.places))

    def __repr__(self) -> str:
        return f"Money({self.value!r}, {self.places})"


class Sheet(Protocol):
    def row(self, values: Sequence[Any]) -> None: ...


class TableFile(Protocol):
    extension: str
    content_type: str

    def sheet(self, title: str, headers: Sequence[str]) -> Sheet: ...

    def close(self) -> None: ...


def cell_text(value: Any, yes: str = "Yes", no: str = "No") -> str:
    """How a value reads in a CSV cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return yes if value else no
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return ", ".join(cell_text(v, yes, no) for v in value)
    return str(value)


class CsvFile:
    """One sheet per file (a second ``sheet`` call is an error): UTF-8, comma-separated,
    every row written through at once."""

    extension = "csv"
    content_type = CSV_TYPE

    def __init__(
        self, handle: BinaryIO, *, delimiter: str = ",", yes: str = "Yes", no: str = "No"
    ) -> None:
        self._text = codecs.getwriter("utf-8")(handle)
        self._writer = csv.writer(self._text, delimiter=delimiter, lineterminator="\r\n")
        self._yes, self._no = yes, no
        self._started = False

    def sheet(self, title: str, headers: Sequence[str]) -> CsvFile:
        if self._started:
            raise RuntimeError("a CSV file holds one table")
        self._started = True
        self._writer.writerow([csv_safe(str(h)) for h in headers])
        return self

    def row(self, values: Sequence[Any]) -> None:
        yes, no = self._yes, self._no
        self._writer.writerow(
            [
                (v if not v or v[0] not in FORMULA_STARTS else csv_safe(v))
                if type(v) is str
                else ""
                if v is None
                else str(v)
                if type(v) in _PLAIN
                else csv_safe(cell_text(v, yes, no))
                for v in values
            ]
        )

    def close(self) -> None:
        self._text.flush()


# Types whose str() is their CSV text (numbers: a negative amount stays a number).
_PLAIN = frozenset({int, Decimal, Money, float})

# What makes a spreadsheet read a cell as a formula (or, for tab and carriage return, lets one
# hide behind whitespace): the characters the spreadsheet vendors and OWASP's "CSV injection"
# guidance name.
FORMULA_STARTS = frozenset("=+-@\t\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def csv_safe(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet will not run: a cell starting with ``=``, ``+``,
    ``-``, ``@``, tab or carriage return gets a leading ``'`` (shown as text, not evaluated).
    A cell that is a plain number (``-5.00``, ``+3``, ``-1e3``) is left alone: negative amounts
    are legitimate numbers, and a number cannot be a formula."""
    if not text or text[0] not in FORMULA_STARTS or _PLAIN_NUMBER.fullmatch(text):
        return text
    return "'" + text
