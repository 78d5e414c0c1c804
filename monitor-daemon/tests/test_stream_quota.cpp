// The stream quota's rules (stream_quota.hpp): the admin share, the per-peer cap, which stream a
// newcomer's slot is taken from, and the reaper's stalled and idle streams. The daemon end to end
// is in test_adversarial.py.
#include "stream_quota.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace hipstack::smid {
namespace {

using namespace std::chrono_literals;

struct Call {
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  StreamQuota::Ticket ticket;
};

Call open(StreamQuota& quota, const std::string& peer, bool admin = false, bool expects_messages = false) {
  Call call;
  call.ticket = quota.admit({peer, admin, expects_messages, [flag = call.cancelled] { *flag = true; }, peer});
  return call;
}

bool wait_cancelled(const Call& call, std::chrono::milliseconds within) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (!*call.cancelled && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  return *call.cancelled;
}

TEST(StreamQuota, SharesFollowMaxStreams) {
  StreamQuota quota(32, 10s, 60s);
  EXPECT_EQ(quota.admin_reserve(), 4u);
  EXPECT_EQ(quota.max_per_peer(), 7u);  // a quarter of the readers' 28
  StreamQuota one(1, 10s, 60s);
  EXPECT_EQ(one.admin_reserve(), 0u);
  EXPECT_EQ(one.max_per_peer(), 1u);
}

TEST(StreamQuota, OnePeerHoldsAtMostItsShare) {
  StreamQuota quota(32, 10s, 60s);
  std::vector<Call> calls;
  for (int i = 0; i < 7; ++i) calls.push_back(open(quota, "ip 10.0.0.1"));
  for (const Call& c : calls) EXPECT_TRUE(c.ticket.admitted());
  const Call eighth = open(quota, "ip 10.0.0.1");
  EXPECT_FALSE(eighth.ticket.admitted());
  EXPECT_NE(eighth.ticket.refused().find("too many streams from one client"), std::string::npos) << eighth.ticket.refused();
  EXPECT_TRUE(open(quota, "ip 10.0.0.2").ticket.admitted());
  for (const Call& c : calls) EXPECT_FALSE(*c.cancelled);
}

TEST(StreamQuota, ReadersCannotTakeTheAdminShare) {
  StreamQuota quota(8, 10s, 60s);  // 1 kept for the admin, 7 for readers, 1 per reader peer
  std::vector<Call> readers;
  for (int i = 0; i < 7; ++i) readers.push_back(open(quota, "uid " + std::to_string(1000 + i)));
  for (const Call& c : readers) ASSERT_TRUE(c.ticket.admitted());
  // An eighth reader peer holds no more than any other: nothing is taken from them for it.
  const Call late = open(quota, "uid 2000");
  EXPECT_FALSE(late.ticket.admitted());
  EXPECT_NE(late.ticket.refused().find("max_streams = 8"), std::string::npos) << late.ticket.refused();
  Call admin = open(quota, "uid 0", true);
  EXPECT_TRUE(admin.ticket.admitted());
  for (const Call& c : readers) EXPECT_FALSE(*c.cancelled);
  // The table is full now: a second admin stream takes a reader's slot (the oldest of the peer
  // holding the most), which a reader may not do to a peer holding one.
  const Call admin2 = open(quota, "uid 0", true);
  EXPECT_TRUE(admin2.ticket.admitted());
  EXPECT_TRUE(*readers[0].cancelled);
  for (std::size_t i = 1; i < readers.size(); ++i) EXPECT_FALSE(*readers[i].cancelled) << i;
}

TEST(StreamQuota, ANewcomerTakesTheSlotOfTheHeaviestPeersOldestStream) {
  StreamQuota quota(16, 10s, 60s);  // 2 for the admin, 14 for readers, 3 per reader peer
  ASSERT_EQ(quota.max_per_peer(), 3u);
  std::vector<Call> calls;
  for (const char* peer : {"a", "b", "c", "d"})
    for (int i = 0; i < 3; ++i) calls.push_back(open(quota, peer));
  calls.push_back(open(quota, "e"));
  calls.push_back(open(quota, "e"));  // 14 reader streams: the readers' share is full
  for (const Call& c : calls) ASSERT_TRUE(c.ticket.admitted());
  const Call newcomer = open(quota, "f");
  EXPECT_TRUE(newcomer.ticket.admitted());
  EXPECT_TRUE(*calls[0].cancelled);  // peer a's first: a holds the most (3), and it is the oldest of them
  for (std::size_t i = 1; i < calls.size(); ++i) EXPECT_FALSE(*calls[i].cancelled) << i;
  // A peer already holding as many as the heaviest takes nothing: b, c, d hold 3, a now 2 live.
  const Call greedy = open(quota, "b");
  EXPECT_FALSE(greedy.ticket.admitted());
}

TEST(StreamQuota, ASlotComesBackWhenItsStreamEnds) {
  StreamQuota quota(1, 10s, 60s);
  {
    const Call first = open(quota, "a");
    ASSERT_TRUE(first.ticket.admitted());
    EXPECT_FALSE(open(quota, "a").ticket.admitted());
  }
  EXPECT_TRUE(open(quota, "a").ticket.admitted());
}

TEST(StreamQuota, StalledWritesAndSilentClientsAreCancelled) {
  StreamQuota quota(32, 100ms, 300ms);
  Call watching = open(quota, "a");
  Call stalled = open(quota, "b");
  Call reflection = open(quota, "c", false, true);
  Call talking = open(quota, "d", false, true);
  stalled.ticket.write_begins();
  watching.ticket.write_begins();
  watching.ticket.write_ends();
  EXPECT_TRUE(wait_cancelled(stalled, 2s));
  const auto until = std::chrono::steady_clock::now() + 600ms;
  while (std::chrono::steady_clock::now() < until) {  // keeps talking past the idle limit
    talking.ticket.activity();
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(wait_cancelled(reflection, 2s));
  EXPECT_FALSE(*talking.cancelled);
  EXPECT_FALSE(*watching.cancelled);  // a server stream that waits for news is not idle
}

}  // namespace
}  // namespace hipstack::smid
