"""XLSX files written row by row in constant memory.

xlsxwriter's ``constant_memory`` mode keeps one row at a time (rows go to a temporary file
as they are written), but it spends 6-13 µs on every cell (type dispatch, a per-cell XML
writer call, several regular expressions): a 100,000-position order list with 30 columns took
over 30 s in cell writes alone. :class:`XlsxSheet` therefore renders each row's ``<row>``
element itself into the worksheet's constant-memory row file and leaves everything else
(styles, workbook parts, the zip container) to xlsxwriter. Rows mostly share a shape (the
types of their cells), so per shape one function built once renders a row in a single
f-string. The markup is what xlsxwriter writes for inline strings and numbers; the tests read
the files back with openpyxl. Should a future xlsxwriter stop keeping that row file, rows go
through its ordinary cell API instead (slower, same file).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import threading
import zipfile
from collections.abc import Sequence
from decimal import Decimal
from itertools import compress
from types import NoneType
from typing import Any, BinaryIO

import xlsxwriter
import xlsxwriter.workbook
from xlsxwriter.utility import xl_col_to_name
from xlsxwriter.xmlwriter import XMLwriter

from admit.exports.tables import (
    XLSX_MAX_CHARS,
    XLSX_MAX_ROWS,
    XLSX_TYPE,
    Money,
    TableLimitExceeded,
    cell_text,
)
from admit.jobs.queue import job_tmpdir

# Excel's sheet names: at most 31 characters, none of these.
_SHEET_FORBIDDEN = str.maketrans({c: " " for c in "[]:*?/\\"})
# Distinct row shapes (cell types) a sheet keeps row functions for; others go cell by cell.
_MAX_SHAPES = 1000

# A string needs more than a plain copy when it holds markup characters, control characters
# (Excel's _xHHHH_ escapes), something that reads as such an escape, or edge whitespace.
_NEEDS_WORK = re.compile(r"[&<>\x00-\x08\x0b-\x1f\ufffe\uffff]|_x[0-9a-fA-F]{4}_|^\s|\s$")
_EDGE_SPACE = re.compile(r"^\s|\s$")
_SPECIAL = re.compile(r"[&<>\x00-\x08\x0b-\x1f\ufffe\uffff]").search
# The same over a row's strings joined by U+E000 (a private-use character), in parts that are
# each fast (one alternation over it all took twice as long): a match means some string needs
# escaping, or has whitespace at an edge (a separator before it, or after it: seen in the
# reversed text); else all are copied as they are.
_SPACE_AFTER_SEPARATOR = re.compile("\ue000\\s").search


def _row_special(wrapped: str) -> bool:
    return (
        "_x" in wrapped
        or _SPECIAL(wrapped) is not None
        or _SPACE_AFTER_SEPARATOR(wrapped) is not None
        or _SPACE_AFTER_SEPARATOR(wrapped[::-1]) is not None
    )


def _plain(text: str) -> bool:
    """Whether a string goes into a cell as it is (see :func:`_inline_text`)."""
    return (
        len(text) <= XLSX_MAX_CHARS
        and text.strip() is text
        and _SPECIAL(text) is None
        and "_x" not in text
    )


_EPOCH = dt.datetime(1899, 12, 30)  # day 0 of Excel's 1900 system for dates after Feb 1900
_EARLY_EPOCH = dt.datetime(1899, 12, 31)
_LEAP_BUG = dt.datetime(1900, 3, 1)


def excel_serial(value: dt.datetime | dt.date) -> float:
    """A date or naive wall-clock datetime as an Excel serial number (1900 date system)."""
    if not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    else:
        value = value.replace(tzinfo=None)
    delta = value - (_EPOCH if value >= _LEAP_BUG else _EARLY_EPOCH)
    return delta.days + (delta.seconds + delta.microseconds / 1e6) / 86400


_EPOCH_ORDINAL = _EPOCH.toordinal()
# The last datetime rendered and its text: an order's positions share their order's date.
_last_serial: list[Any] = [None, ""]


def _serial_text(value: dt.datetime) -> str:
    last = _last_serial
    if value is last[0]:
        return last[1]  # type: ignore[no-any-return]
    if value.year > 1900:  # the wall-clock time since _EPOCH in µs, over a day's µs
        seconds = (value.toordinal() - _EPOCH_ORDINAL) * 86400
        seconds += value.hour * 3600 + value.minute * 60 + value.second
        text = repr((seconds * 1_000_000 + value.microsecond) / 86_400_000_000)
    else:
        text = repr(excel_serial(value))
    last[0], last[1] = value, text
    return text


class _MoneyStyles(dict):  # type: ignore[type-arg]
    """Decimal places -> the workbook's money style index, made on first use."""

    def __init__(self, book: XlsxFile) -> None:
        super().__init__()
        self.book = book

    def __missing__(self, places: int) -> int:
        self[places] = index = self.book.money_index(places)
        return index


