#include "daemon/snapshot_writer.hpp"

#include <memory>

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
  auto held = std::make_shared<std::string>(std::move(bytes));
  return submit([held]() -> Result<std::string> { return std::move(*held); }, sequence);
}

bool SnapshotWriter::submit(Produce produce, uint64_t sequence) {
  {
    std::lock_guard lock(mu_);
    if (busy_ || stop_) return false;
    job_ = Job{std::move(produce), sequence};
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
    Result<std::string> bytes = job.produce();
    if (bytes) {
      const Status s = store_(*bytes);
      stored_(s, job.sequence, bytes->size());
    } else {
      stored_(bytes.status(), job.sequence, 0);
    }
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace gpuaas::core
