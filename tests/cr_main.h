/* Runs the Criterion tests of a binary that defines its own main because it
 * has other modes too (tests that launch the binary itself as the program
 * under test): main handles those, then returns cr_main(argc, argv). */
#ifndef DG_TEST_CR_MAIN_H
#define DG_TEST_CR_MAIN_H

#include <criterion/criterion.h>

static inline int cr_main(int argc, char **argv)
{
    struct criterion_test_set *tests = criterion_initialize();
    int result = 0;
    if (criterion_handle_args(argc, argv, true))
        result = !criterion_run_all_tests(tests);
    criterion_finalize(tests);
    return result;
}

#endif
