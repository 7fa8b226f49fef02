"""clfilter: OpenCL image filters (Gaussian, box, Sobel, KxK convolution) on numpy arrays.

    import clfilter
    soft = clfilter.filter(photo, "gaussian:sigma=2")            # numpy in, numpy out
    edges = clfilter.filter(photo, ["gaussian:sigma=1", "sobel"])  # a chain, fused on the device

Specs are the command line's (``clfilter --list-filters``, or ``clfilter.filters()``). Arrays are
HxW or HxWxC; uint8, uint16, float16 and float32 are filtered as they are, other real types in
float32 (float64 and integers come back in their own type, bool as float32). Results have the
input's shape and follow OpenCV (GaussianBlur, boxFilter, Sobel, filter2D). Bad specs raise
ValueError naming the filter and parameter; device and build failures RuntimeError with the OpenCL
error name; Ctrl-C during a run cancels it and raises KeyboardInterrupt. ``dask_filter`` runs a
chain over a dask array, on one machine or a cluster.
"""

import os

import numpy as np

from . import _clfilter

__all__ = ["filter", "filter_files", "Pipeline", "devices", "filters", "dask_filter"]

# Types the device reads and writes as they are; every other real type is filtered in float32.
_NATIVE = (np.uint8, np.uint16, np.float16, np.float32)


def _specs(specs):
    if isinstance(specs, str):
        return [specs]
    if not isinstance(specs, (list, tuple)) or not all(isinstance(s, str) for s in specs):
        raise TypeError("clfilter: filter specs are a string such as 'gaussian:sigma=2' or a list "
                        "of them (got %s)" % type(specs).__name__)
    return list(specs)


def _checked(array):
    """``array`` as an ndarray the core takes, and the dtype the result is returned in.

    uint8, uint16, float16 and float32 go as they are. Other real types are filtered in float32:
    float64 comes back as float64 (values with float32's precision), other integers as their own
    type, rounded half to even and saturated (as OpenCV stores them), bool as float32 (a filtered
    mask is fractional). Lists and other array-likes are read by numpy first."""
    if not isinstance(array, np.ndarray):
        if not isinstance(array, (list, tuple)) and not hasattr(array, "__array__"):
            raise TypeError("clfilter: expected a numpy array (HxW or HxWxC) or a nested list "
                            "of numbers (got %s)" % type(array).__name__)
        array = np.asarray(array)
    if array.ndim not in (2, 3):
        raise ValueError("clfilter: expected an HxW or HxWxC array (got %d dimensions, shape %s)"
                         % (array.ndim, array.shape))
    kind = array.dtype.kind
    if kind not in "biuf":
        raise TypeError("clfilter: arrays of numbers only (got dtype %s)" % array.dtype)
    if array.dtype.type in _NATIVE:
        native = array.dtype.newbyteorder("=")
        return array.astype(native, copy=False), native
    result = np.dtype(np.float32) if kind == "b" else array.dtype.newbyteorder("=")
    return array.astype(np.float32), result


def _stored(result, dtype):
    """A float32 result in ``dtype``, as _checked's rule says."""
    if result.dtype == dtype:
        return result
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(result), info.min, info.max).astype(dtype)
    return result.astype(dtype)


