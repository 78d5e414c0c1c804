// `hipstack-smi job start|stop|show|list`: job accounting, asked of hipstack-smid over gRPC (the
// node's own daemon on its unix socket, or --host). docs/jobs.md describes the figures.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "hipstack/monitor/v1/monitor.pb.h"
#include "render.hpp"

namespace hipstack::cli {

struct JobOptions {
  std::string action;  // start, stop, show, list
  std::string id;
  std::string user;    // start: whose job
  std::string since = "7d";  // list: a duration back from now (30m, 12h, 7d), a UTC date or time, or @UNIX_SECONDS
  unsigned limit = 100;      // list: at most this many jobs
};

// --since's value as a point in time; nullopt with `error` naming what is wrong.
std::optional<std::chrono::system_clock::time_point> parse_since(const std::string& text, std::chrono::system_clock::time_point now,
                                                                 std::string& error);

// Prints what the daemon answered (remote_source.cpp makes the calls): a job's summary (start,
// stop, show) or the list of jobs; returns the exit code.
int print_job(const ::hipstack::monitor::v1::Job& job, const JobOptions& options, Format format);
int print_job_list(const ::hipstack::monitor::v1::ListJobsResponse& jobs, Format format);

}  // namespace hipstack::cli
