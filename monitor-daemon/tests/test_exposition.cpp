// Unit tests of the Prometheus exposition (prometheus.cpp): family names and units, value scaling,
// text metrics as _info, escaping, the number format under a decimal-comma locale, health series,
// stale devices. Everything runs on hand-built Sampler::View snapshots: no sampler, no capture.
#include <gtest/gtest.h>

#include <cctype>
#include <charconv>
#include <chrono>
#include <clocale>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <locale>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "prometheus.hpp"
#include "sampler.hpp"

#include "exposition_fixtures.hpp"

namespace {

using namespace exposition_test;

// ---------------------------------------------------------------------------------------------
// Family names and units

TEST(FamilyName, BaseUnitsAndSuffixes) {
  const std::map<std::string, std::string> expected = {
      {"temperature_edge", "hipstack_gpu_temperature_edge_celsius"},
      {"temperature_junction", "hipstack_gpu_temperature_junction_celsius"},
      {"clock_sclk", "hipstack_gpu_clock_sclk_hertz"},
      {"clock_sclk_max", "hipstack_gpu_clock_sclk_max_hertz"},
      {"gpu_busy", "hipstack_gpu_gpu_busy_ratio"},
      {"fan_pwm", "hipstack_gpu_fan_pwm_ratio"},
      {"energy_consumed", "hipstack_gpu_energy_consumed_joules_total"},
      {"power_current", "hipstack_gpu_power_current_watts"},
      {"vram_used", "hipstack_gpu_vram_used_bytes"},
      {"vram_total", "hipstack_gpu_vram_total_bytes"},
      {"voltage_gfx", "hipstack_gpu_voltage_gfx_volts"},
      {"fan_speed", "hipstack_gpu_fan_speed_rpm"},
      {"pcie_speed", "hipstack_gpu_pcie_speed_transfers_per_second"},
      {"pcie_width", "hipstack_gpu_pcie_width_lanes"},
      {"pcie_rx", "hipstack_gpu_pcie_rx_bytes_per_second"},
      {"pcie_replay_count", "hipstack_gpu_pcie_replay_count_total"},
      {"compute_units", "hipstack_gpu_compute_units"},
      {"drm_card", "hipstack_gpu_drm_card"},
      {"firmware_version", "hipstack_gpu_firmware_version_info"},
      {"pcie_level", "hipstack_gpu_pcie_level_info"},
      {"performance_level", "hipstack_gpu_performance_level"},
      {"nvlink_state", "hipstack_gpu_nvlink_state"},
  };
  for (const auto& [name, family] : expected) EXPECT_EQ(family_name(metric(name)), family) << name;
}

TEST(FamilyName, EveryCatalogueMetricHasAValidUniqueName) {
  const std::regex valid("[a-zA-Z_:][a-zA-Z0-9_:]*");
  std::map<std::string, std::string> seen = {
      {"hipstack_gpu_up", "(daemon)"}, {"hipstack_gpu_sample_age_seconds", "(daemon)"},
      {"hipstack_gpu_health", "(daemon)"}, {"hipstack_smid_build_info", "(daemon)"},
      {"hipstack_smid_scrape_duration_seconds", "(daemon)"}, {"hipstack_gpu_info", "(daemon)"},
      {"hipstack_gpu_partition_info", "(daemon)"}};
  for (const smi::MetricInfo& info : smi::catalogue()) {
    const std::string family = family_name(info);
    EXPECT_TRUE(std::regex_match(family, valid)) << family;
    EXPECT_EQ(family.rfind("hipstack_gpu_", 0), 0u) << family;
    const auto [it, inserted] = seen.emplace(family, std::string(info.name));
    EXPECT_TRUE(inserted) << info.name << " and " << it->second << " share the family " << family;
    const bool total = family.size() > 6 && family.ends_with("_total");
    if (info.type == smi::ValueType::text) {
      // A state set is named as the metric; other text is an info series (or an info label).
      EXPECT_EQ(family.ends_with("_info"), smi::metric_states(info.id).empty()) << family;
    } else if (info.kind == smi::Kind::counter) {
      EXPECT_TRUE(total) << family;
    } else {
      EXPECT_FALSE(total) << family << " is a gauge but ends in _total";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Values, types, HELP

TEST(Render, ValuesAreScaledToBaseUnits) {
  SnapshotBuilder gpu(device(0));
  gpu.live(real("temperature_edge", 45.5))
      .live(real("clock_sclk", 1500.5))
      .live(real("gpu_busy", 37.5))
      .live(real("energy_consumed", 123456.25))
      .live(real("voltage_gfx", 850))
      .live(real("power_current", 301.25))
      .live(integer("vram_used", 1073741824))
      .live(real("pcie_speed", 32))
      .live(integer("pcie_width", 16))
      .live(integer("fan_speed", 2400))
      .fact(real("clock_sclk_max", 2100))
      .fact(integer("compute_units", 304));
  const Page page = parse_page(render_metrics({gpu.view()}, kContext));
  const Labels gpu0 = {{"gpu", "0"}};
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_temperature_edge_celsius", gpu0), 45.5);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_clock_sclk_hertz", gpu0), 1500.5e6);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_clock_sclk_max_hertz", gpu0), 2100e6);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_gpu_busy_ratio", gpu0), 0.375);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_energy_consumed_joules_total", gpu0), 123456.25);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_voltage_gfx_volts", gpu0), 0.85);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_power_current_watts", gpu0), 301.25);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_vram_used_bytes", gpu0), 1073741824.0);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_pcie_speed_transfers_per_second", gpu0), 32e9);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_pcie_width_lanes", gpu0), 16);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_fan_speed_rpm", gpu0), 2400);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_compute_units", gpu0), 304);
  // Integers are written as integers (no exponent, no fraction, no grouping).
  EXPECT_EQ(find(page, "hipstack_gpu_vram_used_bytes")[0].value, "1073741824");
}