def _decimal_cell(value: Decimal, ref: str) -> str:
    if value.is_finite():
        return f'<c r="{ref}"><v>{value}</v></c>'
    return f'<c r="{ref}" t="inlineStr"><is><t>{value}</t></is></c>'


# What _escaped answers for a string that only the cell-by-cell path writes right.
_CELL_BY_CELL = object()


def _escaped(text: str) -> Any:
    """A string's ``<t>`` content; :data:`_CELL_BY_CELL` where it needs more than escaping
    (edge whitespace to preserve, or a length to cut)."""
    if _plain(text):
        return text
    if len(text) > XLSX_MAX_CHARS or _EDGE_SPACE.search(text):
        return _CELL_BY_CELL
    escaped = XMLwriter._escape_control_characters(text)
    return escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _inline_text(text: str) -> str:
    """The ``<is>`` content of an inline string cell, escaped as xlsxwriter does."""
    if len(text) > XLSX_MAX_CHARS:
        text = text[:XLSX_MAX_CHARS]
    if not _NEEDS_WORK.search(text):
        return f"<is><t>{text}</t></is>"
    escaped = XMLwriter._escape_control_characters(text)
    escaped = escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if _EDGE_SPACE.search(text):
        return f'<is><t xml:space="preserve">{escaped}</t></is>'
    return f"<is><t>{escaped}</t></is>"


