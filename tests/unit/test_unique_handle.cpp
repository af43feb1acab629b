// UniqueHandle (kernels/common/unique_handle.hpp): a handle acquired in a constructor that then
// throws is released (the cuDNN fused attention's constructor builds graphs after cudnnCreate).
#include "kernels/common/unique_handle.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace gpubench::kernels {
namespace {

std::vector<int> released;
int release(int* h) {
  released.push_back(*h);
  return 0;
}
int next_id = 0;
int create(int** out) {
  static int slots[16];
  slots[next_id] = next_id;
  *out = &slots[next_id++];
  return 0;
}

struct Owner {
  UniqueHandle<int*, release> handle;
  explicit Owner(bool fail) {
    create(handle.reset_and_get());
    if (fail) throw std::runtime_error("graph refused");
  }
};

TEST(UniqueHandle, ReleasedWhenTheOwnersConstructorThrows) {
  released.clear();
  next_id = 0;
  EXPECT_THROW(Owner(true), std::runtime_error);
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0], 0);
  {
    Owner ok(false);
    EXPECT_TRUE(static_cast<bool>(ok.handle));
    EXPECT_EQ(released.size(), 1u);
  }
  EXPECT_EQ(released.size(), 2u);
}

TEST(UniqueHandle, MovesOwnershipAndReleasesOnce) {
  released.clear();
  next_id = 0;
  {
    UniqueHandle<int*, release> a;
    create(a.reset_and_get());
    UniqueHandle<int*, release> b(std::move(a));
    EXPECT_FALSE(static_cast<bool>(a));  // NOLINT(bugprone-use-after-move): the moved-from state is the point
    create(b.reset_and_get());           // releases the first, holds the second
    EXPECT_EQ(released, std::vector<int>{0});
  }
  EXPECT_EQ(released, (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace gpubench::kernels
