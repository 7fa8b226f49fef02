"""clfilter over dask arrays: images and batches larger than one machine.

Each chunk is extended by the chain's halo from its neighbours (``map_overlap``), filtered, and
trimmed back. At the image's edges no neighbour exists, so the chunk's edge is the image's edge and
clfilter applies the filters' own border rules there, exactly as on the whole image; ``wrap``
borders instead get the rows and columns from the far side (dask's periodic boundary). The result
equals the whole-image run for every border mode. A chain mixing ``wrap`` with other borders has
no such boundary and is refused.

Each worker process builds a pipeline once per chain and device and keeps it (programs and strip
buffers stay warm across chunks); the same code runs on a dask.distributed cluster of many
machines (docs/PYTHON.md).
"""

import dask.array as da

from . import Pipeline, _specs

_pipelines = {}  # per process: (specs, device) -> Pipeline


def _pipeline(specs, device):
    key = (tuple(specs), device or "")
    if key not in _pipelines:
        _pipelines[key] = Pipeline(list(specs), device)
    return _pipelines[key]


def _filter_block(block, specs, device):
    return _pipeline(specs, device)(block)


def _wraps(specs):
    """True when every filter of the chain wraps, False when none does; mixed chains are refused."""
    borders = []
    for spec in specs:
        pieces = spec.split(":", 1)[1].split(",") if ":" in spec else []
        params = dict(p.split("=", 1) for p in pieces if "=" in p)
        borders.append(params.get("border", "reflect101").strip() == "wrap")
    if any(borders) and not all(borders):
        raise ValueError("clfilter.dask_filter: a chain that mixes border=wrap with other borders "
                         "has no dask boundary that reproduces it; run it on the whole image")
    return all(borders) and bool(borders)


def dask_filter(array, specs, device=None):
    """``array`` (a dask array, HxW or HxWxC, not chunked along channels) through ``specs``."""
    specs = _specs(specs)
    if array.ndim not in (2, 3):
        raise ValueError("clfilter.dask_filter: expected an HxW or HxWxC dask array")
    if array.ndim == 3 and len(array.chunks[2]) > 1:
        array = array.rechunk({2: -1})
    rows, cols = _pipeline(specs, device).halo  # builds here too: bad specs fail before any task
    depth = {0: rows, 1: cols}
    if array.ndim == 3:
        depth[2] = 0
    boundary = "periodic" if _wraps(specs) else "none"
    return da.map_overlap(_filter_block, array, depth=depth, boundary=boundary, trim=True,
                          dtype=array.dtype, specs=tuple(specs), device=device)
