#include "PincheckBenchBaseline.h"

#include <openssl/err.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <string.h>

struct pcb_store {
    X509_STORE *store;
};

pcb_store *pcb_store_new(const uint8_t *anchor_der, size_t anchor_length) {
    const unsigned char *cursor = anchor_der;
    X509 *anchor = d2i_X509(NULL, &cursor, (long)anchor_length);
    if (anchor == NULL) return NULL;
    X509_STORE *store = X509_STORE_new();
    if (store == NULL || X509_STORE_add_cert(store, anchor) != 1) {
        X509_free(anchor);
        X509_STORE_free(store);
        return NULL;
    }
    X509_free(anchor);
    pcb_store *result = malloc(sizeof *result);
    if (result == NULL) {
        X509_STORE_free(store);
        return NULL;
    }
    result->store = store;
    return result;
}

void pcb_store_free(pcb_store *store) {
    if (store == NULL) return;
    X509_STORE_free(store->store);
    free(store);
}

/// The verification itself, shared by both baselines: the same settings as Pincheck's verifier.
static int verify_parsed(X509_STORE *store, X509 *leaf, STACK_OF(X509) *untrusted, const char *host, int64_t unix_time) {
    X509_STORE_CTX *context = X509_STORE_CTX_new();
    int result = -1;
    if (context == NULL || X509_STORE_CTX_init(context, store, leaf, untrusted) != 1) goto done;
    X509_STORE_CTX_set_purpose(context, X509_PURPOSE_SSL_SERVER);
    X509_VERIFY_PARAM *parameters = X509_STORE_CTX_get0_param(context);
    X509_VERIFY_PARAM_set_flags(parameters, X509_V_FLAG_X509_STRICT);
    X509_VERIFY_PARAM_set_time(parameters, (time_t)unix_time);
    X509_VERIFY_PARAM_set_hostflags(parameters, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (host != NULL && X509_VERIFY_PARAM_set1_host(parameters, host, strlen(host)) != 1) goto done;
    result = X509_verify_cert(context) == 1 ? 1 : 0;
done:
    X509_STORE_CTX_free(context);
    ERR_clear_error();
    return result;
}

struct pcb_chain {
    X509 *leaf;
    STACK_OF(X509) *untrusted;
};

pcb_chain *pcb_chain_new(const uint8_t *const *served_der, const size_t *served_length, size_t served_count) {
    pcb_chain *chain = calloc(1, sizeof *chain);
    if (chain == NULL || (chain->untrusted = sk_X509_new_null()) == NULL) {
        free(chain);
        return NULL;
    }
    for (size_t i = 0; i < served_count; i++) {
        const unsigned char *cursor = served_der[i];
        X509 *certificate = d2i_X509(NULL, &cursor, (long)served_length[i]);
        if (certificate == NULL) {
            pcb_chain_free(chain);
            return NULL;
        }
        if (i == 0) chain->leaf = certificate; else sk_X509_push(chain->untrusted, certificate);
    }
    return chain;
}

void pcb_chain_free(pcb_chain *chain) {
    if (chain == NULL) return;
    X509_free(chain->leaf);
    sk_X509_pop_free(chain->untrusted, X509_free);
    free(chain);
}

int pcb_verify_parsed(const pcb_store *store, const pcb_chain *chain, const char *host, int64_t unix_time) {
    return verify_parsed(store->store, chain->leaf, chain->untrusted, host, unix_time);
}

int pcb_verify(const pcb_store *store, const uint8_t *const *served_der, const size_t *served_length,
               size_t served_count, const char *host, int64_t unix_time) {
    if (served_count == 0 || served_count > 32) return -1;
    X509 *parsed[32] = {0};
    int result = -1;
    STACK_OF(X509) *untrusted = NULL;
    for (size_t i = 0; i < served_count; i++) {
        const unsigned char *cursor = served_der[i];
        parsed[i] = d2i_X509(NULL, &cursor, (long)served_length[i]);
        if (parsed[i] == NULL) goto done;
    }
    untrusted = sk_X509_new_null();
    if (untrusted == NULL) goto done;
    for (size_t i = 1; i < served_count; i++) sk_X509_push(untrusted, parsed[i]);
    result = verify_parsed(store->store, parsed[0], untrusted, host, unix_time);
done:
    sk_X509_free(untrusted);
    for (size_t i = 0; i < served_count; i++) X509_free(parsed[i]);
    ERR_clear_error();
    return result;
}

int pcb_crl_parse_and_lookup(const uint8_t *der, size_t length, const uint8_t *serial, size_t serial_length) {
    const unsigned char *cursor = der;
    X509_CRL *crl = d2i_X509_CRL(NULL, &cursor, (long)length);
    if (crl == NULL) return -1;
    ASN1_INTEGER *number = ASN1_INTEGER_new();
    BIGNUM *value = BN_bin2bn(serial, (int)serial_length, NULL);
    BN_to_ASN1_INTEGER(value, number);
    X509_REVOKED *entry = NULL;
    int listed = X509_CRL_get0_by_serial(crl, &entry, number) == 1;
    BN_free(value);
    ASN1_INTEGER_free(number);
    X509_CRL_free(crl);
    return listed;
}

int pcb_pkcs7_certificates(const uint8_t *der, size_t length) {
    const unsigned char *cursor = der;
    PKCS7 *bundle = d2i_PKCS7(NULL, &cursor, (long)length);
    if (bundle == NULL || !PKCS7_type_is_signed(bundle) || bundle->d.sign->cert == NULL) {
        PKCS7_free(bundle);
        return -1;
    }
    int count = sk_X509_num(bundle->d.sign->cert);
    STACK_OF(X509) *kept = sk_X509_new_null();
    for (int index = 0; index < count; index++) {
        X509 *certificate = sk_X509_value(bundle->d.sign->cert, index);
        X509_up_ref(certificate);
        sk_X509_push(kept, certificate);
    }
    PKCS7_free(bundle);
    sk_X509_pop_free(kept, X509_free);
    return count;
}
