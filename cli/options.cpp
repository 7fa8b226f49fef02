// clfilter's option table (common/option_table.hpp makes the parser, --help and completion words
// from it), with the usage's preamble and epilogue.
#include "options.hpp"

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace clf::cli {
namespace {

using clf::options::chosen;
using clf::options::usage_error;
using clf::options::whole_number;

uint64_t parse_size(const std::string& option, const std::string& value) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(value.c_str(), &end);
  const std::string unit = end ? end : "";
  double scale = 1;
  if (unit == "K" || unit == "k" || unit == "KiB")
    scale = 1024.0;
  else if (unit == "M" || unit == "m" || unit == "MiB")
    scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "g" || unit == "GiB")
    scale = 1024.0 * 1024 * 1024;
  else if (!unit.empty())
    scale = 0;
  if (value.empty() || errno || scale == 0 || !(v > 0) || v * scale > 1e15)
    throw usage_error(option + " expects a size such as 64M or 2G (got '" + value + "')");
  // Below 1 MiB no strip of any useful image fits: refused here, not after the file is opened.
  if (v * scale < 1024.0 * 1024)
    throw usage_error(option + " " + value + " is " + std::to_string(uint64_t(v * scale)) +
                      " bytes; the smallest budget is 1M (e.g. 64M, 2G; a unit K, M or G)");
  return uint64_t(v * scale);
}

const char* const batches = "Batches (one process, the device opened once, pipelines kept warm):";
const char* const filters = "Filters (see --list-filters for every parameter):";
const char* const device = "Device:";
const char* const streaming = "Streaming:";
const char* const output = "Output and diagnostics:";

using O = Options;
using S = const std::string&;

