// What the authentication suites share: a nats-server per suite started from a configuration file
// in a temporary folder, and NATS nkeys made with the openssl command (nk and nsc are not
// packaged for Debian 12).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gpuaas/bus/nats_bus.hpp"
#include "gpuaas/bus/nats_server_process.hpp"

namespace gpuaas::bus::test {

inline std::filesystem::path temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "gpuaas-sec-XXXXXX").string();
  EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

inline void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One nats-server per suite, started with a configuration file of the suite's own in a temporary
// folder that goes away with it. A template, so each suite has its own server and folder.
template <typename Suite>
class ConfiguredServerTest : public ::testing::Test {
 protected:
  static void make_dir() { dir_ = new std::filesystem::path(temp_dir()); }
  static void start_server(const std::string& file, const std::string& config) {
    write(*dir_ / file, config);
    NatsServerOptions so;
    so.extra_args = {"-c", (*dir_ / file).string()};
    auto s = NatsServerProcess::start(so);
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    server_ = std::move(s).value().release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  // The server's URL, and no reconnection: a refusal must show at once.
  static NatsOptions base_options() {
    NatsOptions o;
    o.url = server_->url();
    o.max_reconnect = 0;
    return o;
  }
  static inline NatsServerProcess* server_ = nullptr;
  static inline std::filesystem::path* dir_ = nullptr;
};

// The first byte of an nkey names its kind (the letter its text starts with).
constexpr unsigned char kOperatorPrefix = 14 << 3;  // 'O'
constexpr unsigned char kAccountPrefix = 0;         // 'A'
constexpr unsigned char kUserPrefix = 20 << 3;      // 'U'

// Base32 (5 bits a character) or base64url (6) without padding, as nkeys and JWTs are written.
inline std::string unpadded(const std::string& raw, const char* alphabet, int width) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  const uint32_t mask = (1u << width) - 1;
  for (unsigned char c : raw) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= width) {
      out += alphabet[(buffer >> (bits - width)) & mask];
      bits -= width;
    }
  }
  if (bits > 0) out += alphabet[(buffer << (width - bits)) & mask];
  return out;
}

// NATS's nkey text: the bytes, a CRC-16/XMODEM of them (little end first), base32 unpadded.
inline std::string nkey_encode(std::string raw) {
  uint16_t crc = 0;
  for (unsigned char c : raw) {
    crc ^= static_cast<uint16_t>(c << 8);
    for (int i = 0; i < 8; ++i)
      crc = static_cast<uint16_t>((crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1);
  }
  raw += static_cast<char>(crc & 0xff);
  raw += static_cast<char>(crc >> 8);
  return unpadded(raw, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 5);
}

struct NkeyPair {
  std::string public_key;  // O..., A... or U...
  std::string seed_file;   // the seed (S...) and a newline
  std::string seed;
  std::string private_der;  // the same key for `openssl pkeyutl -sign`
};

// An ed25519 key pair from the openssl command in `dir` as `name`.der, its seed in `name`.seed.
inline NkeyPair make_nkey_pair(const std::filesystem::path& dir, const std::string& name,
                               unsigned char prefix) {
  const std::string d = dir.string();
  const std::string key = d + "/" + name + ".der", pub = d + "/" + name + ".pub.der";
  EXPECT_EQ(std::system(("openssl genpkey -algorithm ed25519 -outform DER -out " + key +
                         " >/dev/null 2>&1 && openssl pkey -inform DER -in " + key +
                         " -pubout -outform DER -out " + pub + " >/dev/null 2>&1")
                            .c_str()),
            0)
      << "is the openssl command installed?";
  const std::string seed = read_bytes(key).substr(16, 32);  // PKCS#8: the last 32 bytes
  const std::string pk = read_bytes(pub).substr(12, 32);    // SubjectPublicKeyInfo: the same
  const unsigned char seed_prefix = 18 << 3;                // 'S', then the kind's prefix
  NkeyPair p;
  p.public_key = nkey_encode(std::string(1, static_cast<char>(prefix)) + pk);
  p.seed = nkey_encode(std::string{static_cast<char>(seed_prefix | (prefix >> 5)),
                                   static_cast<char>((prefix & 31) << 3)} +
                       seed);
  p.seed_file = d + "/" + name + ".seed";
  p.private_der = key;
  write(p.seed_file, p.seed + "\n");
  return p;
}

}  // namespace gpuaas::bus::test
