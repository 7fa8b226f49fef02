// Large host copies (strip pack and unpack) split across a persistent pool of threads: one core's
// memcpy is slower than a PCIe transfer from pinned memory (H100 host).
#pragma once
#include <cstddef>

namespace clf::detail {

// Copies `bytes` from `src` to `dst` (no overlap). Parts run on the pool's threads and on the
// caller's; when the pool could not start threads, the caller copies everything itself.
void copy_rows(void* dst, const void* src, size_t bytes);

// Threads the pool runs besides the caller (0 when none could be started).
size_t copy_pool_threads();

}  // namespace clf::detail