const clf::options::Table<Options> table{{
    {"-o, --output-dir", "DIR", batches, "every argument is an input, written to DIR/<its name>",
     Complete::directories, "", [](O& o, S, S v) { o.output_dir = v; }},
    {"--frames", "LIST", batches,
     "IN and OUT are frame patterns (# = 4 digits, @ = 1 digit,\n"
     "%04d); LIST is 1-100, 1-100x5 (every 5th) or 1,5,9",
     Complete::none, "", [](O& o, S, S v) { o.frames = v; }},
    {"-j, --jobs", "N", batches,
     "files in flight (default: one per core, at most 4)\n"
     "A file that fails is named and the others go on (exit 1).\n"
     "With --tune: programs built at once (default: on a GPU one\n"
     "per core, at most 8; on a CPU 1)",
     Complete::none, "", [](O& o, S n, S v) { o.jobs = whole_number(n, v, 1, 256); }},
    {"-f, --filter", "SPEC", filters,
     "NAME or NAME:key=value,key=value\n"
     "  --filter gaussian:sigma=2\n"
     "  --filter gaussian:sigma=60,method=fast\n"
     "  --filter sobel:mode=x,ksize=5\n"
     "  --filter box:radius=3,border=wrap\n"
     "  --filter 'convolve:kernel=0,-1,0;-1,5,-1;0,-1,0'\n"
     "  --filter median:ksize=5\n"
     "  --filter morphology:op=open,shape=ellipse,ksize=7\n"
     "  --filter bilateral:d=9,sigma_color=75,sigma_space=75\n"
     "  --filter unsharp:sigma=2,amount=0.8,threshold=3\n"
     "Borders (every filter): border=replicate|reflect|\n"
     "reflect101|wrap|constant, as OpenCV's defaults: reflect101;\n"
     "median replicate; morphology ignore (outside never wins)",
     Complete::filters, "", [](O& o, S, S v) { o.filters.push_back(v); }},
    {"--device", "SEL", device,
     "gpu, cpu, P:D (platform:device index from --list-devices)\n"
     "or part of a device name; env CLF_DEVICE. Default: the\n"
     "first GPU, else the CPU (PoCL). Several: a comma-separated\n"
     "list, or all (every GPU, else every device). A batch gives\n"
     "each device whole files; one file sends its strips to\n"
     "each device in turn.",
     Complete::devices, "", [](O& o, S, S v) { o.device = v; }},
    {"--variant", "tiled|direct", device,
     "kernel variant. tiled: 2-D windows are staged in local\n"
     "memory, separable filters run in one pass that keeps its\n"
     "row results there; direct: global-memory reads, separable\n"
     "filters in two passes. Default per device, as measured:\n"
     "GPUs direct 2-D and tiled separable, CPUs direct;\n"
     "env CLF_VARIANT",
     Complete::choices, "tiled direct",
     [](O& o, S, S v) { o.variant = v, o.variant_from = "--variant"; }},
    {"--tile", "WxH[/G]", device,
     "tiled: W x H outputs per work-group of G work-items; direct\n"
     "on GPUs: H rows of 4 outputs per work-item, G per group.\n"
     "W a multiple of 4. Default 248x4/64; env CLF_TILE",
     Complete::none, "", [](O& o, S, S v) { o.tile = v, o.tile_from = "--tile"; }},
    {"--strip-rows", "N", streaming,
     "rows per strip (default: 4 MiB of pixels on GPUs, of\n"
     "float planes on CPUs, at least 4x the chain's halo\n"
     "on GPUs, 2x on CPUs, within the memory budget)",
     Complete::none, "", [](O& o, S n, S v) { o.run.strip_rows = whole_number(n, v, 1, 1 << 30); }},
    {"--slots", "N", streaming, "strips in flight, ring of N buffers (default 3)", Complete::none,
     "", [](O& o, S n, S v) { o.run.slots = whole_number(n, v, 1, 64); }},
    {"--queues", "1|3", streaming,
     "3 = separate upload/compute/download queues (default);\n"
     "1 = one in-order queue, for comparison",
     Complete::choices, "1 3",
     [](O& o, S n, S v) { o.run.queues = std::stoi(chosen(n, v, "1 3")); }},
    {"--max-device-memory", "SZ", streaming,
     "device memory budget, e.g. 64M, 2G (default: half the\n"
     "device's memory)",
     Complete::none, "", [](O& o, S n, S v) { o.run.max_device_memory = parse_size(n, v); }},
    {"--zero-copy", "on|off", streaming,
     "on CPU devices, kernels read and write the images in\n"
     "place instead of copying strips (default on)",
     Complete::choices, "on off",
     [](O& o, S n, S v) { o.run.zero_copy = chosen(n, v, "on off") == "on"; }},
    {"--quality", "N", output,
     "JPEG (and WebP, HEIF) quality 1-100 (default: a JPEG\n"
     "input's own, estimated from its quantization tables,\n"
     "else 98). JPEGs are written baseline: a progressive\n"
     "encoder would hold every coefficient of the image",
     Complete::none, "", [](O& o, S n, S v) { o.output.quality = whole_number(n, v, 1, 100); }},
    {"--type", "u8|u16|f16|f32", output,
     "the output's pixel type, every channel (default: the\n"
     "input's, as far as the format holds it, with a warning\n"
     "where it does not); float 0..1 is an integer type's\n"
     "whole range. A format that cannot hold it is an error",
     Complete::choices, clf::pixel_type_names,
     [](O& o, S n, S v) {
       o.output.type = clf::pixel_type_named(chosen(n, v, clf::pixel_type_names));
     }},
    {"--compression", "NAME", output,
     "the output's compression as oiiotool names it: zip,\n"
     "piz, dwaa, lzw, none, jpeg:85, ... (default: the\n"
     "input's); goes through OpenImageIO (--io oiio)",
     Complete::choices, "zip piz dwaa lzw none jpeg:85",
     [](O& o, S, S v) { o.output.compression = v; }},
    {"--io", "auto|oiio", output,
     "auto (default): JPEG to JPEG through libjpeg-turbo alone,\n"
     "0.2 s sooner (no OpenImageIO to load), same pixels,\n"
     "metadata segments copied byte for byte; every other\n"
     "file through OpenImageIO. oiio: every file through it",
     Complete::choices, "auto oiio", [](O& o, S n, S v) { o.io = chosen(n, v, "auto oiio"); }},
    {"--stats", nullptr, output,
     "print wall time, per-queue busy time and overlap ratio;\n"
     "for a batch: files and MPix a second, each file's time",
     Complete::none, "", [](O& o, S, S) { o.stats = true; }},
    {"--trace", "FILE.json", output, "write a Chrome trace-event file (open in ui.perfetto.dev)",
     Complete::none, "", [](O& o, S, S v) { o.trace = v; }},
    {"--plugin-dir", "DIR", output,
     "load plugins from DIR first (repeatable); also env\n"
     "CLF_PLUGIN_PATH (colon list)",
     Complete::directories, "", [](O& o, S, S v) { o.plugin_dirs.push_back(v); }},
    {"-v, --verbose", nullptr, output, "print the device, each filter as built, the strip layout",
     Complete::none, "", [](O& o, S, S) { o.verbose = true; }},
    {"-q, --quiet", nullptr, output,
     "print nothing but errors and warnings of what the output\n"
     "loses (parts, MIP levels, channels)",
     Complete::none, "", [](O& o, S, S) { o.quiet = true; }},
    {"--list-filters", "[NAME]", output, "every filter and its parameters (or one filter's)",
     Complete::filters, "", [](O& o, S, S v) { o.list_filters = v; }},
    {"--list-devices", nullptr, output,
     "every OpenCL device, with its driver, memory and tuning\n"
     "(the database's, or a --tune run's file)",
     Complete::none, "", [](O& o, S, S) { o.list_devices = true; }},
    {"--tune", nullptr, output,
     "measure the kernel layouts on the device (--device) and keep\n"
     "the fastest for later runs, in the cache directory (a few\n"
     "minutes; -v says where a run's tuning came from). With\n"
     "--filter, each family is timed on that chain too",
     Complete::none, "", [](O& o, S, S) { o.tune = true; }},
    {"-h, --help", nullptr, output, "this text", Complete::none, "",
     [](O& o, S, S) { o.help = true; }},
    {"--version", nullptr, output, "print the version", Complete::none, "",
     [](O& o, S, S) { o.version = true; }},
    {"--complete", "WORD", nullptr, "", Complete::none, "", [](O& o, S, S v) { o.complete = v; }},
}};