TEST(Render, TypesAndHelpComeFromTheCatalogue) {
  SnapshotBuilder gpu(device(0));
  gpu.live(real("temperature_edge", 40)).live(real("energy_consumed", 10)).live(integer("pcie_replay_count", 3));
  const Page page = parse_page(render_metrics({gpu.view()}, kContext));
  EXPECT_EQ(page.type.at("hipstack_gpu_temperature_edge_celsius"), "gauge");
  EXPECT_EQ(page.type.at("hipstack_gpu_energy_consumed_joules_total"), "counter");
  EXPECT_EQ(page.type.at("hipstack_gpu_pcie_replay_count_total"), "counter");
  EXPECT_EQ(page.help.at("hipstack_gpu_temperature_edge_celsius"), metric("temperature_edge").help);
  EXPECT_EQ(page.help.at("hipstack_gpu_energy_consumed_joules_total"), metric("energy_consumed").help);
  EXPECT_EQ(page.type.at("hipstack_gpu_up"), "gauge");
  EXPECT_EQ(page.type.at("hipstack_gpu_sample_age_seconds"), "gauge");
  EXPECT_EQ(page.type.at("hipstack_smid_build_info"), "gauge");
  EXPECT_EQ(page.type.at("hipstack_smid_scrape_duration_seconds"), "gauge");
}

TEST(Render, EverySampleCarriesTheDeviceLabels) {
  SnapshotBuilder gpu(device(3, "AMD Instinct MI300X"));
  gpu.live(real("temperature_edge", 40)).fact(text("marketing_name", "AMD Instinct MI300X"));
  const Page page = parse_page(render_metrics({gpu.view()}, kContext));
  const Labels want = {{"gpu", "3"}, {"uuid", "GPU-00000003"}, {"bdf", "0000:03:00.0"},
                       {"model", "AMD Instinct MI300X"}, {"vendor", "amd"}, {"host", "node-a"}};
  int checked = 0;
  for (const Sample& s : page.samples) {
    if (s.name.rfind("hipstack_smid_", 0) == 0) continue;
    for (const auto& [k, v] : want) EXPECT_EQ(s.labels.count(k) ? s.labels.at(k) : "<missing>", v) << s.line;
    ++checked;
  }
  EXPECT_GE(checked, 4);  // temperature, marketing name, up, sample age
}

TEST(Render, TextFactsAreLabelsOfOneInfoSeriesAndInstancedTextIsInfoWithAValueLabel) {
  SnapshotBuilder gpu(device(0));
  gpu.fact(text("marketing_name", "AMD Instinct MI300X"))
      .fact(text("vbios_version", "113-X"))
      .fact(integer("drm_card", 3))
      .fact(text("firmware_version", "0x00556a00", "smc"))
      .fact(text("firmware_version", "0x0000000b", "sdma"));
  const Page page = parse_page(render_metrics({gpu.view()}, kContext));
  EXPECT_EQ(page.body.find("hipstack_gpu_marketing_name_info"), std::string::npos);
  const auto info = find(page, "hipstack_gpu_info");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0].labels.at("marketing_name"), "AMD Instinct MI300X");
  EXPECT_EQ(info[0].labels.at("vbios_version"), "113-X");
  EXPECT_EQ(info[0].labels.at("drm_card"), "3");
  EXPECT_EQ(info[0].labels.count("firmware_version"), 0u);  // instanced: a family of its own
  EXPECT_EQ(info[0].value, "1");
  EXPECT_EQ(page.type.at("hipstack_gpu_info"), "gauge");
  // The metric's instance label comes before the value label; both are there.
  const auto smc = find(page, "hipstack_gpu_firmware_version_info", {{"ip", "smc"}});
  ASSERT_EQ(smc.size(), 1u);
  EXPECT_EQ(smc[0].labels.at("value"), "0x00556a00");
  EXPECT_EQ(smc[0].value, "1");
  EXPECT_EQ(find(page, "hipstack_gpu_firmware_version_info").size(), 2u);
}

