#include "gpuaas/bridge/kube_client.hpp"

#include <curl/curl.h>

#include <fstream>
#include <mutex>
#include <sstream>

namespace gpuaas::bridge {
namespace {

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string Trim(std::string s) {
  const auto not_space = [](char c) { return c != ' ' && c != '\n' && c != '\r' && c != '\t'; };
  while (!s.empty() && !not_space(s.back())) s.pop_back();
  std::size_t start = 0;
  while (start < s.size() && !not_space(s[start])) ++start;
  return s.substr(start);
}

curl_blob Blob(const std::string& pem) {
  curl_blob blob{};
  blob.data = const_cast<char*>(pem.data());
  blob.len = pem.size();
  blob.flags = CURL_BLOB_COPY;
  return blob;
}

}  // namespace

// What the write callback needs for one transfer.
struct KubeClient::Call {
  CURL* easy = nullptr;
  const std::function<bool(std::string_view)>* on_data = nullptr;
  HttpResult* result = nullptr;
  bool aborted = false;  // on_data returned false
};

KubeClient::KubeClient(KubeAuth auth) : auth_(std::move(auth)) {
  GlobalInitOnce();
  while (!auth_.server.empty() && auth_.server.back() == '/') auth_.server.pop_back();
}

KubeClient::~KubeClient() = default;

void KubeClient::stop() { stopped_.store(true); }

void KubeClient::on_request(RequestHook hook) {
  std::lock_guard lock(mutex_);
  hook_ = std::move(hook);
}

void KubeClient::on_write(WriteHook hook) {
  std::lock_guard lock(mutex_);
  write_hook_ = std::move(hook);
}

void KubeClient::set_write_budget(WriteBudgetOptions options, MonotonicClock& clock) {
  auto budget = std::make_shared<WriteBudget>(options, clock);
  std::lock_guard lock(mutex_);
  budget_ = std::move(budget);
}

WriteBudgetOptions KubeClient::write_budget() const {
  std::lock_guard lock(mutex_);
  return budget_->options();
}

void KubeClient::take_write_token(const std::string& method) {
  std::shared_ptr<WriteBudget> budget;
  WriteHook hook;
  {
    std::lock_guard lock(mutex_);
    budget = budget_;
    hook = write_hook_;
  }
  const auto waited = budget->acquire(stopped_);
  if (hook) hook(method, std::chrono::duration<double>(waited).count());
}

std::string KubeClient::token() {
  std::lock_guard lock(mutex_);
  if (!token_loaded_) {
    token_ = auth_.token;
    token_loaded_ = true;
  }
  if (auth_.token_file.empty()) return token_;
  const auto now = std::chrono::steady_clock::now();
  if (token_read_ != std::chrono::steady_clock::time_point{} &&
      now - token_read_ < auth_.token_refresh) {
    return token_;
  }
  std::ifstream in(auth_.token_file);
  if (in) {
    std::ostringstream text;
    text << in.rdbuf();
    std::string fresh = Trim(text.str());
    // A file caught mid-rewrite may be empty: keep the token we have rather than send none.
    if (!fresh.empty()) token_ = std::move(fresh);
  }
  token_read_ = now;
  return token_;
}

HttpResult KubeClient::request(const std::string& method, const std::string& path,
                               const std::string& body, const std::string& content_type) {
  return perform(method, path, body, content_type, nullptr, 30000);
}

HttpResult KubeClient::stream(const std::string& path,
                              const std::function<bool(std::string_view)>& on_data,
                              std::chrono::seconds timeout) {
  return perform("GET", path, "", "", &on_data,
                 static_cast<long>(std::chrono::milliseconds(timeout).count()));
}

HttpResult KubeClient::perform(const std::string& method, const std::string& path,
                               const std::string& body, const std::string& content_type,
                               const std::function<bool(std::string_view)>* on_data,
                               long timeout_ms) {
  HttpResult result;
  if (stopped_.load()) {
    result.error = "client stopped";
    return result;
  }
  if (method != "GET") {
    take_write_token(method);
    if (stopped_.load()) {
      result.error = "client stopped";
      return result;
    }
  }
  const auto started = std::chrono::steady_clock::now();
  CURL* easy = curl_easy_init();
  if (easy == nullptr) {
    result.error = "curl_easy_init failed";
    return result;
  }
  Call call{easy, on_data, &result, false};
  char error_buffer[CURL_ERROR_SIZE] = {};
  const std::string url = auth_.server + path;
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  if (timeout_ms > 0) curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  if (method == "GET") {
    curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method.c_str());
    if (method != "DELETE" || !body.empty()) {
      curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    }
  }

