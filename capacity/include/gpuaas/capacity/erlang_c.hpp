// The M/M/k queue (Poisson arrivals, k servers, exponential service, first come first served):
// what a server with k request slots sustains at a waiting-time objective. The load test's
// tests check the search against it, and the simulator's serving model uses it.
#pragma once

namespace gpuaas::capacity {

// Erlang's C formula: the probability that an arrival waits, with k servers and offered load
// a = λ/μ (1 when a >= k).
double erlang_c(int k, double a);

// P(wait > t) = C(k, a)·e^(−(kμ − λ)t), for arrival rate λ and service rate μ per server.
double wait_exceeds(int k, double mu, double lambda, double t);

// The highest arrival rate at which P(wait > t) stays at or below `share` (e.g. 0.05 for a p95
// objective t).
double sustainable_rate(int k, double mu, double t, double share);

}  // namespace gpuaas::capacity