TEST(Render, InstanceLabelsSeparateSeries) {
  SnapshotBuilder gpu(device(0));
  for (int stack = 0; stack < 4; ++stack) gpu.live(real("temperature_hbm", 50 + stack, std::to_string(stack)));
  gpu.fact(real("sclk_level", 500, "0")).fact(real("sclk_level", 2100, "1"));
  const Page page = parse_page(render_metrics({gpu.view()}, kContext));
  ASSERT_EQ(find(page, "hipstack_gpu_temperature_hbm_celsius").size(), 4u);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_temperature_hbm_celsius", {{"stack", "2"}}), 52);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_sclk_level_hertz", {{"level", "1"}}), 2100e6);
}

// Each XID code's series says what to do about it (NVIDIA's catalogue, docs/errors.md): one action
// per code, so the label adds no series; a code no catalogue has is "unknown", never guessed.
TEST(Render, XidCountersCarryTheCodesAction) {
  SnapshotBuilder gpu(device(0));
  gpu.live(integer("xid_errors", 2, "13")).live(integer("xid_errors", 1, "79")).live(integer("xid_errors", 3, "95"));
  gpu.live(integer("xid_errors", 1, "94")).live(integer("xid_errors", 1, "4242"));
  const Page page = parse_page(render_metrics({gpu.view()}, kContext));
  ASSERT_EQ(find(page, "hipstack_gpu_xid_errors_total").size(), 5u);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_xid_errors_total", {{"xid", "13"}, {"action", "restart_app"}}), 2);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_xid_errors_total", {{"xid", "79"}, {"action", "reboot_node"}}), 1);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_xid_errors_total", {{"xid", "95"}, {"action", "reset_gpu"}}), 3);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_xid_errors_total", {{"xid", "94"}, {"action", "restart_app"}}), 1);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_xid_errors_total", {{"xid", "4242"}, {"action", "unknown"}}), 1);
}

TEST(Render, ReadingsThatAreNotOkAreLeftOutAndEmptyFamiliesHaveNoHeader) {
  SnapshotBuilder gpu(device(0));
  smi::Reading missing;
  missing.id = metric("temperature_memory").id;
  missing.status = smi::Status::not_supported;
  smi::Reading failed = real("temperature_junction", 99);
  failed.status = smi::Status::error;
  failed.error_code = 5;
  gpu.live(missing).live(failed).live(real("temperature_edge", 41));
  const Page page = parse_page(render_metrics({gpu.view()}, kContext));
  EXPECT_EQ(page.body.find("hipstack_gpu_temperature_memory_celsius"), std::string::npos);
  EXPECT_EQ(page.body.find("hipstack_gpu_temperature_junction_celsius"), std::string::npos);
  EXPECT_EQ(find(page, "hipstack_gpu_temperature_edge_celsius").size(), 1u);
}

TEST(Render, NonFiniteValuesUseThePrometheusSpelling) {
  SnapshotBuilder gpu(device(0));
  gpu.live(real("temperature_edge", std::nan(""))).live(real("power_current", HUGE_VAL)).live(real("power_average", -HUGE_VAL));
  const Page page = parse_page(render_metrics({gpu.view()}, kContext));
  EXPECT_EQ(find(page, "hipstack_gpu_temperature_edge_celsius").at(0).value, "NaN");
  EXPECT_EQ(find(page, "hipstack_gpu_power_current_watts").at(0).value, "+Inf");
  EXPECT_EQ(find(page, "hipstack_gpu_power_average_watts").at(0).value, "-Inf");
}

TEST(Render, SeveralDevicesGroupEachFamilyOnce) {
  std::vector<Sampler::View> views;
  for (std::uint32_t i = 0; i < 4; ++i) {
    SnapshotBuilder gpu(device(i));
    gpu.live(real("temperature_edge", 40 + i)).live(real("clock_sclk", 100 * (i + 1))).fact(text("vbios_version", "113-X"));
    gpu.finding("thermal.temperature", smi::Verdict::pass).overall(smi::Verdict::pass);
    views.push_back(gpu.view());
  }
  const Page page = parse_page(render_metrics(views, kContext));  // checks contiguity and single headers
  EXPECT_EQ(find(page, "hipstack_gpu_temperature_edge_celsius").size(), 4u);
  EXPECT_EQ(find(page, "hipstack_gpu_up").size(), 4u);
  EXPECT_EQ(find(page, "hipstack_gpu_health").size(), 8u);  // one check + overall, per GPU
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_clock_sclk_hertz", {{"gpu", "3"}}), 400e6);
}

