"""clfilter: OpenCL image filters (Gaussian, box, Sobel, KxK convolution) on numpy arrays.

    import clfilter
    soft = clfilter.filter(photo, "gaussian:sigma=2")            # numpy in, numpy out
    edges = clfilter.filter(photo, ["gaussian:sigma=1", "sobel"])  # a chain, fused on the device

Specs are the command line's (``clfilter --list-filters``, or ``clfilter.filters()``). Arrays are
uint8, uint16, float16 or float32, HxW or HxWxC; results have the input's shape and type and follow
OpenCV (GaussianBlur, boxFilter, Sobel, filter2D). Bad specs raise ValueError naming the filter and
parameter; device and build failures RuntimeError with the OpenCL error name; Ctrl-C during a run
cancels it and raises KeyboardInterrupt. ``dask_filter`` runs a chain over a dask array, on one
machine or a cluster.
"""

from . import _clfilter

__all__ = ["filter", "Pipeline", "devices", "filters", "dask_filter"]


def _specs(specs):
    if isinstance(specs, str):
        return [specs]
    specs = list(specs)
    if not all(isinstance(s, str) for s in specs):
        raise TypeError("clfilter: filter specs are strings such as 'gaussian:sigma=2'")
    return specs


class Pipeline:
    """A chain of filters built once on one device, callable on many arrays.

    Programs and strip buffers are kept between calls. ``halo`` is (rows, columns) the chain reads
    beyond each output pixel; ``borders`` each filter's border mode; ``stats()`` describes the last
    run. ``device``: "gpu", "cpu", "P:D" or part of a device name (default: the first GPU, else the
    CPU)."""

    def __init__(self, specs, device=None):
        self.specs = _specs(specs)
        self._pipeline = _clfilter.Pipeline(self.specs, device or "")

    def __call__(self, array, strip_rows=0, progress=None):
        return self._pipeline.run(array, strip_rows, progress)

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


def filter(array, specs, device=None):  # noqa: A001 - the verb users look for
    """``array`` through one filter spec or a list of them; a new array of its shape and type."""
    return Pipeline(specs, device)(array)


def devices():
    """Every OpenCL device: dicts with id ("P:D"), name, platform, type, memory_bytes, label."""
    return _clfilter.devices()


def filters():
    """Every filter: dicts with name, summary and params (name, type, default, help, min, max,
    min_exclusive, max_exclusive, range, choices)."""
    return _clfilter.filters()


def dask_filter(array, specs, device=None):
    """A dask array through the chain, chunk by chunk with overlaps, equal to the whole-image run.

    See clfilter.dask (imported here on first use, so that clfilter itself does not need dask)."""
    from .dask import dask_filter as run
    return run(array, specs, device)
