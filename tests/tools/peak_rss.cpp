// peak_rss CMD ARGS...: runs CMD, then prints its peak resident memory in KiB ("peak_kib N")
// on stderr and exits with CMD's status (128 + signal when a signal ended it).
//
// Why a process of its own: Linux starts a fork()ed child's ru_maxrss from the peak of the
// memory it was copied from, and execve keeps it. A test that forks descent from a test
// binary that already ran other tests would measure those tests' peak, not descent's (a
// flaky test: 153 MiB in one run, 40 in the next). This helper is freshly exec'd and small,
// so the child it forks starts from a few hundred KiB and wait4 reports the child's own peak.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: peak_rss CMD ARGS...\n");
    return 64;
  }
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("peak_rss: fork");
    return 71;
  }
  if (pid == 0) {
    execv(argv[1], argv + 1);
    std::perror("peak_rss: exec");
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  while (wait4(pid, &status, 0, &ru) < 0) {
    if (errno != EINTR) {
      std::perror("peak_rss: wait4");
      return 71;
    }
  }
  std::fprintf(stderr, "peak_kib %ld\n", ru.ru_maxrss);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
