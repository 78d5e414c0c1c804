// One quota for every long-lived gRPC call, per peer and in all (stream_quota.hpp).
#include "stream_quota.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "thread_name.hpp"

namespace hipstack::smid {

struct StreamQuota::Stream {
  Request request;
  bool cancelled = false;  // evicted or reaped: on its way out, no longer counted
  Clock::time_point opened;
  Clock::time_point last_activity;
  Clock::time_point write_began = Clock::time_point::max();  // max: no write in flight
};

namespace {

std::size_t reserve_for(std::size_t max_streams) { return max_streams < 2 ? 0 : std::max<std::size_t>(1, max_streams / 8); }

}  // namespace

StreamQuota::StreamQuota(std::size_t max_streams, std::chrono::milliseconds slow_consumer_limit, std::chrono::milliseconds idle_limit)
    : max_streams_(max_streams),
      admin_reserve_(reserve_for(max_streams)),
      max_per_peer_(std::max<std::size_t>(1, (max_streams - reserve_for(max_streams)) / 4)),
      slow_consumer_limit_(slow_consumer_limit),
      idle_limit_(idle_limit),
      reaper_([this] {
        name_thread("smid-reaper");
        reap();
      }) {}

StreamQuota::~StreamQuota() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_reaper_.notify_all();
  reaper_.join();
}

StreamQuota::Ticket StreamQuota::admit(Request request) {
  const std::string& peer = request.peer;
  const bool admin = request.admin;
  Ticket ticket;
  std::lock_guard lock(mutex_);
  std::size_t total = 0;
  std::size_t readers = 0;
  std::map<std::string, std::size_t> held;  // readers' live streams per peer
  for (const Stream& s : streams_) {
    if (s.cancelled) continue;
    ++total;
    if (!s.request.admin) {
      ++readers;
      ++held[s.request.peer];
    }
  }
  const std::size_t own = admin ? 0 : held[peer];
  if (!admin && own >= max_per_peer_) {
    ticket.refused_ = fmt::format("too many streams from one client (at most {} of max_streams = {})", max_per_peer_, max_streams_);
    return ticket;
  }
  const bool full = admin ? total >= max_streams_ : readers >= max_streams_ - admin_reserve_ || total >= max_streams_;
  if (full) {
    // A slot is taken from the reader peer holding the most: for an admin always, for a reader
    // only when that peer would still hold at least as many as the reader then does (no churn
    // between peers holding one each).
    std::size_t most = 0;
    for (const auto& [p, n] : held) most = std::max(most, n);
    Stream* victim = nullptr;
    if (most > 0 && (admin || most > own + 1)) {
      for (Stream& s : streams_) {
        if (s.cancelled || s.request.admin || held[s.request.peer] != most) continue;
        if (victim == nullptr || s.opened < victim->opened) victim = &s;
      }
    }
    if (victim == nullptr) {
      ticket.refused_ = fmt::format("too many streams open (max_streams = {}, {} of them kept for the admin role)", max_streams_,
                                    admin_reserve_);
      return ticket;
    }
    victim->cancelled = true;
    victim->request.cancel();
  }
  const auto now = Clock::now();
  streams_.push_back(Stream{std::move(request), false, now, now});
  // The reaper sleeps while there are none. Woken only from that sleep: a flood of calls that
  // each open and end a stream must not wake it for each.
  if (reaper_parked_) stop_reaper_.notify_all();
  ticket.quota_ = this;
  ticket.stream_it_ = std::prev(streams_.end());
  ticket.stream_ = &*ticket.stream_it_;
  return ticket;
}

void StreamQuota::release(std::list<Stream>::iterator it) {
  std::lock_guard lock(mutex_);
  streams_.erase(it);
}

void StreamQuota::reap() {
  std::unique_lock lock(mutex_);
  for (;;) {
    // With no stream open there is nothing to look at: no wake-ups until one opens.
    reaper_parked_ = true;
    stop_reaper_.wait(lock, [this] { return stopping_ || !streams_.empty(); });
    reaper_parked_ = false;
    if (stop_reaper_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; })) return;
    const auto now = Clock::now();
    for (Stream& s : streams_) {
      if (s.cancelled) continue;
      const bool stalled = s.write_began != Clock::time_point::max() && now - s.write_began > slow_consumer_limit_;
      const bool idle = s.request.expects_messages && now - s.last_activity > idle_limit_;
      if (!stalled && !idle) continue;
      const std::string why = stalled ? fmt::format("a write has waited over {} ms", slow_consumer_limit_.count())
                                      : fmt::format("no message from the client for {} ms", idle_limit_.count());
      std::fprintf(stderr, "hipstack-smid: dropping a stream to %s: %s\n", s.request.label.c_str(), why.c_str());
      s.cancelled = true;
      s.request.cancel();
    }
  }
}

StreamQuota::Ticket::Ticket(Ticket&& other) noexcept
    : quota_(other.quota_), stream_it_(other.stream_it_), stream_(other.stream_), refused_(std::move(other.refused_)) {
  other.stream_ = nullptr;
}

StreamQuota::Ticket& StreamQuota::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    if (stream_ != nullptr) quota_->release(stream_it_);
    quota_ = other.quota_;
    stream_it_ = other.stream_it_;
    stream_ = other.stream_;
    refused_ = std::move(other.refused_);
    other.stream_ = nullptr;
  }
  return *this;
}

StreamQuota::Ticket::~Ticket() {
  if (stream_ != nullptr) quota_->release(stream_it_);
}

void StreamQuota::Ticket::activity() {
  if (stream_ == nullptr) return;
  std::lock_guard lock(quota_->mutex_);
  stream_->last_activity = Clock::now();
}

void StreamQuota::Ticket::write_begins() {
  if (stream_ == nullptr) return;
  std::lock_guard lock(quota_->mutex_);
  stream_->write_began = Clock::now();
}

void StreamQuota::Ticket::write_ends() {
  if (stream_ == nullptr) return;
  std::lock_guard lock(quota_->mutex_);
  stream_->write_began = Clock::time_point::max();
  stream_->last_activity = Clock::now();
}

}  // namespace hipstack::smid
