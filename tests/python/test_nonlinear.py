"""The non-linear filters and the compositions against independent references on real photographs
(scikit-image's data): cv2.medianBlur, scipy.ndimage.percentile_filter, cv2.morphologyEx,
cv2.bilateralFilter (and, for float, its formula written here in numpy), cv2.Laplacian, and the
unsharp mask's formula on cv2.GaussianBlur. Every border, u8/u16/float, 1 and 3 channels, odd
sizes, 1-row strips, chains and Dask."""

import cv2
import numpy as np
import pytest
import scipy.ndimage as ndi

import clfilter
from test_clfilter import CV_BORDER, assert_stored, optional, photos

# Our border names as scipy.ndimage's modes.
SCIPY_MODE = {"replicate": "nearest", "reflect": "reflect", "reflect101": "mirror",
              "wrap": "wrap", "constant": "constant"}
# And as numpy.pad's.
NUMPY_PAD = {"replicate": "edge", "reflect": "symmetric", "reflect101": "reflect", "wrap": "wrap"}


def gray():
    return photos.camera()[100:356, 50:370]          # 256 x 320, u8


def colour():
    return photos.astronaut()[:200, 100:330]          # 200 x 230 x 3, u8


def typed(image, dtype):
    if dtype == np.uint8:
        return image
    if dtype == np.uint16:
        return image.astype(np.uint16) * 257
    return image.astype(np.float32) / 255


def footprint_size(image, k):
    return (k, k) + ((1,) if image.ndim == 3 else ())


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
@pytest.mark.parametrize("ksize", [3, 5, 7, 9, 11, 25])
def test_median_equals_scipy_and_opencv_exactly(dtype, ksize):
    for image in (typed(gray(), dtype), typed(colour(), dtype)):
        got = clfilter.filter(image, "median:ksize=%d" % ksize)
        want = ndi.median_filter(image, size=footprint_size(image, ksize), mode="nearest")
        np.testing.assert_array_equal(got, want)
        if dtype == np.uint8 or ksize <= 5:  # what cv2.medianBlur takes
            np.testing.assert_array_equal(got, cv2.medianBlur(image, ksize))


@pytest.mark.parametrize("border", sorted(SCIPY_MODE))
@pytest.mark.parametrize("percentile", [0, 20, 50, 73, 100])
def test_rank_follows_scipys_rank_rule_for_every_border(border, percentile):
    for dtype in (np.uint8, np.float32):
        for image in (typed(gray(), dtype), typed(colour(), dtype)):
            for ksize in (3, 7, 13):
                value = 7 if dtype == np.uint8 else 0.25
                got = clfilter.filter(image, "rank:ksize=%d,percentile=%g,border=%s,border_value=%g"
                                      % (ksize, percentile, border, value))
                want = ndi.percentile_filter(image, percentile, size=footprint_size(image, ksize),
                                             mode=SCIPY_MODE[border], cval=value)
                np.testing.assert_array_equal(got, want, err_msg="%s k%d" % (image.dtype, ksize))


MORPH_OPS = {"erode": cv2.MORPH_ERODE, "dilate": cv2.MORPH_DILATE, "open": cv2.MORPH_OPEN,
             "close": cv2.MORPH_CLOSE, "gradient": cv2.MORPH_GRADIENT, "tophat": cv2.MORPH_TOPHAT,
             "blackhat": cv2.MORPH_BLACKHAT}
MORPH_SHAPES = {"rect": cv2.MORPH_RECT, "ellipse": cv2.MORPH_ELLIPSE, "cross": cv2.MORPH_CROSS}


@pytest.mark.parametrize("op", sorted(MORPH_OPS))
@pytest.mark.parametrize("shape", sorted(MORPH_SHAPES))
def test_morphology_equals_opencv_with_its_default_border(op, shape):
    for dtype in (np.uint8, np.uint16, np.float32):
        for image in (typed(gray(), dtype), typed(colour(), dtype)):
            for ksize, iterations in ((3, 1), (5, 2), (9, 1), (21, 1)):
                element = cv2.getStructuringElement(MORPH_SHAPES[shape], (ksize, ksize))
                want = cv2.morphologyEx(image, MORPH_OPS[op], element, iterations=iterations)
                got = clfilter.filter(image, "morphology:op=%s,shape=%s,ksize=%d,iterations=%d"
                                      % (op, shape, ksize, iterations))
                np.testing.assert_array_equal(got, want, err_msg="%s k%d x%d" % (
                    image.dtype, ksize, iterations))


