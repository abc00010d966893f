// Two error channels: Result<T> for errors a caller can handle, FatalError for the
// ones that go straight to the single top-level handler in harness::Main
// (harness/cli/commands.cc).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace harness {

// The harness's exit codes (docs/cli.md, "Exit codes"). The command `harness bisect` runs per
// commit answers in git bisect run's codes instead (0 good, 125 skip, other codes below 128 bad).
enum class ExitCode : int {
  kPass = 0,     // every test and gate passed
  kFail = 1,     // a test or gate failed
  kUsage = 2,    // usage or input error
  kInfra = 3,    // endpoint unreachable, database unwritable, too many request errors
};

struct Error {
  ExitCode code = ExitCode::kUsage;
  std::string message;
};

inline Error UsageError(std::string message) { return {ExitCode::kUsage, std::move(message)}; }
inline Error InfraError(std::string message) { return {ExitCode::kInfra, std::move(message)}; }

// A value or an Error. Deliberately small: ok(), value(), error(), and operator bool.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}      // NOLINT: implicit by design
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
struct Ok {};
using Status = Result<Ok>;
inline Status OkStatus() { return Ok{}; }

// Thrown for errors nobody below harness::Main can handle; it prints "harness: error: ..."
// and exits with code.
class FatalError : public std::runtime_error {
 public:
  FatalError(ExitCode code, const std::string& message)
      : std::runtime_error(message), code_(code), message_(message) {}
  explicit FatalError(const Error& e) : std::runtime_error(e.message), code_(e.code), message_(e.message) {}
  ExitCode code() const { return code_; }
  // The whole message: what() ends at its first NUL byte, this does not.
  const std::string& message() const { return message_; }

 private:
  ExitCode code_;
  std::string message_;
};

// Unwraps a Result or throws it as fatal.
template <class T>
T ValueOrThrow(Result<T> r) {
  if (!r.ok()) throw FatalError(r.error());
  return std::move(r).value();
}

}  // namespace harness
