// libcurl's process-wide setup, done once by whichever of this library's entry points
// (the client, HttpGet) first needs it, so that no caller of the library has to.
#pragma once

namespace harness::openai {

// curl_global_init, once per process (thread-safe).
void CurlGlobalInitOnce();

}  // namespace harness::openai
