#include "runners/openai/curl_global.h"

#include <mutex>

#include <curl/curl.h>

namespace harness::openai {

void CurlGlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace harness::openai
