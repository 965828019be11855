// The mutating admission webhook: HTTPS POST /mutate answers an AdmissionReview
// (admission.k8s.io/v1) with a JSON Patch that holds a new queued workload (see workload_hold.hpp)
// and, for a kind whose binding is required, gates its pod templates (placement_gates.hpp), and
// GET /healthz. It never denies: every well-formed review is allowed, with or without a patch;
// what happens when the webhook is down is the MutatingWebhookConfiguration's failurePolicy.
//
// TLS is civetweb's (1.15 in Debian 12), which loads "libssl.so" with dlopen and looks up OpenSSL
// 1.1 names. OpenSSL 3 no longer exports one of them, SSL_get_peer_certificate (now
// SSL_get1_peer_certificate; civetweb issue #1334), so civetweb alone cannot start TLS here. The
// fix is a tiny shared object whose soname is "libssl.so", defining that one function over
// OpenSSL 3 and depending on libssl.so.3: loaded before civetweb's dlopen, it is the "libssl.so"
// civetweb gets, and every other name resolves through its dependencies (`tls_shim` below; the
// source is in docs/bridge-webhook.md). TLS 1.2 or newer is required.
// civetweb wants the key and the certificate in one PEM; Kubernetes secrets keep them apart
// (tls.key, tls.crt), so they are joined in an anonymous in-memory file (memfd): the key never
// lands on disk. The certificate is read once: a rotated one takes effect on restart.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bridge/workload_hold.hpp"
#include "gpuaas/telemetry/registry.hpp"

namespace gpuaas::host {
class PluginHost;
}

namespace gpuaas::bridge {

struct AdmissionWebhookOptions {
  std::string listen = "0.0.0.0:9443";  // "HOST:PORT", HOST an IPv4 literal; port 0: a free port
  std::string cert_file;                // PEM certificate (chain), e.g. tls.crt
  std::string key_file;                 // PEM private key, e.g. tls.key
  std::string queue_label = kDefaultQueueLabel;
  std::vector<HoldRule> rules = default_hold_rules();
  // The plugins asked for each kind's binding and each workload's demand; nullptr (or
  // placement_gates false, `webhook.placementGates`): no pod template is gated. Must outlive the
  // webhook; it is called from the webhook's threads.
  host::PluginHost* plugins = nullptr;
  bool placement_gates = true;
  // The OpenSSL 3 shim for civetweb (see above): a path, or a name dlopen searches for. A shim
  // that cannot be loaded is only reported when TLS then fails to start. "" = none.
  std::string tls_shim = "libgpuaas-civetweb-tls.so";
};

// The JSON answer to one AdmissionReview body, or the 400 message for a malformed one. Pure but
// for the plugins' demand calls, so the protocol is tested without TLS.
struct AdmissionAnswer {
  int status = 200;      // 400: malformed review
  std::string body;      // the AdmissionReview response (200) or the message (400)
  std::string kind;      // request.kind.kind ("unknown" when unreadable): the metric's label
  std::string result;    // "held", "gated", "labelled", "passed" or "invalid"
  std::string reason;    // for the log
  nlohmann::json patch;  // the JSON Patch returned (null: none)
  bool gated = false;    // pod templates gated (placement_gates.hpp)
  // A required kind's templates could not be gated (the plugin's demand failed...): what and why.
  // The object is admitted with its hold only; the webhook logs and counts it.
  std::string template_error;
};
// `plugins` (may be nullptr: no placement gates) is asked for bindings and demands.
AdmissionAnswer answer_admission_review(std::string_view body, std::string_view queue_label,
                                        const std::vector<HoldRule>& rules,
                                        host::PluginHost* plugins = nullptr);

class AdmissionWebhook {
 public:
  // Serves until destroyed. `registry` must outlive the webhook; it gets
  // gpuaas_bridge_webhook_requests_total{kind,result} and
  // gpuaas_bridge_webhook_template_errors_total{kind}.
  // Errors: malformed listen, unreadable certificate or key -> invalid; civetweb without TLS,
  // OpenSSL not usable by civetweb (no shim), cannot bind -> unavailable.
  static Result<std::unique_ptr<AdmissionWebhook>> start(const AdmissionWebhookOptions& options,
                                                         telemetry::Registry& registry);

  // "HOST:PORT" bound (the real port after asking for 0).
  std::string address() const;

  AdmissionWebhook(const AdmissionWebhook&) = delete;
  AdmissionWebhook& operator=(const AdmissionWebhook&) = delete;
  ~AdmissionWebhook();  // stops serving and waits for requests in flight

 private:
  struct Impl;
  explicit AdmissionWebhook(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuaas::bridge
