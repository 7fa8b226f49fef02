// clfilter-bench's option table, with its usage's preamble and epilogue.
#include "options.hpp"

#include <cstdio>

#include "clf/clf.hpp"
#include "option_table.hpp"

namespace clf_bench {
namespace {

using clf::options::chosen;
using clf::options::Complete;
using clf::options::usage_error;
using clf::options::whole_number;
using O = Options;
using S = const std::string&;

const char* const image = "The image (random values, pinned as clfilter's):";
const char* const filters = "Filters and layouts:";
const char* const runs = "Runs and output:";

const clf::options::Table<Options> table{{
    {"--size", "WxH", image, "width x height (default 3840x2160)", Complete::none, "",
     [](O& o, S n, S v) {
       char tail = 0;
       if (std::sscanf(v.c_str(), "%dx%d%c", &o.width, &o.height, &tail) != 2 || o.width < 1 ||
           o.height < 1)
         throw usage_error(n + " expects WxH, e.g. 8192x8192 (got '" + v + "')");
     }},
    {"--channels", "C", image, "channels a pixel (default 1)", Complete::none, "",
     [](O& o, S n, S v) { o.channels = whole_number(n, v, 1, clf::max_image_channels); }},
    {"--type", "f32|u8|u16|f16", image, "pixel type (default f32)", Complete::choices,
     "f32 u8 u16 f16", [](O& o, S n, S v) { o.type = chosen(n, v, "f32 u8 u16 f16"); }},
    {"--pageable", nullptr, image, "ordinary heap images in place of pinned ones", Complete::none,
     "", [](O& o, S, S) { o.pageable = true; }},
    {"-f, --filter", "SPEC", filters,
     "a filter as clfilter takes it (repeatable; default: sobel,\n"
     "gaussian, box and two convolutions). \"a + b + c\" is one\n"
     "chain, fused on the device. Each is run in both variants",
     Complete::filters, "", [](O& o, S, S v) { o.filters.push_back(v); }},
    {"--device", "SEL", filters,
     "as clfilter's --device (env CLF_DEVICE); with --batch,\n"
     "all or a comma-separated list",
     Complete::devices, "", [](O& o, S, S v) { o.device = v; }},
    {"--tuning", "NAME=VALUE,...", filters,
     "override any field of the device's tuning or a plugin's\n"
     "knob (repeatable), e.g. separable_columns=0:256:16,\n"
     "bilateral.outputs=8; list: every one with its value",
     Complete::none, "", [](O& o, S, S v) { o.tuning += (o.tuning.empty() ? "" : ",") + v; }},
    {"--tune", nullptr, filters,
     "measure the layouts and keep the fastest (clfilter --tune,\n"
     "where the CLI is not built); a --filter \"a + b\": the chain\n"
     "every family is also timed on",
     Complete::none, "", [](O& o, S, S) { o.tune = true; }},
    {"--reps", "N", runs, "best of N runs of each measurement (default 5)", Complete::none, "",
     [](O& o, S n, S v) { o.reps = whole_number(n, v, 1, 10000); }},
    {"--strip-rows", "N", runs, "rows a strip in streamed runs (default 0: the streamer's)",
     Complete::none, "", [](O& o, S n, S v) { o.strip_rows = whole_number(n, v, 0, 1 << 30); }},
    {"--slots", "N", runs, "strips in flight in streamed runs (default 3)", Complete::none, "",
     [](O& o, S n, S v) { o.slots = whole_number(n, v, 1, 64); }},
    {"--json", "FILE", runs, "the figures as JSON, one object a row", Complete::none, "",
     [](O& o, S, S v) { o.json = v; }},
    {"--trace", "FILE", runs,
     "a Chrome trace of the first filter's streamed run (its\n"
     "default variant)",
     Complete::none, "", [](O& o, S, S v) { o.trace = v; }},
    {"--scale", nullptr, runs,
     "streamed time a pixel and device memory from 1 to 64\n"
     "MPix (square images), the first filter",
     Complete::none, "", [](O& o, S, S) { o.scale = true; }},
    {"--batch", "N", runs,
     "N images over the devices (--device all), one process;\n"
     "the first --filter's chain",
     Complete::none, "", [](O& o, S n, S v) { o.batch = whole_number(n, v, 1, 1000000); }},
    {"--jobs", "J", runs, "with --batch: images in flight a device (default 2)", Complete::none, "",
     [](O& o, S n, S v) { o.jobs = whole_number(n, v, 1, 64); }},
    {"--smoke", nullptr, runs, "a 256x128 image, one rep: that the bench runs", Complete::none, "",
     [](O& o, S, S) { o.smoke = true; }},
    {"-h, --help", nullptr, runs, "this text", Complete::none, "",
     [](O& o, S, S) { o.help = true; }},
}};

const char* const preamble =
    R"(usage: clfilter-bench [--size WxH] [--channels C] [--type T] [--filter SPEC ...] [options]
       clfilter-bench --batch N [--jobs J] [--device all|SEL,SEL...] [--size WxH] ...

Each filter's kernel time on device-resident data (OpenCL profiling events) in each
variant, and its streamed host -> host time on 3 queues and on 1, beside the
device's limits measured in the same run: a copy kernel, pinned transfers, and
the image through the strip pipeline with no kernels (a streamed run's floor).
)";

const char* const epilogue = R"(
Exit status: 0 done, 1 failed (device, filter), 2 bad command line.
)";

}  // namespace

Options parse_args(int argc, char** argv) {
  Options o;
  table.parse(argc, argv, o, nullptr);
  if (o.smoke) o.width = 256, o.height = 128, o.reps = 1;
  return o;
}

std::string usage_text() { return preamble + table.help() + epilogue; }

}  // namespace clf_bench