@pytest.mark.parametrize("border", sorted(CV_BORDER))
def test_morphology_applies_a_given_border_before_every_step_as_opencv(border):
    for image in (gray(), typed(colour(), np.float32)):
        value = 9 if image.dtype == np.uint8 else 0.5
        for op in ("erode", "open", "blackhat", "gradient"):
            for shape, ksize, iterations, method in (("rect", 7, 1, "direct"), ("rect", 9, 2, "line"),
                                                     ("ellipse", 5, 2, "auto"),
                                                     ("cross", 5, 1, "auto")):
                element = cv2.getStructuringElement(MORPH_SHAPES[shape], (ksize, ksize))
                want = cv2.morphologyEx(image, MORPH_OPS[op], element, iterations=iterations,
                                        borderType=CV_BORDER[border], borderValue=(value,) * 4)
                got = clfilter.filter(image, "morphology:op=%s,shape=%s,ksize=%d,iterations=%d,"
                                      "border=%s,border_value=%g,method=%s"
                                      % (op, shape, ksize, iterations, border, value, method))
                np.testing.assert_array_equal(got, want, err_msg="%s %s %s" % (op, shape, image.dtype))


def bilateral_formula(image, d, sigma_color, sigma_space, border):
    """cv2.bilateralFilter's definition in float64: a disc of radius d / 2, weights
    exp(-r^2 / 2 ss^2) exp(-dist^2 / 2 sc^2), dist the sum of the channels' absolute differences."""
    f = image.astype(np.float64)
    f3 = f if f.ndim == 3 else f[..., None]
    r = d // 2
    padded = np.pad(f3, ((r, r), (r, r), (0, 0)), mode=NUMPY_PAD[border])
    h, w = f3.shape[:2]
    total = np.zeros_like(f3)
    weights = np.zeros(f3.shape[:2])
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            if dx * dx + dy * dy > r * r:
                continue
            v = padded[r + dy:r + dy + h, r + dx:r + dx + w]
            dist = np.abs(v - f3).sum(axis=2)
            wgt = np.exp(-(dx * dx + dy * dy) / (2 * sigma_space ** 2)) * np.exp(
                -dist ** 2 / (2 * sigma_color ** 2))
            total += wgt[..., None] * v
            weights += wgt
    out = total / weights[..., None]
    return out if f.ndim == 3 else out[..., 0]


@pytest.mark.parametrize("border", sorted(NUMPY_PAD))
def test_bilateral_u8_within_a_level_of_opencv_and_float_within_1e5_of_its_formula(border):
    for image, sigma_color in ((gray(), 30), (colour(), 45)):
        for d, sigma_space in ((9, 3), (5, 10), (0, 2)):
            spec = "bilateral:d=%d,sigma_color=%g,sigma_space=%g,border=%s" % (
                d, sigma_color, sigma_space, border)
            got = clfilter.filter(image, spec)
            if border != "wrap":  # OpenCV's bilateral has no wrap
                want = cv2.bilateralFilter(image, d, sigma_color, sigma_space,
                                           borderType=CV_BORDER[border])
                assert np.abs(got.astype(int) - want.astype(int)).max() <= 1, spec
            f = image.astype(np.float32) / 255
            got = clfilter.filter(f, spec.replace("sigma_color=%g" % sigma_color,
                                                  "sigma_color=%g" % (sigma_color / 255)))
            want = bilateral_formula(f, d if d else 2 * round(1.5 * sigma_space) + 1,
                                     sigma_color / 255, sigma_space, border)
            assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max(), spec


