#ifndef PINCHECK_COPENSSL_SHIM_H
#define PINCHECK_COPENSSL_SHIM_H

/* The low-level SHA-256 functions are deprecated in 3.0 but present in every 3.x, and Pincheck
 * calls them from Swift (see SHA256Digest): imported without the deprecation attribute. */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <openssl/opensslv.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/http.h>
#include <openssl/httperr.h>
#include <openssl/objects.h>
#include <openssl/pkcs7.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#if OPENSSL_VERSION_NUMBER < 0x30000000L
#error "Pincheck needs OpenSSL 3.0 or newer (Debian: apt-get install libssl-dev)"
#endif

/* Swift cannot import function-like macros. Each line forwards one macro; no behaviour lives here. */
static inline void shim_OPENSSL_free(void *p) { OPENSSL_free(p); }

static inline STACK_OF(X509) *shim_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int shim_sk_X509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
static inline int shim_sk_X509_num(const STACK_OF(X509) *sk) { return sk_X509_num(sk); }
static inline X509 *shim_sk_X509_value(const STACK_OF(X509) *sk, int i) { return sk_X509_value(sk, i); }
static inline void shim_sk_X509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }
static inline void shim_sk_X509_pop_free(STACK_OF(X509) *sk) { sk_X509_pop_free(sk, X509_free); }
static inline int shim_sk_GENERAL_NAME_num(const STACK_OF(GENERAL_NAME) *sk) { return sk_GENERAL_NAME_num(sk); }
static inline GENERAL_NAME *shim_sk_GENERAL_NAME_value(const STACK_OF(GENERAL_NAME) *sk, int i) { return sk_GENERAL_NAME_value(sk, i); }
static inline void shim_GENERAL_NAMES_free(STACK_OF(GENERAL_NAME) *sk) { GENERAL_NAMES_free(sk); }
static inline int shim_X509_STORE_CTX_set_app_data(X509_STORE_CTX *ctx, void *data) { return X509_STORE_CTX_set_app_data(ctx, data); }
static inline void *shim_X509_STORE_CTX_get_app_data(X509_STORE_CTX *ctx) { return X509_STORE_CTX_get_app_data(ctx); }
static inline unsigned long shim_XN_FLAG_RFC2253(void) { return XN_FLAG_RFC2253; }
static inline long shim_BIO_get_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }

/* libssl, for the TLS client and the local server (Sources/PincheckOpenSSL/TLS*.swift). */
#include <openssl/ssl.h>
#include <openssl/ocsp.h>
static inline long shim_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int v) { return SSL_CTX_set_min_proto_version(ctx, v); }
static inline long shim_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int v) { return SSL_CTX_set_max_proto_version(ctx, v); }
static inline long shim_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long m) { return SSL_CTX_set_session_cache_mode(ctx, m); }
static inline uint64_t shim_SSL_OP_NO_TICKET(void) { return SSL_OP_NO_TICKET; }
static inline long shim_SSL_set_tlsext_host_name(SSL *s, const char *name) { return SSL_set_tlsext_host_name(s, name); }
static inline long shim_SSL_set_tlsext_status_type(SSL *s, int type) { return SSL_set_tlsext_status_type(s, type); }
static inline long shim_SSL_get_tlsext_status_ocsp_resp(SSL *s, const unsigned char **resp) { return SSL_get_tlsext_status_ocsp_resp(s, resp); }
static inline long shim_SSL_set_tlsext_status_ocsp_resp(SSL *s, unsigned char *resp, long len) { return SSL_set_tlsext_status_ocsp_resp(s, resp, len); }
static inline long shim_SSL_CTX_set_tlsext_status_cb(SSL_CTX *ctx, int (*cb)(SSL *, void *)) { return SSL_CTX_set_tlsext_status_cb(ctx, cb); }
static inline long shim_SSL_CTX_set_tlsext_status_arg(SSL_CTX *ctx, void *arg) { return SSL_CTX_set_tlsext_status_arg(ctx, arg); }
static inline long shim_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *x) { return SSL_CTX_add1_chain_cert(ctx, x); }
static inline long shim_SSL_get_negotiated_group(SSL *s) { return SSL_get_negotiated_group(s); }
static inline STACK_OF(X509_CRL) *shim_sk_X509_CRL_new_null(void) { return sk_X509_CRL_new_null(); }
static inline int shim_sk_X509_CRL_push(STACK_OF(X509_CRL) *sk, X509_CRL *c) { return sk_X509_CRL_push(sk, c); }
static inline void shim_sk_X509_CRL_free(STACK_OF(X509_CRL) *sk) { sk_X509_CRL_free(sk); }
static inline int shim_sk_GENERAL_SUBTREE_num(const STACK_OF(GENERAL_SUBTREE) *sk) { return sk_GENERAL_SUBTREE_num(sk); }
static inline GENERAL_SUBTREE *shim_sk_GENERAL_SUBTREE_value(const STACK_OF(GENERAL_SUBTREE) *sk, int i) { return sk_GENERAL_SUBTREE_value(sk, i); }

/* Signed Certificate Timestamps, for the TLS client (TLSClientConnection.swift). <openssl/ct.h> errors out
 * when OpenSSL was built without CT (OPENSSL_NO_CT): Pincheck needs it. */
#include <openssl/ct.h>
static inline void shim_sk_CONF_VALUE_pop_free(STACK_OF(CONF_VALUE) *sk) { if (sk != NULL) sk_CONF_VALUE_pop_free(sk, X509V3_conf_free); }
static inline int shim_sk_SCT_num(const STACK_OF(SCT) *sk) { return sk_SCT_num(sk); }
static inline SCT *shim_sk_SCT_value(const STACK_OF(SCT) *sk, int i) { return sk_SCT_value(sk, i); }

/* glibc's memmem (a GNU extension the Glibc module does not export): whether `needle` occurs in
 * `haystack`. Declared here, as glibc declares it under _GNU_SOURCE. */
void *memmem(const void *haystack, size_t haystacklen, const void *needle, size_t needlelen);
static inline int shim_contains(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length) != NULL;
}

#endif
