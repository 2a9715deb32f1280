"""The table file for a requested format: CSV (:mod:`admit.exports.tables`) or XLSX
(:mod:`admit.exports.xlsx`, which builds on the tables' cell types). Apart from both, so that
neither file kind imports the other."""

from __future__ import annotations

from typing import BinaryIO

from admit.exports.tables import CsvFile, TableFile


def table_file(kind: str, handle: BinaryIO, *, yes: str = "Yes", no: str = "No") -> TableFile:
    """``"xlsx"`` or ``"csv"`` (``"csv;"`` for semicolon-separated)."""
    if kind == "xlsx":
        from admit.exports.xlsx import XlsxFile

        return XlsxFile(handle, yes=yes, no=no)
    if kind in ("csv", "csv;"):
        return CsvFile(handle, delimiter=";" if kind == "csv;" else ",", yes=yes, no=no)
    raise ValueError(f"unknown table file kind {kind!r}")