  // TLS: the cluster's CA (file or PEM data), else the system's; a client certificate if given.
  if (!auth_.ca_data.empty()) {
    curl_blob blob = Blob(auth_.ca_data);
    curl_easy_setopt(easy, CURLOPT_CAINFO_BLOB, &blob);
  } else if (!auth_.ca_file.empty()) {
    curl_easy_setopt(easy, CURLOPT_CAINFO, auth_.ca_file.c_str());
  }
  if (auth_.insecure_skip_tls_verify) {
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!auth_.client_cert_data.empty()) {
    curl_blob blob = Blob(auth_.client_cert_data);
    curl_easy_setopt(easy, CURLOPT_SSLCERT_BLOB, &blob);
    curl_easy_setopt(easy, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (!auth_.client_cert_file.empty()) {
    curl_easy_setopt(easy, CURLOPT_SSLCERT, auth_.client_cert_file.c_str());
  }
  if (!auth_.client_key_data.empty()) {
    curl_blob blob = Blob(auth_.client_key_data);
    curl_easy_setopt(easy, CURLOPT_SSLKEY_BLOB, &blob);
    curl_easy_setopt(easy, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!auth_.client_key_file.empty()) {
    curl_easy_setopt(easy, CURLOPT_SSLKEY, auth_.client_key_file.c_str());
  }

  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  if (method != "GET" && method != "DELETE") {
    headers = curl_slist_append(headers, ("Content-Type: " + content_type).c_str());
  }
  // libcurl adds "Expect: 100-continue" to big bodies; the API server does not need the wait.
  headers = curl_slist_append(headers, "Expect:");
  const std::string bearer = token();
  if (!bearer.empty()) {
    headers = curl_slist_append(headers, ("Authorization: Bearer " + bearer).c_str());
  }
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);

  // A 2xx body of a stream goes to on_data piece by piece; anything else is kept (a Status).
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &call);
  curl_easy_setopt(
      easy, CURLOPT_WRITEFUNCTION,
      +[](char* data, size_t size, size_t count, void* user) -> size_t {
        auto* c = static_cast<Call*>(user);
        const size_t n = size * count;
        long status = 0;
        curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
        if (c->on_data != nullptr && status >= 200 && status < 300) {
          if (!(*c->on_data)(std::string_view(data, n))) {
            c->aborted = true;
            return 0;
          }
          return n;
        }
        c->result->body.append(data, n);
        return n;
      });

  // The multi interface lets stop() end a quiet stream promptly: poll in short slices.
  CURLM* multi = curl_multi_init();
  curl_multi_add_handle(multi, easy);
  int running = 1;
  bool stopped_now = false;
  while (running > 0) {
    if (curl_multi_perform(multi, &running) != CURLM_OK) break;
    if (running == 0) break;
    if (stopped_.load()) {
      stopped_now = true;
      break;
    }
    curl_multi_poll(multi, nullptr, 0, 50, nullptr);
  }
  CURLcode code = CURLE_OK;
  int queued = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
    if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) code = msg->data.result;
  }
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &result.status);
  if (stopped_now) {
    result.error = "client stopped";
  } else if (call.aborted) {
    result.error = "aborted by the caller";
  } else if (code != CURLE_OK) {
    result.error = std::string(curl_easy_strerror(code));
    if (error_buffer[0] != '\0') result.error += ": " + std::string(error_buffer);
  }
  curl_multi_remove_handle(multi, easy);
  curl_multi_cleanup(multi);
  curl_easy_cleanup(easy);
  curl_slist_free_all(headers);

  RequestHook hook;
  {
    std::lock_guard lock(mutex_);
    hook = hook_;
  }
  if (hook) {
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    hook(method, result.status, took.count());
  }
  return result;
}

}  // namespace gpuaas::bridge