class XlsxSheet:
    # Rendered rows are handed to the row file this many at a time.
    BATCH = 256
    # Whether rows are rendered here (else through xlsxwriter's cell API: the fallback).
    RENDER = True

    def __init__(self, book: XlsxFile, worksheet: Any, headers: Sequence[str]) -> None:
        self.book = book
        self.worksheet = worksheet
        self.next_row = 0
        self.width = 0
        # The constant-memory row file (see the module docstring); None: use the cell API.
        self._rows = getattr(worksheet, "row_data_fh", None) if self.RENDER else None
        self._pending: list[str] = []
        self._letters: list[str] = []
        self._shapes: dict[tuple[type, ...], Any] = {}
        worksheet.freeze_panes(1, 0)
        self._write(headers, bold=True)

    def row(self, values: Sequence[Any]) -> None:
        self._write(values)

    def _write(self, values: Sequence[Any], *, bold: bool = False) -> None:
        r = self.next_row
        if r >= XLSX_MAX_ROWS:
            raise TableLimitExceeded(
                f"An XLSX sheet holds at most {XLSX_MAX_ROWS:,} rows; choose a CSV format."
            )
        if len(values) > self.width:
            self.width = len(values)
            while len(self._letters) < self.width:
                self._letters.append(xl_col_to_name(len(self._letters)))
        self.next_row = r + 1
        if self._rows is None:
            self._write_cells(r, values, bold=bold)
            return
        pending = self._pending
        pending.append(self._render(str(r + 1), values, bold))
        if len(pending) >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            self._rows.write("".join(self._pending))
            self._pending.clear()

    def _render(self, n: str, values: Sequence[Any], bold: bool) -> str:
        """One ``<row>`` element. Rows of an export mostly share a shape (the types of
        their cells): per shape, a function built once renders the row in one f-string
        (see :meth:`_shape`), as long as its strings need no escaping; other rows (and the
        header) go cell by cell."""
        if bold:
            return self._render_cells(n, values, bold)
        kinds = tuple(map(type, values))
        shape = self._shapes.get(kinds)
        if shape is None:
            if len(self._shapes) >= _MAX_SHAPES:
                return self._render_cells(n, values, bold)
            shape = self._shapes[kinds] = self._shape(kinds)
        render, strings = shape
        if strings is not None:
            joined = "\ue000".join(compress(values, strings))
            wrapped = f"\ue000{joined}\ue000"
            if "\ue000\ue000" in wrapped:  # an empty string, which makes no cell
                return self._render(n, [None if v == "" else v for v in values], bold)
            if len(joined) > XLSX_MAX_CHARS or _row_special(wrapped):
                escaped = [_escaped(v) if type(v) is str else v for v in values]
                if _CELL_BY_CELL in escaped:
                    return self._render_cells(n, values, bold)
                return render(n, escaped)
        return render(n, values)

    def _shape(self, kinds: tuple[type, ...]) -> tuple[Any, tuple[bool, ...] | None]:
        """A function rendering rows of these cell types, and which cells are strings.

        Its source is one f-string of the row's markup with the cells' values put in by
        index; it holds nothing but markup, column letters and indexes (the values are its
        arguments), and is compiled once per shape: for 100,000 rows this is several times
        faster than building the markup cell by cell."""
        book = self.book
        fragments = []
        for c, kind in enumerate(kinds):
            ref, value = self._letters[c], f"values[{c}]"
            if kind is NoneType:
                continue
            if kind is str:
                cell = f'<c r="{ref}{{n}}" t="inlineStr"><is><t>{{{value}}}</t></is></c>'
            elif kind is int:
                cell = f'<c r="{ref}{{n}}"><v>{{{value}}}</v></c>'
            elif kind is Money:  # amounts from the database: always finite
                cell = (
                    f'<c r="{ref}{{n}}" s="{{money[{value}.places]}}"><v>{{{value}.value}}</v></c>'
                )
            elif kind is dt.datetime:
                cell = f'<c r="{ref}{{n}}" s="{book.datetime_index}"><v>{{serial({value})}}</v></c>'
            elif kind is bool:
                cell = f'<c r="{ref}{{n}}" t="inlineStr">{{words[{value}]}}</c>'
            elif kind is Decimal:
                cell = f'{{decimal({value}, "{ref}" + n)}}'
            else:  # anything else cell by cell
                cell = f'{{cell({value}, "{ref}" + n)}}'
            fragments.append(cell)
        source = (
            f"def render(n, values):\n    return f'<row r=\"{{n}}\">{''.join(fragments)}</row>'\n"
        )
        namespace = {
            "money": _MoneyStyles(book),
            "serial": _serial_text,
            "words": {True: book.yes_cell, False: book.no_cell},
            "decimal": _decimal_cell,
            "cell": self._cell,
        }
        exec(compile(source, "<xlsx row>", "exec"), namespace)
        strings = tuple(kind is str for kind in kinds) if str in kinds else None
        return namespace["render"], strings

    def _cell(self, value: Any, ref: str, head: str = "") -> str:
        """One cell, whole ("" for an empty one); ``head`` is the header's style."""
        book = self.book
        kind = type(value)
        if kind is str:
            if not value:
                return ""
            text = f"<is><t>{value}</t></is>" if _plain(value) else _inline_text(value)
            return f'<c r="{ref}"{head} t="inlineStr">{text}</c>'
        if value is None:
            return ""
        if kind is Money:
            number = value.value
            if not number.is_finite():
                return ""
            return f'<c r="{ref}" s="{book.money_index(value.places)}"><v>{number}</v></c>'
        if isinstance(value, dt.datetime):
            if value.year > 1900:
                delta = value.replace(tzinfo=None) - _EPOCH
                serial = delta.days + (delta.seconds + delta.microseconds / 1e6) / 86400
            else:
                serial = excel_serial(value)
            return f'<c r="{ref}" s="{book.datetime_index}"><v>{serial!r}</v></c>'
        if kind is bool:
            return f'<c r="{ref}" t="inlineStr">{book.yes_cell if value else book.no_cell}</c>'
        if kind is int or (kind is Decimal and value.is_finite()):
            return f'<c r="{ref}"><v>{value}</v></c>'
        if kind is float:
            return f'<c r="{ref}"><v>{value!r}</v></c>' if math.isfinite(value) else ""
        if isinstance(value, dt.date):
            return f'<c r="{ref}" s="{book.date_index}"><v>{excel_serial(value)!r}</v></c>'
        if isinstance(value, list | tuple):
            text = cell_text(value, book.yes, book.no)
        else:
            text = str(value) if isinstance(value, Money) else cell_text(value)
        return f'<c r="{ref}" t="inlineStr">{_inline_text(text)}</c>' if text else ""

    def _render_cells(self, n: str, values: Sequence[Any], bold: bool) -> str:
        """One ``<row>`` element cell by cell (rows with strings to escape, the header)."""
        head = f' s="{self.book.bold_index}"' if bold else ""
        letters = self._letters
        cells = [self._cell(v, letters[c] + n, head) for c, v in enumerate(values)]
        return f'<row r="{n}">{"".join(cells)}</row>'

    def _write_cells(self, r: int, values: Sequence[Any], *, bold: bool) -> None:
        """The same row through xlsxwriter's cell API (the fallback)."""
        write = self.worksheet.write
        book = self.book
        for c, value in enumerate(values):
            if value is None:
                continue
            if bold:
                write(r, c, str(value), book.bold)
            elif isinstance(value, Money):
                write(r, c, value.value, book.money_format(value.places))
            elif isinstance(value, bool):
                write(r, c, book.yes if value else book.no)
            elif isinstance(value, Decimal | float) and not math.isfinite(value):
                if isinstance(value, Decimal):  # as the rendered rows show it: text
                    write(r, c, str(value))
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

    def finish(self) -> None:
        """Writes what is pending and tells xlsxwriter the extent of the rows it did not
        write itself."""
        if self._rows is None or not self.next_row:
            return
        self.flush()
        ws = self.worksheet
        ws.dim_rowmin, ws.dim_rowmax = 0, self.next_row - 1
        ws.dim_colmin, ws.dim_colmax = 0, max(0, self.width - 1)


