// What a plugin author writes against: one plain class and GPUAAS_PLUGIN(Class).
//
//   class MyPlugin {
//    public:
//     static constexpr gpuaas::plugin::Info info{"my-kind", "1.0.0",
//                                                gpuaas::plugin::Stability::kAlpha};
//     static constexpr gpuaas::plugin::Kind kinds[] = {
//         {.group = "example.com", .version = "v1", .kind = "MyJob", .plural = "myjobs",
//          .hold = gpuaas::plugin::Hold::set_true("/spec/suspend")}};  // kind.hpp
//     explicit MyPlugin(const gpuaas::plugin::Json& config);  // or a default constructor
//     // required:
//     gpuaas::v1::WorkloadDemand demand(const gpuaas::plugin::Workload& w);
//     // optional:
//     gpuaas::v1::WorkloadLifecycle lifecycle(const gpuaas::plugin::Workload& w);
//     // admission, both or neither:
//     gpuaas::plugin::Patch admit(const Workload&, const gpuaas::v1::ActionRequest&);
//     gpuaas::plugin::Patch suspend(const Workload&, const gpuaas::v1::ActionRequest&);
//     // scaling to zero, both or neither:
//     gpuaas::plugin::Patch scale_to_zero(const Workload&, const v1::ActionRequest&);
//     gpuaas::plugin::Patch scale_back(const Workload&, const v1::ActionRequest&);
//     // optional:
//     gpuaas::v1::WorkloadActivity activity(const Workload&, const gpuaas::plugin::Samples&);
//   };
//   GPUAAS_PLUGIN(MyPlugin)
//
// Capabilities follow from the methods present; a mistake in a signature fails to compile with a
// message naming the method and the signature it needs.
#pragma once

#include <concepts>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <type_traits>

#include "gpuaas/plugin/abi.h"
#include "gpuaas/plugin/errors.hpp"
#include "gpuaas/plugin/kind.hpp"
#include "gpuaas/plugin/patch.hpp"
#include "gpuaas/plugin/samples.hpp"
#include "gpuaas/plugin/workload.hpp"
#include "gpuaas/v1/plugin.pb.h"

