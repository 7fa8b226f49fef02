// clf_io_module: clf_io's file sources and sinks (OpenImageIO) behind the IoModule table, exported
// for clfilter to load at run time.
#define BOOST_DLL_USE_STD_FS
#include "io_module.hpp"

#include <boost/dll/alias.hpp>

#include "image_io.hpp"

namespace {

class Input final : public clf::InputFile {
 public:
  Input(const std::string& path, const std::atomic<bool>* cancel) : file(path, cancel) {}
  clf::ImageShape shape() const override { return file.shape(); }
  void read(int begin, int end, std::byte* rows) override { file.read(begin, end, rows); }
  void discard_before(int row) override { file.discard_before(row); }
  std::unique_ptr<clf::RowSource> second_reader() const override { return file.second_reader(); }
  const std::vector<std::string>& warnings() const override { return file.warnings(); }
  void prefetch(int rows) override { file.prefetch(rows); }
  clf::FileRowSource file;
};

class Output final : public clf::OutputFile {
 public:
  Output(const std::string& path, const Input& like, const std::atomic<bool>* cancel)
      : file(path, like.file.spec(), like.shape().type, cancel) {}
  void write(int begin, int end, const std::byte* rows) override { file.write(begin, end, rows); }
  void commit() override { file.commit(); }
  std::string whole_image_note() const override { return file.whole_image_note(); }
  std::string written() const override { return file.written(); }
  const std::vector<std::string>& warnings() const override { return file.warnings(); }
  clf::FileRowSink file;
};

std::unique_ptr<clf::InputFile> open_input(const std::string& path,
                                           const std::atomic<bool>* cancel) {
  return std::make_unique<Input>(path, cancel);
}

std::unique_ptr<clf::OutputFile> open_output(const std::string& path, const clf::InputFile& like,
                                             const std::atomic<bool>* cancel) {
  return std::make_unique<Output>(path, dynamic_cast<const Input&>(like), cancel);
}

const clf::IoModule* table() {
  static const clf::IoModule io{open_input, open_output, clf::check_writable};
  return &io;
}

}  // namespace

BOOST_DLL_ALIAS(table, clf_io_module)
