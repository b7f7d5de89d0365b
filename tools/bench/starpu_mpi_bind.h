/* Where the StarPU-MPI peers (taskbench_starpu_mpi, linalg_starpu_mpi) put
 * their workers. StarPU binds worker k of every process to core k, so the
 * processes of one node all run on the same first cores: on this machine's
 * 2 cores, the workers of a 2 x 1 job both sat on core 0 (StarPU-MPI's
 * tiled 2048^2 matmul at 45 GF/s, one core's rate, against 80 GF/s with
 * the workers spread; docs/linalg.md, "StarPU-MPI beside the multi-rank
 * rows").
 * Unless the user chose a placement (STARPU_WORKERS_CPUID, _NOBIND or
 * _GETBIND), the node-local rank r's STARPU_NCPU workers get cores
 * r * STARPU_NCPU + k, modulo the cores online: as a user does. Call it after
 * MPI_Init and before starpu_mpi_init_conf. */
#ifndef STARPU_MPI_BIND_H
#define STARPU_MPI_BIND_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void starpu_mpi_bind_spread(void)
{
    if (getenv("STARPU_WORKERS_CPUID") || getenv("STARPU_WORKERS_NOBIND") ||
        getenv("STARPU_WORKERS_GETBIND"))
        return;
    MPI_Comm node;
    int local = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(node, &local);
        MPI_Comm_free(&node);
    }
    const char *nc = getenv("STARPU_NCPU");
    long ncpu = nc && atoi(nc) > 0 ? atoi(nc) : 1, cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        return;
    char list[512] = "";
    size_t used = 0;
    for (long k = 0; k < ncpu && used + 24 < sizeof(list); k++)
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%ld", k ? " " : "",
                                 ((long)local * ncpu + k) % cores);
    setenv("STARPU_WORKERS_CPUID", list, 1);
}

#endif
