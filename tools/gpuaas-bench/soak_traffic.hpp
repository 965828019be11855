// The soak's event mix: a GPU cluster whose Jobs arrive, are admitted by gpuaasd, run and are
// deleted, with dcgm-exporter scrapes and clock ticks filling the rest of a fixed event rate.
// The live state is bounded: every Job's objects leave a fixed time after they came.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "gpuaas/bus/message.hpp"
#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::bench {

// Ten times the base rate derived in docs/benchmarks.md (Soak): the Alibaba 2023 GPU
// cluster's events (dcgm-exporter scrapes of its 1,213 nodes, ticks, Jobs) at 41.4 per second.
inline constexpr double kSoakDefaultRate = 414;

struct SoakMix {
  int nodes = 1213;  // the Alibaba 2023 GPU cluster's node count
  int gpus_per_node = 8;
  double job_rate = 10;                            // Job arrivals per second
  std::chrono::milliseconds run_time{30000};       // a Job's pod runs this long
  std::chrono::milliseconds admit_timeout{60000};  // a Job not admitted by then is deleted
  std::chrono::milliseconds tick_interval{1000};   // gpuaasd's default clock
  uint64_t seed = 1;
  // The queues scene (soak_scene.hpp) when > 0: ClusterQueues cq-k in `cohorts` cohorts, one
  // LocalQueue `main` each in namespace team-k. 0: the two teams.
  int cluster_queues = 0;
  int cohorts = 1;
  int pending = 0;            // Jobs too large for their cohort, published with the scene
  double scrape_seconds = 0;  // > 0: each node scraped this often; 0: scrapes fill the rate
};

// The soak's policy: two teams in one cohort over the mix's H100 and A100 nodes, or the queues
// scene's ClusterQueues when the mix has them.
std::string soak_policy_yaml(const SoakMix& m);

struct SoakCounts {
  uint64_t events = 0, ticks = 0, samples = 0, job_events = 0;
  uint64_t jobs_submitted = 0, jobs_admitted = 0, jobs_given_up = 0, jobs_completed = 0;
  uint64_t admissions_unknown = 0;  // admit actions for Jobs already gone (or repeated)
};

class SoakTraffic {
 public:
  using Clock = std::chrono::steady_clock;
  SoakTraffic(SoakMix mix, const std::string& root, nlohmann::json node_template,
              wire::EventTime start);

  // The scene, published before the paced events: the PolicySet object, the Nodes and the
  // mix's pending Jobs.
  std::vector<bus::Message> setup(const std::string& policy_set_json);
  // The next event at `elapsed` since the start (event time runs with it): a tick when due,
  // else a Job step when due, else a new Job when due, else one node's dcgm scrape.
  bus::Message next(Clock::duration elapsed, Clock::time_point now);
  // The same, but a scrape only when due by `scrape_seconds`; none when nothing is due.
  std::optional<bus::Message> next_due(Clock::duration elapsed, Clock::time_point now);
  // An admit action for ns/name arrived at `at` with this merge patch.
  void admitted(const std::string& ns, const std::string& name, const std::string& patch,
                Clock::duration elapsed, Clock::time_point at);

  const SoakCounts& counts() const { return counts_; }
  // Publish-to-admission latencies so far, in milliseconds.
  const std::vector<double>& latencies_ms() const { return latencies_ms_; }
  // When each of those admissions arrived, in seconds since the start.
  const std::vector<double>& latency_times_s() const { return latency_times_s_; }
  std::size_t live_jobs() const { return jobs_.size(); }

 private:
  enum class Step {
    kGiveUp,
    kUnsuspend,
    kPodAdded,
    kPodRunning,
    kJobRunning,
    kPodSucceeded,
    kJobComplete,
    kJobDeleted,
    kPodDeleted
  };
  struct Due {
    Clock::duration at;
    uint64_t seq;
    std::string key;
    Step step;
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  struct LiveJob {
    std::string ns, name;
    nlohmann::json job, pod;
    int gpus = 1;
    int node = -1;
    bool admitted = false;
    Clock::time_point submitted;
  };

  bus::Message object_event(const std::string& ns, const std::string& kind, wire::ChangeType change,
                            const nlohmann::json& obj);
  std::optional<bus::Message> timed(Clock::duration elapsed, Clock::time_point now);
  bus::Message new_job(Clock::time_point now);
  bus::Message pending_job(int i);
  std::optional<bus::Message> job_step(const Due& d);
  bus::Message scrape(int node);
  bus::Message tick();
  void schedule(Clock::duration at, const std::string& key, Step step);
  std::string next_rv() { return std::to_string(++rv_); }

  SoakMix mix_;
  bus::Subjects subjects_;
  nlohmann::json node_template_;
  wire::EventTime start_;
  wire::EventTime now_;
  std::mt19937_64 rng_;
  uint64_t rv_ = 1000, seq_ = 0, next_job_ = 0, next_tick_ = 0, next_node_ = 0;
  std::vector<std::string> node_names_;
  std::map<std::string, int> node_index_;
  std::vector<std::vector<std::string>> gpu_holder_;  // node -> GPU -> "ns/pod" or ""
  std::map<std::string, LiveJob> jobs_;               // "ns/name"
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due_;
  std::vector<double> latencies_ms_, latency_times_s_;
  SoakCounts counts_;
};

}  // namespace gpuaas::bench
