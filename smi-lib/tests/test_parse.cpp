// Unit tests of the sysfs and procfs parsers, malformed input included.
#include <gtest/gtest.h>

#include <hipstack/smi.hpp>

#include "backends/cpu_affinity.hpp"
#include "parse.hpp"

namespace hipstack::smi::detail {
namespace {

// The one PCI-address rule of the library and its tools (hipstack-validate matches the runtime's
// devices to the SMI's GPUs with it).
TEST(NormaliseBdf, EveryFormAGpuIsNamedInBecomesOne) {
  EXPECT_EQ(normalise_bdf("0000:c1:00.0"), "0000:c1:00.0");
  EXPECT_EQ(normalise_bdf("0000:C1:00.0\n"), "0000:c1:00.0");    // sysfs text
  EXPECT_EQ(normalise_bdf("00000000:C1:00.0"), "0000:c1:00.0");  // NVML, CUDA: 8-digit domain
  EXPECT_EQ(normalise_bdf("c1:00.0"), "0000:c1:00.0");           // no domain
  EXPECT_EQ(normalise_bdf("0001:c1:00.1"), "0001:c1:00.1");
  EXPECT_EQ(normalise_bdf(""), "");
}

TEST(ParseNumbers, IntegersHexAndReals) {
  EXPECT_EQ(parse_int("42\n"), 42);
  EXPECT_EQ(parse_int("-273150"), -273150);
  EXPECT_FALSE(parse_int("12abc"));
  EXPECT_FALSE(parse_int(""));
  EXPECT_EQ(parse_uint("18446744073709551615"), 18446744073709551615ULL);
  EXPECT_FALSE(parse_uint("18446744073709551616"));  // overflow is an error, not a wrap
  EXPECT_EQ(parse_hex("0x1002"), 0x1002u);
  EXPECT_EQ(parse_hex("946d7e1ef9b172dd"), 0x946d7e1ef9b172ddULL);
  EXPECT_FALSE(parse_hex("0x"));
  EXPECT_DOUBLE_EQ(*parse_real("16.0"), 16.0);
  EXPECT_FALSE(parse_real("nan"));
  EXPECT_FALSE(parse_real("inf"));
}

TEST(ParseLinkSpeed, KernelFormats) {
  EXPECT_DOUBLE_EQ(*parse_link_speed("16.0 GT/s PCIe"), 16.0);
  EXPECT_DOUBLE_EQ(*parse_link_speed("2.5 GT/s"), 2.5);
  EXPECT_DOUBLE_EQ(*parse_link_speed("8.0GT/s"), 8.0);
  EXPECT_FALSE(parse_link_speed("Unknown"));
  EXPECT_FALSE(parse_link_speed("16.0 MHz"));
}

TEST(ParseDpm, CurrentLevelAndTrailingSpaces) {
  // lact/rx6900xt pp_dpm_mclk: non-current lines end with a space.
  const DpmTable t = parse_dpm_levels("0: 96Mhz \n1: 456Mhz \n2: 673Mhz \n3: 1000Mhz *\n");
  ASSERT_TRUE(t.error.empty()) << t.error;
  ASSERT_EQ(t.levels.size(), 4u);
  EXPECT_DOUBLE_EQ(t.levels[3].mhz, 1000);
  EXPECT_TRUE(t.levels[3].current);
  EXPECT_FALSE(t.levels[0].current);
}

TEST(ParseDpm, DeepSleepLine) {
  const DpmTable t = parse_dpm_levels("S: 19Mhz *\n0: 500Mhz\n1: 2100Mhz\n");
  ASSERT_TRUE(t.error.empty()) << t.error;
  ASSERT_EQ(t.levels.size(), 3u);
  EXPECT_EQ(t.levels[0].index, -1);
  EXPECT_TRUE(t.levels[0].current);
}

TEST(ParseDpm, FineGrainedMinCurrentMax) {
  // lact/rx7900xtx pp_dpm_sclk: the starred middle line is the current clock, below min.
  const DpmTable t = parse_dpm_levels("0: 500Mhz\n1: 31Mhz *\n2: 2219Mhz\n");
  ASSERT_TRUE(t.error.empty());
  ASSERT_EQ(t.levels.size(), 3u);
  EXPECT_EQ(t.levels[0].index, 0);
  EXPECT_DOUBLE_EQ(t.levels[1].mhz, 2219);
  EXPECT_EQ(t.levels[1].index, 2);  // the number sysfs printed, not renumbered
  EXPECT_EQ(t.levels[2].index, -2);
  EXPECT_DOUBLE_EQ(t.levels[2].mhz, 31);
  EXPECT_TRUE(t.levels[2].current);
}

TEST(ParseDpm, TwoStarredLinesKeepBoth) {
  // amdgpu-sysfs-rs/rx6950xt and lact/rx6900xt fclk: "0: 0Mhz *" twice.
  const DpmTable t = parse_dpm_levels("0: 0Mhz *\n1: 0Mhz *\n");
  ASSERT_TRUE(t.error.empty());
  ASSERT_EQ(t.levels.size(), 2u);
  EXPECT_TRUE(t.levels[0].current && t.levels[1].current);
}

TEST(ParseDpm, MalformedLinesNameTheLine) {
  EXPECT_NE(parse_dpm_levels("0: fastMhz\n").error.find("0: fastMhz"), std::string::npos);
  EXPECT_FALSE(parse_dpm_levels("garbage").error.empty());
  EXPECT_FALSE(parse_dpm_levels("x: 100Mhz").error.empty());
  EXPECT_FALSE(parse_dpm_levels("0: 100GHz").error.empty());
  EXPECT_TRUE(parse_dpm_levels("").levels.empty());
}

TEST(ParsePcie, VegaAndRdna3Formats) {
  const PcieTable vega = parse_pcie_levels("0: 2.5GT/s, x8 \n1: 8.0GT/s, x16 *\n");
  ASSERT_TRUE(vega.error.empty()) << vega.error;
  ASSERT_EQ(vega.levels.size(), 2u);
  EXPECT_DOUBLE_EQ(vega.levels[1].gts, 8.0);
  EXPECT_EQ(vega.levels[1].width, 16);
  EXPECT_TRUE(vega.levels[1].current);
  EXPECT_EQ(vega.levels[0].text, "2.5GT/s, x8");
  const PcieTable rdna3 = parse_pcie_levels("0: 16.0GT/s, x16 78Mhz *\n1: 16.0GT/s, x16 156Mhz *\n");
  ASSERT_TRUE(rdna3.error.empty());
  EXPECT_EQ(rdna3.levels[0].text, "16.0GT/s, x16 78Mhz");
  EXPECT_FALSE(parse_pcie_levels("0: fast").error.empty());
}

TEST(ParsePowerProfile, ActiveRowInEachLayout) {
  const char* polaris =
      "NUM        MODE_NAME     SCLK_UP_HYST\n  0   BOOTUP_DEFAULT:        -\n  1 3D_FULL_SCREEN *:        0\n";
  EXPECT_EQ(parse_active_power_profile(polaris), "3D_FULL_SCREEN");
  const char* vega = "NUM        MODE_NAME BUSY_SET_POINT\n  0 BOOTUP_DEFAULT*:             70\n  5        COMPUTE :   30\n";
  EXPECT_EQ(parse_active_power_profile(vega), "BOOTUP_DEFAULT");
  const char* rdna3 =
      "PROFILE_INDEX(NAME) CLOCK_TYPE(NAME) FPS\n 0 BOOTUP_DEFAULT :\n                    0(       GFXCLK)       0\n"
      " 5        COMPUTE*:\n                    0(       GFXCLK)       0\n";
  EXPECT_EQ(parse_active_power_profile(rdna3), "COMPUTE");
  EXPECT_FALSE(parse_active_power_profile("NUM MODE_NAME\n 0 BOOTUP_DEFAULT:\n"));
}

TEST(ParseKeyValues, KfdUeventFdinfo) {
  const KeyValues kfd = parse_key_values("simd_count 152\nlocation_id 1280\n", ' ');
  EXPECT_EQ(find_value(kfd, "location_id"), "1280");
  const KeyValues uevent = parse_key_values("DRIVER=amdgpu\nPCI_ID=1002:744C\n", '=');
  EXPECT_EQ(find_value(uevent, "PCI_ID"), "1002:744C");
  const KeyValues fdinfo = parse_key_values("drm-memory-gtt: \t8192 KiB\ndrm-pdev:\t0000:08:00.0\n", ':');
  EXPECT_EQ(find_value(fdinfo, "drm-memory-gtt"), "8192 KiB");
  EXPECT_EQ(find_value(fdinfo, "drm-pdev"), "0000:08:00.0");  // only the first ':' separates
  EXPECT_FALSE(find_value(fdinfo, "absent"));
}

TEST(PrintableText, ValidUtf8StaysControlsAndBadBytesBecomeHex) {
  EXPECT_EQ(printable_text("AMD Radeon RX 7900 XTX"), "AMD Radeon RX 7900 XTX");
  EXPECT_TRUE(is_printable_text("Grafikkarte \xc3\xa4\xe2\x82\xac\xf0\x9f\x98\x80"));  // ä € 😀
  EXPECT_EQ(printable_text("Grafikkarte \xc3\xa4"), "Grafikkarte \xc3\xa4");
  EXPECT_EQ(printable_text("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");          // ANSI escape
  EXPECT_EQ(printable_text(std::string("a\0b\tc\nd\x7f", 8)), "a\\x00b\\x09c\\x0ad\\x7f");
  EXPECT_EQ(printable_text("\xff\xfe" "abc"), "\\xff\\xfeabc");                     // not UTF-8
  EXPECT_EQ(printable_text("\xc3"), "\\xc3");                                       // cut short
  EXPECT_EQ(printable_text("\xc0\xaf"), "\\xc0\\xaf");                              // overlong '/'
  EXPECT_EQ(printable_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");                     // UTF-16 surrogate
  EXPECT_EQ(printable_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");            // above U+10FFFF
  EXPECT_EQ(printable_text("\xc2\x9b" "2J"), "\\xc2\\x9b2J");                       // C1 CSI
  // Bidirectional overrides and isolates reorder what a terminal shows: "FAIL" behind U+202E.
  EXPECT_EQ(printable_text("\xe2\x80\xae" "LIAF"), "\\xe2\\x80\\xaeLIAF");
  EXPECT_EQ(printable_text("a\xe2\x81\xa6" "b\xe2\x81\xa9"), "a\\xe2\\x81\\xa6b\\xe2\\x81\\xa9");
  EXPECT_EQ(printable_text("\xe2\x80\xa9\xe2\x80\xaf"), "\xe2\x80\xa9\xe2\x80\xaf");  // U+2029, U+202F: not overrides
  EXPECT_EQ(printable_text("C:\\x41"), "C:\\\\x41");  // a literal backslash cannot pose as an escape
  EXPECT_FALSE(is_printable_text("\\"));
  EXPECT_TRUE(is_printable_text(""));
  // holds_raw_bytes: what printable_text would escape, a backslash aside.
  EXPECT_FALSE(holds_raw_bytes("C:\\x41 \xc3\xa4"));
  EXPECT_FALSE(holds_raw_bytes(""));
  for (const char* raw : {"\x1b[2J", "a\nb", "\xff", "\xc2\x9b", "\xe2\x80\xae", "\xe2\x82", "\x7f"}) EXPECT_TRUE(holds_raw_bytes(raw)) << raw;
  // Every byte comes out as valid UTF-8 without controls (backslashes aside, which it adds).
  for (int c = 0; c < 256; ++c) {
    std::string out = printable_text(std::string(1, static_cast<char>(c)) + "\xe2\x82");
    std::erase(out, '\\');
    EXPECT_TRUE(is_printable_text(out)) << c << ": " << out;
  }
}

TEST(GfxTarget, FromKfdVersion) {
  EXPECT_EQ(gfx_target_name(90402), "gfx942");
  EXPECT_EQ(gfx_target_name(90010), "gfx90a");
  EXPECT_EQ(gfx_target_name(110003), "gfx1103");
  EXPECT_EQ(gfx_target_name(100300), "gfx1030");
}

// local_cpulist: numbers and ranges only; anything else is malformed, never passed on as text.
TEST(CpuList, KernelListsOnly) {
  EXPECT_EQ(parse_cpu_list("0-47,96-143\n"), "0-47,96-143");
  EXPECT_EQ(parse_cpu_list("5"), "5");
  for (const char* bad : {"", "\n", "0-", "-1", ",1", "1,,2", "0-3 4", "0x1", "\x1b[31m0"}) {
    EXPECT_EQ(parse_cpu_list(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(parse_cpu_list(std::string(5000, '1')), std::nullopt);  // bounded
}

}  // namespace
}  // namespace hipstack::smi::detail
