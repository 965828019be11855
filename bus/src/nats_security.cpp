#include "nats_security.hpp"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string_view>

#include "nats_connection.hpp"

namespace gpuaas::bus {
namespace {

// A secret file's first line (a trailing newline is what editors and `echo` leave). The error
// names the option and the file; the content never leaves this function except as the result.
Result<std::string> read_secret(const std::string& option, const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::invalid(option + ": cannot read " + path);
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) return Status::invalid(option + ": " + path + " is empty");
  return line;
}

Status readable(const std::string& option, const std::string& path) {
  if (std::ifstream(path)) return Status::ok();
  return Status::invalid(option + ": cannot read " + path);
}

// nats.c's own reason, without anything from our side: its messages name files, never contents.
Status refused(natsStatus s, const std::string& what) {
  return Status::invalid(what + ": " + describe(s));
}

// user:password@ in a URL ends up in every "cannot connect to URL" message and log line.
bool url_has_userinfo(const std::string& urls) {
  std::size_t start = 0;
  while (start <= urls.size()) {
    std::size_t end = urls.find(',', start);
    if (end == std::string::npos) end = urls.size();
    std::string_view u(urls.data() + start, end - start);
    auto scheme = u.find("://");
    std::string_view rest = scheme == std::string_view::npos ? u : u.substr(scheme + 3);
    if (rest.substr(0, rest.find('/')).find('@') != std::string_view::npos) return true;
    start = end + 1;
  }
  return false;
}

Status apply_identity(natsOptions* opts, const NatsOptions& o) {
  int ways = (!o.user.empty() ? 1 : 0) + (!o.token.empty() || !o.token_file.empty() ? 1 : 0) +
             (!o.nkey.empty() || !o.nkey_seed_file.empty() ? 1 : 0) +
             (!o.credentials_file.empty() ? 1 : 0);
  if (ways > 1)
    return Status::invalid(
        "nats: give one of user/password, token, nkey or credentials file, not several");
  if (!o.password.empty() && !o.password_file.empty())
    return Status::invalid("nats: password and passwordFile both given; keep one");
  if (!o.token.empty() && !o.token_file.empty())
    return Status::invalid("nats: token and tokenFile both given; keep one");
  if ((!o.password.empty() || !o.password_file.empty()) && o.user.empty())
    return Status::invalid("nats: a password needs a user");
  if (!o.user.empty()) {
    std::string password = o.password;
    if (!o.password_file.empty()) {
      auto p = read_secret("nats password file", o.password_file);
      if (!p) return p.status();
      password = std::move(p).value();
    }
    natsStatus s = natsOptions_SetUserInfo(opts, o.user.c_str(),
                                           password.empty() ? nullptr : password.c_str());
    if (s != NATS_OK) return refused(s, "nats user " + o.user);
  }
  if (!o.token.empty() || !o.token_file.empty()) {
    std::string token = o.token;
    if (!o.token_file.empty()) {
      auto t = read_secret("nats token file", o.token_file);
      if (!t) return t.status();
      token = std::move(t).value();
    }
    if (natsStatus s = natsOptions_SetToken(opts, token.c_str()); s != NATS_OK)
      return refused(s, "nats token");
  }
  if (!o.nkey.empty() || !o.nkey_seed_file.empty()) {
    if (o.nkey.empty() || o.nkey_seed_file.empty())
      return Status::invalid("nats: an nkey needs both the public key and the seed file");
    if (auto r = readable("nats nkey seed file", o.nkey_seed_file); !r) return r;
    natsStatus s = natsOptions_SetNKeyFromSeed(opts, o.nkey.c_str(), o.nkey_seed_file.c_str());
    if (s != NATS_OK) return refused(s, "nats nkey seed file " + o.nkey_seed_file);
  }
  if (!o.credentials_file.empty()) {
    if (auto r = readable("nats credentials file", o.credentials_file); !r) return r;
    natsStatus s =
        natsOptions_SetUserCredentialsFromFiles(opts, o.credentials_file.c_str(), nullptr);
    if (s != NATS_OK) return refused(s, "nats credentials file " + o.credentials_file);
  }
  return Status::ok();
}

Status apply_tls(natsOptions* opts, const NatsOptions& o) {
  if (o.tls_ca.empty() && o.tls_cert.empty() && o.tls_key.empty() && o.tls_server_name.empty())
    return Status::ok();
  if (o.tls_cert.empty() != o.tls_key.empty())
    return Status::invalid("nats tls: a client certificate needs its key (cert and key)");
  if (natsStatus s = natsOptions_SetSecure(opts, true); s != NATS_OK)
    return refused(s, "nats tls (is nats.c built with TLS?)");
  if (!o.tls_ca.empty()) {
    if (auto r = readable("nats tls ca", o.tls_ca); !r) return r;
    if (natsStatus s = natsOptions_LoadCATrustedCertificates(opts, o.tls_ca.c_str()); s != NATS_OK)
      return refused(s, "nats tls ca " + o.tls_ca);
  }
  if (!o.tls_cert.empty()) {
    if (auto r = readable("nats tls cert", o.tls_cert); !r) return r;
    if (auto r = readable("nats tls key", o.tls_key); !r) return r;
    natsStatus s = natsOptions_LoadCertificatesChain(opts, o.tls_cert.c_str(), o.tls_key.c_str());
    if (s != NATS_OK) return refused(s, "nats tls cert " + o.tls_cert + " and key " + o.tls_key);
  }
  if (!o.tls_server_name.empty()) {
    if (natsStatus s = natsOptions_SetExpectedHostname(opts, o.tls_server_name.c_str());
        s != NATS_OK)
      return refused(s, "nats tls serverName");
  }
  return Status::ok();
}

// A JWT part: base64url without padding. Stops at the first character that is not of it.
std::string base64url_decode(std::string_view text) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    int v = c >= 'A' && c <= 'Z'   ? c - 'A'
            : c >= 'a' && c <= 'z' ? c - 'a' + 26
            : c >= '0' && c <= '9' ? c - '0' + 52
            : c == '-'             ? 62
            : c == '_'             ? 63
                                   : -1;
    if (v < 0) break;
    buffer = (buffer << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      out += static_cast<char>((buffer >> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return out;
}

// The "exp" (seconds since the epoch) of the user JWT in a .creds file; 0 when it has none or
// the file cannot be read as one. Only the JWT's claims are looked at, never the seed.
int64_t user_jwt_expiry(const std::string& creds_file) {
  std::ifstream in(creds_file);
  std::string line;
  bool after_begin = false;
  while (std::getline(in, line)) {
    if (!after_begin) {
      after_begin = line.find("BEGIN NATS USER JWT") != std::string::npos;
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::size_t dot = line.find('.');  // header.claims.signature
    if (dot == std::string::npos) return 0;
    const std::string claims = base64url_decode(std::string_view(line).substr(dot + 1));
    const std::size_t at = claims.find("\"exp\":");
    if (at == std::string::npos) return 0;
    int64_t exp = 0;
    std::from_chars(claims.data() + at + 6, claims.data() + claims.size(), exp);
    return exp;
  }
  return 0;
}

}  // namespace

Status apply_security(natsOptions* opts, const NatsOptions& o) {
  if (url_has_userinfo(o.url))
    return Status::invalid(
        "nats server URL: credentials in the URL are refused (they would be logged); use the "
        "user and passwordFile (or tokenFile) settings");
  if (auto s = apply_identity(opts, o); !s) return s;
  if (auto s = apply_tls(opts, o); !s) return s;
  if (!o.inbox_prefix.empty()) {
    if (natsStatus s = natsOptions_SetCustomInboxPrefix(opts, o.inbox_prefix.c_str()); s != NATS_OK)
      return refused(s, "nats inbox prefix \"" + o.inbox_prefix + "\"");
  }
  return Status::ok();
}

void nats_secrets_from_env(NatsOptions& o) {
  auto from_env = [](const char* var, std::string& out) {
    const char* env = std::getenv(var);
    if (env != nullptr && *env != '\0') out = env;
  };
  if (!o.user.empty() && o.password.empty() && o.password_file.empty()) {
    from_env("GPUAAS_NATS_PASSWORD", o.password);
  }
  if (o.user.empty() && o.token.empty() && o.token_file.empty() && o.nkey.empty() &&
      o.credentials_file.empty()) {
    from_env("GPUAAS_NATS_TOKEN", o.token);
  }
}

std::string refused_login_hint(const NatsOptions& o) {
  if (o.credentials_file.empty()) return "";
  std::string hint = " (nats credentials file " + o.credentials_file;
  const int64_t exp = user_jwt_expiry(o.credentials_file);
  const auto now = static_cast<int64_t>(std::time(nullptr));
  if (exp > 0 && exp <= now) {
    const auto t = static_cast<std::time_t>(exp);
    std::tm utc{};
    gmtime_r(&t, &utc);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
    hint += std::string(": its user JWT expired at ") + when;
  }
  return hint + ")";
}

}  // namespace gpuaas::bus
