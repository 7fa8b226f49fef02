"""The Python face: results against OpenCV on real photographs (scikit-image's data), chains, every
dtype and channel count, array layouts, errors, Ctrl-C, and a Dask run on two worker processes equal
to the whole-image run. Run by ctest (the `python` test) with PYTHONPATH=<build>/python."""

import _thread
import importlib
import os

import cv2
import numpy as np
import pytest

import clfilter

try:
    import skimage.data as photos
except ImportError:  # the GPU machine has no scikit-image: the same photographs, carried as .npz
    class _Carried:
        def __init__(self, path):
            self._arrays = np.load(path)

        def __getattr__(self, name):
            return lambda: self._arrays[name]

    photos = _Carried(os.environ["CLF_PHOTOS"])


def optional(module):
    """Dask is on every machine scripts/setup.sh prepared (a missing one fails); only the GPU
    machine, recognised by its carried photographs, may lack it, and there its test is skipped."""
    if "CLF_PHOTOS" in os.environ:
        return pytest.importorskip(module)
    return importlib.import_module(module)

CV_BORDER = {"reflect101": cv2.BORDER_REFLECT_101, "reflect": cv2.BORDER_REFLECT,
             "replicate": cv2.BORDER_REPLICATE, "constant": cv2.BORDER_CONSTANT}


def photographs():
    return {"astronaut": photos.astronaut(), "camera": photos.camera(),
            "coffee": photos.coffee()[:300, :400]}


def opencv(name, image, border):
    """The OpenCV result for our spec `name`, computed in float32, as the reference."""
    f = image.astype(np.float32)
    b = CV_BORDER[border]
    if name == "gaussian":
        return cv2.GaussianBlur(f, (0, 0), 2.0, borderType=b)
    if name == "box":
        return cv2.boxFilter(f, -1, (7, 7), normalize=True, borderType=b)
    if name == "sobel_x":
        return cv2.Sobel(f, cv2.CV_32F, 1, 0, ksize=3, borderType=b)
    if name == "sobel":
        return np.hypot(cv2.Sobel(f, cv2.CV_32F, 1, 0, ksize=3, borderType=b),
                        cv2.Sobel(f, cv2.CV_32F, 0, 1, ksize=3, borderType=b))
    if name == "convolve":
        kernel = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
        return cv2.filter2D(f, -1, kernel, borderType=b)
    raise AssertionError(name)


SPECS = {"gaussian": "gaussian:sigma=2", "box": "box:radius=3", "sobel_x": "sobel:mode=x",
         "sobel": "sobel", "convolve": "convolve:kernel=0,-1,0;-1,5,-1;0,-1,0"}


# Sum of |weights| of each spec in SPECS: the scale of float32 rounding in its partial sums.
KERNEL_L1 = {"gaussian": 1, "box": 1, "sobel_x": 8, "sobel": 8 * 2 ** 0.5, "convolve": 9}


def assert_stored(got, reference, dtype, kernel_l1=1, message=""):
    """``got`` is ``reference`` as OpenCV stores it in ``dtype``. Integers exactly, except within
    float32's reach of a rounding tie (x.5): 1e-4, or 16 ulps of the largest partial sum (the kernel's
    |weights| summed, times the type's largest value), at most a half; there either neighbour."""
    want = stored(reference, dtype)
    diff = np.abs(got.astype(np.float64) - want)
    if not np.issubdtype(dtype, np.integer):
        tolerance = {np.float16: 2e-3, np.float32: 1e-5}[np.dtype(dtype).type]
        assert diff.max() <= tolerance * max(1.0, kernel_l1), message
        return
    largest = np.iinfo(dtype).max * max(1.0, kernel_l1)
    band = min(0.5, max(1e-4, 16 * 2.0 ** (np.floor(np.log2(largest)) - 23)))
    near_tie = np.abs(reference - np.floor(reference) - 0.5) <= band
    bad = (diff > 1) | ((diff == 1) & ~near_tie)
    assert not bad.any(), "%s: %d values off, first at %s (got %s, want %s)" % (
        message, bad.sum(), np.argwhere(bad)[0], got[tuple(np.argwhere(bad)[0])],
        want[tuple(np.argwhere(bad)[0])])


