// gpuaasctl: publish Kubernetes objects and metrics as events, watch what the daemon says, and ask
// it for its state. kubectl-like. Exit codes: 0 ok, 1 invalid input, 2 usage, 3 server unreachable.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "commands.hpp"

int main(int argc, char** argv) {
  using namespace gpuaas::ctl;
  CtlContext ctx;
  if (const char* env = std::getenv("GPUAAS_SERVER"); env != nullptr && *env != '\0') {
    ctx.server = env;
  }
  CLI::App app{"gpuaasctl: talk to gpuaasd over NATS"};
  app.require_subcommand(1);
  app.fallthrough();  // global flags anywhere, as kubectl takes them
  app.add_option("--server", ctx.server,
                 "NATS URL (default nats://127.0.0.1:4222 or $GPUAAS_SERVER)");
  // Matches gpuaasd's subjectRoot; for test and staging setups that share one server.
  app.add_option("--subject-root", ctx.subject_root, "Subject root (default gpuaas)")->group("");

  PublishOptions apply_opts, delete_opts;
  for (auto [name, opts, help] :
       {std::tuple{"apply", &apply_opts, "Publish objects as ADDED events (upserts)"},
        std::tuple{"delete", &delete_opts, "Publish objects as DELETED events"}}) {
    auto* cmd = app.add_subcommand(name, help);
    cmd->add_option("-f,--filename", opts->file, "YAML or JSON file, or - for standard input")
        ->required();
    cmd->add_option("-n,--namespace", opts->default_namespace,
                    "Namespace for objects that have none (default: default)");
  }
  std::string metrics_file;
  auto* push = app.add_subcommand("push-metrics", "Publish a Prometheus text scrape as samples");
  push->add_option("file", metrics_file, "Prometheus text exposition file, or -")->required();

  WatchOptions wo;
  std::string what;
  auto* watch_cmd =
      app.add_subcommand("watch", "Print actions, events or dead letters as they pass");
  watch_cmd->add_option("what", what, "actions | events | deadletter")
      ->required()
      ->check(CLI::IsMember({"actions", "events", "deadletter"}));
  watch_cmd->add_option("--count", wo.count, "Stop after N messages")
      ->check(CLI::NonNegativeNumber);
  watch_cmd->add_option("--timeout", wo.timeout, "Stop after SECONDS")
      ->check(CLI::NonNegativeNumber);
  watch_cmd->add_flag("--json", wo.json, "One JSON object per line, nothing else on stdout");
  watch_cmd->add_flag("--ticks", wo.ticks, "events: include the daemon's ticks");

  bool state_json = false;
  auto* state = app.add_subcommand("state", "Show the daemon's model of the cluster");
  state->add_flag("--json", state_json, "The full state as JSON");

  bool plugins_json = false;
  auto* plugins =
      app.add_subcommand("plugins", "List the daemon's workload plugins and refused libraries");
  plugins->add_flag("--json", plugins_json, "As JSON");

  std::string explain_target;
  bool explain_json = false;
  auto* explain_cmd = app.add_subcommand(
      "explain", "Why a queued workload waits, its queue position and estimated start");
  explain_cmd->add_option("workload", explain_target, "NAMESPACE/NAME")->required();
  explain_cmd->add_flag("--json", explain_json, "As JSON");

  std::string report_since;
  bool report_projects = false, report_json = false;
  auto* report = app.add_subcommand(
      "report", "GPU-hours allocated, busy and idle-reserved, outcomes and cost per tenant");
  report->add_option("--since", report_since, "Only the last DURATION of event time (e.g. 24h)");
  report->add_flag("--projects", report_projects, "A row per project (namespace) too");
  report->add_flag("--json", report_json, "As JSON");

  std::vector<std::string> policy_paths;
  auto* policy = app.add_subcommand("policy", "Work with policy files offline (no server)");
  policy->require_subcommand(1);
  auto* policy_check = policy->add_subcommand(
      "check", "Validate policy files as one set; print FILE:LINE:COLUMN: message per mistake");
  policy_check->add_option("files", policy_paths, "Policy files, or directories of *.yaml/*.yml")
      ->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gpuaasctl: " << e.what() << " (see gpuaasctl --help)\n";
    return kExitUsage;
  }
  for (auto* cmd : {app.get_subcommand("apply"), app.get_subcommand("delete")}) {
    if (cmd->parsed()) {
      auto& o = cmd->get_name() == "apply" ? apply_opts : delete_opts;
      o.namespace_given = cmd->count("--namespace") > 0;
      return publish_objects(
          ctx, cmd->get_name() == "apply" ? ObjectChange::kApply : ObjectChange::kDelete, o);
    }
  }
  if (push->parsed()) return push_metrics(ctx, metrics_file);
  if (watch_cmd->parsed()) {
    wo.target = what == "actions"  ? WatchTarget::kActions
                : what == "events" ? WatchTarget::kEvents
                                   : WatchTarget::kDeadletter;
    return watch(ctx, wo);
  }
  if (state->parsed()) return show_state(ctx, state_json);
  if (plugins->parsed()) return show_plugins(ctx, plugins_json);
  if (explain_cmd->parsed()) return explain(ctx, explain_target, explain_json);
  if (report->parsed()) return show_report(ctx, report_since, report_projects, report_json);
  if (policy_check->parsed()) return check_policy(policy_paths);
  return kExitUsage;
}
