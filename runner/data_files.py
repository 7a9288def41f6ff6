"""The file data sources (``data.source: npz`` or ``csv``): reading, and clear errors naming the
config key, the file and the line or array that is wrong.
"""

from __future__ import annotations

import csv
import math
import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from runner.checks import check_bool, describe, excerpt
from runner.data_inputs import InputSpec
from runner.errors import ConfigError, did_you_mean

# Parameters of the file sources (besides the common keys); see load_npz / load_csv.
FILE_SOURCES: dict[str, tuple[str, ...]] = {
    "npz": ("path", "arrays"),
    "csv": ("path", "columns", "delimiter", "header"),
}


def _resolve_path(cfg: Mapping, source: str, base_dir) -> Path:
    path = cfg.get("path")
    if path is None:
        raise ConfigError("data.path", f"source '{source}' needs a path to a .{source} file")
    if not isinstance(path, (str, Path)):
        raise ConfigError("data.path", f"must be a file path, got {describe(path)}")
    resolved = Path(path).expanduser()
    if not resolved.is_absolute():
        resolved = Path(base_dir) / resolved
    resolved = resolved.resolve()
    if not resolved.is_file():
        what = "is a directory, not a file" if resolved.is_dir() else "file not found"
        raise ConfigError("data.path", f"{what}: {resolved}")
    if resolved.stat().st_size == 0:
        # Files of /proc and /sys report no size: never read them (their contents, such as the
        # environment, must not end up in messages or summaries).
        raise ConfigError("data.path", f"{resolved} is empty, or not a regular data file (a "
                                       "system file such as those under /proc); give a .npz or "
                                       ".csv file")
    return resolved


