// Unit tests of the root-prefixed file view: bounded reads, links, hostile trees.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>

#include <hipstack/info.hpp>

#include "fs_view.hpp"
#include "roots.hpp"

namespace hipstack::smi::detail {
namespace {

namespace fs = std::filesystem;

class TempTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("hipstack-fs-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const fs::path& relative, std::string_view bytes) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative, std::ios::binary) << bytes;
  }
  fs::path root_;
};

TEST_F(TempTree, TrimsNulPaddingAndWhitespace) {
  std::string padded = "edge\n";
  padded.resize(4096, '\0');
  write("sys/a/label", padded);
  write("sys/a/empty", "");
  const RootedFs view((root_ / "sys").string(), "", "");
  EXPECT_EQ(view.read_text("/sys/a/label").text, "edge");
  const FileText empty = view.read_text("/sys/a/empty");
  EXPECT_TRUE(empty.ok());
  EXPECT_EQ(empty.text, "");
  EXPECT_EQ(view.read_text("/sys/a/missing").error, ENOENT);
}

TEST_F(TempTree, BinaryReadsKeepEveryByteUpToTheLimit) {
  write("sys/blob", std::string("\x04\x00\x01\x02\xff", 5));
  const RootedFs view((root_ / "sys").string(), "", "");
  EXPECT_EQ(view.read_bytes("/sys/blob", 100).bytes.size(), 5u);
  EXPECT_EQ(view.read_bytes("/sys/blob", 3).bytes.size(), 3u);
}

TEST_F(TempTree, MapsEachRootSeparately) {
  const RootedFs view("/x/sys/", "/y/proc", "");
  EXPECT_EQ(view.host_path("/sys/class/drm"), "/x/sys/class/drm");
  EXPECT_EQ(view.host_path("/sys"), "/x/sys");
  EXPECT_EQ(view.host_path("/proc/1/comm"), "/y/proc/1/comm");
  EXPECT_EQ(view.host_path("/system/x"), "/system/x");  // a prefix, not a path component
  EXPECT_EQ(view.host_path("/dev/dri"), "/dev/dri");
}

TEST_F(TempTree, LiveLayoutSymlinksResolveInsideTheRoot) {
  write("sys/devices/pci0000:00/0000:03:00.0/vendor", "0x1002\n");
  fs::create_directories(root_ / "sys/devices/pci0000:00/0000:03:00.0/drm/card0");
  fs::create_directories(root_ / "sys/class/drm");
  fs::create_directory_symlink("../../devices/pci0000:00/0000:03:00.0/drm/card0", root_ / "sys/class/drm/card0");
  fs::create_directory_symlink("../../../0000:03:00.0", root_ / "sys/devices/pci0000:00/0000:03:00.0/drm/card0/device");
  const RootedFs view((root_ / "sys").string(), "", "");
  EXPECT_EQ(view.link_target("/sys/class/drm/card0"), "/sys/devices/pci0000:00/0000:03:00.0/drm/card0");
  EXPECT_EQ(view.link_target("/sys/class/drm/card0/device"), "/sys/devices/pci0000:00/0000:03:00.0");
  EXPECT_EQ(view.read_text("/sys/class/drm/card0/device/vendor").text, "0x1002");
  EXPECT_EQ(view.link_target("/sys/devices"), "");  // not a link
  EXPECT_EQ(view.list("/sys/class/drm"), std::vector<std::string>{"card0"});
  EXPECT_TRUE(view.list("/sys/absent").empty());
}

// One rule for System::open and hipstack/info.hpp: a capture's proc/ and dev/ sit beside its sys/.
TEST_F(TempTree, RootsOfACaptureAreItsSiblings) {
  fs::create_directories(root_ / "sys");
  OpenOptions options;
  options.sysfs_root = (root_ / "sys").string() + "/";
  const Roots roots = resolve_roots(options);
  EXPECT_TRUE(roots.capture);
  EXPECT_FALSE(roots.dev_given);
  EXPECT_EQ(roots.proc, root_.string() + "/proc");
  EXPECT_EQ(roots.dev, root_.string() + "/dev");
  options.devfs_root = root_.string();
  EXPECT_TRUE(resolve_roots(options).dev_given);
  EXPECT_EQ(resolve_roots(OpenOptions{}).sys, ::getenv("HIPSTACK_SYSFS_ROOT") ? ::getenv("HIPSTACK_SYSFS_ROOT") : "");
}

TEST_F(TempTree, ARootThatIsNotAFolderIsNamedByEveryEntryPoint) {
  write("file", "x");
  OpenOptions options;
  options.devfs_root = (root_ / "file").string();
  const std::string expected = "devfs root " + options.devfs_root + " is not a directory";
  for (const auto& open : {std::function<void()>([&] { (void)System::open(options); }),
                           std::function<void()>([&] { (void)read_agents(options); })}) {
    try {
      open();
      ADD_FAILURE() << "no error for " << options.devfs_root;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Error::Code::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

TEST(TrimSysfsText, Cases) {
  EXPECT_EQ(trim_sysfs_text(std::string_view("  auto \n\0\0\0", 11)), "auto");
  EXPECT_EQ(trim_sysfs_text(std::string_view("\0abc", 4)), "");
  EXPECT_EQ(trim_sysfs_text("\n\n"), "");
}

}  // namespace
}  // namespace hipstack::smi::detail
