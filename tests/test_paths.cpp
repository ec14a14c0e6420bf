#include "test_paths.h"

namespace perfcast_test {

const char* source_dir() { return PERFCAST_TEST_SOURCE_DIR; }
const char* build_dir() { return PERFCAST_TEST_BUILD_DIR; }
const char* project_version() { return PERFCAST_TEST_PROJECT_VERSION; }
const char* cmake_command() { return PERFCAST_TEST_CMAKE; }
const char* perfcast_binary() { return PERFCAST_TEST_BINARY; }

}  // namespace perfcast_test
