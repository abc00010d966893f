#include <curl/curl.h>

#include "harness/cli/commands.h"

int main(int argc, char** argv) {
  curl_global_init(CURL_GLOBAL_DEFAULT);  // once, before any thread uses libcurl
  int code = harness::Main(argc, argv);
  curl_global_cleanup();
  return code;
}
