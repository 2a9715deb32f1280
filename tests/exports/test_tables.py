"""The streaming table files: XLSX rows rendered past xlsxwriter's cell API read back with
openpyxl exactly as xlsxwriter's own cells do, CSV cells as text."""

from __future__ import annotations

import csv
import datetime as dt
import io
from decimal import Decimal

import openpyxl
import pytest

from admit.exports import formats
from admit.exports import xlsx as xlsx_module
from admit.exports.tables import CsvFile, Money, TableLimitExceeded
from admit.exports.xlsx import XlsxFile, XlsxSheet

MOMENT = dt.datetime(2030, 5, 1, 18, 30, 15, tzinfo=dt.timezone(dt.timedelta(hours=2)))
ROWS = [
    ["plain", 1, Money(Decimal("23.00")), MOMENT, True, None, Decimal("19.00")],
    ["A & B <c>", -7, Money(Decimal("0.5"), 0), dt.date(2030, 1, 2), False, "", Decimal("1E+2")],
    ["  edge ", 2**40, Money(Decimal("1234.5"), 3), MOMENT, True, "x", Decimal("NaN")],
    ["ctl\x01char", 0, Money(Decimal("-3.20")), None, None, "_x0041_", 1.25],
    ["line\nbreak\ttab", None, None, None, ["a", True, 3], "ü€😀", float("nan")],
    ["x" * 40000, 3, Money(Decimal("1")), dt.datetime(1900, 1, 10, 12), None, None, None],
]
EXPECTED = [
    ["plain", 1, 23, dt.datetime(2030, 5, 1, 18, 30, 15), "Yes", None, 19],
    ["A & B <c>", -7, 0.5, dt.datetime(2030, 1, 2), "No", None, 100],
    ["  edge ", 2**40, 1234.5, dt.datetime(2030, 5, 1, 18, 30, 15), "Yes", "x", "NaN"],
    # Excel's own escapes (openpyxl leaves them as they are; Excel shows the original).
    ["ctl_x0001_char", 0, -3.2, None, None, "_x005F_x0041_", 1.25],
    ["line\nbreak\ttab", None, None, None, "a, Yes, 3", "ü€😀", None],
    ["x" * 32767, 3, 1, dt.datetime(1900, 1, 10, 12), None, None, None],
]
HEADERS = ["Text", "Int", "Money", "When", "Flag", "Other", "Number"]


def xlsx(rows: list[list], **kw) -> bytes:
    handle = io.BytesIO()
    book = XlsxFile(handle, **kw)
    sheet = book.sheet("Sheet: one/two", HEADERS)
    for row in rows:
        sheet.row(row)
    book.sheet("Second", ["Only"]).row(["value"])
    book.close()
    return handle.getvalue()


def read(data: bytes) -> openpyxl.Workbook:
    return openpyxl.load_workbook(io.BytesIO(data))


@pytest.mark.parametrize("render", [True, False], ids=["rendered", "cell-api"])
def test_xlsx_cells_read_back_with_their_types(monkeypatch, render):
    monkeypatch.setattr(XlsxSheet, "RENDER", render)
    book = read(xlsx(ROWS * 3))
    assert book.sheetnames == ["Sheet  one two", "Second"]
    sheet = book.worksheets[0]
    values = [list(r) for r in sheet.iter_rows(values_only=True)]
    assert values[0] == HEADERS
    assert values[1:] == EXPECTED * 3
    assert sheet.dimensions == f"A1:G{len(ROWS) * 3 + 1}"
    assert sheet.freeze_panes == "A2"
    assert sheet["A1"].font.b and not sheet["A2"].font.b
    assert [sheet.cell(r, 3).number_format for r in (2, 3, 4)] == ["0.00", "0", "0.000"]
    assert sheet["D2"].number_format == "yyyy-mm-dd hh:mm:ss"
    assert sheet["D3"].number_format == "yyyy-mm-dd"
    assert [list(r) for r in book["Second"].iter_rows(values_only=True)] == [["Only"], ["value"]]