namespace gpuaas::plugin {

enum class Stability { kStable, kAlpha };

struct Info {
  const char* name;
  const char* version;  // semver: MAJOR.MINOR.PATCH[-pre][+build]
  Stability status;
};

// True when `v` is MAJOR.MINOR.PATCH with optional -prerelease and +build parts (semver 2.0).
constexpr bool is_semver(std::string_view v) {
  auto number = [&](std::size_t& i) {
    std::size_t start = i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
    if (i == start) return false;
    return !(v[start] == '0' && i - start > 1);  // no leading zeros
  };
  auto ident = [&](std::size_t& i) {
    std::size_t start = i;
    while (i < v.size() && ((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'z') ||
                            (v[i] >= 'A' && v[i] <= 'Z') || v[i] == '-' || v[i] == '.')) {
      ++i;
    }
    return i > start && v[start] != '.' && v[i - 1] != '.';
  };
  std::size_t i = 0;
  if (!number(i) || i >= v.size() || v[i++] != '.') return false;
  if (!number(i) || i >= v.size() || v[i++] != '.') return false;
  if (!number(i)) return false;
  if (i < v.size() && v[i] == '-' && !ident(++i)) return false;
  if (i < v.size() && v[i] == '+' && !ident(++i)) return false;
  return i == v.size();
}

namespace detail {

template <typename T>
concept HasDemand = requires {
  &T::demand;
};
template <typename T>
concept HasLifecycle = requires {
  &T::lifecycle;
};
template <typename T>
concept HasAdmit = requires {
  &T::admit;
};
template <typename T>
concept HasSuspend = requires {
  &T::suspend;
};
template <typename T>
concept HasScaleToZero = requires {
  &T::scale_to_zero;
};
template <typename T>
concept HasScaleBack = requires {
  &T::scale_back;
};
template <typename T>
concept HasActivity = requires {
  &T::activity;
};
template <typename T>
concept HasSetScale = requires {
  &T::set_scale;
};

template <typename T>
concept DemandOk = requires(T& p, const Workload& w) {
  { p.demand(w) } -> std::convertible_to<v1::WorkloadDemand>;
};
template <typename T>
concept LifecycleOk = requires(T& p, const Workload& w) {
  { p.lifecycle(w) } -> std::convertible_to<v1::WorkloadLifecycle>;
};
template <typename T>
concept ActionsOk = requires(T& p, const Workload& w, const v1::ActionRequest& r) {
  { p.admit(w, r) } -> std::convertible_to<Patch>;
  { p.suspend(w, r) } -> std::convertible_to<Patch>;
};
template <typename T>
concept ScaleOk = requires(T& p, const Workload& w, const v1::ActionRequest& r) {
  { p.scale_to_zero(w, r) } -> std::convertible_to<Patch>;
  { p.scale_back(w, r) } -> std::convertible_to<Patch>;
};
template <typename T>
concept SetScaleOk = requires(T& p, const Workload& w, const v1::ActionRequest& r) {
  { p.set_scale(w, r) } -> std::convertible_to<Patch>;
};
template <typename T>
concept ActivityOk = requires(T& p, const Workload& w, const Samples& s) {
  { p.activity(w, s) } -> std::convertible_to<v1::WorkloadActivity>;
};

template <typename T>
constexpr uint64_t capabilities() {
  uint64_t caps = GPUAAS_CAP_DEMAND;
  if constexpr (HasLifecycle<T>) caps |= GPUAAS_CAP_LIFECYCLE;
  if constexpr (HasAdmit<T>) caps |= GPUAAS_CAP_ADMISSION;
  if constexpr (HasScaleToZero<T>) caps |= GPUAAS_CAP_SCALE_TO_ZERO;
  if constexpr (HasActivity<T>) caps |= GPUAAS_CAP_ACTIVITY;
  if constexpr (HasSetScale<T>) caps |= GPUAAS_CAP_AUTOSCALE;
  return caps;
}

// Every rule of the SDK, each with the message an author reads when breaking it.
template <typename T>
constexpr bool check() {
  static_assert(
      requires { T::info; },
      "gpuaas plugin: declare `static constexpr gpuaas::plugin::Info info{name, version, "
      "status};`");
  static_assert(
      requires { T::kinds; },
      "gpuaas plugin: declare `static constexpr gpuaas::plugin::Kind kinds[] = {{.group = "
      "..., .version = ..., .kind = ..., .plural = ...}, ...};` (gpuaas/plugin/kind.hpp)");
  static_assert(std::size(T::kinds) > 0, "gpuaas plugin: kinds[] declares no kind");
  static_assert(
      all_kinds(T::kinds, [](const Kind& k) { return k.plural == nullptr || is_plural(k.plural); }),
      "gpuaas plugin: a kind's .plural is its resource name in API paths: lower case "
      "letters, digits and '-', e.g. .plural = \"rayjobs\"");
  static_assert(
      all_kinds(T::kinds, [](const Kind& k) { return hold_ok(k.hold); }),
      "gpuaas plugin: a kind's .hold is malformed: use Hold::none(), "
      "Hold::set_true(\"/json/pointer\"), Hold::annotation(\"key\", \"value\"[, "
      "any_value]) or Hold::scheduling_gate(\"prefix/name\") with a valid key or pointer");
  static_assert(all_kinds(T::kinds, [](const Kind& k) { return pods_ok(k.pods); }),
                "gpuaas plugin: a kind's .pods label must be a label key such as "
                "Pods::by_label(\"ray.io/cluster\")");
  static_assert(all_kinds(T::kinds, [](const Kind& k) { return binding_ok(k.binding); }),
                "gpuaas plugin: a kind's .binding must be Binding::kDefault, Binding::kRequired, "
                "Binding::kPreferred or Binding::kOff");
  static_assert(is_semver(T::info.version),
                "gpuaas plugin: info.version must be semver, MAJOR.MINOR.PATCH[-pre][+build]");
  static_assert(std::string_view(T::info.name).size() > 0, "gpuaas plugin: info.name is empty");
  static_assert(std::is_constructible_v<T, const Json&> || std::is_default_constructible_v<T>,
                "gpuaas plugin: give the class a constructor T(const gpuaas::plugin::Json& config) "
                "or a default constructor");
  static_assert(HasDemand<T>,
                "gpuaas plugin: a workload plugin must define `gpuaas::v1::WorkloadDemand "
                "demand(const gpuaas::plugin::Workload&)`");
  static_assert(DemandOk<T>,
                "gpuaas plugin: demand must be callable as `gpuaas::v1::WorkloadDemand "
                "demand(const gpuaas::plugin::Workload&)`");
  static_assert(!HasLifecycle<T> || LifecycleOk<T>,
                "gpuaas plugin: lifecycle must be callable as `gpuaas::v1::WorkloadLifecycle "
                "lifecycle(const gpuaas::plugin::Workload&)`");
  static_assert(
      HasAdmit<T> == HasSuspend<T>,
      "gpuaas plugin: admission needs both admit() and suspend(); define both or neither");
  static_assert(!HasAdmit<T> || ActionsOk<T>,
                "gpuaas plugin: admit and suspend must be callable as `gpuaas::plugin::Patch "
                "admit(const gpuaas::plugin::Workload&, const gpuaas::v1::ActionRequest&)`");
  static_assert(HasScaleToZero<T> == HasScaleBack<T>,
                "gpuaas plugin: scaling to zero needs both scale_to_zero() and scale_back(); "
                "define both or neither");
  static_assert(!HasScaleToZero<T> || ScaleOk<T>,
                "gpuaas plugin: scale_to_zero and scale_back must be callable as "
                "`gpuaas::plugin::Patch scale_to_zero(const gpuaas::plugin::Workload&, const "
                "gpuaas::v1::ActionRequest&)`");
  static_assert(!HasSetScale<T> || SetScaleOk<T>,
                "gpuaas plugin: set_scale must be callable as `gpuaas::plugin::Patch "
                "set_scale(const gpuaas::plugin::Workload&, const gpuaas::v1::ActionRequest&)` "
                "(the bounds are in request.scale())");
  static_assert(!HasActivity<T> || ActivityOk<T>,
                "gpuaas plugin: activity must be callable as `gpuaas::v1::WorkloadActivity "
                "activity(const gpuaas::plugin::Workload&, const gpuaas::plugin::Samples&)`");
  return true;
}

}  // namespace detail
}  // namespace gpuaas::plugin

#include "gpuaas/plugin/detail/adapter.hpp"

// Exports the plugin's entry point. Use once, in one source file of the plugin.
#define GPUAAS_PLUGIN(Class)                                                                    \
  extern "C" GPUAAS_PLUGIN_EXPORT const gpuaas_plugin_descriptor* gpuaas_plugin_get_descriptor( \
      void) {                                                                                   \
    return ::gpuaas::plugin::detail::Adapter<Class>::descriptor();                              \
  }
