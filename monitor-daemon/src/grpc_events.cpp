// WatchEvents: the event log (event_log.hpp) as a stream. The service's ticker looks at the
// sampler's snapshots every second whether or not anyone watches, so the log holds what happened
// before a client connected (since_sequence) and a reconnecting client misses nothing still kept.
#include <algorithm>
#include <set>

#include "grpc_request.hpp"
#include "proto_convert.hpp"
#include "grpc_service.hpp"

namespace hipstack::smid {

namespace {

// The log looks at the snapshots once a second (a look costs a wake-up even when no GPU has a new
// sample); a stream looks at the log more often, and only while a client watches.
constexpr auto kFollowEvery = std::chrono::seconds(1);
constexpr auto kLookEvery = std::chrono::milliseconds(250);
constexpr std::size_t kMaxEventsPerBatch = 256;  // EventBatch's bound (monitor.proto)

}  // namespace

// Looks at the snapshots for the event log, on the service's ticker.
class MonitorService::EventFollower final : public Tickable {
 public:
  EventFollower(const SamplerSource& source, EventLog& log) : source_(source), log_(log) {}
  void tick(StreamTicker& ticker) override {
    if (const auto sampler = source_()) log_.observe(*sampler);
    ticker.schedule(StreamTicker::Clock::now() + kFollowEvery, self_.lock());
  }
  std::weak_ptr<EventFollower> self_;

 private:
  const SamplerSource& source_;
  EventLog& log_;
};

void MonitorService::follow_events() {
  follower_ = std::make_shared<EventFollower>(source_, events_);
  follower_->self_ = follower_;
  ticker_.schedule(StreamTicker::Clock::now(), follower_);
}

grpc::ServerWriteReactor<pb::EventBatch>* MonitorService::WatchEvents(grpc::CallbackServerContext* context,
                                                                      const pb::WatchEventsRequest* request) {
  using Refused = RefusedStream<pb::EventBatch>;
  const auto sampler = source_();
  std::vector<std::uint32_t> devices;
  if (auto status = select_devices(*sampler, request->devices(), devices); !status.ok()) return new Refused(status);
  std::set<std::string> uuids;  // chosen by UUID: indices may change at a reload
  if (!request->devices().empty()) {
    const auto views = sampler->views();
    for (const std::uint32_t index : devices) uuids.insert(views.at(index).snapshot->device.uuid);
  }
  StreamQuota::Ticket slot = admit_stream(context);
  if (!slot.admitted()) return new Refused({grpc::StatusCode::RESOURCE_EXHAUSTED, slot.refused()});
  // A sequence past the last one is from before the daemon restarted: every kept event is news.
  const std::uint64_t last = events_.last_sequence();
  const std::uint64_t since = request->since_sequence();
  const std::uint64_t start = since == 0 ? last : since > last ? 0 : since;
  // Sends what arrived since the last batch; nothing when nothing did. A client that reads slowly
  // gets the kept events next time, and is told how many it missed.
  auto build = [this, uuids = std::move(uuids), sent = start](pb::EventBatch& message) mutable {
    EventLog::Page page = events_.after(sent, kMaxEventsPerBatch);
    message.set_missed(page.missed);
    for (const EventLog::Entry& entry : page.entries) {
      sent = entry.sequence;
      if (uuids.empty() || uuids.contains(entry.event.device.uuid)) proto::to_proto(entry.event, entry.found, entry.sequence, message.add_events());
    }
    return message.events_size() > 0 || page.missed > 0;
  };
  return SnapshotStream<pb::EventBatch>::start(ticker_, std::move(slot), kLookEvery, 0, std::move(build));
}

}  // namespace hipstack::smid
