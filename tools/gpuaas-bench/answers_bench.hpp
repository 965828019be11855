// gpuaas-bench answers: how long gpuaasctl takes to answer state, explain and report on a large
// cluster (10,000 nodes and 50,000 workloads by default), against a nats-server it starts and a
// gpuaasd child process, and what each answer holds (counts, pages, the largest page).
#pragma once

#include <chrono>
#include <string>

#include "answers_scene.hpp"

namespace gpuaas::bench {

struct AnswersOptions {
  AnswersScene scene;
  int repeats = 3;                   // each command this many times; medians are reported
  std::chrono::seconds settle{600};  // bound on applying the scene and deciding every Job
  std::string gpuaasd;               // default: beside this program
  std::string gpuaasctl;             // default: beside this program
  std::string plugins;               // default: ../plugins from there
};

// Prints progress on stderr and, as the last line of stdout, one JSON object. 0 when every
// command answered (exit 0) with the scene's counts, 1 when not, 3 when something could not be
// started or the scene did not settle.
int run_answers_bench(const AnswersOptions& o);

}  // namespace gpuaas::bench