TEST(Render, BuildInfoAndScrapeDuration) {
  const Page page = parse_page(render_metrics({}, kContext));
  const auto info = find(page, "hipstack_smid_build_info");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0].labels, (Labels{{"version", "9.8.7"}, {"host", "node-a"}}));
  EXPECT_EQ(info[0].value, "1");
  const auto duration = find(page, "hipstack_smid_scrape_duration_seconds");
  ASSERT_EQ(duration.size(), 1u);
  EXPECT_TRUE(duration[0].labels.empty());
  const auto seconds = classic_number(duration[0].value);
  ASSERT_TRUE(seconds) << duration[0].line;
  EXPECT_GE(*seconds, 0);
  EXPECT_LT(*seconds, 1);
  // No GPU: no per-GPU family at all, not even a header.
  EXPECT_EQ(page.body.find("hipstack_gpu_"), std::string::npos);
}

TEST(Render, ViewWithoutSnapshotIsSkipped) {
  // What the sampler hands out for a device whose first sample has not finished.
  SnapshotBuilder gpu(device(0));
  gpu.live(real("temperature_edge", 40));
  const Page page = parse_page(render_metrics({Sampler::View{nullptr, false}, gpu.view()}, kContext));
  EXPECT_EQ(find(page, "hipstack_gpu_up").size(), 1u);
}

TEST(Render, SampleAgeOnlyOnceALiveSampleExists) {
  SnapshotBuilder fresh(device(0));
  fresh.snap->live_at = Clock::now() - std::chrono::milliseconds(1500);
  SnapshotBuilder none(device(1));
  none.snap->have_live = false;
  const Page page = parse_page(render_metrics({fresh.view(), none.view()}, kContext));
  const double age = value_of(page, "hipstack_gpu_sample_age_seconds", {{"gpu", "0"}});
  EXPECT_GE(age, 1.5);
  EXPECT_LT(age, 10);
  EXPECT_TRUE(find(page, "hipstack_gpu_sample_age_seconds", {{"gpu", "1"}}).empty());
  // Listed, but not up: nothing has been read from it yet.
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_up", {{"gpu", "1"}}), 0);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_up", {{"gpu", "0"}}), 1);
}

TEST(Render, AFaultedOrUnansweringGpuIsDown) {
  SnapshotBuilder lost(device(0));
  lost.live(real("temperature_edge", 40));
  lost.snap->device.fault = "the GPU is lost (fallen off the bus)";
  SnapshotBuilder failing(device(1));
  smi::Reading eio;
  eio.id = smi::MetricId::temperature_edge;
  eio.status = smi::Status::error;
  eio.error_code = 5;
  failing.snap->live = {eio};
  SnapshotBuilder sparse(device(2));  // nothing supported, nothing failed: up
  smi::Reading unsupported;
  unsupported.id = smi::MetricId::temperature_edge;
  sparse.snap->live = {unsupported};
  const Page page = parse_page(render_metrics({lost.view(), failing.view(), sparse.view()}, kContext));
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_up", {{"gpu", "0"}}), 0);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_up", {{"gpu", "1"}}), 0);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_up", {{"gpu", "2"}}), 1);
}

// ---------------------------------------------------------------------------------------------
// Escaping

TEST(Escaping, LabelValues) {
  EXPECT_EQ(escape_label_value("plain"), "plain");
  EXPECT_EQ(escape_label_value(R"(a\b)"), R"(a\\b)");
  EXPECT_EQ(escape_label_value(R"(say "hi")"), R"(say \"hi\")");
  EXPECT_EQ(escape_label_value(""), "");
  EXPECT_EQ(escape_label_value("µ°C ünïcödé"), "µ°C ünïcödé");  // UTF-8 passes through
}

// Text with raw bytes (controls, invalid UTF-8) reads back as smi::printable_text writes it, as
// every text that came through the library does: "\xNN", with a raw backslash doubled.
TEST(Escaping, RawBytesReadBackAsPrintableText) {
  EXPECT_EQ(escape_label_value("two\nlines"), R"(two\\x0alines)");
  EXPECT_EQ(escape_label_value("\x1b[31mred\xff\xfe"), R"(\\x1b[31mred\\xff\\xfe)");
  EXPECT_EQ(escape_label_value("a\\b\x07"), R"(a\\\\b\\x07)");
  EXPECT_EQ(escape_label_value("c1 \xc2\x9b end"), R"(c1 \\xc2\\x9b end)");  // U+009B, the C1 CSI
  EXPECT_EQ(escape_label_value("cut \xe2\x82"), R"(cut \\xe2\\x82)");         // a truncated sequence
  EXPECT_EQ(escape_help("line one\nline two"), R"(line one\\x0aline two)");
  EXPECT_EQ(escape_help("bell\x07"), R"(bell\\x07)");
}

