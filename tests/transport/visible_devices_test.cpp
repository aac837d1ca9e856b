// visible_devices_for: the CUDA_VISIBLE_DEVICES that shows a process only the devices
// it uses, within any list the user has set (whose entries may be ordinals, UUIDs or
// MIG names, kept as written).
#include <whd/transport/cuda.hpp>

#include <gtest/gtest.h>

namespace {

using whd::cuda::visible_devices_for;

TEST(visible_devices, with_no_list_set_the_ordinals_themselves)
{
  EXPECT_EQ(visible_devices_for(nullptr, 0, 1), "0");
  EXPECT_EQ(visible_devices_for(nullptr, 2, 1), "2");
  EXPECT_EQ(visible_devices_for(nullptr, 1, 3), "1,2,3");
}

TEST(visible_devices, a_list_set_is_taken_in_its_own_numbering)
{
  // Device d of the process is the list's entry d.
  EXPECT_EQ(visible_devices_for("3,1,2", 0, 1), "3");
  EXPECT_EQ(visible_devices_for("3,1,2", 1, 2), "1,2");
  EXPECT_EQ(visible_devices_for("GPU-8a1f,GPU-77c0", 1, 1), "GPU-77c0");
  EXPECT_EQ(visible_devices_for("MIG-1,MIG-2,MIG-3", 0, 3), "MIG-1,MIG-2,MIG-3");
}

TEST(visible_devices, a_list_naming_fewer_devices_than_asked_is_refused)
{
  EXPECT_FALSE(visible_devices_for("0,1", 1, 2).has_value());
  EXPECT_FALSE(visible_devices_for("0", 1, 1).has_value());
  EXPECT_FALSE(visible_devices_for("", 0, 1).has_value()); // set empty: no device at all
}

} // namespace
