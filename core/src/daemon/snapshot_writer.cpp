#include "daemon/snapshot_writer.hpp"

namespace gpuaas::core {

SnapshotWriter::SnapshotWriter(Store store, Stored stored)
    : store_(std::move(store)), stored_(std::move(stored)), thread_([this] { run(); }) {}

SnapshotWriter::~SnapshotWriter() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool SnapshotWriter::busy() const {
  std::lock_guard lock(mu_);
  return busy_;
}

bool SnapshotWriter::submit(std::string bytes, uint64_t sequence) {
  {
    std::lock_guard lock(mu_);
    if (busy_ || stop_) return false;
    job_ = Job{std::move(bytes), sequence};
    busy_ = true;
  }
  cv_.notify_all();
  return true;
}

void SnapshotWriter::wait_idle() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return !busy_; });
}

void SnapshotWriter::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || job_.has_value(); });
    if (!job_) return;  // stopping with nothing handed over
    Job job = std::move(*job_);
    job_.reset();
    lock.unlock();
    const Status s = store_(job.bytes);
    stored_(s, job.sequence, job.bytes.size());
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace gpuaas::core
