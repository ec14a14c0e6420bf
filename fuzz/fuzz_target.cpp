// One libFuzzer target per reader (fuzz/CMakeLists.txt compiles this file once per name in
// perfcast::fuzz::targets(), with PERFCAST_FUZZ_TARGET set). Each input is written to a file, because the readers
// take paths, and read through fuzz::read_as: an InputError is the expected answer to bad input; any other
// exception, a sanitizer report, a crash, a hang or running out of memory is a finding.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/data_files.h"
#include "fuzz/fuzz_readers.h"

#ifndef PERFCAST_FUZZ_TARGET
#error "PERFCAST_FUZZ_TARGET names the reader (fuzz/CMakeLists.txt)"
#endif

namespace {

std::filesystem::path input_file() {
  static const std::filesystem::path file = [] {
    std::string dir = (std::filesystem::temp_directory_path() / "perfcast-fuzz-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) abort();
    return std::filesystem::path(dir) / ("input" + perfcast::fuzz::extension(PERFCAST_FUZZ_TARGET));
  }();
  return file;
}

}  // namespace

// A target that cannot find perfcast's data directory would answer every model input with the same InputError
// and fuzz nothing (a copied binary without $PERFCAST_DATA did exactly that, at 170 edges of coverage): refuse to
// start instead.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  try {
    (void)perfcast::data_catalog_date();
  } catch (const perfcast::InputError& e) {
    std::fprintf(stderr, "fuzz target cannot start: %s\n", e.what());
    abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = input_file();
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    perfcast::fuzz::read_as(PERFCAST_FUZZ_TARGET, file);
  } catch (const perfcast::InputError&) {
    // The expected answer to bad input (exit code 2 in the CLI).
  }
  return 0;
}
