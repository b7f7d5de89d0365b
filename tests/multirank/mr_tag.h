/* Criterion starts a process per test and rank: each test's start-up
 * records get keys of their own (DAGGER_BOOT_TAG), so that no process reads
 * a record left by the previous test's process of a rank. Call it before
 * dagger_init in every multi-rank Criterion test. It also starts the
 * test's watchdog (tests/support/test_watchdog.h), which ends with the
 * test's process. */
#ifndef MR_TAG_H
#define MR_TAG_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "support/test_watchdog.h"

static inline void mr_tag_test(void)
{
    char tag[96];
    snprintf(tag, sizeof(tag), "%s.%s", criterion_current_suite->name,
             criterion_current_test->name);
    setenv("DAGGER_BOOT_TAG", tag, 1);
    const char *rank = getenv("PMIX_RANK"); /* every PMIx launcher sets it */
    dgt_dog_set_rank(rank ? atoi(rank) : 0);
    dgt_at("the test (from before its dagger_init)");
    dgt_dog_start();
}

#endif
