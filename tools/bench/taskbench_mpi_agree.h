/* The end of one timed run in the Task Bench drivers that run on several
 * MPI processes (taskbench_mpi.c, taskbench_starpu_mpi.c): every rank
 * learns the slowest rank's wall time and whether any rank saw a wrong
 * output. */
#ifndef TASKBENCH_MPI_AGREE_H
#define TASKBENCH_MPI_AGREE_H

/* Replaces *wall with the largest over MPI_COMM_WORLD; returns -1 when bad
 * is set on any rank, else 0 (the same on every rank). Collective. */
int tb_mpi_agree(double *wall, int bad);
#endif
