// Issues strips in order over the lanes (strip i on lane i mod lanes) and lands them in order: the
// source is read and the sink written by one thread each, in row order, whatever the lanes. Three
// ways to run, by what the host must do per strip:
//   queued only       device images: everything queued, nothing waited for
//   ordered by device pinned or resident both ways: one thread enqueues ahead and lands
//   landing thread    a sink to write or rows to map: a second thread lands while this one issues
#pragma once
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "stream/lane.hpp"

namespace clf::detail {

class Scheduler {
 public:
  Scheduler(const std::vector<std::unique_ptr<LaneRun>>& lanes, const RunOptions& options,
            int strips, int slots)
      : lanes_(lanes), options_(options), strips_(strips), window_(slots * int(lanes.size())) {}
  void run();

 private:
  LaneRun& lane(int index) { return *lanes_[size_t(index) % lanes_.size()]; }
  void run_queued_only();
  void run_ordered_by_device();
  void run_with_landing_thread();
  void landing_thread();
  void finish_all() {
    for (auto& lane : lanes_) lane->finish();
  }

  const std::vector<std::unique_ptr<LaneRun>>& lanes_;
  const RunOptions& options_;
  const int strips_, window_;  // window_: strips in flight, slots of every lane
  // the landing thread (staged output): strips to land, how many have
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Landing> landing_;
  int landed_ = 0;
  bool closing_ = false;
  std::exception_ptr landing_error_;
};

}  // namespace clf::detail
