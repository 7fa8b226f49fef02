"""clfilter: OpenCL image filters (Gaussian, box, Sobel, convolution, median and rank, morphology,
bilateral, Laplacian, unsharp) on numpy arrays, device images and pyopencl arrays.

    import clfilter
    soft = clfilter.filter(photo, "gaussian:sigma=2")            # numpy in, numpy out
    edges = clfilter.filter(photo, ["gaussian:sigma=1", "sobel"])  # a chain, fused on the device
    image = clfilter.to_device(photo)                              # stays on the device
    soft = clfilter.Pipeline("gaussian:sigma=2")(image).get()      # one upload, one download

Specs are the command line's (``clfilter --list-filters``, or ``clfilter.filters()``). Arrays are
HxW or HxWxC; uint8, uint16, float16 and float32 are filtered as they are, other real types in
float32 (float64 and integers come back in their own type, bool as float32). Results have the
input's shape and follow OpenCV (GaussianBlur, boxFilter, Sobel, filter2D). Bad specs raise
ValueError naming the filter and parameter; device and build failures RuntimeError with the OpenCL
error name; Ctrl-C during a run cancels it and raises KeyboardInterrupt. ``dask_filter`` runs a
chain over a dask array, on one machine or a cluster; ``filter_files`` runs files through the
command line's streaming engine. DeviceImage (``to_device``) and pyopencl arrays stay on the
device between calls.
"""

import collections
import os
import threading

import numpy as np

from . import _clfilter

__all__ = ["filter", "filter_files", "Pipeline", "DeviceImage", "to_device", "pyopencl_context",
           "devices", "filters", "dask_filter", "tune"]

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


def _device_args(device):
    """``device`` as the core takes it: (selector, context, cl_device). A pyopencl Context (of one
    device) or CommandQueue names a context made outside clfilter, which clfilter then uses."""
    if device is None or isinstance(device, str):
        return device or "", 0, 0
    if type(device).__module__.startswith("pyopencl"):
        context = getattr(device, "context", device)  # a CommandQueue's, or the Context itself
        chosen = getattr(device, "device", None)
        if chosen is None:
            if len(context.devices) != 1:
                raise ValueError("clfilter: the pyopencl context has %d devices; pass a "
                                 "CommandQueue to say which one" % len(context.devices))
            chosen = context.devices[0]
        return "", context.int_ptr, chosen.int_ptr
    raise TypeError("clfilter: device is a selector such as 'gpu', 'cpu' or '0:1', or a pyopencl "
                    "Context or CommandQueue (got %s)" % type(device).__name__)


def _is_pyopencl_array(value):
    return type(value).__module__.startswith("pyopencl") and hasattr(value, "base_data")


class DeviceImage:
    """An image in one device's memory (``to_device``, or a Pipeline called on a DeviceImage).

    A Pipeline called on it returns another DeviceImage, with nothing crossing the bus; ``get()``
    brings it back as numpy. ``shape`` (HxW or HxWxC), ``dtype`` (uint8, uint16, float16 or
    float32), ``device`` (its label) and ``nbytes`` are properties. It keeps its device open;
    ``release()`` gives its memory back at once, for the next image of its size (later use raises
    ValueError)."""

    def __init__(self, image):
        self._image = image

    @property
    def shape(self):
        return self._image.shape

    @property
    def dtype(self):
        return np.dtype(self._image.dtype)

    @property
    def device(self):
        return self._image.device

    @property
    def nbytes(self):
        return self._image.nbytes

    def get(self, out=None):
        """The image as a new numpy array, or written into ``out`` (C-contiguous, its shape and
        dtype)."""
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError("clfilter: out must be a numpy array (got %s)" % type(out).__name__)
            if out.shape != self.shape or out.dtype != self.dtype or not out.flags.c_contiguous \
                    or not out.flags.writeable:
                raise ValueError("clfilter: out must be a writeable C-contiguous array of shape %s "
                                 "and dtype %s (got %s, %s)"
                                 % (self.shape, self.dtype, out.shape, out.dtype))
        return self._image.get(out)

    def release(self):
        self._image.release()

    def __repr__(self):
        try:
            return "clfilter.DeviceImage(shape=%s, dtype=%s, device=%r)" % (
                self.shape, self.dtype, self.device)
        except ValueError:
            return "clfilter.DeviceImage(released)"