def stored(reference, dtype):
    """The reference as the dtype stores it: OpenCV rounds half to even and saturates integers."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(np.rint(reference), info.min, info.max)
    return reference.astype(dtype).astype(np.float64)


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("border", sorted(CV_BORDER))
def test_every_filter_matches_opencv_on_photographs(name, border):
    for title, photo in photographs().items():
        spec = SPECS[name] + ("," if ":" in SPECS[name] else ":") + "border=" + border
        got = clfilter.filter(photo, spec)
        assert got.shape == photo.shape and got.dtype == photo.dtype
        assert_stored(got, opencv(name, photo, border), photo.dtype, KERNEL_L1[name],
                      "%s %s %s" % (title, name, border))


@pytest.mark.parametrize("given, sigma_x, sigma_y", [
    ("sigma=2", 2, 2), ("sigma_x=4", 4, 4), ("sigma_y=4", 4, 4), ("sigma=2,sigma_x=4", 4, 2),
    ("sigma=2,sigma_y=4", 2, 4), ("sigma_x=1.5,sigma_y=3", 1.5, 3),
    ("sigma=2,sigma_x=1,sigma_y=3", 1, 3)])
def test_gaussian_sigma_x_and_sigma_y_follow_opencv(given, sigma_x, sigma_y):
    # Each axis takes its own sigma, else sigma, else the other axis's (OpenCV's sigmaY=0 rule).
    photo = photos.camera().astype(np.float32) / 255
    got = clfilter.filter(photo, "gaussian:" + given)
    want = cv2.GaussianBlur(photo, (0, 0), sigma_x, sigmaY=sigma_y,
                            borderType=cv2.BORDER_REFLECT_101)
    assert np.abs(got - want).max() <= 1e-5, given


@pytest.mark.parametrize("border", sorted(CV_BORDER))
def test_a_large_window_by_fft_matches_filter2d_on_a_photograph(border):
    # 33x33 full rank: FFT on every device's default tuning; method=fft forces it anyway.
    photo = photos.camera().astype(np.float32) / 255
    kernel = np.random.default_rng(33).uniform(-1, 1, (33, 33)).astype(np.float32)
    spec = "convolve:kernel=%s,method=fft,border=%s" % (
        ";".join(",".join("%.9g" % v for v in row) for row in kernel), border)
    pipeline = clfilter.Pipeline(spec)
    assert "FFT" in pipeline.describe()[0]
    want = cv2.filter2D(photo, -1, kernel, borderType=CV_BORDER[border])
    assert np.abs(pipeline(photo) - want).max() <= 1e-5 * np.abs(kernel).sum()


def test_wrap_border_matches_a_wrapped_pad():
    photo = photos.camera().astype(np.float32) / 255
    padded = cv2.copyMakeBorder(photo, 3, 3, 3, 3, cv2.BORDER_WRAP)
    want = cv2.boxFilter(padded, -1, (7, 7), normalize=True)[3:-3, 3:-3]
    got = clfilter.filter(photo, "box:radius=3,border=wrap")
    np.testing.assert_allclose(got, want, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float16, np.float32])
@pytest.mark.parametrize("channels", [None, 1, 3, 4])
def test_every_dtype_and_channel_count_keeps_shape_and_type(dtype, channels):
    rng = np.random.default_rng(7)
    shape = (61, 83) if channels is None else (61, 83, channels)
    if np.issubdtype(dtype, np.integer):
        image = rng.integers(0, np.iinfo(dtype).max, shape, endpoint=True).astype(dtype)
    else:
        image = rng.random(shape).astype(dtype)
    got = clfilter.filter(image, "gaussian:sigma=1.5")
    assert got.shape == image.shape and got.dtype == image.dtype
    # A fresh array in C order (pybind11 3.0 once gave the result zero strides)
    assert got.flags["C_CONTIGUOUS"] and got.flags["OWNDATA"] and got.strides[-1] == got.itemsize
    want = cv2.GaussianBlur(image.astype(np.float32), (0, 0), 1.5, borderType=cv2.BORDER_REFLECT_101)
    assert_stored(got, want.reshape(shape).astype(np.float64), dtype, 1, str(dtype))


# One sigma for each coarse step D of the multirate blur (README: the largest power of two up to
# sigma / 2, at most 16), and one far past the last.
@pytest.mark.parametrize("sigma", [6, 12, 20, 40, 100], ids=["D2", "D4", "D8", "D16", "D16-wide"])
def test_fast_gaussian_stays_within_what_list_filters_states_on_photographs(sigma):
    # --list-filters gaussian: at most 0.025% of the value range from the exact blur
    # (cv2.GaussianBlur with its own kernel size), a bound over every image.
    for title, photo in photographs().items():
        image = photo.astype(np.float32) / 255
        fast = clfilter.filter(image, "gaussian:sigma=%d,method=fast" % sigma)
        exact = cv2.GaussianBlur(image, (0, 0), sigma, borderType=cv2.BORDER_REFLECT_101)
        difference = (fast - exact).astype(np.float64)
        assert 0 < np.abs(difference).max() <= 0.00025, title


def test_a_chain_equals_its_filters_one_after_another_in_float():
    photo = photos.astronaut().astype(np.float32)
    got = clfilter.filter(photo, ["gaussian:sigma=1", "sobel:mode=x", "box:radius=1"])
    step = cv2.GaussianBlur(photo, (0, 0), 1.0, borderType=cv2.BORDER_REFLECT_101)
    step = cv2.Sobel(step, cv2.CV_32F, 1, 0, ksize=3, borderType=cv2.BORDER_REFLECT_101)
    step = cv2.boxFilter(step, -1, (3, 3), normalize=True, borderType=cv2.BORDER_REFLECT_101)
    np.testing.assert_allclose(got, step, atol=1e-3, rtol=1e-5)


def test_non_contiguous_and_read_only_arrays_give_the_contiguous_result():
    photo = photos.astronaut()
    pipeline = clfilter.Pipeline(["box:radius=2", "sobel"])
    for view in (photo[::2, ::3], photo[:, ::-1], photo.transpose(1, 0, 2), photo[..., 1]):
        np.testing.assert_array_equal(pipeline(view), pipeline(np.ascontiguousarray(view)))
    frozen = photo.copy()
    frozen.setflags(write=False)
    np.testing.assert_array_equal(pipeline(frozen), pipeline(photo))
    assert not frozen.flags.writeable


def test_a_pipeline_is_built_once_and_reports_its_halo_and_stats():
    pipeline = clfilter.Pipeline(["gaussian:sigma=2", "sobel"])
    assert pipeline.halo == (9, 9)  # radius 8, then 1
    a, b = photos.camera(), photos.coins()
    first, second = pipeline(a), pipeline(b)
    np.testing.assert_array_equal(first, pipeline(a))
    assert second.shape == b.shape
    stats = pipeline.stats()
    assert stats["strips"] >= 1 and stats["wall_ms"] > 0 and "strips" in stats["summary"]
    assert len(pipeline.describe()) == 2


def test_listings_describe_devices_and_every_parameter():
    devices = clfilter.devices()
    assert devices and {"id", "name", "type", "label"} <= devices[0].keys()
    filters = {f["name"]: f for f in clfilter.filters()}
    assert {"gaussian", "box", "sobel", "convolve"} <= filters.keys()
    sigma = next(p for p in filters["gaussian"]["params"] if p["name"] == "sigma")
    assert sigma["type"] == "float" and sigma["default"] == "1" and sigma["min"] == 0 and sigma["min_exclusive"] and sigma["range"] == "> 0 and <= 128" and sigma["help"]


def test_errors_name_the_filter_and_parameter():
    photo = photos.camera()
    with pytest.raises(ValueError, match=r"gaussian: sigma must be > 0 and <= 128 \(got -1\)"):
        clfilter.filter(photo, "gaussian:sigma=-1")
    with pytest.raises(ValueError, match=r"unknown filter 'blurr'"):
        clfilter.filter(photo, "blurr")
    with pytest.raises(ValueError, match=r"box: give radius or size, not both"):
        clfilter.filter(photo, "box:radius=1,size=3")
    with pytest.raises(ValueError, match=r"HxW or HxWxC"):
        clfilter.filter(np.zeros(10, np.uint8), "box")
    with pytest.raises(RuntimeError, match=r"no OpenCL device matches 'no such device'"):
        clfilter.filter(photo, "box", device="no such device")


def test_ctrl_c_during_a_run_cancels_it_with_keyboard_interrupt():
    photo = np.tile(photos.camera(), (4, 4))  # 2048 x 2048
    pipeline = clfilter.Pipeline("gaussian:sigma=4")
    seen = []

    def progress(done, total):
        seen.append(done)
        if len(seen) == 1:  # the first report (reports may skip counts: several strips land at once)
            _thread.interrupt_main()  # as Ctrl-C would, between strips

    with pytest.raises(KeyboardInterrupt):
        pipeline(photo, strip_rows=64, progress=progress)
    assert seen and seen[-1] < 2048 // 64  # stopped before the last strip
    np.testing.assert_array_equal(pipeline(photo[:64]), clfilter.filter(photo[:64], "gaussian:sigma=4"))


def test_dask_on_two_worker_processes_equals_the_whole_image_run():
    da = optional("dask.array")
    distributed = optional("distributed")
    Client, LocalCluster = distributed.Client, distributed.LocalCluster

    photo = photos.astronaut()
    gray = photos.camera().astype(np.float32)
    cases = [(photo, ["gaussian:sigma=2", "sobel:border=replicate"], (200, 170, 3)),
             (gray, ["box:radius=3,border=wrap", "sobel:border=wrap"], (128, 200)),
             (gray, ["convolve:kernel=1,2,1;0,0,0;-1,-2,-1,border=constant,border_value=3"], (100, 300))]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        for image, specs, chunks in cases:
            got = clfilter.dask_filter(da.from_array(image, chunks=chunks), specs).compute()
            np.testing.assert_array_equal(got, clfilter.filter(image, specs), err_msg=str(specs))
        assert len(client.scheduler_info()["workers"]) == 2
    with pytest.raises(ValueError, match="mixes border=wrap"):
        clfilter.dask_filter(da.from_array(gray, chunks=100), ["box:border=wrap", "sobel"])


@pytest.mark.parametrize("border", sorted(CV_BORDER) + ["wrap"])
def test_dask_equals_the_whole_image_for_every_filter_and_border(border):
    # Chunks smaller than some halos, odd sizes; specs written with spaces after the commas: the
    # core reads the borders, Python does not parse specs a second time.
    # method=fast samples a grid anchored at pixel 0: chunks of 77 columns start off that grid.
    da = optional("dask.array")
    specs = list(SPECS.values()) + ["gaussian:sigma=12,method=fast", "gaussian:sigma=9,method=fast"]
    for image in [photos.camera().astype(np.float32)[:500, :333], photos.astronaut()]:
        for spec in specs:
            spec += (", " if ":" in spec else ":") + "border=" + border
            for chunks in [(100, 77), (5, 300)]:
                array = da.from_array(image, chunks=chunks + image.shape[2:])
                got = clfilter.dask_filter(array, spec).compute(scheduler="synchronous")
                np.testing.assert_array_equal(got, clfilter.filter(image, spec), err_msg=spec)
    assert clfilter.Pipeline("box:radius=3, border=wrap").borders == ["wrap"]


def test_dask_by_fft_is_the_whole_image_within_the_ffts_rounding():
    # FFT blocks are the chunk's own: PYTHON.md promises 1e-5 of sum |k| times the largest input.
    da = optional("dask.array")
    photo = photos.camera().astype(np.float32) / 255
    kernel = np.random.default_rng(63).uniform(-1, 1, (63, 63)).astype(np.float32)
    spec = "convolve:kernel=%s,method=fft" % ";".join(",".join("%.9g" % v for v in row)
                                                     for row in kernel)
    whole = clfilter.filter(photo, spec)
    for chunks in [(100, 77), (256, 512)]:
        got = clfilter.dask_filter(da.from_array(photo, chunks=chunks), spec).compute(
            scheduler="synchronous")
        assert np.abs(got - whole).max() <= 1e-5 * np.abs(kernel).sum() * photo.max()


def test_arguments_that_are_not_images_or_specs_are_named():
    photo = photos.camera()
    with pytest.raises(ValueError, match=r"HxW or HxWxC array \(got 0 dimensions, shape \(\)\)"):
        clfilter.filter(np.float32(3.0) * np.ones(()), "box")
    with pytest.raises(ValueError, match=r"got 1 dimensions"):
        clfilter.filter(np.ones(5, np.float32), "box")
    with pytest.raises(ValueError, match=r"an empty array \(shape \(0, 5\)\)"):
        clfilter.filter(np.ones((0, 5), np.float32), "box")
    # Channels first (as torch keeps them): named, with the transpose that fixes it.
    rgb = photos.astronaut()
    with pytest.raises(ValueError, match=r"\(3, 512, 512\): 512 channels, more than an image's 64 "
                       r"\(channels go last, HxWxC; for CxHxW pass a.transpose\(1, 2, 0\)\)"):
        clfilter.filter(np.ascontiguousarray(rgb.transpose(2, 0, 1)), "box")
    with pytest.raises(ValueError, match=r"\(512, 512, 70\): 70 channels, more than an image's 64$"):
        clfilter.filter(np.zeros((512, 512, 70), np.uint8), "box")
    with pytest.raises(TypeError, match=r"filter specs are a string .* \(got int\)"):
        clfilter.filter(photo, 5)
    with pytest.raises(TypeError, match=r"filter specs are a string .* \(got list\)"):
        clfilter.filter(photo, ["box", 3])
    with pytest.raises(TypeError, match=r"expected a numpy array .* \(got dict\)"):
        clfilter.filter({"a": 1}, "box")
    with pytest.raises(TypeError, match=r"arrays of numbers only \(got dtype complex64\)"):
        clfilter.filter(np.ones((4, 4), np.complex64), "box")


def test_other_types_are_filtered_in_float32_and_returned_by_the_stated_rule():
    gray = photos.camera()[:128, :160]
    as_float = gray.astype(np.float32)
    want = clfilter.filter(as_float, "gaussian:sigma=1.5")
    f64 = clfilter.filter(gray.astype(np.float64), "gaussian:sigma=1.5")
    assert f64.dtype == np.float64 and np.array_equal(f64, want.astype(np.float64))
    for dtype in (np.int32, np.int16, np.int8, np.uint32):
        info = np.iinfo(dtype)
        image = np.clip(gray.astype(np.int64) * 3 - 200, info.min, info.max).astype(dtype)
        got = clfilter.filter(image, "gaussian:sigma=1.5")
        reference = clfilter.filter(image.astype(np.float32), "gaussian:sigma=1.5")
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, np.clip(np.rint(reference), info.min, info.max))
    mask = gray > 100
    got = clfilter.filter(mask, "box:radius=2")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, clfilter.filter(mask.astype(np.float32), "box:radius=2"))
    listed = clfilter.filter(gray[:8, :8].tolist(), "box")  # Python ints: numpy's int64
    assert listed.dtype == np.int64 and listed.shape == (8, 8)
    big_endian = as_float.astype(">f4")
    np.testing.assert_array_equal(clfilter.filter(big_endian, "gaussian:sigma=1.5"), want)


def test_out_receives_the_result_in_place_a_memmap_included(tmp_path):
    photo = photos.astronaut()
    want = clfilter.filter(photo, "gaussian:sigma=2")
    out = np.zeros_like(photo)
    assert clfilter.filter(photo, "gaussian:sigma=2", out=out) is out
    np.testing.assert_array_equal(out, want)
    mapped = np.memmap(tmp_path / "out.raw", dtype=photo.dtype, mode="w+", shape=photo.shape)
    clfilter.filter(photo, "gaussian:sigma=2", out=mapped)
    mapped.flush()
    np.testing.assert_array_equal(np.fromfile(tmp_path / "out.raw", photo.dtype).reshape(photo.shape),
                                  want)
    strided = np.zeros((photo.shape[0], photo.shape[1] * 2, 3), photo.dtype)[:, ::2]
    clfilter.filter(photo, "gaussian:sigma=2", out=strided)  # not C order: through a copy
    np.testing.assert_array_equal(strided, want)
    doubles = np.zeros(photo.shape, np.float64)
    clfilter.filter(photo.astype(np.float64), "gaussian:sigma=2", out=doubles)
    np.testing.assert_array_equal(doubles, clfilter.filter(photo.astype(np.float64), "gaussian:sigma=2"))
    with pytest.raises(ValueError, match=r"out must have shape"):
        clfilter.filter(photo, "box", out=np.zeros((3, 3), photo.dtype))
    with pytest.raises(ValueError, match=r"out must have shape .* dtype uint8"):
        clfilter.filter(photo, "box", out=np.zeros(photo.shape, np.float32))


def test_device_lists_and_plugin_dirs_are_arguments():
    photo = photos.coffee()[:200, :300]
    two = clfilter.Pipeline("gaussian:sigma=2", device="cpu,cpu")
    assert two.device.count(" + ") == 1
    np.testing.assert_array_equal(two(photo, strip_rows=16),
                                  clfilter.filter(photo, "gaussian:sigma=2", device="cpu"))
    good = os.environ.get("CLF_TEST_GOOD_DIR")
    if good is None:
        pytest.skip("CLF_TEST_GOOD_DIR (set by ctest) names the test plugins")
    names = [f["name"] for f in clfilter.filters(plugin_dirs=[good])]
    assert "test_scale" in names
    got = clfilter.filter(photo.astype(np.float32), "test_scale:factor=2", plugin_dirs=[good])
    np.testing.assert_array_equal(got, photo.astype(np.float32) * 2)
    with pytest.raises(ValueError, match="unknown filter 'test_scale'"):
        clfilter.filter(photo, "test_scale")


@pytest.mark.parametrize("ksize", [3, 5, 7])
def test_sobel_on_u16_is_exact_along_both_axes(ksize):
    # A 7x7 Sobel of u16 photographs reaches 2^24 in a row's partial sums: summed a row at a time,
    # mode=y was 12 levels off where mode=x was exact. The reference is cv2.Sobel in float64.
    for photo in (photos.camera(), photos.astronaut(), photos.coffee()):
        image = photo.astype(np.uint16) * 257
        for mode, dx, dy in (("x", 1, 0), ("y", 0, 1)):
            got = clfilter.filter(image, "sobel:mode=%s,ksize=%d" % (mode, ksize))
            want = cv2.Sobel(image.astype(np.float64), cv2.CV_64F, dx, dy, ksize=ksize,
                             borderType=cv2.BORDER_REFLECT_101)
            np.testing.assert_array_equal(got, np.clip(np.rint(want), 0, 65535).astype(np.uint16),
                                          err_msg="mode=%s ksize=%d" % (mode, ksize))


def test_u8_gaussian_follows_the_float_rule_a_level_from_opencvs_u8_path():
    # README and --list-filters: every type follows OpenCV's float rule; cv2's own u8 GaussianBlur
    # (a 6-sigma fixed-point kernel) is at most a level away.
    for photo in photographs().values():
        for sigma in (1, 2, 3):
            got = clfilter.filter(photo, "gaussian:sigma=%d" % sigma)
            float_rule = cv2.GaussianBlur(photo.astype(np.float32), (0, 0), sigma,
                                          borderType=cv2.BORDER_REFLECT_101)
            assert_stored(got, float_rule.astype(np.float64), np.uint8, 1, "sigma %d" % sigma)
            u8_path = cv2.GaussianBlur(photo, (0, 0), sigma, borderType=cv2.BORDER_REFLECT_101)
            assert np.abs(got.astype(int) - u8_path.astype(int)).max() <= 1
