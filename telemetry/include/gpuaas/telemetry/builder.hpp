// Fluent builder returned by BuildCounter()/BuildGauge()/BuildHistogram(), as in prometheus-cpp:
//   auto& family =
//       BuildCounter().Name("x_total").Help("...").Labels({{"k", "v"}}).Register(*registry);
#pragma once

#include <map>
#include <string>

#include "gpuaas/telemetry/metric_family.hpp"

namespace gpuaas::telemetry {

template <typename T>
class Family;
class Registry;

namespace detail {

template <typename T>
class Builder {
 public:
  Builder& Name(const std::string& name);
  Builder& Help(const std::string& help);
  // Constant labels, attached to every series of the family. The method is named Labels (like
  // prometheus-cpp), which hides the type alias inside this class; hence the qualified names.
  Builder& Labels(const std::map<std::string, std::string>& labels);

  // Returns the family registered under Name(), creating it if needed. Throws std::invalid_argument
  // on an invalid name, or when the name is taken by a family of another type or other constant
  // labels.
  Family<T>& Register(Registry& registry);

 private:
  std::string name_;
  std::string help_;
  ::gpuaas::telemetry::Labels labels_;
};

}  // namespace detail
}  // namespace gpuaas::telemetry
