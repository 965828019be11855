/* civetweb 1.15 (Debian 12) loads "libssl.so" with dlopen and looks for
 * SSL_get_peer_certificate, which OpenSSL 3 exports only as SSL_get1_peer_certificate (civetweb
 * issue #1334). This library's soname is libssl.so: loaded first (AdmissionWebhook does), it is
 * what civetweb's dlopen returns, and every other OpenSSL name resolves through its dependencies,
 * the real libssl.so.3 and libcrypto.so.3. */
#include <openssl/ssl.h>

#undef SSL_get_peer_certificate
X509* SSL_get_peer_certificate(const SSL* s) { return SSL_get1_peer_certificate(s); }
