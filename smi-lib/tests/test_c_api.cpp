#include <gtest/gtest.h>
#include <hipstack/smi.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string capture(const char* name) { return std::string(HIPSTACK_CAPTURES_DIR) + "/" + name + "/sys"; }

TEST(CApi, OpenSampleAndFree) {
  const std::string root = capture("real/lact/rx6900xt");
  hipstack_smi_open_options options{root.c_str(), nullptr};
  hipstack_smi_system* system = nullptr;
  ASSERT_EQ(hipstack_smi_open(&options, &system), HIPSTACK_SMI_OK) << hipstack_smi_last_error();
  uint32_t count = 0;
  ASSERT_EQ(hipstack_smi_device_count(system, &count), HIPSTACK_SMI_OK);
  ASSERT_EQ(count, 1u);
  hipstack_smi_device_info info;
  ASSERT_EQ(hipstack_smi_device_get_info(system, 0, &info), HIPSTACK_SMI_OK);
  EXPECT_STREQ(info.bdf, "0000:0c:00.0");
  EXPECT_STREQ(info.vendor, "amd");
  uint32_t index = 99;
  EXPECT_EQ(hipstack_smi_device_resolve(system, "0c:00.0", &index), HIPSTACK_SMI_OK);
  EXPECT_EQ(index, 0u);
  EXPECT_EQ(hipstack_smi_device_resolve(system, info.uuid, &index), HIPSTACK_SMI_OK);

  hipstack_smi_sample* sample = nullptr;
  ASSERT_EQ(hipstack_smi_sample_device(system, 0, HIPSTACK_SMI_SAMPLE_LIVE | HIPSTACK_SMI_SAMPLE_IDENTITY, &sample),
            HIPSTACK_SMI_OK);
  bool saw_edge = false;
  bool saw_vbios = false;
  for (size_t i = 0; i < hipstack_smi_sample_size(sample); ++i) {
    const hipstack_smi_reading* r = hipstack_smi_sample_reading(sample, i);
    ASSERT_NE(r, nullptr);
    ASSERT_NE(r->detail, nullptr);
    if (r->metric_id == HIPSTACK_SMI_METRIC_temperature_edge) {
      saw_edge = true;
      EXPECT_EQ(r->status, HIPSTACK_SMI_STATUS_OK);
      EXPECT_EQ(r->type, HIPSTACK_SMI_TYPE_REAL);
      EXPECT_DOUBLE_EQ(r->real, 56.0);
    }
    if (r->metric_id == HIPSTACK_SMI_METRIC_vbios_version) {
      saw_vbios = true;
      EXPECT_STREQ(r->text, "113-D4121EXT-CO1");
    }
  }
  EXPECT_TRUE(saw_edge);
  EXPECT_TRUE(saw_vbios);
  EXPECT_EQ(hipstack_smi_sample_reading(sample, hipstack_smi_sample_size(sample)), nullptr);
  hipstack_smi_sample_free(sample);
  hipstack_smi_close(system);
}

TEST(CApi, ErrorsAreCodesWithMessages) {
  hipstack_smi_system* system = nullptr;
  hipstack_smi_open_options bad{"/nonexistent/sys", nullptr};
  EXPECT_EQ(hipstack_smi_open(&bad, &system), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(system, nullptr);
  EXPECT_NE(std::string(hipstack_smi_last_error()).find("/nonexistent/sys"), std::string::npos);
  EXPECT_EQ(hipstack_smi_open(nullptr, nullptr), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);

  const std::string root = capture("real/lact/rx6900xt");
  hipstack_smi_open_options options{root.c_str(), nullptr};
  ASSERT_EQ(hipstack_smi_open(&options, &system), HIPSTACK_SMI_OK);
  hipstack_smi_sample* sample = nullptr;
  EXPECT_EQ(hipstack_smi_sample_device(system, 7, HIPSTACK_SMI_SAMPLE_LIVE, &sample), HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE);
  EXPECT_EQ(sample, nullptr);
  uint32_t index = 0;
  EXPECT_EQ(hipstack_smi_device_resolve(system, "ff:00.0", &index), HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE);
  EXPECT_EQ(hipstack_smi_device_resolve(system, "", &index), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipstack_smi_device_resolve(system, nullptr, &index), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  hipstack_smi_device_info info;
  EXPECT_EQ(hipstack_smi_device_get_info(system, 1, &info), HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE);
  EXPECT_STREQ(hipstack_smi_result_string(HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE), "no such device");
  hipstack_smi_close(system);
  hipstack_smi_close(nullptr);
  hipstack_smi_sample_free(nullptr);
}

TEST(CApi, OneSystemFromManyThreads) {
  const std::string root = capture("real/lact/phoenix");
  hipstack_smi_open_options options{root.c_str(), nullptr};
  hipstack_smi_system* system = nullptr;
  ASSERT_EQ(hipstack_smi_open(&options, &system), HIPSTACK_SMI_OK);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([system, t, &failures] {
      for (int i = 0; i < 50; ++i) {
        hipstack_smi_sample* sample = nullptr;
        if (hipstack_smi_sample_device(system, 0, HIPSTACK_SMI_SAMPLE_LIVE, &sample) != HIPSTACK_SMI_OK ||
            hipstack_smi_sample_size(sample) == 0) {
          ++failures[static_cast<size_t>(t)];
        }
        hipstack_smi_sample_free(sample);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const int f : failures) EXPECT_EQ(f, 0);
  hipstack_smi_close(system);
}

}  // namespace
