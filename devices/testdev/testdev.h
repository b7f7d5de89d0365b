/* The test device kind's own calls (besides dg_testdev_backend). */
#ifndef DG_DEV_TESTDEV_H
#define DG_DEV_TESTDEV_H

#include <stdint.h>

#include "devices/common/device.h"

/* How many test devices this process has (DAGGER_TEST_DEVICES; set at init
 * before discovery). */
void dg_testdev_configure(int n);
/* Test device memory allocated now, over every test device (tests). */
void dg_testdev_stats(int64_t *bytes, int64_t *blocks);

#endif
