/* collect by pulling, and scatter by pushing: where every rank of the job
 * can read every other rank's memory (one host, and the system lets the
 * ranks' processes read each other with process_vm_readv: the same user,
 * no ptrace restriction), a rank that collects reads the tiles other ranks
 * own straight from their blocks into its host buffer: one copy, made by
 * the kernel, instead of the owner packing them into bundles, the bundles
 * travelling into landing buffers and being copied out again
 * (collect_bundle.h: three copies). A scatter's rank 0 likewise writes the
 * other ranks' blocks straight from its buffer (process_vm_writev) instead
 * of copying them into slots that then travel home.
 *
 * The order that the runtime's transfers give, these copies get so:
 * - they happen only in a collect's or scatter's region of its own (never
 *   inside the user's), so every rank's blocks are at home and current when
 *   it begins (the region before it ended on every rank), and no task in
 *   it touches the blocks copied this way;
 * - each such task first reads one element of the owner's first block in
 *   it (a transfer of one element, the probe), so it runs only once the
 *   owner has entered the call: the owner's own code before it (which may
 *   read or write its blocks through dagger_chunk_data) is over;
 * - the region's end agreement returns on the owner only once every rank
 *   has finished its tasks, so the owner's later code and tasks never meet
 *   the copy.
 *
 * The peer table (each rank's process id, and where each block's storage
 * lies on its owner) is made at an array's second collect or scatter, or
 * at its first when that one's box has DG_ARR_PULL_FIRST_BYTES or more (a
 * small one-off call pays nothing for it): one allgather, a test read of
 * every other rank's memory, and one allreduce, so every rank decides
 * alike. It lasts as long as the array: a block's home storage on its
 * owner stays where it is while the chunk exists (core/plan: a home buffer
 * is freed only with its chunk). Blocks whose home is a device, and jobs
 * over several hosts, keep the transfers. */
#ifndef DG_ARRAY_COLLECT_PULL_H
#define DG_ARRAY_COLLECT_PULL_H

#include "core/array/params.h"
#include "core/array/tiles.h"

/* A collect or scatter of at least this many bytes pulls or pushes already
 * when it is the array's first (the table's two collectives are small
 * beside it). */
#define DG_ARR_PULL_FIRST_BYTES ((size_t)4 << 20)

/* A pull (push) task takes up to this many tiles of one owner, and about
 * this many bytes (the owner's tiles are shared out evenly). */
#define DG_ARR_PULL_TILES 24
#define DG_ARR_PULL_BYTES ((size_t)1 << 20)

/* Tiles whose lines (dimension 0) are shorter than this many bytes are
 * read into a staging buffer in one piece and then copied to their places
 * in the host buffer: the kernel's copy into many short pieces costs more
 * than the second copy (a push gathers them there first). Measured on 4
 * ranks x 1 thread (docs/benchmarks.md, "Collects that pull, scatters that
 * push"): staging was faster at 128- and 512-byte lines, reading in place
 * at 1, 2 and 4 KiB. */
#define DG_ARR_PULL_STAGE_BELOW 1024

typedef struct dg_arr_peers {
    int ok;                 /* every rank reads every other rank's memory */
    int nranks;
    size_t nblocks;
    uint64_t *pid;          /* per rank: its process id */
    uint64_t *addr;         /* per block: its storage on its owner (0: not host memory) */
} dg_arr_peers_t;

/* The peer table to pull this collect's tiles (or push this scatter's: t,
 * of a or of its parent) with, or NULL (*table) when they travel as
 * transfers: one rank; a's first collect or scatter, when its box is
 * small; a job whose ranks cannot read each other; a block of the box
 * whose home is not host memory. Call
 * outside regions only, on every rank alike (it may make the table: two
 * collectives). */
dagger_status_t dg_arr_pull_table(dagger_array_t *a, const dg_arr_tiles_t *t,
                                  const dg_arr_peers_t **table);

/* What rank q's pull (push: cl) tasks copy: the tiles, the table (bound
 * under peers_key), and the host buffer's key and box. */
typedef struct dg_arr_pull_job {
    dagger_codelet_t cl;
    const dg_arr_tiles_t *t;
    const dg_arr_peers_t *table;
    uint64_t key, peers_key;
    const size_t *off;                  /* the box's offset in the array */
    uint64_t box[DAGGER_MAX_DIMS];
    size_t *by_owner;                   /* the tiles in owner order (dg_arr_pull_order) */
    size_t *first;                      /* nranks + 1 starts into by_owner */
} dg_arr_pull_job_t;

/* Fills j->by_owner and j->first (malloc'ed; dg_arr_pull_job_free). */
dagger_status_t dg_arr_pull_order(dg_arr_pull_job_t *j, int nranks);
void dg_arr_pull_job_free(dg_arr_pull_job_t *j);

/* Rank q's tasks that pull (push) the tiles other ranks own. */
dagger_status_t dg_arr_pull_submit(dagger_region_t *r, const dg_arr_pull_job_t *j, int q);

/* Frees a's peer table (dagger_array_destroy). */
void dg_arr_peers_free(dagger_array_t *a);

#endif
