//===- Server.cpp - cleave-serve: the command and its accept loop --------===//
//
// Part of Cleave's runtime (no LLVM). The server owns the devices of its
// CLEAVE_DEVICES through its own runtime; each connection is a Session on
// a thread of its own (docs/serve.md). Start, stop and status are one
// command each.
//
//===----------------------------------------------------------------------===//
#include "Session.h"

#include "Client.h"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace cleave {
namespace rt {
namespace serve {

using namespace api;

namespace {

const char *Usage =
    "usage: cleave-serve --socket PATH [--daemon] [--log FILE]\n"
    "       cleave-serve --stop --socket PATH\n"
    "       cleave-serve --status --socket PATH\n"
    "\n"
    "Runs the devices of CLEAVE_DEVICES for every program started with\n"
    "CLEAVE_SERVER=PATH: their launches go through this one runtime and its\n"
    "co-scheduler (docs/serve.md).\n"
    "  --socket PATH  the Unix socket to listen on (or of the server to ask)\n"
    "  --daemon       return once the server listens, leaving it running\n"
    "  --log FILE     with --daemon: where its messages go (else nowhere)\n"
    "  --any-user     serve every user who can open the socket, not only\n"
    "                 this user and root (their CPU code runs in this\n"
    "                 process, as this user: docs/serve.md)\n"
    "  --stop         stop the server at PATH; returns when it has exited\n"
    "  --status       print the server's clients and what each holds\n";

/// The sessions alive, for Status requests and the stop.
struct Registry {
  std::mutex Mutex;
  std::condition_variable Done;
  std::map<int, Session *> Sessions;
};

Registry &registry() {
  static Registry *R = new Registry;
  return *R;
}

int StopPipe[2] = {-1, -1};

void requestStop() {
  char C = 's';
  if (StopPipe[1] >= 0)
    (void)!::write(StopPipe[1], &C, 1);
}

struct Args {
  std::string Socket, Log;
  bool Daemon = false, Stop = false, Status = false, Help = false;
  bool AnyUser = false;
};

bool parse(int Argc, char **Argv, Args &A, std::string &Why) {
  for (int I = 1; I < Argc; ++I) {
    std::string S = Argv[I];
    auto Value = [&](std::string &Out) {
      if (I + 1 >= Argc) {
        Why = S + " needs a value";
        return false;
      }
      Out = Argv[++I];
      return true;
    };
    if (S == "--socket") {
      if (!Value(A.Socket))
        return false;
    } else if (S == "--log") {
      if (!Value(A.Log))
        return false;
    } else if (S == "--daemon") {
      A.Daemon = true;
    } else if (S == "--any-user") {
      A.AnyUser = true;
    } else if (S == "--stop") {
      A.Stop = true;
    } else if (S == "--status") {
      A.Status = true;
    } else if (S == "--help" || S == "-h") {
      A.Help = true;
    } else {
      Why = "unknown argument '" + S + "'";
      return false;
    }
  }
  if (!A.Help && A.Socket.empty())
    Why = "--socket PATH is required";
  else if (A.Stop && A.Status)
    Why = "--stop and --status exclude each other";
  return Why.empty();
}

/// --stop / --status: one request to the server at \p Path.
int ask(const std::string &Path, Op O) {
  std::string Why;
  int S = connectTo(Path, Why);
  if (S < 0) {
    std::fprintf(stderr, "cleave-serve: no server at %s: %s\n", Path.c_str(),
                 Why.c_str());
    return 1;
  }
  uint32_t Code;
  std::string Reply;
  std::vector<int> Fds;
  if (!sendMessage(S, uint32_t(O), Writer().data()) ||
      !receiveMessage(S, Code, Reply, Fds)) {
    std::fprintf(stderr, "cleave-serve: the server at %s did not answer\n",
                 Path.c_str());
    ::close(S);
    return 1;
  }
  Reader Rd(Reply);
  int32_t C = Rd.get<int32_t>();
  std::string Msg = Rd.str();
  if (C) {
    std::fprintf(stderr, "cleave-serve: %s\n", Msg.c_str());
    ::close(S);
    return 1;
  }
  if (O == Op::Status)
    std::fputs(Rd.str().c_str(), stdout);
  // A stopped server closes the connection as it exits.
  if (O == Op::Stop) {
    char B;
    while (::recv(S, &B, 1, 0) > 0) {
    }
  }
  ::close(S);
  return 0;
}

/// The listening socket at \p Path; -1 with \p Why. A socket file nobody
/// listens on (a server that was killed) is replaced.
int listenOn(const std::string &Path, std::string &Why) {
  struct stat St;
  if (::lstat(Path.c_str(), &St) == 0) {
    std::string Ignored;
    int C = connectTo(Path, Ignored);
    if (C >= 0) {
      ::close(C);
      Why = "a server already listens there";
      return -1;
    }
    if (!S_ISSOCK(St.st_mode)) {
      Why = "the path exists and is not a socket";
      return -1;
    }
    ::unlink(Path.c_str());
  }
  struct sockaddr_un A = {};
  A.sun_family = AF_UNIX;
  if (Path.size() >= sizeof(A.sun_path)) {
    Why = "the path is too long";
    return -1;
  }
  std::memcpy(A.sun_path, Path.c_str(), Path.size() + 1);
  int S = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (S < 0 ||
      ::bind(S, reinterpret_cast<struct sockaddr *>(&A), sizeof(A)) != 0 ||
      ::listen(S, 64) != 0) {
    Why = std::strerror(errno);
    if (S >= 0)
      ::close(S);
    return -1;
  }
  return S;
}

/// Starts the runtime (the devices) now, so that a bad CLEAVE_DEVICES is
/// the start's error, not the first client's.
bool startDevices(std::string &Why, std::string &Devices) {
  int N = 0;
  if (cleave_device_count(&N) != 0) {
    char Msg[1024];
    cleave_last_error_message(Msg, sizeof(Msg));
    Why = Msg;
    return false;
  }
  for (int I = 0; I < N; ++I) {
    char D[256];
    cleave_device_describe(I, D, sizeof(D));
    Devices += (I ? "; " : "") + std::string(D);
  }
  return true;
}

bool AnyUser = false;

void serveOne(int Id, int Sock) {
  // A client's CPU image runs in this process: by default only this user
  // (and root) may be served.
  struct ucred Cred = {};
  socklen_t Len = sizeof(Cred);
  if (::getsockopt(Sock, SOL_SOCKET, SO_PEERCRED, &Cred, &Len) != 0 ||
      (!AnyUser && Cred.uid != ::geteuid() && Cred.uid != 0)) {
    std::string Why = "cleave-serve refused a connection from uid " +
                      std::to_string(Cred.uid) +
                      ", not the server's user (--any-user serves every user)";
    logLine(Why);
    // The client's first request (its hello) gets the reason as its error.
    uint32_t Code;
    std::string Payload;
    std::vector<int> Fds;
    if (receiveMessage(Sock, Code, Payload, Fds))
      (void)sendMessage(Sock, 0,
                        Writer().put(int32_t(ErrorCode::NoDevice)).str(Why)
                            .data());
    for (int Fd : Fds)
      ::close(Fd);
    ::close(Sock);
    return;
  }
  auto *S = new Session(Id, Sock);
  Registry &R = registry();
  {
    std::lock_guard<std::mutex> Lock(R.Mutex);
    R.Sessions[Id] = S;
  }
  bool KeepGoing = S->run();
  {
    std::lock_guard<std::mutex> Lock(R.Mutex);
    R.Sessions.erase(Id);
    delete S;
    // The connection that asked for the stop stays open until the process
    // exits: --stop returns when the server is gone.
    if (KeepGoing)
      ::close(Sock);
  }
  R.Done.notify_all();
  if (!KeepGoing)
    requestStop();
}

int acceptLoop(int Listen, const std::string &Path) {
  int Next = 1;
  for (;;) {
    struct pollfd P[2] = {{Listen, POLLIN, 0}, {StopPipe[0], POLLIN, 0}};
    if (::poll(P, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (P[1].revents)
      break;
    if (!(P[0].revents & POLLIN))
      continue;
    int C = ::accept4(Listen, nullptr, nullptr, SOCK_CLOEXEC);
    if (C < 0)
      continue;
    std::thread(serveOne, Next++, C).detach();
  }
  ::close(Listen);
  ::unlink(Path.c_str());
  // Every session ends (its client sees the connection close), waits for
  // its work and frees what it holds.
  Registry &R = registry();
  std::unique_lock<std::mutex> Lock(R.Mutex);
  for (auto &[Id, S] : R.Sessions)
    S->stop();
  R.Done.wait(Lock, [&] { return R.Sessions.empty(); });
  logLine("cleave-serve: stopped");
  return 0;
}

/// --daemon: the parent returns once the child listens (or says why not).
int daemonize(const std::string &Log, int &ReadyFd) {
  int Pipe[2];
  if (::pipe(Pipe) != 0)
    return 1;
  pid_t Child = ::fork();
  if (Child < 0)
    return 1;
  if (Child > 0) {
    ::close(Pipe[1]);
    std::string Msg;
    char B[256];
    ssize_t N;
    while ((N = ::read(Pipe[0], B, sizeof(B))) > 0)
      Msg.append(B, size_t(N));
    if (Msg == "ready")
      return 0;
    std::fprintf(stderr, "cleave-serve: %s\n",
                 Msg.empty() ? "the server exited at start" : Msg.c_str());
    return 1;
  }
  ::close(Pipe[0]);
  ::setsid();
  int Null = ::open("/dev/null", O_RDWR);
  int Out = Log.empty()
                ? Null
                : ::open(Log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  ::dup2(Null, 0);
  ::dup2(Out < 0 ? Null : Out, 1);
  ::dup2(Out < 0 ? Null : Out, 2);
  ReadyFd = Pipe[1];
  return -1; // the child goes on
}

} // namespace

std::string serverStatus() {
  Registry &R = registry();
  std::lock_guard<std::mutex> Lock(R.Mutex);
  std::string Lines;
  size_t N = 0;
  for (auto &[Id, Sess] : R.Sessions)
    if (std::string D = Sess->describe(); !D.empty()) {
      Lines += D + "\n";
      ++N;
    }
  // What the runtime itself holds: a client that is gone holds nothing.
  size_t Buffers = 0;
  if (Runtime * RT; Runtime::get(RT).ok())
    Buffers = RT->buffers().numBuffers();
  return "cleave-serve pid " + std::to_string(::getpid()) + ": " +
         std::to_string(N) + " client(s), " + std::to_string(Buffers) +
         " buffer(s) in the runtime\n" + Lines;
}

int serveMain(int Argc, char **Argv) {
  markServerProcess();
  Args A;
  std::string Why;
  if (!parse(Argc, Argv, A, Why)) {
    std::fprintf(stderr, "cleave-serve: %s\n%s", Why.c_str(), Usage);
    return 2;
  }
  if (A.Help) {
    std::fputs(Usage, stdout);
    return 0;
  }
  if (A.Stop || A.Status)
    return ask(A.Socket, A.Stop ? Op::Stop : Op::Status);
  AnyUser = A.AnyUser;
  int Listen = listenOn(A.Socket, Why);
  if (Listen < 0) {
    std::fprintf(stderr, "cleave-serve: cannot listen on %s: %s\n",
                 A.Socket.c_str(), Why.c_str());
    return 1;
  }
  int ReadyFd = -1;
  if (A.Daemon)
    if (int RC = daemonize(A.Log, ReadyFd); RC >= 0) {
      ::close(Listen);
      return RC;
    }
  auto Ready = [&](const std::string &Msg) {
    if (ReadyFd >= 0) {
      (void)!::write(ReadyFd, Msg.data(), Msg.size());
      ::close(ReadyFd);
      ReadyFd = -1;
    }
  };
  std::string Devices;
  if (!startDevices(Why, Devices)) {
    ::close(Listen);
    ::unlink(A.Socket.c_str());
    Ready("the devices did not start: " + Why);
    std::fprintf(stderr, "cleave-serve: the devices did not start: %s\n",
                 Why.c_str());
    return 1;
  }
  if (::pipe2(StopPipe, O_CLOEXEC) != 0)
    return 1;
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGTERM, [](int) { requestStop(); });
  std::signal(SIGINT, [](int) { requestStop(); });
  logLine("cleave-serve: listening on " + A.Socket + " (" + Devices + ")");
  Ready("ready");
  return acceptLoop(Listen, A.Socket);
}

} // namespace serve
} // namespace rt
} // namespace cleave

extern "C" int cleave_serve_main(int argc, char **argv) {
  return cleave::rt::serve::serveMain(argc, argv);
}
