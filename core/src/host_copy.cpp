// The copy pool: started once, on first use, with up to 7 threads; a thread that fails to start
// leaves the pool smaller (down to none), never an error. Callers of any number of runs share it;
// each call is a batch of parts that the caller works on too, so a busy or empty pool only costs
// speed. The threads are joined at exit.
#include "host_copy.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace clf::detail {
namespace {

// One copy split into parts; whoever holds it takes the next part until none are left.
struct Batch {
  char* dst;
  const char* src;
  size_t bytes, part, parts;
  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::condition_variable all_done;
  size_t done = 0;

  void work() {
    for (size_t p; (p = next.fetch_add(1)) < parts;) {
      const size_t begin = p * part, size = std::min(part, bytes - begin);
      std::memcpy(dst + begin, src + begin, size);
      std::lock_guard<std::mutex> lock(mutex);
      if (++done == parts) all_done.notify_all();
    }
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    all_done.wait(lock, [&] { return done == parts; });
  }
};

class CopyPool {
 public:
  static CopyPool& instance() {
    static CopyPool pool;
    return pool;
  }
  size_t threads() const { return threads_.size(); }

  void copy(void* dst, const void* src, size_t bytes, size_t parts) {
    auto batch = std::make_shared<Batch>();
    batch->dst = static_cast<char*>(dst);
    batch->src = static_cast<const char*>(src);
    batch->bytes = bytes;
    batch->part = (bytes + parts - 1) / parts;
    batch->parts = (bytes + batch->part - 1) / batch->part;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (size_t h = 1; h < std::min(batch->parts, threads_.size() + 1); ++h)
        queue_.push_back(batch);
    }
    wake_.notify_all();
    batch->work();
    batch->wait();
  }

 private:
  CopyPool() {
    const size_t want = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), 8) - 1;
    for (size_t t = 0; t < want; ++t) {
      try {
        threads_.emplace_back([this] { serve(); });
      } catch (const std::system_error&) {
        break;  // out of threads: the pool stays as large as it got
      }
    }
  }
  ~CopyPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void serve() {
    for (;;) {
      std::shared_ptr<Batch> batch;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        batch = std::move(queue_.front());
        queue_.pop_front();
      }
      batch->work();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Batch>> queue_;
  bool stopping_ = false;
};

}  // namespace

void copy_rows(void* dst, const void* src, size_t bytes) {
  constexpr size_t part_min = size_t(4) << 20;
  const size_t parts = std::min<size_t>(8, bytes / part_min + 1);
  if (parts <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  CopyPool& pool = CopyPool::instance();
  if (pool.threads() == 0) {
    std::memcpy(dst, src, bytes);
    return;
  }
  pool.copy(dst, src, bytes, std::min(parts, pool.threads() + 1));
}

size_t copy_pool_threads() { return CopyPool::instance().threads(); }

}  // namespace clf::detail
