// SHA-256 (FIPS 180-4) for capture manifests: a capture records each file's digest so a copy can
// be checked (hipstack::smi::capture writes them; tests and users compare with sha256sum).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace hipstack::smi::detail {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  std::string hex();  // finishes: the digest as 64 lowercase hex digits

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> state_{};
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes so far
};

std::string sha256_hex(std::string_view data);

}  // namespace hipstack::smi::detail
