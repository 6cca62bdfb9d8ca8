/* glibc's malloc tuning, which the Glibc Swift module does not import (malloc.h). */
#include <malloc.h>

/* At most `count` malloc arenas: glibc otherwise gives threads up to 8 per core, reserving 64 MiB
   of address space each. Returns mallopt's result (1 on success). */
static inline int pincheck_limit_malloc_arenas(int count) { return mallopt(M_ARENA_MAX, count); }
