// gpuaasctl: publish Kubernetes objects and metrics as events, watch what the daemon says, and ask
// it for its state. kubectl-like. Exit codes: 0 ok, 1 invalid input, 2 usage, 3 server unreachable.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "commands.hpp"

namespace {

// --limit and --after of a command whose answer comes by pages.
void add_page_options(CLI::App* cmd, std::size_t& limit, std::string& after, const char* items,
                      const char* cursor) {
  cmd->add_option("--limit", limit, std::string("One page of at most N ") + items + " (1 to 5000)")
      ->check(CLI::Range(1, 5000));
  cmd->add_option("--after", after, std::string("The page after this cursor (") + cursor + ")");
}

// capacity's flags: the endpoint, the requests, the objectives, the search, the price.
CLI::App* add_capacity(CLI::App& app, gpuaas::ctl::CapacityOptions& o) {
  auto* c = app.add_subcommand(
      "capacity",
      "Load-test an OpenAI-compatible endpoint: the highest request rate whose latency, error and "
      "quality objectives hold, and the cost of a good answer there (docs/capacity.md)");
  c->add_option("--url", o.url, "Base URL: vLLM http://HOST:8000, KServe http://HOST/openai")
      ->required();
  c->add_option("--model", o.model, "Model name (default: the first the endpoint lists)");
  c->add_flag("--chat", o.chat, "Use /v1/chat/completions (default /v1/completions)");
  c->add_option("--header", o.headers, "Extra HTTP header, e.g. \"Authorization: Bearer ...\"");
  c->add_option("--trace", o.trace,
                "Request sizes from a trace in the Azure LLM format "
                "(TIMESTAMP,ContextTokens,GeneratedTokens)");
  c->add_option("--prompt-tokens", o.prompt_tokens, "Without --trace: prompt tokens (default 256)");
  c->add_option("--output-tokens", o.output_tokens, "Without --trace: output tokens (default 128)");
  c->add_option("--max-prompt-tokens", o.max_prompt_tokens, "Clamp the trace's prompts (0: no)");
  c->add_option("--max-output-tokens", o.max_output_tokens, "Clamp the trace's outputs (0: no)");
  c->add_flag("--ignore-eos", o.ignore_eos, "Ask vLLM to generate every token asked for");
  c->add_option("--objective", o.objective_file, "A policy file with the ServiceObjective to meet");
  c->add_option("--objective-name", o.objective_name, "Which ServiceObjective of that file");
  c->add_option("--ttft-p95", o.ttft_p95, "p95 time to first token, e.g. 400ms");
  c->add_option("--tpot-p95", o.tpot_p95, "p95 time per output token, e.g. 50ms");
  c->add_option("--e2e-p95", o.e2e_p95, "p95 end-to-end latency, e.g. 20s");
  c->add_option("--max-error-rate", o.max_error_rate,
                "Share of requests that may fail (default 0.01)")
      ->check(CLI::Range(0.0, 1.0));
  c->add_option("--min-quality", o.min_quality,
                "Share of answers that must pass the quality check (default 0.99)")
      ->check(CLI::Range(0.0, 1.0));
  c->add_option("--check", o.check,
                "Run CMD on each answer (its text on stdin); exit 0 passes the quality check");
  c->add_option("--check-timeout", o.check_timeout, "Seconds for each --check run (default 10)");
  c->add_option("--confidence", o.confidence,
                "Confidence that the p95s hold at the answer (default 0.9)")
      ->check(CLI::Range(0.5, 0.999));
  c->add_option("--step-seconds", o.step_seconds, "Seconds each rate is held (default 30)")
      ->check(CLI::PositiveNumber);
  c->add_option("--warmup-seconds", o.warmup_seconds,
                "Seconds at each step's start not measured (default: a fifth of the step)");
  c->add_option("--start-rps", o.start_rps, "First rate (default 1)")->check(CLI::PositiveNumber);
  c->add_option("--max-rps", o.max_rps, "Highest rate tried (default 1000)")
      ->check(CLI::PositiveNumber);
  c->add_option("--precision", o.precision, "Bisect until within this share (default 0.05)")
      ->check(CLI::Range(0.001, 0.5));
  c->add_option("--confirm-steps", o.confirm_steps,
                "Steps pooled to confirm the answer (default 3)")
      ->check(CLI::Range(1, 20));
  c->add_option("--max-steps", o.max_steps, "Stop after this many steps (default 40)")
      ->check(CLI::Range(1, 1000));
  c->add_option("--request-timeout", o.request_timeout, "Seconds per request (default 120)")
      ->check(CLI::PositiveNumber);
  c->add_option("--stall-timeout", o.stall_timeout,
                "Seconds a stream may send nothing (default 30)")
      ->check(CLI::PositiveNumber);
  c->add_option("--gpu-hour-price", o.gpu_hour_price, "Price of one GPU for an hour")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--gpus", o.gpus, "GPUs the endpoint runs on (default 1)")
      ->check(CLI::Range(1, 4096));
  c->add_option("--flavor", o.flavor,
                "Price from gpuaasd's price for this flavor (needs --server)");
  c->add_option("--currency", o.currency, "With --gpu-hour-price (default USD)");
  c->add_option("--chart", o.chart, "Write the latency-against-rate chart here (SVG)");
  c->add_option("--seed", o.seed, "Seed of the arrivals and request sizes (default 1)");
  c->add_flag("--json", o.json, "One JSON object on the last line (sustainable_rps, steps, cost)");
  return c;
}

int run(int argc, char** argv) {
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

  // Who gpuaasctl is to the server (docs/security.md). Secrets come from files or the
  // environment ($GPUAAS_NATS_PASSWORD, $GPUAAS_NATS_TOKEN), never from the command line, where
  // any user of the machine could read them.
  auto& n = ctx.nats;
  app.add_option("--user", n.user,
                 "NATS user (password from --password-file or $GPUAAS_NATS_PASSWORD)")
      ->group("Connection");
  app.add_option("--password-file", n.password_file, "File whose first line is the password")
      ->group("Connection");
  app.add_option("--token-file", n.token_file, "File whose first line is the NATS token")
      ->group("Connection");
  app.add_option("--nkey", n.nkey, "The user's public NKey (U...), with --nkey-seed")
      ->group("Connection");
  app.add_option("--nkey-seed", n.nkey_seed_file, "File holding the NKey seed")
      ->group("Connection");
  app.add_option("--creds", n.credentials_file, "NATS credentials file (JWT and seed)")
      ->group("Connection");
  app.add_option("--tls-ca", n.tls_ca, "CA bundle (PEM) the server certificate must chain to")
      ->group("Connection");
  app.add_option("--tls-cert", n.tls_cert, "Client certificate (PEM), with --tls-key")
      ->group("Connection");
  app.add_option("--tls-key", n.tls_key, "Client certificate's private key (PEM)")
      ->group("Connection");
  app.add_option("--tls-server-name", n.tls_server_name,
                 "Name the server certificate must carry (default: the URL's host)")
      ->group("Connection");
  app.add_option("--inbox-prefix", n.inbox_prefix,
                 "Reply subjects' prefix (a tenant's user: the one its permissions allow)")
      ->group("Connection");
  app.add_option("--scope", ctx.scope,
                 "A tenant's namespace: state, explain, report and plugins answered for it only, "
                 "apply and delete as its submissions")
      ->group("Connection");

  PublishOptions apply_opts, delete_opts;
  for (auto [name, opts, help] :
       {std::tuple{"apply", &apply_opts, "Publish objects as ADDED events (upserts)"},
        std::tuple{"delete", &delete_opts, "Publish objects as DELETED events"}}) {
    auto* cmd = app.add_subcommand(name, help);
    cmd->add_option("-f,--filename", opts->file, "YAML or JSON file, or - for standard input")
        ->required();
    cmd->add_option("-n,--namespace", opts->default_namespace,
                    "Namespace for objects that have none (default: default)");
    cmd->add_flag("--submit", opts->submit,
                  "Publish as a tenant's submission of a workload (implied by --scope), not as "
                  "observed cluster state");
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

  StateOptions so;
  auto* state = app.add_subcommand("state", "Show the daemon's model of the cluster");
  state->add_flag("--json", so.json,
                  "As JSON: the full state (an error when it does not fit one reply), or pages");
  state->add_flag("--summary", so.summary, "Counts only (the default view on a large cluster)");
  auto* by_nodes = state->add_flag("--nodes", so.nodes, "Pages of nodes");
  auto* by_workloads = state->add_flag("--workloads", so.workloads, "Pages of workloads");
  by_nodes->excludes(by_workloads);
  add_page_options(state, so.limit, so.after, "items", "a node's name or a workload's key");
  state->add_option("-n,--namespace", so.ns, "Workloads of this namespace")->excludes(by_nodes);
  state->add_option("--flavor", so.flavor, "Nodes of this GPU product")->excludes(by_workloads);

  bool plugins_json = false;
  auto* plugins =
      app.add_subcommand("plugins", "List the daemon's workload plugins and refused libraries");
  plugins->add_flag("--json", plugins_json, "As JSON");

  ExplainOptions eo;
  auto* explain_cmd = app.add_subcommand(
      "explain",
      "Why a queued workload waits, its queue position and estimated start; without one, "
      "every queued workload, by pages");
  explain_cmd->add_option("workload", eo.workload, "NAMESPACE/NAME (none: every queued one)");
  explain_cmd->add_flag("--json", eo.json, "As JSON (pages: one page object per line)");
  explain_cmd->add_option("-n,--namespace", eo.ns, "Every queued workload of this namespace");
  add_page_options(explain_cmd, eo.limit, eo.after, "workloads", "a workload's key");

  ReportOptions ro;
  auto* report = app.add_subcommand(
      "report", "GPU-hours allocated, busy and idle-reserved, outcomes and cost per tenant");
  report->add_option("--since", ro.since, "Only the last DURATION of event time (e.g. 24h)");
  report->add_flag("--projects", ro.projects, "A row per project (namespace) too");
  report->add_flag("--json", ro.json, "As JSON (the whole report, or pages with --limit)");
  add_page_options(report, ro.limit, ro.after, "tenants", "a tenant");

  CapacityOptions capacity_opts;
  auto* capacity_cmd = add_capacity(app, capacity_opts);

  std::vector<std::string> policy_paths;
  auto* policy = app.add_subcommand("policy", "Work with policy files offline (no server)");
  policy->require_subcommand(1);
  auto* policy_check = policy->add_subcommand(
      "check", "Validate policy files as one set; print FILE:LINE:COLUMN: message per mistake");
  policy_check->add_option("files", policy_paths, "Policy files, or directories of *.yaml/*.yml")
      ->required();
  int64_t max_payload = 1048576;
  policy_check
      ->add_option("--max-payload", max_payload,
                   "The NATS servers' max_payload in bytes (default 1048576, nats-server's); "
                   "0 checks no size")
      ->check(CLI::NonNegativeNumber);

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
  auto from_env = [](const char* var, std::string& out) {
    const char* env = std::getenv(var);
    if (env != nullptr && *env != '\0') out = env;
  };
  if (!n.user.empty() && n.password_file.empty()) from_env("GPUAAS_NATS_PASSWORD", n.password);
  if (n.user.empty() && n.token_file.empty() && n.nkey.empty() && n.credentials_file.empty())
    from_env("GPUAAS_NATS_TOKEN", n.token);
  for (auto* cmd : {app.get_subcommand("apply"), app.get_subcommand("delete")}) {
    if (cmd->parsed()) {
      auto& o = cmd->get_name() == "apply" ? apply_opts : delete_opts;
      o.namespace_given = cmd->count("--namespace") > 0;
      if (!ctx.scope.empty()) {
        // A tenant submits in its own namespace: --scope is the namespace it may use.
        if (o.namespace_given && o.default_namespace != ctx.scope) {
          std::cerr << "error: --namespace " << o.default_namespace << " is not the --scope "
                    << ctx.scope << "\n";
          return kExitUsage;
        }
        o.submit = true;
        o.default_namespace = ctx.scope;
        o.namespace_given = true;
      }
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
  if (state->parsed()) return show_state(ctx, so);
  if (plugins->parsed()) return show_plugins(ctx, plugins_json);
  if (explain_cmd->parsed()) return explain(ctx, eo);
  if (report->parsed()) return show_report(ctx, ro);
  if (policy_check->parsed()) return check_policy(policy_paths, max_payload);
  if (capacity_cmd->parsed()) return capacity(ctx, capacity_opts);
  return kExitUsage;
}

}  // namespace

// No input and no answer may end gpuaasctl with an abort: whatever a command did not expect is an
// error of its own (exit 1), said on stderr.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "gpuaasctl: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "gpuaasctl: internal error\n";
  }
  return gpuaas::ctl::kExitInvalidInput;
}