TEST(Escaping, HelpEscapesBackslashButNotQuotes) {
  EXPECT_EQ(escape_help("plain text."), "plain text.");
  EXPECT_EQ(escape_help(R"(C:\path)"), R"(C:\\path)");
  EXPECT_EQ(escape_help(R"(check="overall")"), R"(check="overall")");
}

TEST(Escaping, HostileLabelValuesRoundTripThroughThePage) {
  const std::string hostile_name = "Model \"X\" \\ rev\nB";
  const std::string hostile_host = "host\\with \"quotes\"\nand newline";
  const std::string hostile_text = "vbios \"1\\2\"\nend";
  const std::string hostile_check = "custom.\"check\"\\x\ny";
  SnapshotBuilder gpu(device(0, hostile_name));
  gpu.live(real("temperature_edge", 40)).fact(text("vbios_version", hostile_text)).fact(text("firmware_version", "1", "a\"b\\c\nd"));
  gpu.finding(hostile_check, smi::Verdict::warn).overall(smi::Verdict::warn);
  const std::string body = render_metrics({gpu.view()}, {hostile_host, "1.0\"beta\\"});
  const Page page = parse_page(body);
  // Every sample line parsed (no raw newline split one), and the labels decode to the originals.
  for (const Sample& s : page.samples) {
    if (s.name.rfind("hipstack_gpu_", 0) == 0) {
      EXPECT_EQ(s.labels.at("model"), smi::printable_text(hostile_name)) << s.line;
    }
    EXPECT_EQ(s.labels.count("host") ? s.labels.at("host") : smi::printable_text(hostile_host), smi::printable_text(hostile_host)) << s.line;
  }
  EXPECT_EQ(find(page, "hipstack_gpu_info").at(0).labels.at("vbios_version"), smi::printable_text(hostile_text));
  EXPECT_EQ(find(page, "hipstack_gpu_firmware_version_info").at(0).labels.at("ip"), smi::printable_text("a\"b\\c\nd"));
  EXPECT_EQ(find(page, "hipstack_gpu_health", {{"check", smi::printable_text(hostile_check)}}).size(), 1u);
  EXPECT_EQ(find(page, "hipstack_smid_build_info").at(0).labels.at("version"), "1.0\"beta\\");
  // HELP lines escape nothing but backslash and newline: the health HELP keeps its quotes.
  EXPECT_NE(page.help.at("hipstack_gpu_health").find(R"(check="overall")"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Numbers in the classic form whatever the locale

class DecimalCommaLocale : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "nl_NL.UTF-8", "ru_RU.UTF-8"}) {
      if (try_locale(name)) return;
    }
    // None installed: build de_DE.UTF-8 into a temporary LOCPATH when the locale sources are there
    // (Debian's `locales` package ships them; localedef takes about a second).
    if (std::filesystem::exists("/usr/share/i18n/locales/de_DE")) {
      char dir_template[] = "/tmp/smid-locale-XXXXXX";
      if (const char* dir = ::mkdtemp(dir_template)) {
        temp_dir_ = dir;
        const std::string command = "localedef -i de_DE -f UTF-8 '" + temp_dir_ + "/de_DE.UTF-8' >/dev/null 2>&1";
        [[maybe_unused]] const int rc = std::system(command.c_str());  // warnings give rc 1 yet a usable locale
        ::setenv("LOCPATH", temp_dir_.c_str(), 1);
        if (try_locale("de_DE.UTF-8")) return;
      }
    }
    // Last resort: C.UTF-8 for C, plus a C++ global locale with a comma as decimal point.
    std::setlocale(LC_ALL, "C.UTF-8");
    struct Comma : std::numpunct<char> {
      char do_decimal_point() const override { return ','; }
      char do_thousands_sep() const override { return '.'; }
      std::string do_grouping() const override { return "\3"; }
    };
    std::locale::global(std::locale(std::locale::classic(), new Comma));
    name_ = "C.UTF-8 + C++ numpunct ','";
  }

  void TearDown() override {
    std::locale::global(std::locale::classic());
    std::setlocale(LC_ALL, "C");
    if (!temp_dir_.empty()) {
      ::unsetenv("LOCPATH");
      std::error_code ignored;
      std::filesystem::remove_all(temp_dir_, ignored);
    }
  }

  bool try_locale(const char* name) {
    if (std::setlocale(LC_ALL, name) == nullptr) return false;
    try {
      std::locale::global(std::locale(name));  // also sets the C locale (named locale)
    } catch (const std::runtime_error&) {
      std::setlocale(LC_ALL, "C");
      return false;
    }
    c_comma_ = std::string(std::localeconv()->decimal_point) == ",";
    name_ = name;
    return true;
  }

  std::string name_;
  std::string temp_dir_;
  bool c_comma_ = false;  // the C library itself writes "1,5"
};

