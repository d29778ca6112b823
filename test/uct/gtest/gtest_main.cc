/**
 * cuda_mgi GPU test runner.
 * See file LICENSE for terms.
 */

#include <gtest/gtest.h>

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
