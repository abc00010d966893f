// A real one-node Slurm cluster for tests (Debian's slurm-wlm and munge, installed by
// ci/setup.sh): munged, slurmctld and slurmd started as the current user (root in CI) in a
// temporary folder of their own, with their own ports, state, logs and munge key, so nothing
// outside the folder is touched and two clusters can run side by side. SLURM_CONF is set in
// this process while the cluster lives, so srun, sbatch, squeue, scontrol and scancel (ours
// and those of the harness binary a test starts) talk to it. The destructor cancels every
// job, stops the daemons (SIGTERM, then SIGKILL) and removes the folder.
//
// The node declares 4 CPUs whatever the machine has (SlurmdParameters=config_overrides), so
// steps of a --jobs test run side by side on a 2-core machine, and 2 GPUs as GRES backed by
// /dev/null and /dev/zero, so `--gres=gpu:1` is granted and sets CUDA_VISIBLE_DEVICES as on a
// GPU node.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/util/host.h"
#include "harness/util/subprocess.h"

namespace harness::testing_util {

class SlurmCluster {
 public:
  static constexpr const char* kNode = "harness-node";
  static constexpr const char* kPartition = "harness";

  // The cluster, ready (its node idle), or nullptr with *why saying what failed (a daemon's
  // log tail included).
  static std::unique_ptr<SlurmCluster> Start(std::string* why) {
    std::unique_ptr<SlurmCluster> c(new SlurmCluster());
    std::string tmpl = (std::filesystem::temp_directory_path() / "harness-slurm-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) return Fail(why, "mkdtemp failed");
    c->dir_ = tmpl;
    if (!c->WriteFiles(why) || !c->StartDaemons(why) || !c->WaitIdle(why)) return nullptr;
    return c;
  }

  ~SlurmCluster() {
    if (!conf_.empty()) {
      Run({"scancel", "--full", "--partition", kPartition});
      for (const char* pid_file : {"slurmd.pid", "slurmctld.pid"}) StopDaemon(dir_ / pid_file);
      StopDaemon(dir_ / "munge" / "munged.pid");
      if (previous_conf_) setenv("SLURM_CONF", previous_conf_->c_str(), 1);
      else unsetenv("SLURM_CONF");
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& conf() const { return conf_; }

  // `squeue` lines "ID NAME STATE" of every job the controller has queued or running.
  std::vector<std::string> Queue() const {
    std::vector<std::string> lines;
    auto r = Run({"squeue", "--noheader", "--format=%i %j %T"});
    std::istringstream in(r ? r->out : "");
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) lines.push_back(line);
    return lines;
  }

  // The controller's and the node daemon's log tails, for a failure message.
  std::string Logs() const {
    std::string text;
    for (const char* log : {"slurmctld.log", "slurmd.log"}) {
      std::ifstream in(dir_ / log);
      std::stringstream s;
      s << in.rdbuf();
      text += std::string("--- ") + log + "\n" + OutputTail(s.str(), 2000) + "\n";
    }
    return text;
  }

 private:
  SlurmCluster() = default;

  static std::unique_ptr<SlurmCluster> Fail(std::string* why, const std::string& what) {
    *why = what;
    return nullptr;
  }

  static std::optional<ProcessResult> Run(const std::vector<std::string>& argv, double timeout_s = 30) {
    ProcessOptions o;
    o.timeout_s = timeout_s;
    auto r = RunProcess(argv, o);
    if (!r.ok()) return std::nullopt;
    return *r;
  }

  static int FreePort() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = ntohs(a.sin_port);
    close(fd);
    return port;
  }

  bool WriteFiles(std::string* why) {
    std::filesystem::create_directories(dir_ / "munge");
    std::filesystem::create_directories(dir_ / "state");
    std::filesystem::create_directories(dir_ / "spool");
    std::filesystem::permissions(dir_ / "munge", std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace);
    {
      std::ofstream key(dir_ / "munge" / "munge.key", std::ios::binary);
      std::ifstream random("/dev/urandom", std::ios::binary);
      std::string bytes(1024, '\0');
      random.read(bytes.data(), bytes.size());
      key << bytes;
    }
    std::filesystem::permissions(dir_ / "munge" / "munge.key",
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::replace);
    int ctld_port = FreePort(), slurmd_port = FreePort();
    if (ctld_port < 0 || slurmd_port < 0 || ctld_port == slurmd_port) {
      *why = "no free loopback ports";
      return false;
    }
    const std::string d = dir_.string();
    std::ofstream conf(dir_ / "slurm.conf");
    conf << "ClusterName=harness-test\n"
         << "SlurmctldHost=" << Hostname() << "(127.0.0.1)\n"
         << "SlurmctldPort=" << ctld_port << "\nSlurmdPort=" << slurmd_port << "\n"
         << "SlurmUser=" << User() << "\nSlurmdUser=" << User() << "\n"
         << "AuthType=auth/munge\nCredType=cred/munge\n"
         << "AuthInfo=socket=" << d << "/munge/munge.sock\n"
         << "StateSaveLocation=" << d << "/state\nSlurmdSpoolDir=" << d << "/spool\n"
         << "SlurmctldPidFile=" << d << "/slurmctld.pid\nSlurmdPidFile=" << d << "/slurmd.pid\n"
         << "SlurmctldLogFile=" << d << "/slurmctld.log\nSlurmdLogFile=" << d << "/slurmd.log\n"
         << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
         << "SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
         << "MpiDefault=none\nSwitchType=switch/none\nJobAcctGatherType=jobacct_gather/none\n"
         << "AccountingStorageType=accounting_storage/none\nReturnToService=2\n"
         << "SlurmdParameters=config_overrides\nGresTypes=gpu\nKillWait=2\nMinJobAge=600\n"
         << "NodeName=" << kNode << " NodeHostname=" << Hostname()
         << " NodeAddr=127.0.0.1 CPUs=4 Gres=gpu:2 State=UNKNOWN\n"
         << "PartitionName=" << kPartition << " Nodes=" << kNode
         << " Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES\n";
    std::ofstream gres(dir_ / "gres.conf");
    gres << "NodeName=" << kNode << " Name=gpu File=/dev/null\n"
         << "NodeName=" << kNode << " Name=gpu File=/dev/zero\n";
    conf_ = dir_ / "slurm.conf";
    if (const char* old = std::getenv("SLURM_CONF")) previous_conf_ = old;
    setenv("SLURM_CONF", conf_.c_str(), 1);
    return static_cast<bool>(conf && gres);
  }

  static std::string User() {
    auto r = Run({"id", "-un"});
    std::string u = r ? r->out : "root";
    while (!u.empty() && (u.back() == '\n' || u.back() == '\r')) u.pop_back();
    return u;
  }

  bool StartDaemons(std::string* why) {
    const std::string d = dir_.string();
    const std::vector<std::vector<std::string>> daemons = {
        {"/usr/sbin/munged", "--force", "--socket=" + d + "/munge/munge.sock",
         "--key-file=" + d + "/munge/munge.key", "--log-file=" + d + "/munge/munged.log",
         "--pid-file=" + d + "/munge/munged.pid", "--seed-file=" + d + "/munge/munged.seed"},
        {"/usr/sbin/slurmctld", "-f", conf_.string()},
        {"/usr/sbin/slurmd", "-f", conf_.string(), "-N", kNode},
    };
    for (const auto& argv : daemons) {
      auto r = Run(argv);
      if (!r || r->exit_code != 0) {
        *why = argv[0] + " did not start (install slurm-wlm and munge: ci/setup.sh): " +
               (r ? OutputTail(r->err, 1000) : std::string("could not run it")) + "\n" + Logs();
        return false;
      }
    }
    return true;
  }

  bool WaitIdle(std::string* why) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::string state;
    while (std::chrono::steady_clock::now() < deadline) {
      auto r = Run({"sinfo", "--noheader", "--format=%T"}, 5);
      state = r ? r->out : "";
      if (state.rfind("idle", 0) == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    *why = "the Slurm node did not become idle within 30 s (last state: " + state + ")\n" + Logs();
    return false;
  }

  static void StopDaemon(const std::filesystem::path& pid_file) {
    std::ifstream in(pid_file);
    pid_t pid = 0;
    if (!(in >> pid) || pid <= 1) return;
    kill(pid, SIGTERM);
    for (int i = 0; i < 50 && kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kill(pid, SIGKILL);
  }

  std::filesystem::path dir_;
  std::filesystem::path conf_;
  std::optional<std::string> previous_conf_;
};

}  // namespace harness::testing_util
