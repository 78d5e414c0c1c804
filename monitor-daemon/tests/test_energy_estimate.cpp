// energy_consumed between exact reads: power integrated, never going down, gaps and resets.
#include "energy_estimate.hpp"

#include <gtest/gtest.h>

namespace hipstack::smid {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
const EnergyEstimate::Clock::time_point t0{};

TEST(EnergyEstimate, NothingBeforeTheFirstExactRead) {
  EnergyEstimate e(seconds(3));
  e.power(100.0, t0);
  e.power(100.0, t0 + seconds(1));
  EXPECT_FALSE(e.now());
}

TEST(EnergyEstimate, IntegratesPowerBetweenExactReads) {
  EnergyEstimate e(seconds(3));
  e.power(100.0, t0);
  EXPECT_DOUBLE_EQ(e.exact(1000.0), 1000.0);
  e.power(200.0, t0 + seconds(1));  // trapezoid: (100 + 200) / 2 * 1 s = 150 J
  auto v = e.now();
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->estimated);
  EXPECT_DOUBLE_EQ(v->joules, 1150.0);
  e.power(200.0, t0 + milliseconds(1500));  // + 100 J
  EXPECT_DOUBLE_EQ(e.now()->joules, 1250.0);
}

TEST(EnergyEstimate, ExactReadCorrectsAnEstimateThatFellBehind) {
  EnergyEstimate e(seconds(3));
  e.power(100.0, t0);
  e.exact(1000.0);
  e.power(100.0, t0 + seconds(1));
  EXPECT_DOUBLE_EQ(e.now()->joules, 1100.0);
  EXPECT_DOUBLE_EQ(e.exact(1300.0), 1300.0);  // the true counter moved more: it jumps there
  e.power(100.0, t0 + seconds(2));
  EXPECT_DOUBLE_EQ(e.now()->joules, 1400.0);  // integration starts again from the exact read
}

TEST(EnergyEstimate, NeverGoesDownWhenTheEstimateRanAhead) {
  EnergyEstimate e(seconds(3));
  e.power(500.0, t0);
  e.exact(1000.0);
  e.power(500.0, t0 + seconds(1));
  EXPECT_DOUBLE_EQ(e.now()->joules, 1500.0);
  EXPECT_DOUBLE_EQ(e.exact(1400.0), 1500.0);  // below what was exported: holds still
  e.power(0.0, t0 + seconds(2));
  EXPECT_DOUBLE_EQ(e.now()->joules, 1650.0);  // 1400 + (500 + 0) / 2: above the held value again
}

TEST(EnergyEstimate, CatchesUpOnceTheTrueValuePassesTheHeldOne) {
  EnergyEstimate e(seconds(3));
  e.power(500.0, t0);
  e.exact(1000.0);
  e.power(500.0, t0 + seconds(1));
  (void)e.now();                   // exported 1500
  e.exact(1400.0);                 // held at 1500
  e.power(100.0, t0 + seconds(2));  // 1400 + 300 = 1700
  EXPECT_DOUBLE_EQ(e.now()->joules, 1700.0);
}

TEST(EnergyEstimate, AGapStopsTheEstimateUntilTheNextExactRead) {
  EnergyEstimate e(seconds(3));
  e.power(100.0, t0);
  e.exact(1000.0);
  e.power(100.0, t0 + seconds(1));
  EXPECT_DOUBLE_EQ(e.now()->joules, 1100.0);
  e.power(100.0, t0 + seconds(10));  // 9 s without a sample: the power then is unknown
  auto v = e.now();
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->estimated);
  EXPECT_DOUBLE_EQ(v->joules, 1100.0);  // the last exported value, not integrated further
  e.exact(2000.0);
  e.power(100.0, t0 + seconds(11));
  EXPECT_TRUE(e.now()->estimated);
  EXPECT_DOUBLE_EQ(e.now()->joules, 2100.0);
}

TEST(EnergyEstimate, AMissingPowerReadingStopsTheEstimate) {
  EnergyEstimate e(seconds(3));
  e.power(100.0, t0);
  e.exact(1000.0);
  e.power(std::nullopt, t0 + seconds(1));
  EXPECT_FALSE(e.now()->estimated);
  e.power(100.0, t0 + seconds(2));  // no previous power to integrate from
  EXPECT_FALSE(e.now()->estimated);
  EXPECT_DOUBLE_EQ(e.now()->joules, 1000.0);
}

TEST(EnergyEstimate, ACounterThatWentBackIsARealReset) {
  EnergyEstimate e(seconds(3));
  e.power(100.0, t0);
  e.exact(50000.0);
  EXPECT_DOUBLE_EQ(e.exact(12.0), 12.0);  // driver reload: the counter starts again
  e.power(100.0, t0 + seconds(1));
  EXPECT_DOUBLE_EQ(e.now()->joules, 12.0 + 100.0);
}

}  // namespace
}  // namespace hipstack::smid