@pytest.mark.parametrize("ksize", [1, 3, 5, 7])
@pytest.mark.parametrize("border", sorted(CV_BORDER))
def test_laplacian_equals_opencv(ksize, border):
    l1 = {1: 8, 3: 16, 5: 256, 7: 4096}[ksize]  # sum of |weights|: the scale of float rounding
    for dtype in (np.uint8, np.uint16, np.float32):
        for image in (typed(gray(), dtype), typed(colour(), dtype)):
            for scale, delta in ((1, 0), (0.25, 10)):
                want = cv2.Laplacian(image.astype(np.float32), cv2.CV_32F, ksize=ksize,
                                     scale=scale, delta=delta, borderType=CV_BORDER[border],
                                     )
                got = clfilter.filter(image, "laplacian:ksize=%d,scale=%g,delta=%g,border=%s,"
                                      "border_value=0" % (ksize, scale, delta, border))
                assert_stored(got, want.astype(np.float64), image.dtype, l1 * scale,
                              "laplacian k%d %s" % (ksize, image.dtype))


@pytest.mark.parametrize("border", sorted(CV_BORDER))
def test_unsharp_is_the_stated_formula_on_opencvs_gaussian(border):
    for image in (gray(), colour(), typed(colour(), np.float32)):
        for sigma, amount, threshold in ((1, 1, 0), (2.5, 0.7, 0), (1.5, 2, 4)):
            if image.dtype == np.float32:
                threshold /= 255
            f = image.astype(np.float32)
            blurred = cv2.GaussianBlur(f, (0, 0), sigma, borderType=CV_BORDER[border])
            d = f.astype(np.float64) - blurred
            near_threshold = np.abs(np.abs(d) - threshold) <= 1e-4 * max(1, f.max())
            d[np.abs(d) < threshold] = 0
            want = f + amount * d
            got = clfilter.filter(image, "unsharp:sigma=%g,amount=%g,threshold=%g,border=%s" % (
                sigma, amount, threshold, border))
            keep = ~near_threshold  # float rounding decides those, either way is right
            if image.dtype == np.float32:
                assert np.abs(got - want)[keep].max() <= 1e-5 * (1 + 2 * amount)
            else:
                assert_stored(np.where(keep, got, 0), np.where(keep, want, 0), image.dtype,
                              1 + 2 * amount, "unsharp %g %g %g" % (sigma, amount, threshold))


NEW_SPECS = ["median:ksize=5", "median:ksize=15", "rank:ksize=5,percentile=30",
             "morphology:op=open,shape=ellipse,ksize=7", "morphology:op=tophat,ksize=9",
             "morphology:op=gradient,shape=cross,ksize=5,iterations=2",
             "bilateral:d=7,sigma_color=40", "laplacian:ksize=5", "unsharp:sigma=2,amount=1.5"]


def test_one_row_strips_and_chains_equal_the_whole_image():
    image = colour()
    for spec in NEW_SPECS:
        whole = clfilter.filter(image, spec)
        np.testing.assert_array_equal(clfilter.Pipeline(spec)(image, strip_rows=1), whole, spec)
    chain = ["median:ksize=3", "morphology:op=close,ksize=5", "bilateral:d=5,sigma_color=20",
             "unsharp:sigma=1"]
    f = typed(image, np.float32) * 255
    step = f
    for spec in chain:
        step = clfilter.filter(step, spec)
    np.testing.assert_array_equal(clfilter.filter(f, chain), step)


def test_dask_keeps_morphologys_default_border_at_the_image_edges_only():
    da = optional("dask.array")
    for spec in ("morphology:op=open,shape=ellipse,ksize=9",
                 "morphology:op=blackhat,ksize=7,iterations=2"):
        want = clfilter.filter(gray(), spec)
        got = clfilter.dask_filter(da.from_array(gray(), chunks=(50, 70)), spec).compute(
            scheduler="synchronous")
        np.testing.assert_array_equal(got, want, err_msg=spec)


