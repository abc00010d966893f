#include <curl/curl.h>

#include "harness/cli/commands.h"
#include "harness/util/subprocess.h"

int main(int argc, char** argv) {
  curl_global_init(CURL_GLOBAL_DEFAULT);  // once, before any thread uses libcurl
  // What a server, exec-stack or bisect command leaves running re-parents to us, so it
  // ends with the program that started it (harness/util/subprocess.h).
  harness::BecomeChildSubreaper();
  int code = harness::Main(argc, argv);
  curl_global_cleanup();
  return code;
}