TEST_F(DecimalCommaLocale, NumbersStillUseAPoint) {
  RecordProperty("locale", name_);
  std::printf("[          ] locale under test: %s (C decimal comma: %s)\n", name_.c_str(), c_comma_ ? "yes" : "no");
  // The trap is armed: C++ streams (and, with a real locale, printf) write a comma now.
  std::ostringstream stream;
  stream << 1.5;
  EXPECT_EQ(stream.str(), "1,5");
  if (c_comma_) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", 1.5);
    EXPECT_STREQ(buffer, "1,5");
  }

  SnapshotBuilder gpu(device(0));
  gpu.live(real("temperature_edge", 45.5))
      .live(real("gpu_busy", 37.5))
      .live(real("clock_sclk", 1500.5))
      .live(real("voltage_gfx", 1125))
      .live(integer("vram_used", 1234567890))
      .live(real("energy_consumed", 0.125));
  gpu.snap->live_at = Clock::now() - std::chrono::milliseconds(250);
  const std::string body = render_metrics({gpu.view()}, kContext);
  const Page page = parse_page(body);
  for (const Sample& s : page.samples) {
    EXPECT_EQ(s.value.find(','), std::string::npos) << s.line;
    EXPECT_TRUE(classic_number(s.value)) << s.line;
  }
  EXPECT_EQ(find(page, "hipstack_gpu_temperature_edge_celsius").at(0).value, "45.5");
  EXPECT_EQ(find(page, "hipstack_gpu_gpu_busy_ratio").at(0).value.substr(0, 5), "0.375");
  EXPECT_EQ(find(page, "hipstack_gpu_voltage_gfx_volts").at(0).value, "1.125");
  EXPECT_EQ(find(page, "hipstack_gpu_energy_consumed_joules_total").at(0).value, "0.125");
  EXPECT_EQ(find(page, "hipstack_gpu_vram_used_bytes").at(0).value, "1234567890");  // no grouping
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_clock_sclk_hertz", {}), 1500.5e6);
  const double age = value_of(page, "hipstack_gpu_sample_age_seconds", {});
  EXPECT_GT(age, 0.2);
  EXPECT_NE(find(page, "hipstack_gpu_sample_age_seconds").at(0).value.find('.'), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Health

TEST(Health, OneSeriesPerCheckWithTheWorstVerdict) {
  SnapshotBuilder gpu(device(1));
  gpu.finding("thermal.temperature", smi::Verdict::pass)   // edge
      .finding("thermal.temperature", smi::Verdict::warn)  // junction
      .finding("thermal.temperature", smi::Verdict::pass)  // memory: a later pass must not hide the warn
      .finding("memory.uncorrectable_ecc", smi::Verdict::fail)
      .finding("memory.correctable_ecc", smi::Verdict::unknown)
      .finding("memory.correctable_ecc", smi::Verdict::pass)
      .finding("pcie.replays", smi::Verdict::unknown)  // nothing checked: -1
      .finding("power.at_cap", smi::Verdict::fail)
      .finding("power.at_cap", smi::Verdict::warn)
      .overall(smi::Verdict::fail);
  const Page page = parse_page(render_metrics({gpu.view()}, kContext));
  auto verdict = [&](const std::string& check) {
    return value_of(page, "hipstack_gpu_health", {{"gpu", "1"}, {"check", check}});
  };
  EXPECT_EQ(verdict("thermal.temperature"), 1);
  EXPECT_EQ(verdict("memory.uncorrectable_ecc"), 2);
  EXPECT_EQ(verdict("memory.correctable_ecc"), 0);
  EXPECT_EQ(verdict("power.at_cap"), 2);
  EXPECT_EQ(verdict("overall"), 2);
  EXPECT_EQ(verdict("pcie.replays"), -1);
  EXPECT_EQ(find(page, "hipstack_gpu_health").size(), 6u);  // 5 checks + overall, no duplicates
  std::set<std::string> checks;
  for (const Sample& s : find(page, "hipstack_gpu_health")) {
    EXPECT_TRUE(checks.insert(s.labels.at("check")).second) << "duplicate series: " << s.line;
    EXPECT_EQ(s.labels.at("gpu"), "1");
  }
}

TEST(Health, UnknownIsExportedAsMinusOne) {
  SnapshotBuilder gpu(device(0));
  gpu.finding("thermal.temperature", smi::Verdict::unknown);
  const Page page = parse_page(render_metrics({gpu.view()}, kContext));
  EXPECT_EQ(value_of(page, "hipstack_gpu_health", {{"check", "thermal.temperature"}}), -1);
  EXPECT_EQ(value_of(page, "hipstack_gpu_health", {{"check", "overall"}}), -1);  // nothing evaluated
  EXPECT_NE(page.body.find("-1 unknown"), std::string::npos);  // the HELP says so
}

TEST(Render, PercentAndMillivoltsPrintExactly) {
  SnapshotBuilder gpu(device(0));
  gpu.live(real("gpu_busy", 57)).live(real("voltage_gfx", 707));
  const Page page = parse_page(render_metrics({gpu.view()}, kContext));
  EXPECT_NE(page.body.find("hipstack_gpu_gpu_busy_ratio{gpu=\"0\""), std::string::npos);
  for (const Sample& s : find(page, "hipstack_gpu_gpu_busy_ratio")) EXPECT_NE(s.line.find("} 0.57"), std::string::npos) << s.line;
  for (const Sample& s : find(page, "hipstack_gpu_voltage_gfx_volts")) EXPECT_NE(s.line.find("} 0.707"), std::string::npos) << s.line;
  EXPECT_EQ(page.body.find("0.5700000000000001"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Stale devices

TEST(Stale, StaleDeviceIsDownWithNoValues) {
  SnapshotBuilder ok(device(0));
  ok.live(real("temperature_edge", 40)).fact(text("marketing_name", "AMD Instinct MI300X"));
  ok.finding("thermal.temperature", smi::Verdict::pass).overall(smi::Verdict::pass);
  SnapshotBuilder stuck(device(1));
  stuck.live(real("temperature_edge", 90))
      .live(real("energy_consumed", 5))
      .fact(text("marketing_name", "AMD Instinct MI300X"))
      .finding("thermal.temperature", smi::Verdict::fail)
      .overall(smi::Verdict::fail);
  stuck.snap->live_at = Clock::now() - std::chrono::seconds(5);
  const Page page = parse_page(render_metrics({ok.view(false), stuck.view(true)}, kContext));
  EXPECT_EQ(value_of(page, "hipstack_gpu_up", {{"gpu", "0"}}), 1);
  EXPECT_EQ(value_of(page, "hipstack_gpu_up", {{"gpu", "1"}}), 0);
  // Its age keeps growing, so alerts can see how long it has been stuck...
  EXPECT_GE(value_of(page, "hipstack_gpu_sample_age_seconds", {{"gpu", "1"}}), 5);
  // ...but nothing else: no old value presented as current, no health verdict.
  for (const Sample& s : page.samples) {
    if (s.labels.count("gpu") && s.labels.at("gpu") == "1") {
      EXPECT_TRUE(s.name == "hipstack_gpu_up" || s.name == "hipstack_gpu_sample_age_seconds") << s.line;
    }
  }
  EXPECT_EQ(find(page, "hipstack_gpu_temperature_edge_celsius").size(), 1u);
  EXPECT_EQ(find(page, "hipstack_gpu_health", {{"gpu", "1"}}).size(), 0u);
  EXPECT_EQ(page.body.find("hipstack_gpu_energy_consumed_joules_total"), std::string::npos);
}

TEST(Stale, StaleDeviceWithoutAnyLiveSampleIsStillListed) {
  // A device that went stale during its first sample but whose identity is known.
  SnapshotBuilder stuck(device(2));
  stuck.snap->have_live = false;
  const Page page = parse_page(render_metrics({stuck.view(true)}, kContext));
  EXPECT_EQ(value_of(page, "hipstack_gpu_up", {{"gpu", "2"}, {"bdf", "0000:02:00.0"}}), 0);
  EXPECT_TRUE(find(page, "hipstack_gpu_sample_age_seconds").empty());
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// MetricsPage: the per-sample part is rendered once and reused, never past a new sample

TEST(MetricsPage, SameAsRenderMetricsAndFollowsNewSamples) {
  hipstack::smid::MetricsPage cache;
  SnapshotBuilder first(device(0));
  first.live(real("power_current", 100.0)).fact(integer("compute_units", 304)).overall(smi::Verdict::pass);
  const std::vector<Sampler::View> views{first.view()};
  const Page direct = parse_page(render_metrics(views, kContext));
  const Page cached = parse_page(cache.render(views, kContext));
  ASSERT_EQ(direct.samples.size(), cached.samples.size());
  for (std::size_t i = 0; i < direct.samples.size(); ++i) {
    if (direct.samples[i].name == "hipstack_smid_scrape_duration_seconds" ||
        direct.samples[i].name == "hipstack_gpu_sample_age_seconds") {
      continue;  // measured at each render
    }
    EXPECT_EQ(direct.samples[i].line, cached.samples[i].line);
  }
  EXPECT_DOUBLE_EQ(value_of(parse_page(cache.render(views, kContext)), "hipstack_gpu_power_current_watts", {{"gpu", "0"}}), 100.0);

  // A new snapshot (the next sample) replaces the cached part at once.
  SnapshotBuilder second(device(0));
  second.live(real("power_current", 250.0)).fact(integer("compute_units", 304)).overall(smi::Verdict::pass);
  const Page next = parse_page(cache.render({second.view()}, kContext));
  EXPECT_DOUBLE_EQ(value_of(next, "hipstack_gpu_power_current_watts", {{"gpu", "0"}}), 250.0);

  // A device going stale drops its values although its snapshot is the same.
  const Page stale = parse_page(cache.render({second.view(true)}, kContext));
  EXPECT_TRUE(find(stale, "hipstack_gpu_power_current_watts").empty());
  EXPECT_DOUBLE_EQ(value_of(stale, "hipstack_gpu_up", {{"gpu", "0"}}), 0.0);
  // ...and a different host label is not served from the cache of another.
  const Page other_host = parse_page(cache.render({second.view()}, {"node-b", "9.8.7"}));
  EXPECT_EQ(find(other_host, "hipstack_gpu_power_current_watts", {{"host", "node-b"}}).size(), 1u);
}

TEST(Render, PartitionReadingsCarryAPartitionLabel) {
  SnapshotBuilder gpu(device(0));
  for (std::uint32_t i = 0; i < 2; ++i) {
    smi::Partition p;
    p.index = i;
    p.id = "GPU-00000000/" + std::to_string(i);
    p.readings.push_back(integer("partition_compute_units", 38));
    p.readings.push_back(integer("partition_memory", 1LL << 34));
    gpu.slow->partitions.push_back(p);
  }
  const Page page = parse_page(render_metrics({gpu.view()}, kContext));
  EXPECT_EQ(find(page, "hipstack_gpu_partition_compute_units").size(), 2u);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_partition_compute_units", {{"gpu", "0"}, {"partition", "1"}}), 38);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_partition_memory_bytes", {{"partition", "0"}, {"host", "node-a"}}),
                   static_cast<double>(1LL << 34));
  // A stale GPU's partitions are not presented either.
  EXPECT_TRUE(find(parse_page(render_metrics({gpu.view(true)}, kContext)), "hipstack_gpu_partition_compute_units").empty());
}

// The daemon's own costs: a histogram per backend in Prometheus' form (cumulative buckets, +Inf equal
// to _count), the process collector's names; absent facts are no series.
TEST(Render, SelfMetrics) {
  using hipstack::smid::DurationHistogram;
  using hipstack::smid::ProcessFacts;
  DurationHistogram histogram;
  for (const double seconds : {0.0004, 0.0004, 0.003, 0.7, 9.0}) histogram.observe(seconds);
  ExpositionContext context = kContext;
  context.sample_durations = {{"nvml", histogram.counts()}};
  ProcessFacts facts;
  facts.resident_bytes = 1234567;
  facts.threads = 9;
  context.process = facts;
  hipstack::smid::MemoryFacts memory;
  memory.history_bytes = 4096;
  memory.history_limit_bytes = 16u << 20;
  memory.heap_in_use_bytes = 1000000;
  memory.heap_free_bytes = 20000;
  memory.sqlite_bytes = 300000;
  context.memory = memory;
  const std::string page = render_metrics({}, context);
  for (const char* line : {"hipstack_smid_history_bytes 4096\n", "hipstack_smid_history_limit_bytes 16777216\n",
                           "hipstack_smid_heap_bytes{state=\"in_use\"} 1000000\n", "hipstack_smid_heap_bytes{state=\"free\"} 20000\n",
                           "hipstack_smid_sqlite_bytes 300000\n", "# TYPE hipstack_smid_heap_bytes gauge\n"}) {
    EXPECT_NE(page.find(line), std::string::npos) << line;
  }
  for (const char* line : {"hipstack_smid_sample_duration_seconds_bucket{backend=\"nvml\",le=\"0.0005\"} 2\n",
                           "hipstack_smid_sample_duration_seconds_bucket{backend=\"nvml\",le=\"0.0025\"} 2\n",
                           "hipstack_smid_sample_duration_seconds_bucket{backend=\"nvml\",le=\"0.005\"} 3\n",
                           "hipstack_smid_sample_duration_seconds_bucket{backend=\"nvml\",le=\"1\"} 4\n",
                           "hipstack_smid_sample_duration_seconds_bucket{backend=\"nvml\",le=\"2.5\"} 4\n",
                           "hipstack_smid_sample_duration_seconds_bucket{backend=\"nvml\",le=\"+Inf\"} 5\n",
                           "hipstack_smid_sample_duration_seconds_count{backend=\"nvml\"} 5\n",
                           "# TYPE hipstack_smid_sample_duration_seconds histogram\n", "process_resident_memory_bytes 1234567\n",
                           "hipstack_smid_threads 9\n"}) {
    EXPECT_NE(page.find(line), std::string::npos) << line;
  }
  EXPECT_NE(page.find("hipstack_smid_sample_duration_seconds_sum{backend=\"nvml\"} 9.7038"), std::string::npos) << page;
  EXPECT_EQ(page.find("process_cpu_seconds_total"), std::string::npos) << "a fact not read is no series";
}
