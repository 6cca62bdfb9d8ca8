#ifndef PINCHECK_BENCH_BASELINE_H
#define PINCHECK_BENCH_BASELINE_H

#include <stddef.h>
#include <stdint.h>

/// The benchmark's baseline: OpenSSL called directly from C, the way a careful C client would.
/// An opaque anchor store, built once and shared read-only by every thread.
typedef struct pcb_store pcb_store;

/// Builds a store holding one DER trust anchor. Returns NULL if it does not parse.
pcb_store *pcb_store_new(const uint8_t *anchor_der, size_t anchor_length);
void pcb_store_free(pcb_store *store);

/// Parses every served certificate with d2i_X509 (leaf first), then runs X509_verify_cert with
/// purpose sslserver, X509_STRICT, the host check (no subject CN, no partial wildcards) and a fixed
/// time. Returns 1 when the chain verifies, 0 when it does not, -1 on a parse or setup failure.
int pcb_verify(const pcb_store *store, const uint8_t *const *served_der, const size_t *served_length,
               size_t served_count, const char *host, int64_t unix_time);

/// The served chain parsed once, for the "parsed objects" baseline.
typedef struct pcb_chain pcb_chain;
pcb_chain *pcb_chain_new(const uint8_t *const *served_der, const size_t *served_length, size_t served_count);
void pcb_chain_free(pcb_chain *chain);
/// pcb_verify without the parsing: the same X509 objects are verified again every time.
int pcb_verify_parsed(const pcb_store *store, const pcb_chain *chain, const char *host, int64_t unix_time);

/// Parses a DER CRL with d2i_X509_CRL and looks one serial number up (X509_CRL_get0_by_serial,
/// which sorts the entries on first use): the one-off cost of making a CRL searchable. Returns 1
/// when the serial is listed, 0 when not, -1 when the CRL does not parse.
int pcb_crl_parse_and_lookup(const uint8_t *der, size_t length, const uint8_t *serial, size_t serial_length);

/* d2i_PKCS7 of a DER SignedData and one new reference per certificate it holds, as a loader that
 * keeps the certificates does; returns how many, or -1. */
int pcb_pkcs7_certificates(const uint8_t *der, size_t length);

/// Allocation counting: every malloc, calloc, realloc and aligned allocation of the process is
/// counted while counting is on (this target replaces the allocator's entry points and forwards to
/// glibc's). Off by default; when off, the cost is one relaxed load per allocation.
void pcb_count_allocations(int on);
uint64_t pcb_allocations(void);

#endif
