// descent-viz: the visualizer's front end. Parses the command line, opens the window (or a
// hidden one under a virtual X server for --screenshot), and reports errors.
//
//   descent-viz examples/tour.ds
//   descent-viz examples/tour.ds --pane stack --do "stack step 12" --screenshot stack.png
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "viz/app.h"
#include "viz/headless.h"

int main(int argc, char** argv) {
  CLI::App cli{"descent-viz: every stage of a Descent program, in one window"};
  std::string file, screenshot, pane;
  std::vector<std::string> actions;
  descent::viz::AppOptions opt;
  bool list = false;
  cli.add_option("file", file,
                 "a .ds program to open (default: a small program's text), or a .sched "
                 "schedule, applied in the loop-nest pane to the kernel its name gives");
  cli.add_option("--screenshot", screenshot,
                 "render without showing a window (starting Xvfb when there is no display), "
                 "write a PNG of it and exit");
  cli.add_option("--pane", pane, "the pane to show: source, tokens, ast, analysis, stack, reg, "
                                 "llvm, machine, native, graph, loops, tune, bench, labs");
  cli.add_option("--do", actions,
                 "a scripted action before showing, e.g. \"stack step 5\" or \"loops sched split "
                 "i 16\" (repeatable; --list-actions lists them)");
  cli.add_option("--width", opt.width, "window width in pixels")->check(CLI::Range(640, 7680));
  cli.add_option("--height", opt.height, "window height in pixels")->check(CLI::Range(400, 4320));
  cli.add_option("--font-size", opt.font_size, "font size in pixels (larger for a projector)")
      ->check(CLI::Range(8.0, 64.0));
  cli.add_flag("--dark", opt.dark, "the dark theme");
  cli.add_flag("--list-actions", list, "list every pane's scripted actions and exit");
  CLI11_PARSE(cli, argc, argv);

  std::unique_ptr<descent::viz::XServer> xserver;
  std::string err;
  if (!screenshot.empty()) {
    opt.hidden = true;
    xserver = descent::viz::XServer::ensure(&err);
    if (!xserver) {
      fmt::print(stderr, "descent-viz: cannot render: {}\n", err);
      return 1;
    }
  } else if (!list) {
    // Held open until exit, so the server cannot reset between this check and GLFW's
    // own connection.
    xserver = descent::viz::XServer::existing(&err);
    if (!xserver) {
      fmt::print(stderr,
                 "descent-viz: no display to open a window on ({}).\n"
                 "  To render to a file instead: descent-viz FILE --screenshot out.png\n",
                 err);
      return 1;
    }
  }
  if (list) opt.hidden = true, xserver = descent::viz::XServer::ensure(&err);
  auto app = descent::viz::App::create(opt, &err);
  if (!app) {
    fmt::print(stderr, "descent-viz: {}\n", err);
    return 1;
  }
  if (list) {
    for (const auto& p : app->panes())
      for (const auto& v : p->verbs()) fmt::print("{} {}\n", p->name(), v);
    fmt::print("pane NAME\nopen FILE\n");
    return 0;
  }
  if (!file.empty()) {
    if (!app->open(file, &err)) {
      fmt::print(stderr, "descent-viz: {}\n", err);
      return 1;
    }
  } else {
    app->document().set_text(
        "# Type a Descent program here: every pane follows as you edit.\n"
        "fn fib(n: int) -> int {\n  if n < 2 { return n }\n  return fib(n - 1) + fib(n - 2)\n}\n"
        "total = 0\nfor i in 0..10 {\n  total += fib(i)\n}\nprint(total)\n",
        false);
  }
  if (!pane.empty() && !app->select_pane(pane, &err)) {
    fmt::print(stderr, "descent-viz: {}\n", err);
    return 1;
  }
  app->settle(2);
  for (const auto& a : actions) {
    if (!app->act(a, &err)) {
      fmt::print(stderr, "descent-viz: --do \"{}\": {}\n", a, err);
      return 1;
    }
    app->settle(1);
  }
  if (!screenshot.empty()) {
    if (!app->screenshot(screenshot, &err)) {
      fmt::print(stderr, "descent-viz: {}\n", err);
      return 1;
    }
    return 0;
  }
  app->run();
  return 0;
}