_XLSXWRITER_ZIP = xlsxwriter.workbook.ZipFile
_ZIP_SWAP = threading.Lock()


class _FastZipFile(zipfile.ZipFile):
    """xlsxwriter's zip container with the fastest deflate level: for the sheets of an
    export (100 MB of XML for 100,000 positions) level 1 takes a quarter of the default
    level's time for a file about a quarter larger."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("compresslevel", 1)
        super().__init__(*args, **kwargs)


class XlsxFile:
    """A workbook in constant-memory mode: sheets are written one after the other, each
    row once. Datetimes are written as the local wall time they carry."""

    extension = "xlsx"
    content_type = XLSX_TYPE

    def __init__(self, handle: BinaryIO, *, yes: str = "Yes", no: str = "No") -> None:
        options: dict[str, object] = {}
        if (tmpdir := job_tmpdir()) is not None:  # rows spool there: removed after a crash
            options["tmpdir"] = tmpdir
        self._book = xlsxwriter.Workbook(
            handle,
            {
                **options,
                "constant_memory": True,
                "strings_to_numbers": False,
                "strings_to_formulas": False,
                "strings_to_urls": False,
            },
        )
        self.bold = self._book.add_format({"bold": True})
        self.datetime_format = self._book.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"})
        self.date_format = self._book.add_format({"num_format": "yyyy-mm-dd"})
        # Style indexes for the rendered rows (assigning one marks the format as used).
        self.bold_index = self.bold._get_xf_index()
        self.datetime_index = self.datetime_format._get_xf_index()
        self.date_index = self.date_format._get_xf_index()
        self._money: dict[int, Any] = {}
        self._money_index: dict[int, int] = {}
        self.yes, self.no = yes, no
        self.yes_cell, self.no_cell = _inline_text(yes), _inline_text(no)
        self._titles: set[str] = set()
        self._sheets: list[XlsxSheet] = []

    def money_format(self, places: int) -> Any:
        found = self._money.get(places)
        if found is None:
            pattern = "0." + "0" * places if places else "0"
            found = self._money[places] = self._book.add_format({"num_format": pattern})
        return found

    def money_index(self, places: int) -> int:
        found = self._money_index.get(places)
        if found is None:
            found = self._money_index[places] = self.money_format(places)._get_xf_index()
        return found

    def sheet(self, title: str, headers: Sequence[str]) -> XlsxSheet:
        name = title.translate(_SHEET_FORBIDDEN).strip("' ")[:31] or "Sheet"
        base, n = name, 2
        while name.lower() in self._titles:
            suffix = f" ({n})"
            name, n = base[: 31 - len(suffix)] + suffix, n + 1
        self._titles.add(name.lower())
        sheet = XlsxSheet(self, self._book.add_worksheet(name), headers)
        self._sheets.append(sheet)
        return sheet

    def close(self) -> None:
        """Writes the workbook (the zip container): for a large export a second or more of
        work, which exporters may run in a thread (``asyncio.to_thread``) to keep the job's
        heartbeats going."""
        for sheet in self._sheets:
            sheet.finish()
        # xlsxwriter offers no compression setting: its zip class is swapped for the
        # duration of the call, one workbook at a time.
        with _ZIP_SWAP:
            xlsxwriter.workbook.ZipFile = _FastZipFile
            try:
                self._book.close()
            finally:
                xlsxwriter.workbook.ZipFile = _XLSXWRITER_ZIP