def to_device(array, device=None):
    """``array`` (HxW or HxWxC) copied to the device as a DeviceImage. uint8, uint16, float16 and
    float32 go as they are; other real types as float32 (as a Pipeline filters them). ``device``:
    as Pipeline's (one device)."""
    work, _ = _checked(array)
    return DeviceImage(_clfilter.to_device(work, *_device_args(device)))


def pyopencl_context(device=None):
    """clfilter's OpenCL context for ``device`` as a ``pyopencl.Context``: arrays made in it go
    through clfilter's Pipelines without a host copy (the other way round: build the Pipeline on
    your own context, ``Pipeline(specs, device=queue_or_context)``)."""
    import pyopencl
    context, _ = _clfilter.context_handle(*_device_args(device))
    return pyopencl.Context.from_int_ptr(context, retain=True)


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
    several devices. A pyopencl Context or CommandQueue: that context, shared with pyopencl.
    ``plugin_dirs``: directories searched for filter plugins before CLF_PLUGIN_PATH's and the
    installed ones.

    Calls on numpy arrays read the array where it is (a copy only when it is not C-contiguous or
    not a type the device takes) and write a new array (or ``out``); strip buffers stay allocated
    for the next call of the same shape. The GIL is released while the device works. A Pipeline
    serialises its own calls: threads take a Pipeline each (``filter()`` keeps one per thread)."""

    def __init__(self, specs, device=None, plugin_dirs=None):
        self.specs = _specs(specs)
        dirs = [str(d) for d in (plugin_dirs or [])]
        selector, context, cl_device = _device_args(device)
        self._pipeline = _clfilter.Pipeline(self.specs, selector, dirs, context, cl_device)

    def __call__(self, array, strip_rows=0, progress=None, out=None):
        """``array`` through the chain. A numpy array gives a numpy array of its shape and, by
        _checked's rule, its type; ``out`` (an array of that shape and type, e.g. a numpy.memmap)
        receives it in place. A DeviceImage gives a DeviceImage (into ``out``, a DeviceImage of its
        shape, when given) and a pyopencl Array a pyopencl Array on its queue: nothing crosses the
        bus."""
        if isinstance(array, DeviceImage):
            if out is not None and not isinstance(out, DeviceImage):
                raise TypeError("clfilter: out for a DeviceImage is a DeviceImage (got %s)"
                                % type(out).__name__)
            return DeviceImage(self._pipeline.run_device(
                array._image, strip_rows, progress, out._image if out is not None else None))
        if _is_pyopencl_array(array):
            return self._run_pyopencl(array, strip_rows, progress, out)
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

    def _run_pyopencl(self, array, strip_rows, progress, out):
        if array.context.int_ptr != self._pipeline.context_handle:
            raise ValueError("clfilter: the pyopencl array is in another OpenCL context than this "
                             "Pipeline's; build the Pipeline on it (Pipeline(specs, "
                             "device=array.queue)) or make arrays in clfilter.pyopencl_context()")
        if array.dtype.type not in _NATIVE or not array.dtype.isnative:
            raise TypeError("clfilter: pyopencl arrays of uint8, uint16, float16 or float32 only "
                            "(got %s)" % array.dtype)
        if array.ndim not in (2, 3) or not array.flags.c_contiguous:
            raise ValueError("clfilter: expected a C-contiguous HxW or HxWxC pyopencl array (got "
                             "shape %s, strides %s)" % (array.shape, array.strides))
        if out is None:
            import pyopencl.array as cl_array
            out = cl_array.empty(array.queue if array.queue is not None else array.context,
                                 array.shape, array.dtype)
        elif not _is_pyopencl_array(out) or out.shape != array.shape or out.dtype != array.dtype \
                or not out.flags.c_contiguous or out.context.int_ptr != array.context.int_ptr:
            raise ValueError("clfilter: out for a pyopencl array is a C-contiguous pyopencl array "
                             "of its shape, dtype and context")
        # clfilter's queues are not the array's: what is queued to write the input (or to read
        # ``out``) finishes first. The call returns once the result is written.
        for queued in (array, out):
            if queued.queue is not None:
                queued.queue.finish()
        self._pipeline.run_buffers(array.base_data.int_ptr, array.offset, out.base_data.int_ptr,
                                   out.offset, list(array.shape), array.dtype, strip_rows, progress)
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


# filter()'s pipelines, per thread: the last few chains stay built (programs, strip buffers).
_recent = threading.local()
_RECENT_CHAINS = 4


def _recent_pipeline(specs, device, plugin_dirs):
    args = _device_args(device)
    key = (tuple(_specs(specs)), args, tuple(str(d) for d in (plugin_dirs or [])))
    cache = getattr(_recent, "pipelines", None)
    if cache is None:
        cache = _recent.pipelines = collections.OrderedDict()
    pipeline = cache.get(key)
    if pipeline is None:
        pipeline = Pipeline(specs, device, plugin_dirs)
        cache[key] = pipeline
        while len(cache) > _RECENT_CHAINS:
            cache.popitem(last=False)
    cache.move_to_end(key)
    return pipeline


def filter(array, specs, device=None, out=None, plugin_dirs=None):  # noqa: A001 - the verb
    """``array`` through one filter spec or a list of them; a new array of its shape and type
    (see Pipeline for types, ``out``, ``plugin_dirs``, DeviceImages and pyopencl arrays). Each
    thread keeps its last 4 chains built, so that repeated calls cost what a Pipeline's do."""
    return _recent_pipeline(specs, device, plugin_dirs)(array, out=out)


