// A virtual X server for rendering without a display: screenshots on a server and the GUI
// tests in CI. If $DISPLAY already names a server that answers, nothing is started.
//
// An XServer holds one connection open for as long as it lives. An X server without
// -noreset (Xvfb's default, and a server someone else started) resets when its last client
// disconnects; a probe that connects and disconnects just before GLFW connects made GLFW
// meet a server in mid-reset ("X11: Failed to open display", about one run in ten).
#pragma once
#include <memory>
#include <string>

namespace descent::viz {

class XServer {
 public:
  // Makes sure an X server is reachable: the one $DISPLAY names, or a new Xvfb (then
  // $DISPLAY is set to it for this process). Null, with *error saying why, when neither
  // works (no Xvfb installed, it failed to start).
  static std::unique_ptr<XServer> ensure(std::string* error);
  // Only the server $DISPLAY names (never starts one), its connection held; null with
  // *error when $DISPLAY is unset or does not answer. For the interactive window.
  static std::unique_ptr<XServer> existing(std::string* error);
  // Closes the held connection, then stops the Xvfb this started (none when $DISPLAY was
  // already usable).
  ~XServer();
  const std::string& display() const { return display_; }
  bool started_xvfb() const { return pid_ > 0; }

 private:
  XServer() = default;
  std::string display_;
  int pid_ = -1;
  void* hold_ = nullptr;  // Display*: the connection that keeps the server from resetting
};

// Does the X server `display` (":0") accept a connection? (Connects and disconnects: on a
// server without -noreset and no other client, that triggers a reset. XServer avoids it.)
bool x_display_works(const std::string& display);

}  // namespace descent::viz
