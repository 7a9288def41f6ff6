"""``tf.gfile``: TF1's file API, over the local file system (the only one this engine reads).

The names and errors are TF's, so that tutorial code such as ``if tf.gfile.Exists(d):
tf.gfile.DeleteRecursively(d)``, ``tf.gfile.MakeDirs(d)`` or ``with tf.gfile.GFile(path, "rb")``
runs unchanged: a missing file is ``tf.errors.NotFoundError``, a copy or rename onto an
existing file without ``overwrite`` is ``tf.errors.AlreadyExistsError``. Paths with a scheme
(``gs://``, ``hdfs://``) are refused with ``UnimplementedError``.
"""

from __future__ import annotations

import glob as _glob
import os
import shutil

from ..framework.errors import AlreadyExistsError, NotFoundError, UnimplementedError


def _local(path):
    path = os.fspath(path)
    if "://" in path:
        raise UnimplementedError(f"File system scheme '{path.split('://')[0]}' not implemented "
                                 f"(file: '{path}'): this engine reads local files only")
    return path


def _missing(path):
    return NotFoundError(f"{path}; No such file or directory")


class GFile:
    """``tf.gfile.GFile`` (also ``Open`` and ``FastGFile``): a file object; opening a missing
    file for reading is NotFoundError. ``size()`` and ``read(n=-1)`` as TF's."""

    def __init__(self, name, mode="r"):
        self.name = _local(name)
        try:
            self._file = open(self.name, mode)  # noqa: SIM115 (a file object is the API)
        except FileNotFoundError:
            raise _missing(self.name) from None

    def __getattr__(self, attr):
        return getattr(self._file, attr)

    def __iter__(self):
        return iter(self._file)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._file.close()
        return False

    def read(self, n=-1):
        return self._file.read(n)

    def size(self):
        return os.path.getsize(self.name)


Open = FastGFile = GFile


def Exists(filename):  # noqa: N802 (TF's names)
    return os.path.exists(_local(filename))


def IsDirectory(dirname):  # noqa: N802
    return os.path.isdir(_local(dirname))


def MakeDirs(dirname):  # noqa: N802
    """Make ``dirname`` and its parents; an existing directory is fine."""
    os.makedirs(_local(dirname), exist_ok=True)


def MkDir(dirname):  # noqa: N802
    """Make ``dirname`` (its parent must exist); an existing directory is fine."""
    path = _local(dirname)
    if os.path.isdir(path):
        return
    try:
        os.mkdir(path)
    except FileNotFoundError:
        raise _missing(os.path.dirname(path) or path) from None


def DeleteRecursively(dirname):  # noqa: N802
    path = _local(dirname)
    if not os.path.exists(path):
        raise _missing(path)
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.remove(path)


def Remove(filename):  # noqa: N802
    path = _local(filename)
    try:
        os.remove(path)
    except FileNotFoundError:
        raise _missing(path) from None


def _check_target(newpath, overwrite):
    if not overwrite and os.path.exists(newpath):
        raise AlreadyExistsError(f"file already exists: {newpath}")


def Rename(oldname, newname, overwrite=False):  # noqa: N802
    old, new = _local(oldname), _local(newname)
    if not os.path.exists(old):
        raise _missing(old)
    _check_target(new, overwrite)
    os.replace(old, new)


def Copy(oldpath, newpath, overwrite=False):  # noqa: N802
    old, new = _local(oldpath), _local(newpath)
    if not os.path.isfile(old):
        raise _missing(old)
    _check_target(new, overwrite)
    shutil.copyfile(old, new)


def Glob(filename):  # noqa: N802
    """The paths matching the pattern, sorted."""
    return sorted(_glob.glob(_local(filename)))


def ListDirectory(dirname):  # noqa: N802
    """The entries of ``dirname`` (names, not paths), sorted."""
    path = _local(dirname)
    if not os.path.isdir(path):
        raise _missing(path)
    return sorted(os.listdir(path))


def Walk(top, in_order=True):  # noqa: N802
    """(dirname, subdirectory names, file names) per directory under ``top``, parents first
    when ``in_order``; nothing for a missing ``top`` (as TF)."""
    walked = [(d, sorted(dirs), sorted(files)) for d, dirs, files in os.walk(_local(top))]
    return iter(walked if in_order else walked[::-1])
