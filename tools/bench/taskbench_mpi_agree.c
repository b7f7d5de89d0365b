/* The agreement at the end of a timed run (taskbench_mpi_agree.h). */
#include "taskbench_mpi_agree.h"

#include <mpi.h>

int tb_mpi_agree(double *wall, int bad)
{
    MPI_Allreduce(MPI_IN_PLACE, wall, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return bad ? -1 : 0;
}
