// Where this build's sources, build tree, binary and CMake are, for the tests. Only test_paths.cpp is compiled with
// the paths (tests/CMakeLists.txt): no other test file's compile command holds an absolute path, so a compiler cache
// shares their objects between checkouts of the same commit in different folders.
#pragma once

namespace perfcast_test {

const char* source_dir();       // the repository root (data/, docs/, tests/data/)
const char* build_dir();        // this build tree
const char* project_version();  // CMake's PROJECT_VERSION
const char* cmake_command();    // the cmake that configured this build
const char* perfcast_binary();  // the perfcast executable of this build tree

}  // namespace perfcast_test

#define PERFCAST_SOURCE_DIR (::perfcast_test::source_dir())
#define PERFCAST_BUILD_DIR (::perfcast_test::build_dir())
#define PERFCAST_PROJECT_VERSION (::perfcast_test::project_version())
#define PERFCAST_CMAKE (::perfcast_test::cmake_command())
#define PERFCAST_BINARY (::perfcast_test::perfcast_binary())
