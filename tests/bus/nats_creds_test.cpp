// .creds logins (decentralized JWT auth) on a real nats-server. Debian 12 has no nsc, so the test
// mints what nsc would: operator, account and user nkeys (nats_auth_fixture.hpp) and their JWTs,
// signed with the openssl command, and a .creds file laid out as nsc writes it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>

#include "gpuaas/bus/nats_bus.hpp"
#include "nats_auth_fixture.hpp"

namespace gpuaas::bus {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::ConfiguredServerTest;
using test::NkeyPair;
using test::read_bytes;
using test::write;

std::string base64url(const std::string& raw) {  // unpadded, as JWTs are
  return test::unpadded(raw, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 6);
}

int64_t now() { return static_cast<int64_t>(std::time(nullptr)); }

struct Keys {
  NkeyPair op, account, system, user, stranger, other_user;
};

class NatsCredsTest : public ConfiguredServerTest<NatsCredsTest> {
 protected:
  // header.claims.signature, each base64url; the signature (ed25519, by the issuer's key) covers
  // "header.claims". `nats` is the claim's own object, `extra` more top-level members ("exp").
  static std::string jwt(const NkeyPair& issuer, const std::string& subject,
                         const std::string& name, const std::string& nats,
                         const std::string& extra = "") {
    // nsc's jti is a hash of the claims; the server does not check it, any unique id does.
    static int serial = 0;
    const std::string claims = "{\"jti\":\"GPUAASTEST" + std::to_string(++serial) +
                               "\",\"iat\":" + std::to_string(now()) + ",\"iss\":\"" +
                               issuer.public_key + "\",\"sub\":\"" + subject + "\",\"name\":\"" +
                               name + "\"," + extra + "\"nats\":" + nats + "}";
    const std::string signed_part =
        base64url(R"({"typ":"JWT","alg":"ed25519-nkey"})") + "." + base64url(claims);
    const fs::path in = *dir_ / "to-sign", out = *dir_ / "signature";
    write(in, signed_part);
    EXPECT_EQ(
        std::system(("openssl pkeyutl -sign -rawin -keyform DER -inkey " + issuer.private_der +
                     " -in " + in.string() + " -out " + out.string() + " >/dev/null 2>&1")
                        .c_str()),
        0)
        << "openssl 3 signs ed25519 with -rawin";
    return signed_part + "." + base64url(read_bytes(out));
  }
  // An account with every limit off (-1), as nsc makes it: a limit left out is 0, and 0 connections
  // is "maximum account active connections exceeded". JetStream is on when storage is allowed.
  static std::string account_jwt(const NkeyPair& account, bool jetstream) {
    const std::string js =
        jetstream ? ",\"mem_storage\":-1,\"disk_storage\":-1,\"streams\":-1,\"consumer\":-1" : "";
    return jwt(keys_->op, account.public_key, "account",
               "{\"limits\":{\"subs\":-1,\"data\":-1,\"payload\":-1,\"imports\":-1,\"exports\":-1,"
               "\"wildcards\":true,\"conn\":-1,\"leaf\":-1" +
                   js +
                   "},\"default_permissions\":{\"pub\":{},\"sub\":{}},\"type\":\"account\","
                   "\"version\":2}");
  }
  // A user of `account` who may do anything (its limits -1 too), as nsc add user makes it.
  static std::string user_jwt(const NkeyPair& account, const NkeyPair& user,
                              const std::string& extra = "") {
    return jwt(account, user.public_key, "gpuaasd",
               R"({"pub":{},"sub":{},"subs":-1,"data":-1,"payload":-1,"type":"user","version":2})",
               extra);
  }
  static std::string creds(const std::string& name, const std::string& user_jwt,
                           const std::string& seed) {
    const std::string file = (*dir_ / (name + ".creds")).string();
    write(file, "-----BEGIN NATS USER JWT-----\n" + user_jwt +
                    "\n------END NATS USER JWT------\n\n"
                    "************************* IMPORTANT *************************\n"
                    "NKEY Seed printed below can be used to sign and prove identity.\n"
                    "NKEYs are sensitive and should be treated as secrets.\n\n"
                    "-----BEGIN USER NKEY SEED-----\n" +
                    seed +
                    "\n------END USER NKEY SEED------\n\n"
                    "*************************************************************\n");
    return file;
  }
  static void SetUpTestSuite() {
    make_dir();
    using test::kAccountPrefix;
    *keys_ = {test::make_nkey_pair(*dir_, "operator", test::kOperatorPrefix),
              test::make_nkey_pair(*dir_, "account", kAccountPrefix),
              test::make_nkey_pair(*dir_, "system", kAccountPrefix),
              test::make_nkey_pair(*dir_, "user", test::kUserPrefix),
              test::make_nkey_pair(*dir_, "stranger", kAccountPrefix),
              test::make_nkey_pair(*dir_, "other-user", test::kUserPrefix)};
    // NatsServerProcess always runs JetStream, which nats-server 2.9.10 in operator mode starts
    // only with a system account ("system account not setup"); nsc names it in the operator JWT.
    const std::string op = jwt(keys_->op, keys_->op.public_key, "operator",
                               "{\"system_account\":\"" + keys_->system.public_key +
                                   "\",\"type\":\"operator\",\"version\":2}");
    start_server("creds.conf",
                 "operator: " + op + "\nresolver: MEMORY\nresolver_preload: {\n  " +
                     keys_->account.public_key + ": " + account_jwt(keys_->account, true) + "\n  " +
                     keys_->system.public_key + ": " + account_jwt(keys_->system, false) + "\n}\n");
  }
  static NatsOptions options(const std::string& creds_file) {
    NatsOptions o = base_options();
    o.name = "creds-test";
    o.credentials_file = creds_file;
    return o;
  }
  // Refused by the server: its reason, the file, whether the JWT has expired, never the seed; and
  // as the daemon connects (retrying), said at once rather than retried.
  static void expect_refused(const std::string& creds_file, const std::string& seed,
                             bool expired = false) {
    NatsOptions o = options(creds_file);
    auto bus = connect_nats(o);
    ASSERT_FALSE(bus.is_ok());
    const std::string& m = bus.status().message();
    EXPECT_NE(m.find("Authorization Violation"), std::string::npos) << m;
    EXPECT_NE(m.find("(nats credentials file " + creds_file), std::string::npos) << m;
    EXPECT_EQ(m.find("its user JWT expired at ") != std::string::npos, expired) << m;
    EXPECT_EQ(m.find(seed.substr(0, 20)), std::string::npos) << m;
    o.retry_on_failed_connect = true;
    o.max_reconnect = -1;
    bus = connect_nats(o);
    ASSERT_FALSE(bus.is_ok());
    EXPECT_EQ(bus.status().code(), StatusCode::kInvalidInput) << bus.status().message();
    EXPECT_NE(bus.status().message().find("the credentials were refused"), std::string::npos)
        << bus.status().message();
    EXPECT_EQ(bus.status().message().find(seed.substr(0, 20)), std::string::npos);
  }
  static inline Keys* keys_ = new Keys;
};

TEST_F(NatsCredsTest, TheRightCredsConnectAndUseJetStream) {
  ASSERT_EQ(keys_->op.public_key[0], 'O');
  ASSERT_EQ(keys_->account.public_key[0], 'A');
  ASSERT_EQ(keys_->user.public_key[0], 'U');
  const NatsOptions o =
      options(creds("right", user_jwt(keys_->account, keys_->user), keys_->user.seed));
  // One login in 256 is refused by nats.c 3.4.1's missing signature; connect_nats tries again.
  auto bus = connect_nats(o);
  ASSERT_TRUE(bus.is_ok()) << bus.status().message();
  ASSERT_TRUE((*bus)->publish({"creds.hello", {}, "hi"}).is_ok());
  EXPECT_TRUE((*bus)->flush(5s).is_ok());

  StreamSettings st;  // JetStream, enabled for the account by its JWT's storage limits
  st.name = "CREDS";
  st.subjects = {"creds.stored.>"};
  st.storage = Storage::kMemory;
  ASSERT_TRUE((*bus)->ensure_stream(st).is_ok());
  auto ack = (*bus)->publish_stored({"creds.stored.one", {}, "kept"}, "");
  ASSERT_TRUE(ack.is_ok()) << ack.status().message();
  EXPECT_EQ(ack->stream, "CREDS");
  auto reader = (*bus)->open_reader("CREDS", 1);
  ASSERT_TRUE(reader.is_ok()) << reader.status().message();
  auto batch = (*reader)->fetch(1, 5s);
  ASSERT_TRUE(batch.is_ok()) << batch.status().message();
  ASSERT_EQ((*batch)->size(), 1u);
  EXPECT_EQ((*batch)->data(0), "kept");
}

TEST_F(NatsCredsTest, AUserOfAnAccountTheServerDoesNotKnowIsRefused) {
  expect_refused(creds("stranger", user_jwt(keys_->stranger, keys_->user), keys_->user.seed),
                 keys_->user.seed);
}

// The server answers an expired JWT as any other refusal; the bus reads the expiry from the file.
TEST_F(NatsCredsTest, AnExpiredUserJwtIsRefusedAndTheExpirySaid) {
  const std::string exp = "\"exp\":1700000000,";  // 2023-11-14T22:13:20Z
  const std::string file =
      creds("expired", user_jwt(keys_->account, keys_->user, exp), keys_->user.seed);
  expect_refused(file, keys_->user.seed, true);
  auto bus = connect_nats(options(file));
  ASSERT_FALSE(bus.is_ok());
  EXPECT_NE(bus.status().message().find(": its user JWT expired at 2023-11-14T22:13:20Z)"),
            std::string::npos)
      << bus.status().message();
}

TEST_F(NatsCredsTest, AJwtWhoseSignatureWasAlteredIsRefused) {
  std::string token = user_jwt(keys_->account, keys_->user);
  // A character inside the signature: the last one also holds padding bits, which decoders skip.
  char& c = token[token.rfind('.') + 10];
  c = c == 'A' ? 'B' : 'A';
  expect_refused(creds("tampered", token, keys_->user.seed), keys_->user.seed);
}

TEST_F(NatsCredsTest, AnotherUsersSeedIsRefused) {
  // The JWT is right, but the nonce is signed with a key that is not the JWT's subject.
  expect_refused(creds("other-seed", user_jwt(keys_->account, keys_->user), keys_->other_user.seed),
                 keys_->other_user.seed);
}

}  // namespace
}  // namespace gpuaas::bus
