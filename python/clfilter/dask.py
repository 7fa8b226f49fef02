"""clfilter over dask arrays: images and batches larger than one machine.

Each chunk is extended from its neighbours by the chain's halo plus up to 15 pixels (dask's
``overlap``), filtered, and trimmed back. The extra pixels put each block's first row and column on
a multiple of 16 in the whole image: a filter whose result depends on where a pixel lies (the fast
Gaussian samples a grid of every D <= 16 pixels, anchored at pixel 0) then sees the grid the
whole image sees. At the image's edges no neighbour exists, so the chunk's edge is the image's edge
and the filters' own border rules apply there, exactly as on the whole image; ``wrap`` borders get
the rows and columns from the far side instead (dask's periodic boundary). The result equals the
whole-image run bit for bit, for every filter and border, except for windows large enough to go by
FFT: their blocks are the chunk's, and the result is the whole image's within the FFT's rounding
(1e-5 of the sum of the kernel's absolute weights, times the largest input value). A chain mixing
``wrap`` with other borders has no such boundary and is refused.

Each worker process builds a pipeline once per chain and device and keeps it (programs and strip
buffers stay warm across chunks); the same code runs on a dask.distributed cluster of many
machines (docs/PYTHON.md).
"""

import itertools

import dask.array as da

from . import Pipeline, _specs

_pipelines = {}  # per process: (specs, device) -> Pipeline

# The largest grid a filter anchors at pixel 0 (the fast Gaussian's D), so block origins on its
# multiples see the whole image's grid.
GRID = 16


def _pipeline(specs, device, plugin_dirs=()):
    key = (tuple(specs), device or "", tuple(plugin_dirs))
    if key not in _pipelines:
        _pipelines[key] = Pipeline(list(specs), device, list(plugin_dirs))
    return _pipelines[key]


def _starts(chunks):
    """Where each chunk starts along an axis."""
    return [0] + list(itertools.accumulate(chunks))[:-1]


def _thick(chunks, depth):
    """``chunks`` with each one thinner than ``depth`` merged into its neighbours."""
    merged = []
    for size in chunks:
        if merged and (merged[-1] < depth or size < depth):
            merged[-1] += size
        else:
            merged.append(size)
    return tuple(merged)


def _filter_block(block, specs, device, plugin_dirs, starts, sizes, depth, periodic,
                  block_id=None):
    """``block`` is a chunk grown by ``depth`` on each side (not past the image's edges unless
    periodic). Its leading rows and columns are cut so that it starts on a multiple of GRID in the
    image (0 at the image's first row and column); it is filtered and the chunk is cut out."""
    cuts, keep = [], []
    for axis in (0, 1):
        start = starts[axis][block_id[axis]]
        size = sizes[axis][block_id[axis]]
        grown = depth[axis] if (periodic or start > 0) else 0
        origin = start - grown
        lead = -origin % GRID  # rows cut so that origin + lead is on the grid (0 stays 0)
        cuts.append(slice(lead, None))
        keep.append(slice(grown - lead, grown - lead + size))
    out = _pipeline(specs, device, plugin_dirs)(block[tuple(cuts)])
    return out[tuple(keep)]


def _wraps(pipeline):
    """True when every filter of the chain wraps, False when none does; mixed chains are refused.
    The borders are the core's reading of the specs: Python never parses a spec itself."""
    borders = [border == "wrap" for border in pipeline.borders]
    if any(borders) and not all(borders):
        raise ValueError("clfilter.dask_filter: a chain that mixes border=wrap with other borders "
                         "has no dask boundary that reproduces it; run it on the whole image")
    return all(borders) and bool(borders)


def dask_filter(array, specs, device=None, plugin_dirs=None):
    """``array`` (a dask array, HxW or HxWxC, not chunked along channels) through ``specs``;
    ``device`` and ``plugin_dirs`` as Pipeline takes them, on every worker."""
    plugin_dirs = tuple(str(d) for d in (plugin_dirs or []))
    specs = _specs(specs)
    if array.ndim not in (2, 3):
        raise ValueError("clfilter.dask_filter: expected an HxW or HxWxC dask array")
    if array.ndim == 3 and len(array.chunks[2]) > 1:
        array = array.rechunk({2: -1})
    pipeline = _pipeline(specs, device, plugin_dirs)  # built here: bad specs fail before any task
    rows, cols = pipeline.halo
    periodic = _wraps(pipeline)
    depth = (rows + GRID - 1, cols + GRID - 1)
    # dask's overlap needs each chunk at least as deep as the overlap: thinner ones are merged.
    array = array.rechunk({axis: _thick(array.chunks[axis], depth[axis]) for axis in (0, 1)})
    overlap_depth = {0: min(depth[0], array.shape[0]), 1: min(depth[1], array.shape[1])}
    if array.ndim == 3:
        overlap_depth[2] = 0
    grown = da.overlap.overlap(array, depth=overlap_depth,
                               boundary="periodic" if periodic else "none")
    return da.map_blocks(_filter_block, grown, chunks=array.chunks, dtype=array.dtype,
                         specs=tuple(specs), device=device, plugin_dirs=plugin_dirs,
                         starts=(_starts(array.chunks[0]), _starts(array.chunks[1])),
                         sizes=(array.chunks[0], array.chunks[1]),
                         depth=(overlap_depth[0], overlap_depth[1]), periodic=periodic)
