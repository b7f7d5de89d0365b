/* Linked into the Criterion test binaries of ThreadSanitizer builds only
 * (tests/CMakeLists.txt): makes Criterion start under TSan.
 *
 * Why: Criterion 2.4 (BoxFort) places its inheritable arena at a random
 * 16 MiB-aligned address in [0x2000'0000'0000, 0x6000'0000'0000), drawn with
 * rand_r, and gives up after a few draws that are not free (mincore). Under
 * TSan nearly all of that range is TSan's shadow or protected gaps; only
 * its application range 0x5500'0000'0000..0x5680'0000'0000 is usable, so
 * most test binaries abort with "Could not initialize inheritable arena"
 * (Criterion issue #274). BoxFort is the only caller of rand_r in these
 * binaries (nothing of ours calls it): this rand_r keeps glibc's sequence
 * but folds it into the draws that land in TSan's application range. */
#include <stdlib.h>

int rand_r(unsigned int *seed);

#define DG_ARENA_FIRST_DRAW 0x350000u /* (0x5500'0000'0000 - 0x2000'0000'0000) / 16 MiB */
#define DG_ARENA_DRAWS 0x18000u      /* 1.5 TiB of 16 MiB steps */

int rand_r(unsigned int *seed)
{
    /* POSIX's example generator (the sequence matters only for variety). */
    *seed = *seed * 1103515245u + 12345u;
    unsigned int r = (*seed / 65536u) % 32768u;
    r = (r << 15) ^ (*seed & 0x7fffu);
    return (int)(DG_ARENA_FIRST_DRAW + r % DG_ARENA_DRAWS);
}