def test_rows_of_many_shapes_and_translated_words(monkeypatch):
    monkeypatch.setattr(xlsx_module, "_MAX_SHAPES", 2)
    rows = [[None] * i + ["v", i, Money(Decimal(i))] for i in range(6)]
    sheet = read(xlsx(rows, yes="Ja", no="Nein")).worksheets[0]
    values = [list(r) for r in sheet.iter_rows(values_only=True)][1:]
    assert values == [[None] * i + ["v", i, i] + [None] * (8 - i - 3) for i in range(6)]
    flags = read(xlsx([[None, None, None, None, True], [None] * 4 + [False]], yes="Ja", no="Nein"))
    assert [r[4] for r in flags.worksheets[0].iter_rows(values_only=True)][1:] == ["Ja", "Nein"]


def test_too_many_rows_for_xlsx(monkeypatch):
    monkeypatch.setattr(xlsx_module, "XLSX_MAX_ROWS", 3)
    book = XlsxFile(io.BytesIO())
    sheet = book.sheet("S", ["h"])
    sheet.row(["a"])
    sheet.row(["b"])
    with pytest.raises(TableLimitExceeded, match="at most 3 rows"):
        sheet.row(["c"])


def test_the_xlsx_is_compressed():
    data = xlsx([["same text"] * 7] * 2000)
    assert len(data) < 60_000


@pytest.mark.parametrize(("kind", "delimiter"), [("csv", ","), ("csv;", ";")])
def test_csv_cells_are_text(kind, delimiter):
    handle = io.BytesIO()
    book = formats.table_file(kind, handle, yes="Ja", no="Nein")
    sheet = book.sheet("ignored", HEADERS)
    for row in ROWS[:5]:
        sheet.row(row)
    with pytest.raises(RuntimeError):
        book.sheet("two", ["x"])
    book.close()
    rows = list(csv.reader(io.StringIO(handle.getvalue().decode()), delimiter=delimiter))
    assert rows[0] == HEADERS
    assert rows[1] == ["plain", "1", "23.00", MOMENT.isoformat(), "Ja", "", "19.00"]
    assert rows[2] == ["A & B <c>", "-7", "1", "2030-01-02", "Nein", "", "1E+2"]
    assert rows[3][2] == "1234.500" and rows[3][0] == "  edge "
    assert rows[4][2] == "-3.20" and rows[4][5] == "_x0041_"
    assert rows[5][4] == "a, Ja, 3" and rows[5][0] == "line\nbreak\ttab"


def test_money_text_rounds_half_up_to_its_places():
    assert [str(Money(Decimal(v), p)) for v, p in [("2.50", 0), ("-0.5", 0), ("1.005", 2)]] == [
        "3",
        "-1",
        "1.01",
    ]
    assert Money(Decimal("1.50"), 2) == Money(Decimal("1.5"), 2)
    assert CsvFile.extension == "csv" and XlsxFile.extension == "xlsx"


FORMULAS = ["=1+2", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\r=1", '=HYPERLINK("http://x")']
NUMBERS = ["-5.00", "+3", "-1e3", "-.5", "42"]


@pytest.mark.parametrize("kind", ["csv", "csv;"])
def test_csv_cells_that_would_be_formulas_are_escaped(kind):
    """Cells starting with =, +, -, @, tab or CR get a leading ' (OWASP's CSV injection
    advice); plain numbers, as text or as numbers, stay numbers; so do negative amounts."""
    handle = io.BytesIO()
    book = formats.table_file(kind, handle)
    sheet = book.sheet("ignored", ["=header", *HEADERS[1:]])
    sheet.row(FORMULAS)
    sheet.row(NUMBERS)
    sheet.row([-7, Money(Decimal("-3.20")), Decimal("-1E+2"), -1.5, ["=a", "b"], "a=b", ""])
    book.close()
    delimiter = ";" if kind == "csv;" else ","
    text = io.StringIO(handle.getvalue().decode(), newline="")
    rows = list(csv.reader(text, delimiter=delimiter))
    assert rows[0][0] == "'=header"
    assert rows[1] == ["'" + text for text in FORMULAS]
    assert rows[2] == NUMBERS
    assert rows[3] == ["-7", "-3.20", "-1E+2", "-1.5", "'=a, b", "a=b", ""]


def test_xlsx_formulas_stay_text():
    book = read(xlsx([FORMULAS]))
    values = [c.value for c in book.worksheets[0][2]]
    assert values[:5] == FORMULAS[:5] and values[6] == FORMULAS[6]  # (CR is Excel's _x000D_)
    assert all(c.data_type == "s" for c in book.worksheets[0][2])