def load_npz(cfg: Mapping, names: list[str] | None, base_dir) -> dict[str, np.ndarray]:
    """Arrays ``names`` (all when None) from an .npz file saved with ``np.savez``.

    Pickled objects are never loaded: a data file should not be able to run code.
    """
    path = _resolve_path(cfg, "npz", base_dir)
    mapping = _array_names(cfg.get("arrays"), names)
    try:
        archive = np.load(path, allow_pickle=False)
    except Exception as error:  # noqa: BLE001 - any failure to read the file is a data error
        raise ConfigError("data.path", f"cannot read {path} as .npz: {_reason(error)}",
                          stored=f"cannot read {path} as .npz ({type(error).__name__})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ConfigError("data.path", f"not an .npz archive but a single array: {path}")
    with archive:
        available = list(archive.files)
        shown = ", ".join(excerpt(a, 24) for a in available[:12]) or "no arrays"
        for name in names or []:
            array = mapping.get(name, name)
            if array not in available:
                key = f"data.arrays.{name}" if name in mapping else "data.path"
                hint = "" if name in mapping else \
                    " (data.arrays: {input: array} maps other names)"
                raise ConfigError(key, f"{path} has no array '{array}' for "
                                  f"model.inputs.{name}{did_you_mean(array, available)}; "
                                  f"it has: {shown}{hint}",
                                  stored=f"{path} has no array '{array}' for "
                                         f"model.inputs.{name}{hint}")
        return {name: _read_npz_array(archive, mapping.get(name, name), path)
                for name in names or available}


def _array_names(arrays, names: list[str] | None) -> dict[str, str]:
    """``data.arrays``: model input -> the name of its array in the .npz (default: the same)."""
    if arrays is None:
        return {}
    if not isinstance(arrays, Mapping):
        raise ConfigError("data.arrays", f"must map input names to array names, "
                                         f"got {describe(arrays)}")
    for name, array in arrays.items():
        if names is not None and name not in names:
            raise ConfigError(f"data.arrays.{name}", f"no model input '{name}'"
                                                     f"{did_you_mean(name, names)}; inputs: "
                                                     f"{', '.join(names)}")
        if not isinstance(array, str):
            raise ConfigError(f"data.arrays.{name}", f"must be an array name, got "
                                                     f"{describe(array)}")
    return dict(arrays)


def _read_npz_array(archive, name: str, path: Path) -> np.ndarray:
    try:
        return archive[name]
    except ValueError as error:
        if "allow_pickle" in str(error):
            raise ConfigError("data.path", f"array '{name}' in {path} holds Python objects, "
                                           "which are not loaded; save numeric arrays") from None
        raise _unreadable_array(name, path, error) from None
    except Exception as error:  # noqa: BLE001 - a truncated or damaged member, a bad header
        raise _unreadable_array(name, path, error) from None


def _unreadable_array(name: str, path: Path, error: Exception) -> ConfigError:
    what = f"cannot read array '{name}' of {path}"
    return ConfigError("data.path", f"{what}: {_reason(error)}",
                       stored=f"{what} ({type(error).__name__})")


def _reason(error: Exception) -> str:
    """Why a file could not be read, in one short line (no more of its contents than a
    short excerpt)."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def load_csv(cfg: Mapping, specs: list[InputSpec], base_dir) -> dict[str, np.ndarray]:
    """The declared inputs from CSV columns: ``columns: {x: [names or indices], y: [...]}``.

    Each array is float64 [rows, its columns], reshaped to the declared shape when that is fully
    known and has as many elements (e.g. [null, 2, 2] from 4 columns, [null] from 1). A first row
    with a non-numeric cell is a header (``header: true/false`` overrides the guess).
    """
    path = _resolve_path(cfg, "csv", base_dir)
    columns = _parse_columns(cfg.get("columns"), [spec.name for spec in specs])
    delimiter = cfg.get("delimiter", ",")
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ConfigError("data.delimiter", f"must be one character, got {describe(delimiter)}")
    header_flag = cfg.get("header")
    if header_flag is not None:
        header_flag = check_bool("data.header", header_flag)
    rows = _read_csv_rows(path, delimiter)
    header, body = _split_header(rows, header_flag)
    width = len(rows[0][1])
    return {spec.name: _unflatten(_csv_array(path, spec.name, columns[spec.name], header, body,
                                             width), spec.shape)
            for spec in specs}


def _unflatten(array: np.ndarray, shape) -> np.ndarray:
    """[n, k] columns in the declared shape, when that is fully known with k elements per row."""
    if shape is None or len(shape) == 2 or None in shape[1:]:
        return array
    if math.prod(shape[1:]) != array.shape[1]:
        return array
    return array.reshape((array.shape[0], *shape[1:]))


def _parse_columns(columns, names: list[str]) -> dict[str, list]:
    if columns is None:
        raise ConfigError("data.columns", "source 'csv' needs columns: {input: [column names "
                                          "or indices]} for each model input")
    if not isinstance(columns, Mapping):
        raise ConfigError("data.columns", f"must map input names to columns, "
                                          f"got {describe(columns)}")
    for name in names:
        if name not in columns:
            raise ConfigError("data.columns", f"no columns for model.inputs.{name}"
                                              f"{did_you_mean(name, list(columns))}")
    parsed = {}
    for name in names:
        spec = columns[name]
        if isinstance(spec, (str, numbers.Integral)) and not isinstance(spec, bool):
            spec = [spec]
        if isinstance(spec, (str, bytes)) or not isinstance(spec, Sequence) or len(spec) == 0:
            raise ConfigError(f"data.columns.{name}", f"must be a non-empty list of column "
                                                      f"names or indices, got {describe(spec)}")
        parsed[name] = list(spec)
    return parsed


def _read_csv_rows(path: Path, delimiter: str) -> list[tuple[int, list[str]]]:
    """Non-blank rows with their 1-based line numbers, all of one width."""
    try:
        # utf-8-sig: spreadsheets start their CSV files with a byte-order mark.
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = [(reader_line, [cell.strip() for cell in row])
                    for reader_line, row in _numbered(csv.reader(handle, delimiter=delimiter))
                    if any(cell.strip() for cell in row)]
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise ConfigError("data.path", f"cannot read {path} as CSV: {_reason(error)}",
                          stored=f"cannot read {path} as CSV ({type(error).__name__})") from None
    if not rows:
        raise ConfigError("data.path", f"{path} has no rows")
    width = len(rows[0][1])
    for line, row in rows:
        if len(row) != width:
            raise ConfigError("data.path", f"{path} line {line} has {len(row)} fields, "
                                           f"expected {width} as on line {rows[0][0]}")
    return rows


def _numbered(reader):
    for row in reader:
        yield reader.line_num, row


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _split_header(rows, header_flag: bool | None):
    """(header cells or None, body rows); the header is guessed when ``header_flag`` is None."""
    first = rows[0][1]
    has_header = (not all(_is_number(c) for c in first)) if header_flag is None else header_flag
    return (first, rows[1:]) if has_header else (None, rows)


def _column_index(key: str, column, header, width: int) -> tuple[int, str]:
    """The index and a printable name of one column given by name or index."""
    if isinstance(column, bool) or not isinstance(column, (str, numbers.Integral)):
        raise ConfigError(key, f"a column is a name or an index, got {describe(column)}")
    if isinstance(column, numbers.Integral):
        if not -width <= column < width:
            raise ConfigError(key, f"column index {column} out of range: the file has "
                                   f"{width} columns{_delimiter_hint(header)}")
        index = int(column) % width
        return index, (header[index] if header else str(index))
    if header is None:
        raise ConfigError(key, f"column '{column}' is named, but the file has no header row; "
                               "give column indices or add a header")
    if column not in header:
        shown = ", ".join(excerpt(cell, 24) for cell in header[:12])
        more = f" and {len(header) - 12} more" if len(header) > 12 else ""
        close = did_you_mean(column, [c for c in header if len(c) <= 40])
        raise ConfigError(key, f"no column '{column}'{close}; the header has: {shown}{more}"
                               f"{_delimiter_hint(header)}",
                          stored=f"no column '{column}' in the file's header"
                                 f"{_delimiter_hint(header)}")
    return header.index(column), column


def _delimiter_hint(header) -> str:
    """When the header's cells hold another usual delimiter, the ``delimiter`` to set."""
    for other in (";", "\t", "|", ","):
        if header and any(other in cell for cell in header):
            shown = "'\\t'" if other == "\t" else f"'{other}'"
            return f" (the header looks split by {shown}: set data.delimiter: {shown})"
    return ""


def _csv_array(path: Path, name: str, spec: list, header, body, width: int) -> np.ndarray:
    key = f"data.columns.{name}"
    picked = [_column_index(key, column, header, width) for column in spec]
    if not body:
        raise ConfigError("data.path", f"{path} has a header but no data rows")
    cells = [[row[index] for index, _ in picked] for _, row in body]
    try:
        return np.array(cells, dtype=np.float64)
    except ValueError:
        pass  # numpy's parser refused a cell: parse cell by cell to name it (or accept it)
    out = np.empty((len(cells), len(picked)))
    for i, ((line, _), values) in enumerate(zip(body, cells, strict=True)):
        for j, ((index, label), cell) in enumerate(zip(picked, values, strict=True)):
            try:
                out[i, j] = float(cell)
            except ValueError:
                raise ConfigError("data.path", f"{path} line {line}, column '{label}' (for "
                                               f"{name}): {excerpt(cell)} is not a number",
                                  stored=f"{path} line {line}, column {index} (for {name}): "
                                         "not a number") from None
    return out