class Pipeline:
    """A chain of filters built once on one device (or several), callable on many arrays.

    Programs and strip buffers are kept between calls. ``halo`` is (rows, columns) the chain reads
    beyond each output pixel; ``borders`` each filter's border mode; ``stats()`` describes the last
    run. ``device``: "gpu", "cpu", "P:D" or part of a device name (default: CLF_DEVICE, else the
    first GPU, else the CPU); "all" or a list such as "cpu,cpu" spreads each image's strips over
    several devices. ``plugin_dirs``: directories searched for filter plugins before
    CLF_PLUGIN_PATH's and the installed ones."""

    def __init__(self, specs, device=None, plugin_dirs=None):
        self.specs = _specs(specs)
        dirs = [str(d) for d in (plugin_dirs or [])]
        self._pipeline = _clfilter.Pipeline(self.specs, device or "", dirs)

    def __call__(self, array, strip_rows=0, progress=None, out=None):
        """``array`` through the chain. The result has its shape and, by _checked's rule, its type;
        ``out`` (an array of that shape and type, e.g. a numpy.memmap) receives it in place."""
        work, dtype = _checked(array)
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError("clfilter: out must be a numpy array (got %s)" % type(out).__name__)
            if out.shape != work.shape or out.dtype.newbyteorder("=") != dtype:
                raise ValueError("clfilter: out must have shape %s and dtype %s (got %s, %s)"
                                 % (work.shape, dtype, out.shape, out.dtype))
            if not out.flags.writeable:
                raise ValueError("clfilter: out is read-only")
            direct = (dtype == work.dtype and out.flags.c_contiguous and out.dtype.isnative
                      and not np.shares_memory(out, work))
            if direct:
                self._pipeline.run(work, strip_rows, progress, out)
                return out
        result = _stored(self._pipeline.run(work, strip_rows, progress, None), dtype)
        if out is None:
            return result
        np.copyto(out, result)
        return out

    @property
    def halo(self):
        return self._pipeline.halo

    @property
    def borders(self):
        """Each filter's border mode, as the core parsed its spec ("reflect101", "wrap", ...)."""
        return self._pipeline.borders

    @property
    def device(self):
        return self._pipeline.device

    def stats(self):
        return self._pipeline.stats()

    def describe(self):
        return self._pipeline.describe()

    def __repr__(self):
        built = getattr(self, "_pipeline", None)
        return "clfilter.Pipeline(%r, device=%r)" % (self.specs, built.device if built else None)


def filter(array, specs, device=None, out=None, plugin_dirs=None):  # noqa: A001 - the verb
    """``array`` through one filter spec or a list of them; a new array of its shape and type
    (see Pipeline for types, ``out`` and ``plugin_dirs``)."""
    return Pipeline(specs, device, plugin_dirs)(array, out=out)


def filter_files(inputs, output_dir, specs, jobs=None, device=None, quality=None, compression=None,
                 io="auto", plugin_dirs=None):
    """Image files through the chain on the command line's batch engine, as ``clfilter IN...
    --output-dir DIR``: each input written to ``output_dir`` under its own name, in its own pixel
    type and format, metadata kept. ``jobs`` threads (default one per core, at most 4) each hold a
    pipeline and take files from one list; a file's rows are decoded, filtered and encoded in
    strips on C++ threads, without Python or numpy in between. ``quality`` (JPEG, default the
    input's own) and ``compression`` ("zip", "piz", "lzw", "jpeg:85") as the command line's;
    ``io="oiio"`` reads JPEGs through OpenImageIO as well.

    Returns one dict per input, in order: input, output, written (bool), error (None, or the
    command line's message naming the file), warnings (what the output could not keep), format
    ("3840x2160, 3 channels, u8"), ms. A file that fails leaves its output as it was and the
    others go on. Ctrl-C stops the files in flight (their outputs as they were), takes no new
    ones and raises KeyboardInterrupt. Bad specs raise ValueError before any file is opened."""
    filter_files_in_core = getattr(_clfilter, "filter_files", None)
    if filter_files_in_core is None:
        raise RuntimeError("clfilter: filter_files needs the image-file layer, which is built with "
                           "the command line (OpenImageIO); this build of clfilter has none")
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    dirs = [str(d) for d in (plugin_dirs or [])]
    return filter_files_in_core([os.fspath(p) for p in inputs], os.fspath(output_dir),
                                _specs(specs), int(jobs or 0), device or "", dirs,
                                int(quality or 0), compression or "", io)


def devices():
    """Every OpenCL device: dicts with id ("P:D"), name, platform, type, memory_bytes, label."""
    return _clfilter.devices()


def filters(plugin_dirs=None):
    """Every filter: dicts with name, summary and params (name, type, default, help, min, max,
    min_exclusive, max_exclusive, range, choices)."""
    return _clfilter.filters([str(d) for d in (plugin_dirs or [])])


def dask_filter(array, specs, device=None, plugin_dirs=None):
    """A dask array through the chain, chunk by chunk with overlaps, equal to the whole-image run.

    See clfilter.dask (imported here on first use, so that clfilter itself does not need dask)."""
    from .dask import dask_filter as run
    return run(array, specs, device, plugin_dirs)