def filter_files(inputs, output_dir, specs, jobs=None, device=None, quality=None, compression=None,
                 io="auto", plugin_dirs=None, type=None):  # noqa: A002 - the command line's name
    """Image files through the chain on the command line's batch engine, as ``clfilter IN...
    --output-dir DIR``: each input written to ``output_dir`` under its own name, in its own pixel
    type and format, metadata kept. ``jobs`` threads (default one per core, at most 4) each hold a
    pipeline and take files from one list; a file's rows are decoded, filtered and encoded in
    strips on C++ threads, without Python or numpy in between. ``quality`` (JPEG, default the
    input's own) and ``compression`` ("zip", "piz", "lzw", "jpeg:85") as the command line's;
    ``io="oiio"`` reads JPEGs through OpenImageIO as well. ``type`` ("u8", "u16", "f16", "f32"):
    the pixel type written, as ``--type`` (a format that cannot hold it fails that file).

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
                                int(quality or 0), compression or "", io, type or "")


def devices():
    """Every OpenCL device: dicts with id ("P:D"), name, platform, type, memory_bytes, label."""
    return _clfilter.devices()


def tune(device=None, filters=None, sizes=None, progress=None):
    """Measures each kernel family's layouts on one device and keeps the fastest for later runs,
    as ``clfilter --tune`` does: in the device's tuned file in the cache directory, applied to the
    device now and whenever it is opened later. ``filters``: specs run as one chain on every
    family beside its own workloads (tuning for what you run). ``sizes``: the (width, height) of
    the f32 images measured (default 4096^2 and 8192^2 on GPUs, 1024^2 on CPUs). ``progress``: a
    callable given each line. Returns {"file": path, "families": [{family, chosen, database_ms,
    chosen_ms, candidates, refused, summary}]}; "chosen" "" is the database's layout."""
    chain = _specs(filters) if filters is not None else []
    measured = [(int(w), int(h)) for w, h in (sizes or [])]
    return _clfilter.tune(*_device_args(device), chain, measured, progress)


def filters(plugin_dirs=None):
    """Every filter: dicts with name, summary and params (name, type, default, help, min, max,
    min_exclusive, max_exclusive, range, choices)."""
    return _clfilter.filters([str(d) for d in (plugin_dirs or [])])


def dask_filter(array, specs, device=None, plugin_dirs=None):
    """A dask array through the chain, chunk by chunk with overlaps, equal to the whole-image run.

    See clfilter.dask (imported here on first use, so that clfilter itself does not need dask)."""
    from .dask import dask_filter as run
    return run(array, specs, device, plugin_dirs)
