#include "gpuaas/bridge/admission_webhook.hpp"

#include <civetweb.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <exception>
#include <fstream>
#include <sstream>
#include <utility>

#include "gpuaas/bridge/placement_gates.hpp"
#include "gpuaas/telemetry/civetweb_server.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;

// The API server sends objects of at most ~3 MiB (etcd's limit) wrapped in a review.
constexpr std::size_t kMaxBody = 8 * 1024 * 1024;

std::string base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                       (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

AdmissionAnswer invalid(std::string kind, std::string message) {
  AdmissionAnswer a;
  a.status = 400;
  a.kind = kind.empty() ? "unknown" : std::move(kind);
  a.result = "invalid";
  a.reason = message;
  a.body = "invalid AdmissionReview: " + std::move(message) + "\n";
  return a;
}

std::string string_at(const json& o, const char* key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<std::string> read_pem(const std::string& path, const char* what) {
  if (path.empty()) return Status::invalid(std::string("webhook: no ") + what + " file configured");
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::invalid("webhook: cannot read the " + std::string(what) + " " + path);
  std::ostringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  if (text.find("-----BEGIN ") == std::string::npos) {
    return Status::invalid("webhook: " + path + " is not PEM (no -----BEGIN line)");
  }
  if (text.back() != '\n') text += '\n';
  return text;
}

void send(mg_connection* conn, int status, const char* content_type, const std::string& body) {
  const char* reason = mg_get_response_code_text(conn, status);
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + (reason ? reason : "") + "\r\n";
  head += std::string("Content-Type: ") + content_type + "\r\n";
  head += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  head += "Cache-Control: no-store\r\nConnection: close\r\n\r\n";
  mg_write(conn, head.data(), head.size());
  if (!body.empty()) mg_write(conn, body.data(), body.size());
}

// The hold's operations followed by the placement gates' (written against the held object), or
// only the hold when the templates cannot be gated.
json gated_patch(const json& object, const HoldDecision& d, std::string_view group,
                 std::string_view kind, host::PluginHost& plugins, AdmissionAnswer& a) {
  json ops = d.held ? d.patch : json::array();
  // A plain Pod has no template: its own admission gate holds it.
  if (group.empty() && kind == "Pod") return ops;
  TemplateGating g;
  try {
    const json held = d.held ? object.patch(d.patch) : object;
    g = gate_pod_templates(held, string_at(object, "apiVersion"), kind, plugins);
  } catch (const std::exception& e) {
    // Never a 500 for this: failurePolicy Fail would refuse the user's CREATE.
    g = {json::array(), "", std::string("cannot gate the pod templates: ") + e.what()};
  }
  if (!g.error.empty()) {
    const json meta = object.value("metadata", json::object());
    a.template_error = std::string(kind) + " " + meta.value("namespace", "") + "/" +
                       meta.value("name", meta.value("generateName", "")) + ": " + g.error;
    return ops;
  }
  a.gated = !g.patch.empty();
  for (auto& op : g.patch) ops.push_back(std::move(op));
  return ops;
}

}  // namespace

AdmissionAnswer answer_admission_review(std::string_view body, std::string_view queue_label,
                                        const std::vector<HoldRule>& rules,
                                        host::PluginHost* plugins) {
  const json review = json::parse(body, nullptr, false);
  if (review.is_discarded() || !review.is_object())
    return invalid("", "the body is not a JSON object");
  const auto request = review.find("request");
  std::string kind;
  std::string group;
  if (request != review.end() && request->is_object()) {
    const auto k = request->find("kind");
    if (k != request->end() && k->is_object()) {
      kind = string_at(*k, "kind");
      group = string_at(*k, "group");
    }
  }
  if (string_at(review, "apiVersion") != "admission.k8s.io/v1" ||
      string_at(review, "kind") != "AdmissionReview") {
    return invalid(kind, "apiVersion must be admission.k8s.io/v1 and kind AdmissionReview");
  }
  if (request == review.end() || !request->is_object()) return invalid(kind, "no request object");
  const std::string uid = string_at(*request, "uid");
  if (uid.empty()) return invalid(kind, "request.uid is missing");
  if (kind.empty()) return invalid(kind, "request.kind.kind is missing");
  const std::string operation = string_at(*request, "operation");
  if (operation.empty()) return invalid(kind, "request.operation is missing");
  const auto object = request->find("object");
  const bool has_object = object != request->end() && object->is_object();
  if (operation == "CREATE" && !has_object) return invalid(kind, "a CREATE without request.object");

  HoldDecision d;
  if (has_object) {
    d = decide_hold(*object, operation, group, kind, queue_label, rules);
  } else {
    d.reason = operation + ": no object to hold";
  }
  AdmissionAnswer a;
  json patch = d.patch;
  if (plugins != nullptr && d.workload) patch = gated_patch(*object, d, group, kind, *plugins, a);
  json response = {{"uid", uid}, {"allowed", true}};
  if (d.held || d.labelled || a.gated) {
    response["patchType"] = "JSONPatch";
    response["patch"] = base64(patch.dump());
    a.patch = std::move(patch);
  }
  if (!d.warning.empty()) response["warnings"] = json::array({d.warning});
  a.kind = kind;
  a.result = d.held ? "held" : a.gated ? "gated" : d.labelled ? "labelled" : "passed";
  a.reason = a.gated ? d.reason + ", pod templates gated" : d.reason;
  a.body = json{{"apiVersion", "admission.k8s.io/v1"},
                {"kind", "AdmissionReview"},
                {"response", std::move(response)}}
               .dump();
  return a;
}

struct AdmissionWebhook::Impl {
  std::string queue_label;
  std::vector<HoldRule> rules;
  host::PluginHost* plugins = nullptr;  // set when placement gates are on
  telemetry::Family<telemetry::Counter>* requests = nullptr;
  telemetry::Family<telemetry::Counter>* template_errors = nullptr;
  // Last: stopped first, while everything its callbacks use is still there.
  std::unique_ptr<telemetry::CivetwebServer> server;

  void count(const std::string& kind, const std::string& result) {
    requests->Add({{"kind", kind}, {"result", result}}).Increment();
  }

  void mutate(mg_connection* conn, const mg_request_info& info) {
    if (info.content_length < 0 || static_cast<std::size_t>(info.content_length) > kMaxBody) {
      count("unknown", "invalid");
      send(conn, info.content_length < 0 ? 411 : 413, "text/plain; charset=utf-8",
           "invalid AdmissionReview: a body with Content-Length up to 8 MiB is required\n");
      return;
    }
    std::string body(static_cast<std::size_t>(info.content_length), '\0');
    std::size_t got = 0;
    while (got < body.size()) {
      const int n = mg_read(conn, body.data() + got, body.size() - got);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    body.resize(got);
    const AdmissionAnswer a = answer_admission_review(body, queue_label, rules, plugins);
    count(a.kind, a.result);
    if (!a.template_error.empty()) {
      template_errors->Add({{"kind", a.kind}}).Increment();
      spdlog::warn("webhook: {}: pod templates not gated, admitted with the hold only",
                   a.template_error);
    }
    if (a.status != 200) {
      spdlog::warn("webhook: {}", a.reason);
      send(conn, a.status, "text/plain; charset=utf-8", a.body);
      return;
    }
    spdlog::debug("webhook: {} {}: {}", a.kind, a.result, a.reason);
    send(conn, 200, "application/json", a.body);
  }

  static int on_request(mg_connection* conn) {
    const mg_request_info* info = mg_get_request_info(conn);
    auto* self = static_cast<Impl*>(info->user_data);
    const std::string_view method = info->request_method ? info->request_method : "";
    const std::string_view path = info->local_uri ? info->local_uri : "";
    try {
      if (path == "/mutate" && method == "POST") {
        self->mutate(conn, *info);
        return 200;
      }
      if (path == "/healthz" && (method == "GET" || method == "HEAD")) {
        send(conn, 200, "text/plain; charset=utf-8", "ok");
        return 200;
      }
      const bool known = path == "/mutate" || path == "/healthz";
      send(conn, known ? 405 : 404, "text/plain; charset=utf-8",
           known ? "method not allowed\n" : "not found\n");
      return known ? 405 : 404;
    } catch (const std::exception& e) {
      // Never let an exception reach civetweb's C; the API server applies failurePolicy.
      send(conn, 500, "text/plain; charset=utf-8", std::string("webhook failed: ") + e.what());
      return 500;
    }
  }
};

Result<std::unique_ptr<AdmissionWebhook>> AdmissionWebhook::start(
    const AdmissionWebhookOptions& options, telemetry::Registry& registry) {
  const auto listen = telemetry::parse_listen(options.listen);
  if (!listen) {
    return Status::invalid("webhook: malformed listen address '" + options.listen +
                           "' (want HOST:PORT, e.g. 0.0.0.0:9443)");
  }
  if (options.queue_label.empty()) return Status::invalid("webhook: the queue label is empty");
  auto cert = read_pem(options.cert_file, "certificate");
  if (!cert) return cert.status();
  auto key = read_pem(options.key_file, "key");
  if (!key) return key.status();
  if (mg_check_feature(MG_FEATURES_SSL) == 0) {
    return Status::unavailable("webhook: this civetweb was built without TLS");
  }
  // Before the start below: civetweb dlopens "libssl.so" when it first initialises TLS.
  const std::string shim_error = telemetry::CivetwebServer::load_tls_shim(options.tls_shim);

  // The key and certificate joined for civetweb, in memory only; the file is read by mg_start2.
  const int fd = memfd_create("gpuaas-webhook-tls", MFD_CLOEXEC);
  if (fd < 0) return Status::unavailable("webhook: memfd_create failed");
  const std::string pem = *key + *cert;
  bool written = true;
  for (std::size_t off = 0; off < pem.size();) {
    const ssize_t n = write(fd, pem.data() + off, pem.size() - off);
    if (n <= 0) {
      written = false;
      break;
    }
    off += static_cast<std::size_t>(n);
  }
  if (!written) {
    close(fd);
    return Status::unavailable("webhook: cannot serve HTTPS on " + listen->host + ":" +
                               std::to_string(listen->port) + "s: cannot write the PEM");
  }
  const std::string pem_path = "/proc/self/fd/" + std::to_string(fd);

  auto impl = std::make_unique<Impl>();
  impl->queue_label = options.queue_label;
  impl->rules = options.rules;
  if (options.placement_gates) impl->plugins = options.plugins;
  impl->requests = &telemetry::BuildCounter()
                        .Name("gpuaas_bridge_webhook_requests_total")
                        .Help(
                            "Admission reviews answered by the webhook, by kind and result "
                            "(held: patched to wait for admission, pod templates gated too "
                            "where the kind's binding is required; gated: already held, only its "
                            "pod templates gated; labelled: a Deployment's or StatefulSet's pod "
                            "template given the queue labels; passed: allowed unchanged; "
                            "invalid: malformed review, HTTP 400).")
                        .Register(registry);
  impl->template_errors =
      &telemetry::BuildCounter()
           .Name("gpuaas_bridge_webhook_template_errors_total")
           .Help(
               "Queued workloads of a kind with required binding admitted with their hold only, "
               "their pod templates not gated: the plugin's demand failed, or a template or pod "
               "set name did not allow the placement gate and label; by kind.")
           .Register(registry);

  mg_callbacks callbacks{};
  callbacks.begin_request = &Impl::on_request;
  // TLS 1.2 or newer (civetweb's 4); the API server speaks 1.2/1.3.
  auto server = telemetry::CivetwebServer::start(*listen, true,
                                                 {{"ssl_certificate", pem_path},
                                                  {"ssl_certificate_chain", pem_path},
                                                  {"ssl_protocol_version", "4"},
                                                  {"num_threads", "4"},
                                                  {"request_timeout_ms", "10000"}},
                                                 callbacks, impl.get(), "webhook");
  close(fd);
  if (!server) {
    std::string message = server.status().message();
    if (server.status().code() != StatusCode::kUnavailable ||
        message.find("SSL_get_peer_certificate") == std::string::npos) {
      return server.status();
    }
    message += " (civetweb 1.15 with OpenSSL 3 needs the TLS shim; " +
               (options.tls_shim.empty()
                    ? std::string("none configured")
                    : options.tls_shim + ": " + (shim_error.empty() ? "loaded" : shim_error)) +
               ")";
    return Status::unavailable(std::move(message));
  }
  impl->server = std::move(*server);
  spdlog::info(
      "webhook: serving HTTPS POST /mutate on {} (queue label {}, {} hold rules, "
      "placement gates {})",
      impl->server->address(), impl->queue_label, impl->rules.size(),
      impl->plugins != nullptr ? "on" : "off");
  return std::unique_ptr<AdmissionWebhook>(new AdmissionWebhook(std::move(impl)));
}

AdmissionWebhook::AdmissionWebhook(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

AdmissionWebhook::~AdmissionWebhook() {
  // Joins civetweb's threads, so no callback can touch impl_ afterwards.
  if (impl_) impl_->server.reset();
}

std::string AdmissionWebhook::address() const { return impl_->server->address(); }

}  // namespace gpuaas::bridge
