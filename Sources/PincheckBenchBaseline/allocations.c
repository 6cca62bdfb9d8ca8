// Counts the process's allocations for the benchmark. Defining malloc and friends in the
// executable interposes them for every library of the process; each forwards to glibc's own entry
// point (__libc_malloc…), so behaviour is unchanged. Linked only into pincheck-bench.
#include "PincheckBenchBaseline.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static atomic_int counting;
static atomic_uint_fast64_t allocations;

static inline void count(void) {
    if (atomic_load_explicit(&counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void pcb_count_allocations(int on) { atomic_store(&counting, on); }
uint64_t pcb_allocations(void) { return atomic_load(&allocations); }

void *malloc(size_t size) { count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(); return __libc_calloc(n, size); }
void *realloc(void *pointer, size_t size) { count(); return __libc_realloc(pointer, size); }
void free(void *pointer) { __libc_free(pointer); }
void *memalign(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    count();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *out = pointer;
    return 0;
}
