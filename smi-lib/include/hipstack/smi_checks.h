/* hipstack/smi_checks.h: the health checks, declared once (docs/health.md explains each).
 *
 * Every check hipstack's health verdicts run is one row of HIPSTACK_SMI_HEALTH_CHECKS. The C enum
 * (hipstack_smi_health_check), the C++ HealthCheck and the checks' names are generated from it.
 *
 * Row: X(id, identifier, name)
 *   id          stable number; never reused, never renumbered (0 is "another check": a name this
 *               library does not know, e.g. from a newer daemon)
 *   identifier  the enum's name
 *   name        what every output prints ("thermal.temperature")
 */
#ifndef HIPSTACK_SMI_CHECKS_H
#define HIPSTACK_SMI_CHECKS_H

/* clang-format off */
#define HIPSTACK_SMI_HEALTH_CHECKS(X)                                  \
  X(1,  device_readable,            "device.readable")                 \
  X(2,  thermal_temperature,        "thermal.temperature")             \
  X(3,  thermal_throttling,         "thermal.throttling")              \
  X(4,  power_throttling,           "power.throttling")                \
  X(5,  power_at_cap,               "power.at_cap")                    \
  X(6,  clocks_stuck_low,           "clocks.stuck_low")                \
  X(7,  pcie_link_degraded,         "pcie.link_degraded")              \
  X(8,  pcie_replays,               "pcie.replays")                    \
  X(9,  memory_uncorrectable_ecc,   "memory.uncorrectable_ecc")        \
  X(10, memory_correctable_ecc,     "memory.correctable_ecc")          \
  X(11, memory_bad_pages_pending,   "memory.bad_pages_pending")        \
  X(12, memory_bad_page_threshold,  "memory.bad_page_threshold")       \
  X(13, xgmi_errors,                "xgmi.errors")                     \
  X(14, ras_unreadable,             "ras.unreadable")                  \
  X(15, driver_compute_init,        "driver.compute_init")             \
  X(16, firmware_consistent,        "firmware.consistent")             \
  X(17, readings_plausible,         "readings.plausible")              \
  X(18, errors_recent,              "errors.recent")
/* clang-format on */

#endif
