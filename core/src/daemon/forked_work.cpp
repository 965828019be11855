#include "daemon/forked_work.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <utility>

namespace gpuaas::core {
namespace {

// How the child ends; the parent names it.
constexpr int kThrew = 2;
constexpr int kPipeFailed = 3;
constexpr int kOrphan = 4;

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t k = ::write(fd, p, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

[[noreturn]] void run_child(int fd, pid_t parent, const ForkedWork::Produce& produce) {
  // A parent killed meanwhile takes its child with it; the check closes the race with the fork.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(kOrphan);
  // The daemon blocks its stop signals in every thread (a thread of its own waits for them):
  // the child answers them itself, and a reader gone fails the write instead of killing it.
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, nullptr);
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGPIPE, SIG_IGN);
  int code = 0;
  try {
    const std::string bytes = produce();
    const uint64_t n = bytes.size();
    code = write_all(fd, reinterpret_cast<const char*>(&n), sizeof n) &&
                   write_all(fd, bytes.data(), bytes.size())
               ? 0
               : kPipeFailed;
  } catch (...) {
    code = kThrew;
  }
  ::_exit(code);  // no atexit handlers, no flush of the parent's buffers
}

std::string why_ended(int status) {
  if (WIFSIGNALED(status))
    return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           ::strsignal(WTERMSIG(status)) + ")";
  switch (WEXITSTATUS(status)) {
    case kThrew:
      return "failed (an exception)";
    case kPipeFailed:
      return "could not write to its pipe";
    case kOrphan:
      return "found its parent gone";
    default:
      return "exited with code " + std::to_string(WEXITSTATUS(status));
  }
}

// Fills [p, p + n) from fd: the count read, short at end of file; -1 with `error` set.
ssize_t read_full(int fd, char* p, std::size_t n, std::chrono::milliseconds stall,
                  std::string& error) {
  std::size_t got = 0;
  while (got < n) {
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(stall.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      error = "sent nothing for " + std::to_string(stall.count()) + " ms";
      return -1;
    }
    const ssize_t k = ready < 0 ? -1 : ::read(fd, p + got, n - got);
    if (k < 0) {
      if (errno == EINTR) continue;
      error = std::string("pipe: ") + std::strerror(errno);
      return -1;
    }
    if (k == 0) break;
    got += static_cast<std::size_t>(k);
  }
  return static_cast<ssize_t>(got);
}

}  // namespace

Result<ForkedWork> ForkedWork::start(const Produce& produce) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return Status::unavailable(std::string("pipe for a forked child: ") + std::strerror(errno));
  // A larger pipe moves the image in fewer wake-ups; the system's limit may refuse it.
  (void)::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::unavailable(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_child(fds[1], parent, produce);
  }
  ::close(fds[1]);
  return ForkedWork(pid, fds[0]);
}

ForkedWork::ForkedWork(ForkedWork&& other) noexcept : pid_(other.pid_), fd_(other.fd_) {
  other.pid_ = -1;
  other.fd_ = -1;
}

ForkedWork& ForkedWork::operator=(ForkedWork&& other) noexcept {
  if (this != &other) {
    abandon();
    pid_ = std::exchange(other.pid_, -1);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

ForkedWork::~ForkedWork() { abandon(); }

void ForkedWork::abandon() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

Result<std::string> ForkedWork::collect(std::chrono::milliseconds stall) {
  if (pid_ <= 0) return Status::internal("the forked child was collected already");
  std::string error;
  bool stuck = false;  // a read failed or stalled: the child is killed, not waited for
  uint64_t size = 0;
  std::string bytes;
  ssize_t got = read_full(fd_, reinterpret_cast<char*>(&size), sizeof size, stall, error);
  if (got == static_cast<ssize_t>(sizeof size)) {
    bytes.resize(size);
    got = read_full(fd_, bytes.data(), size, stall, error);
    stuck = got < 0;
    if (got >= 0 && static_cast<uint64_t>(got) < size)
      error =
          "sent " + std::to_string(got) + " of the " + std::to_string(size) + " bytes announced";
  } else if (got >= 0) {
    error = "sent nothing";
  } else {
    stuck = true;
  }
  if (stuck) ::kill(pid_, SIGKILL);  // a child still running would block in write
  ::close(fd_);
  fd_ = -1;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  const pid_t pid = std::exchange(pid_, -1);
  // The child's own account comes first: short bytes are what a child that died leaves.
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const bool we_killed = stuck && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    return Status::internal("the forked child (pid " + std::to_string(pid) + ") " +
                            (we_killed ? error + ", so it was killed" : why_ended(status)));
  }
  if (!error.empty())
    return Status::internal("the forked child (pid " + std::to_string(pid) + ") " + error);
  return bytes;
}

}  // namespace gpuaas::core
