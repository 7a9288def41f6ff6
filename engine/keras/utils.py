"""``tf.keras.utils``: ``get_file`` (a file downloaded once into Keras' cache, as TF 1.x programs
fetch their data sets: ``~/.keras/datasets/iris_training.csv``) and ``to_categorical``."""

from __future__ import annotations

import hashlib
import os
import tarfile
import urllib.error
import urllib.request
import zipfile

import numpy as np


def _hash(path, algorithm):
    h = hashlib.sha256() if algorithm == "sha256" else hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(65535), b""):
            h.update(chunk)
    return h.hexdigest()


def _extract(path, into, archive_format="auto"):
    """Unpack a tar or zip archive into ``into``; False when ``path`` is neither."""
    formats = ("tar", "zip") if archive_format == "auto" else (
        (archive_format,) if isinstance(archive_format, str) else tuple(archive_format or ()))
    if "tar" in formats and tarfile.is_tarfile(path):
        with tarfile.open(path) as archive:
            archive.extractall(into, filter="data")
        return True
    if "zip" in formats and zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            archive.extractall(into)
        return True
    return False


def get_file(fname, origin=None, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", hash_algorithm="auto", extract=False,
             archive_format="auto", cache_dir=None):
    """The path of ``fname`` in ``cache_dir/cache_subdir`` (``~/.keras/datasets``; ``/tmp/.keras``
    when the home folder cannot be written), downloaded from ``origin`` unless a file is there
    already (and its hash matches ``file_hash`` when one is given). ``untar`` / ``extract``
    unpack the archive beside it. A failed download removes its partial file and raises
    Keras' "URL fetch failure on ..." error."""
    if cache_dir is None:
        cache_dir = os.path.join(os.path.expanduser("~"), ".keras")
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    base = os.path.expanduser(cache_dir)
    if not _can_make(base) or not os.access(base, os.W_OK):
        base = os.path.join("/tmp", ".keras")
    datadir = os.path.join(base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    fname = os.fspath(fname)
    untar_fpath = os.path.join(datadir, fname)
    fpath = untar_fpath + ".tar.gz" if untar else untar_fpath
    if hash_algorithm == "auto":
        hash_algorithm = "sha256" if file_hash is not None and len(file_hash) == 64 else "md5"
    download = not os.path.exists(fpath)
    if not download and file_hash is not None and _hash(fpath, hash_algorithm) != file_hash:
        print(f"A local file was found, but it seems to be incomplete or outdated because the "
              f"{hash_algorithm} file hash does not match the original value of {file_hash} so "
              "we will re-download the data.")
        download = True
    if download:
        if origin is None:
            raise ValueError(f"get_file: no file {fpath} and no origin to download it from")
        print("Downloading data from", origin)
        try:
            urllib.request.urlretrieve(origin, fpath)
        except (urllib.error.URLError, OSError) as exc:
            if os.path.exists(fpath):
                os.remove(fpath)
            reason = getattr(exc, "reason", None) or getattr(exc, "msg", None) or exc
            raise Exception(f"URL fetch failure on {origin}: {reason}") from exc
    if untar:
        if not os.path.exists(untar_fpath):
            _extract(fpath, datadir, archive_format="tar")
        return untar_fpath
    if extract:
        _extract(fpath, datadir, archive_format)
    return fpath


def _can_make(path):
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    return True


def to_categorical(y, num_classes=None, dtype="float32"):
    """One-hot rows of the class numbers ``y`` (the last axis of size 1 dropped), as Keras'."""
    y = np.array(y, dtype="int")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.ravel()
    num_classes = num_classes or int(np.max(y)) + 1
    out = np.zeros((y.shape[0], num_classes), dtype=dtype)
    out[np.arange(y.shape[0]), y] = 1
    return out.reshape(shape + (num_classes,))


