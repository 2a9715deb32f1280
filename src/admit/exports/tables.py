"""Streaming table files: CSV and XLSX written row by row into a job's result file.

Exporters describe rows once and pick the file type from the requested format. XLSX uses
xlsxwriter's ``constant_memory`` mode (each row goes to a temporary file as it is written, so
memory stays flat at any size); CSV goes straight through. Cell values may be plain Python
values or :class:`Money` (a Decimal with its currency's places: a number with that many
decimals in XLSX, the exact string in CSV).
"""

from __future__ import annotations

import codecs
import csv
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, BinaryIO, Protocol

import xlsxwriter

XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CSV_TYPE = "text/csv; charset=utf-8"

# Excel's sheet names: at most 31 characters, none of these.
_SHEET_FORBIDDEN = str.maketrans({c: " " for c in "[]:*?/\\"})


@dataclass(frozen=True)
class Money:
    value: Decimal
    places: int = 2

    def __str__(self) -> str:
        return f"{self.value:.{self.places}f}"


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
        self._writer.writerow(headers)
        return self

    def row(self, values: Sequence[Any]) -> None:
        self._writer.writerow([cell_text(v, self._yes, self._no) for v in values])

    def close(self) -> None:
        self._text.flush()


class XlsxSheet:
    def __init__(self, book: XlsxFile, worksheet: Any, headers: Sequence[str]) -> None:
        self.book = book
        self.worksheet = worksheet
        self.next_row = 0
        worksheet.write_row(0, 0, list(headers), book.bold)
        worksheet.freeze_panes(1, 0)
        self.next_row = 1

    def row(self, values: Sequence[Any]) -> None:
        write = self.worksheet.write
        book = self.book
        r = self.next_row
        for c, value in enumerate(values):
            if value is None:
                continue
            if isinstance(value, Money):
                write(r, c, value.value, book.money_format(value.places))
            elif isinstance(value, bool):
                write(r, c, book.yes if value else book.no)
            elif isinstance(value, Decimal | int | float):
                write(r, c, value)
            elif isinstance(value, dt.datetime):
                write(r, c, value.replace(tzinfo=None), book.datetime_format)
            elif isinstance(value, dt.date):
                write(r, c, value, book.date_format)
            elif isinstance(value, list | tuple):
                write(r, c, cell_text(value, book.yes, book.no))
            else:
                write(r, c, str(value))
        self.next_row = r + 1


class XlsxFile:
    """A workbook in constant-memory mode: sheets are written one after the other, each
    row once. Datetimes are written as the local wall time they carry."""

    extension = "xlsx"
    content_type = XLSX_TYPE

    def __init__(self, handle: BinaryIO, *, yes: str = "Yes", no: str = "No") -> None:
        self._book = xlsxwriter.Workbook(
            handle,
            {
                "constant_memory": True,
                "strings_to_numbers": False,
                "strings_to_formulas": False,
                "strings_to_urls": False,
            },
        )
        self.bold = self._book.add_format({"bold": True})
        self.datetime_format = self._book.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"})
        self.date_format = self._book.add_format({"num_format": "yyyy-mm-dd"})
        self._money: dict[int, Any] = {}
        self.yes, self.no = yes, no
        self._titles: set[str] = set()

    def money_format(self, places: int) -> Any:
        found = self._money.get(places)
        if found is None:
            pattern = "0." + "0" * places if places else "0"
            found = self._money[places] = self._book.add_format({"num_format": pattern})
        return found

    def sheet(self, title: str, headers: Sequence[str]) -> XlsxSheet:
        name = title.translate(_SHEET_FORBIDDEN).strip("' ")[:31] or "Sheet"
        base, n = name, 2
        while name.lower() in self._titles:
            suffix = f" ({n})"
            name, n = base[: 31 - len(suffix)] + suffix, n + 1
        self._titles.add(name.lower())
        return XlsxSheet(self, self._book.add_worksheet(name), headers)

    def close(self) -> None:
        self._book.close()


def table_file(kind: str, handle: BinaryIO, *, yes: str = "Yes", no: str = "No") -> TableFile:
    """``"xlsx"`` or ``"csv"`` (``"csv;"`` for semicolon-separated)."""
    if kind == "xlsx":
        return XlsxFile(handle, yes=yes, no=no)
    if kind in ("csv", "csv;"):
        return CsvFile(handle, delimiter=";" if kind == "csv;" else ",", yes=yes, no=no)
    raise ValueError(f"unknown table file kind {kind!r}")
