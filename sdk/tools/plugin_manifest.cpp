// gpuaas-plugin-manifest LIBRARY [OUT]: writes the manifest gpuaasd checks before it loads a plugin
// (name, version and kinds from the plugin's descriptor, sha256 of the file as it is now). The
// build runs it after linking and the install runs it again after RPATH was rewritten, so each
// tree's manifest describes the file that will be loaded.
#include <dlfcn.h>
#include <openssl/evp.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "gpuaas/plugin/abi.h"

namespace {

std::string sha256_hex(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  std::vector<char> buf(1 << 16);
  while (f.read(buf.data(), static_cast<std::streamsize>(buf.size())) || f.gcount() > 0) {
    EVP_DigestUpdate(ctx, buf.data(), static_cast<std::size_t>(f.gcount()));
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx, md, &n);
  EVP_MD_CTX_free(ctx);
  std::string hex;
  char b[3];
  for (unsigned i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", md[i]);
    hex += b;
  }
  return hex;
}

// YAML double-quoted scalar.
std::string quoted(const char* s) {
  std::string out = "\"";
  for (const char* p = s == nullptr ? "" : s; *p != '\0'; ++p) {
    if (*p == '"' || *p == '\\') out += '\\';
    out += *p;
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: gpuaas-plugin-manifest LIBRARY [OUT]\n"
                 "  OUT defaults to LIBRARY with .so replaced by .yaml\n";
    return 2;
  }
  std::string lib = argv[1];
  std::string out = argc == 3 ? argv[2] : lib.substr(0, lib.rfind(".so")) + ".yaml";
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::cerr << "gpuaas-plugin-manifest: " << dlerror() << "\n";
    return 1;
  }
  auto entry =
      reinterpret_cast<gpuaas_plugin_descriptor_fn>(dlsym(h, GPUAAS_PLUGIN_ENTRY_POINT));
  const gpuaas_plugin_descriptor* d = entry == nullptr ? nullptr : entry();
  if (d == nullptr) {
    std::cerr << "gpuaas-plugin-manifest: " << lib << " exports no " GPUAAS_PLUGIN_ENTRY_POINT
              << " descriptor\n";
    return 1;
  }
  std::string sum = sha256_hex(lib);
  if (sum.empty()) {
    std::cerr << "gpuaas-plugin-manifest: cannot read " << lib << "\n";
    return 1;
  }
  std::ofstream f(out, std::ios::trunc);
  f << "# Written by gpuaas-plugin-manifest: gpuaasd loads the library only if it matches.\n"
    << "name: " << quoted(d->name) << "\nversion: " << quoted(d->version) << "\nkinds:\n";
  for (uint32_t i = 0; i < d->kind_count; ++i) {
    f << "  - {group: " << quoted(d->kinds[i].group) << ", version: " << quoted(d->kinds[i].version)
      << ", kind: " << quoted(d->kinds[i].kind) << "}\n";
  }
  f << "sha256: " << sum << "\n";
  if (!f.flush()) {
    std::cerr << "gpuaas-plugin-manifest: cannot write " << out << "\n";
    return 1;
  }
  return 0;  // the library stays mapped until exit: its descriptor strings were read above
}
