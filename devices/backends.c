/* The device backends compiled into this build (devices/common/device.h). */
#include "devices/common/device.h"

const dg_dev_backend_t *dg_dev_backend(dg_dev_kind_t kind)
{
    switch (kind) {
    case DG_DEV_TEST: return &dg_testdev_backend;
#ifdef DAGGER_HAVE_CUDA
    case DG_DEV_CUDA: return &dg_cuda_backend;
#endif
#ifdef DAGGER_HAVE_HIP
    case DG_DEV_HIP: return &dg_hip_backend;
#endif
    default: return NULL;
    }
}
