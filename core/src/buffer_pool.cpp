#include "buffer_pool.hpp"

namespace clf::detail {

DeviceBuffer BufferPool::take(size_t bytes, std::vector<cl::Event>& pending) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = kept_.rbegin(); it != kept_.rend(); ++it)
    if (it->buffer.bytes() == bytes) {
      DeviceBuffer found = std::move(it->buffer);
      pending = std::move(it->pending);
      kept_.erase(std::next(it).base());
      return found;
    }
  return {};
}

void BufferPool::give(DeviceBuffer buffer, std::vector<cl::Event> pending) {
  if (buffer.bytes() > most_) return;  // released here
  std::lock_guard<std::mutex> lock(mutex_);
  kept_.push_back({std::move(buffer), std::move(pending)});
  uint64_t total = 0;
  for (const Kept& k : kept_) total += k.buffer.bytes();
  while (kept_.size() > count_ || total > most_) {
    total -= kept_.front().buffer.bytes();
    kept_.pop_front();
  }
}

void BufferPool::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  kept_.clear();
}

}  // namespace clf::detail