@pytest.mark.parametrize("border", ["replicate", "reflect101", "wrap"])
def test_dask_gives_each_new_filter_the_whole_image_result(border):
    da = optional("dask.array")
    for image in (gray(), colour()):
        for spec in NEW_SPECS:
            spec += ",border=" + border
            want = clfilter.filter(image, spec)
            array = da.from_array(image, chunks=(60, 77) + image.shape[2:])
            got = clfilter.dask_filter(array, spec).compute(scheduler="synchronous")
            np.testing.assert_array_equal(got, want, err_msg=spec)


def test_errors_and_listings_name_the_new_filters_and_their_parameters():
    listed = {f["name"]: {p["name"] for p in f["params"]} for f in clfilter.filters()}
    assert listed["median"] >= {"ksize", "radius", "method", "border"}
    assert listed["rank"] >= {"ksize", "radius", "percentile"}
    assert listed["morphology"] >= {"op", "shape", "ksize", "radius", "iterations", "border"}
    assert listed["bilateral"] >= {"d", "sigma_color", "sigma_space"}
    assert listed["laplacian"] >= {"ksize", "scale", "delta"}
    assert listed["unsharp"] >= {"sigma", "amount", "threshold"}
    for spec, message in (("median:ksize=4", "ksize must be odd"),
                          ("bilateral:sigma_color=-1", "sigma_color"),
                          ("rank:percentile=101", "percentile"),
                          ("morphology:op=thin", "op")):
        with pytest.raises(ValueError, match=message):
            clfilter.filter(gray(), spec)


def test_half_images_give_the_float_results_of_their_values():
    # Median, rank and morphology pick input values: on float16 they are exact. The others are
    # computed in float32 and stored as float16 (round to nearest even).
    image = typed(colour(), np.float32).astype(np.float16)
    f = image.astype(np.float32)
    size = footprint_size(image, 5)
    cases = [("median:ksize=5", ndi.median_filter(f, size=size, mode="nearest")),
             ("median:ksize=15", ndi.median_filter(f, size=footprint_size(image, 15),
                                                   mode="nearest")),  # the two-level histogram
             ("rank:ksize=5,percentile=80", ndi.percentile_filter(f, 80, size=size,
                                                                    mode="reflect")),
             ("morphology:op=close,shape=ellipse,ksize=7",
              cv2.morphologyEx(f, cv2.MORPH_CLOSE,
                               cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7))))]
    for spec, want in cases:
        got = clfilter.filter(image, spec)
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, want.astype(np.float16), err_msg=spec)
    got = clfilter.filter(image, "laplacian:ksize=3")
    want = cv2.Laplacian(f, cv2.CV_32F, ksize=3)
    assert np.abs(got.astype(np.float32) - want).max() <= 2e-3 * max(1, np.abs(want).max())
    got = clfilter.filter(image, "bilateral:d=5,sigma_color=0.2,sigma_space=2")
    want = bilateral_formula(f, 5, 0.2, 2, "reflect101")
    assert np.abs(got.astype(np.float64) - want).max() <= 1e-3


def test_bilateral_on_u16_follows_its_formula():
    image = typed(gray(), np.uint16)
    got = clfilter.filter(image, "bilateral:d=7,sigma_color=6000,sigma_space=3,border=replicate")
    want = bilateral_formula(image, 7, 6000, 3, "replicate")
    assert_stored(got, want, np.uint16, 1, "bilateral u16")


def test_morphology_elements_past_31_rows_read_their_widths_from_a_buffer():
    # Up to 31 rows the element is written into the program; past that, read from a buffer.
    image = gray()
    for shape in ("ellipse", "cross", "rect"):
        element = cv2.getStructuringElement(MORPH_SHAPES[shape], (41, 41))
        for op, border in (("open", None), ("gradient", "reflect")):
            extra = {} if border is None else {"borderType": CV_BORDER[border]}
            want = cv2.morphologyEx(image, MORPH_OPS[op], element, **extra)
            spec = "morphology:op=%s,shape=%s,ksize=41,method=direct" % (op, shape)
            got = clfilter.filter(image, spec + ("" if border is None else ",border=" + border))
            np.testing.assert_array_equal(got, want, err_msg=spec)