const char* const preamble =
    R"(usage: clfilter IN OUT --filter NAME[:key=value,...] [--filter ...] [options]
       clfilter IN... --output-dir DIR --filter ... [--jobs N]
       clfilter IN_PATTERN OUT_PATTERN --frames LIST --filter ...
       clfilter --tune [--filter ...]
       clfilter --list-filters [NAME] | --list-devices | --help | --version

Runs OpenCL image filters over IN and writes OUT (any format OpenImageIO reads and
writes: EXR, PNG, TIFF, JPEG, ...). Filters apply in the order given, fused on the
device. Files stream through in strips: memory stays at a few strips whatever
the image size. OUT keeps IN's pixel type, channels and metadata; it is written
to a temporary file and renamed, so a failed run never leaves a partial OUT, and
IN == OUT is safe. IN '-' reads standard input (its format from its first bytes);
OUT '-' writes standard output in IN's format, png:- (FORMAT:-) in another, once
the image is whole; the report then goes to stderr.
)";

const char* const epilogue = R"(
Exit status: 0 done, 1 failed (file, device, plugin), 2 bad command line,
130 interrupted (Ctrl-C, SIGTERM: OUT is left exactly as it was).

Examples:
  clfilter photo.png edges.png --filter sobel
  clfilter scan.png clean.png -f median:ksize=3 -f morphology:op=close,ksize=5
  clfilter in.exr out.exr -f gaussian:sigma=2 -f sobel -f box:radius=1 --stats
  clfilter big.tif big.tif --filter gaussian:sigma=8 --device cpu --max-device-memory 64M
  clfilter shots/*.jpg --output-dir soft/ -f gaussian:sigma=3 --jobs 2
  clfilter 'plate.#.exr' 'plate_dx.#.exr' --frames 1001-1100 -f sobel:mode=x
)";

}  // namespace

Options parse_args(int argc, char** argv) {
  Options o;
  // The environment gives defaults; the command line overrides them.
  o.env = read_environment();
  o.device = o.env.device;
  if (!o.env.variant.empty()) o.variant = o.env.variant, o.variant_from = "CLF_VARIANT";
  if (!o.env.tile.empty()) o.tile = o.env.tile, o.tile_from = "CLF_TILE";
  table.parse(argc, argv, o, &o.positional, &o.given);
  return o;
}

std::string usage_text() { return preamble + table.help() + epilogue; }

std::string completion_words(const std::string& previous) {
  return table.completion_words(previous);
}

}  // namespace clf::cli
